package modelio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/outpath"
)

// ExternalMin is the smallest initializer Write moves to the external data
// file when it writes one (the onnx package's default threshold).
const ExternalMin = 1024

// externalAlign aligns each tensor's data in the external data file.
const externalAlign = 64

// MaxInline is the largest model file that Write produces without an
// external data file: protobuf messages are limited to 2 GiB.
const MaxInline = 2<<30 - 1

// WriteOptions control Write.
type WriteOptions struct {
	// External writes the data of the main graph's initializers of
	// ExternalMin bytes or more to a data file next to the model.
	External bool
	// DataName is the data file's name, relative to the model's folder;
	// empty means the model file's name with ".data" appended. trtbuild
	// names it, so it follows no link (outpath.Own).
	DataName string
	// Use is how the model file's path is written: outpath.WholeFile for a
	// path the user named (a link there is followed), outpath.Own for one
	// trtbuild chose (none is).
	Use outpath.Use
}

// Written describes the files Write produced.
type Written struct {
	ModelPath string
	ModelSize int64
	DataPath  string // "" when there is no external data file
	DataSize  int64
}

// plan is how Write stores one main-graph initializer's data.
type plan struct {
	size     int64 // bytes of data written (after lowering)
	copy     bool  // the tensor is written as it is
	external bool
	offset   int64
}

var marshal = proto.MarshalOptions{Deterministic: true}

// writer encodes a model: the main graph streamed, subgraphs in memory.
type writer struct {
	m        *Model
	plans    []plan // of the main graph's initializers
	dataName string
	// nodes holds the encodings of the nodes that are not copied, by
	// graph: they are encoded once, for both the sizing and the writing.
	nodes  map[*Graph]map[int32][]byte
	added  map[*Graph][][]byte
	meta   []byte
	buf    []byte // scratch
	buf2   []byte // scratch
	hdr    []byte // header's scratch: its result is valid until the next call
	graphN int64  // the main graph's size, once known; -1 before
}

// plans decides how each main-graph initializer is written.
func (m *Model) plans(external bool) ([]plan, error) {
	g := m.Graph
	plans := make([]plan, len(g.Inits))
	for i := range g.Inits {
		t := &g.Inits[i]
		p := &plans[i]
		n, err := m.DataSize(t)
		switch {
		case t.Lower:
			if err != nil {
				return nil, err
			}
			p.size = n / 2
		case t.span >= 0:
			p.size = n
		case external && err == nil && n >= ExternalMin:
			p.size = n
		default:
			p.copy = true
		}
		p.external = external && !p.copy && p.size >= ExternalMin
	}
	return plans, nil
}

func (m *Model) newWriter(external bool, dataName string) (*writer, error) {
	plans, err := m.plans(external)
	if err != nil {
		return nil, err
	}
	w := &writer{m: m, plans: plans, dataName: dataName, nodes: map[*Graph]map[int32][]byte{}, graphN: -1}
	if err := w.prepare(m.Graph); err != nil {
		return nil, err
	}
	meta := proto.Clone(m.Meta).(*onnxpb.ModelProto)
	meta.Graph = nil
	if w.meta, err = marshal.Marshal(meta); err != nil {
		return nil, fmt.Errorf("encoding model: %w", err)
	}
	return w, nil
}

// prepare encodes the nodes of g that are not copied as they are: changed
// nodes, decoded nodes (with their subgraphs, encoded first) and added ones.
// The subgraphs are encoded whole, in memory, and decoded into their
// attributes.
func (w *writer) prepare(g *Graph) error {
	m := w.m
	// The subgraphs' encodings, by attribute.
	var subs map[*onnxpb.AttributeProto][]byte
	for _, ss := range g.Subgraphs {
		for _, s := range ss {
			if s.G == nil {
				continue
			}
			var b bytes.Buffer
			sw := &writer{m: m, nodes: w.nodes}
			if err := sw.prepare(s.G); err != nil {
				return err
			}
			if _, err := sw.graph(&countWriter{w: &b}, s.G, false); err != nil {
				return err
			}
			if subs == nil {
				subs = map[*onnxpb.AttributeProto][]byte{}
			}
			subs[s.at] = b.Bytes()
		}
	}
	enc := map[int32][]byte{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		np, decoded := g.decoded[int32(i)]
		lower := n.value && g.Value(i).Lower
		if decoded && lower {
			return fmt.Errorf("encoding node %q: its value tensor is marked Lower but the node was decoded", m.String(n.Name))
		}
		if !decoded && !n.Changed && !lower {
			continue
		}
		var b []byte
		var err error
		if decoded {
			np.Name, np.OpType, np.Domain = m.String(n.Name), m.Sym(n.Op), m.Sym(n.Domain)
			np.Input = np.Input[:0]
			for _, s := range g.NodeInputs(i) {
				np.Input = append(np.Input, m.String(s))
			}
			np.Output = np.Output[:0]
			for _, s := range g.NodeOutputs(i) {
				np.Output = append(np.Output, m.String(s))
			}
			if len(g.Subgraphs[int32(i)]) > 0 {
				b, err = marshalWithGraphs(np, subs)
			} else {
				b, err = marshal.Marshal(np)
			}
		} else {
			b, err = w.reencode(g, i)
		}
		if err != nil {
			return fmt.Errorf("encoding node %q: %w", m.String(n.Name), err)
		}
		enc[int32(i)] = b
	}
	w.nodes[g] = enc
	return nil
}

// marshalWithGraphs encodes a decoded node whose graph attributes are
// given encoded, in subs: each attribute is encoded without its graph and
// the graph's encoding appended as its g field.
func marshalWithGraphs(np *onnxpb.NodeProto, subs map[*onnxpb.AttributeProto][]byte) ([]byte, error) {
	attrs := np.Attribute
	np.Attribute = nil
	b, err := marshal.Marshal(np)
	np.Attribute = attrs
	if err != nil {
		return nil, err
	}
	for _, at := range attrs {
		sub, ok := subs[at]
		g := at.G
		if ok {
			at.G = nil
		}
		ab, err := marshal.Marshal(at)
		at.G = g
		if err != nil {
			return nil, err
		}
		if ok {
			ab = protowire.AppendTag(ab, onnx.FieldAttrG, protowire.BytesType)
			ab = protowire.AppendBytes(ab, sub)
		}
		b = protowire.AppendTag(b, onnx.FieldNodeAttribute, protowire.BytesType)
		b = protowire.AppendBytes(b, ab)
	}
	return b, nil
}

// reencode encodes a node that was not decoded from its names and the
// fields of its wire bytes other than names and op type.
func (w *writer) reencode(g *Graph, i int) ([]byte, error) {
	m := w.m
	n := &g.Nodes[i]
	var b []byte
	for _, s := range g.NodeInputs(i) {
		b = protowire.AppendTag(b, onnx.FieldNodeInput, protowire.BytesType)
		b = protowire.AppendBytes(b, m.Bytes(s))
	}
	for _, s := range g.NodeOutputs(i) {
		b = protowire.AppendTag(b, onnx.FieldNodeOutput, protowire.BytesType)
		b = protowire.AppendBytes(b, m.Bytes(s))
	}
	b = protowire.AppendTag(b, onnx.FieldNodeOpType, protowire.BytesType)
	b = protowire.AppendString(b, m.Sym(n.Op))
	raw := m.Bytes(n.raw)
	var value *Tensor
	if t := g.Value(i); t != nil && t.Lower {
		value = t
	}
	var ferr error
	err := onnx.Fields(raw, func(f onnx.WireField) bool {
		if f.Type == protowire.BytesType && (f.Num == onnx.FieldNodeInput || f.Num == onnx.FieldNodeOutput || f.Num == onnx.FieldNodeOpType) {
			return true
		}
		if value != nil && f.Type == protowire.BytesType && f.Num == onnx.FieldNodeAttribute {
			// The value attribute: its tensor lowered, its other fields as
			// they are.
			b = protowire.AppendTag(b, onnx.FieldNodeAttribute, protowire.BytesType)
			at, err := w.lowerValue(f.Payload, n.raw.off+uint32(f.Start), value)
			if err != nil {
				ferr = err
				return false
			}
			b = protowire.AppendBytes(b, at)
			return true
		}
		b = append(b, raw[f.Tag:f.End]...)
		return true
	})
	if err == nil {
		err = ferr
	}
	return b, err
}

// lowerValue encodes the attribute attr (at offset off of the model's
// buffers) with its tensor t, a view into it, lowered: the tensor's fields
// less its data, the new data type, and the data converted, in raw_data.
func (w *writer) lowerValue(attr []byte, off uint32, t *Tensor) ([]byte, error) {
	m := w.m
	n, err := m.DataSize(t)
	if err != nil {
		return nil, err
	}
	p := plan{size: n / 2}
	var out []byte
	var ferr error
	err = onnx.Fields(attr, func(f onnx.WireField) bool {
		if f.Num != onnx.FieldAttrT || f.Type != protowire.BytesType || off+uint32(f.Start) != t.raw.off {
			out = append(out, attr[f.Tag:f.End]...)
			return true
		}
		hdr, err := w.header(t, p)
		if err != nil {
			ferr = err
			return false
		}
		tb := append([]byte(nil), hdr...)
		if p.size > 0 {
			tb = protowire.AppendTag(tb, onnx.FieldTensorRawData, protowire.BytesType)
			tb = protowire.AppendVarint(tb, uint64(p.size))
			var buf bytes.Buffer
			if err := w.data(&buf, t, p); err != nil {
				ferr = err
				return false
			}
			tb = append(tb, buf.Bytes()...)
		}
		out = protowire.AppendTag(out, onnx.FieldAttrT, protowire.BytesType)
		out = protowire.AppendBytes(out, tb)
		return true
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

// graph writes g's fields (without the graph's own tag and length) to cw,
// or with sizeOnly only counts them. Data is streamed from its files.
func (w *writer) graph(cw *countWriter, g *Graph, sizeOnly bool) (int64, error) {
	m := w.m
	start := cw.n
	field := func(num protowire.Number, b []byte) error {
		w.buf = protowire.AppendTag(w.buf[:0], num, protowire.BytesType)
		w.buf = protowire.AppendVarint(w.buf, uint64(len(b)))
		if _, err := cw.Write(w.buf); err != nil {
			return err
		}
		_, err := cw.Write(b)
		return err
	}
	enc := w.nodes[g]
	node := func(i int32) error {
		if b, ok := enc[i]; ok {
			return field(onnx.FieldGraphNode, b)
		}
		return field(onnx.FieldGraphNode, m.Bytes(g.Nodes[i].raw))
	}
	if g.Order != nil {
		for _, i := range g.Order {
			if err := node(i); err != nil {
				return 0, err
			}
		}
	} else {
		for i := range g.Nodes {
			if err := node(int32(i)); err != nil {
				return 0, err
			}
		}
	}
	if _, err := cw.Write(g.rest); err != nil {
		return 0, err
	}
	for _, vis := range []struct {
		num protowire.Number
		vs  []*onnxpb.ValueInfoProto
	}{{onnx.FieldGraphInput, g.Inputs}, {onnx.FieldGraphOutput, g.Outputs}, {onnx.FieldGraphValueInfo, g.ValueInfo}} {
		for _, vi := range vis.vs {
			b, err := marshal.Marshal(vi)
			if err != nil {
				return 0, fmt.Errorf("encoding value %q: %w", vi.GetName(), err)
			}
			if err := field(vis.num, b); err != nil {
				return 0, err
			}
		}
	}
	for _, st := range g.Sparse {
		b, err := marshal.Marshal(st)
		if err != nil {
			return 0, fmt.Errorf("encoding sparse initializer: %w", err)
		}
		if err := field(onnx.FieldGraphSparseInitializer, b); err != nil {
			return 0, err
		}
	}
	for i := range g.Inits {
		t := &g.Inits[i]
		var p plan
		if g == m.Graph && w.plans != nil {
			p = w.plans[i]
		} else {
			p.copy = !t.Lower
			if t.Lower {
				n, err := m.DataSize(t)
				if err != nil {
					return 0, err
				}
				p.size = n / 2
			}
		}
		if p.copy {
			if err := field(onnx.FieldGraphInitializer, m.Bytes(t.raw)); err != nil {
				return 0, err
			}
			continue
		}
		hdr, err := w.header(t, p)
		if err != nil {
			return 0, err
		}
		n := int64(len(hdr))
		if !p.external && p.size > 0 {
			n += int64(protowire.SizeTag(onnx.FieldTensorRawData)+protowire.SizeVarint(uint64(p.size))) + p.size
		}
		b := protowire.AppendTag(w.buf2[:0], onnx.FieldGraphInitializer, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		b = append(b, hdr...)
		if !p.external && p.size > 0 {
			b = protowire.AppendTag(b, onnx.FieldTensorRawData, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(p.size))
		}
		w.buf2 = b
		if _, err := cw.Write(b); err != nil {
			return 0, err
		}
		if !p.external && p.size > 0 {
			if sizeOnly {
				cw.n += p.size
			} else if err := w.data(cw, t, p); err != nil {
				return 0, err
			}
		}
	}
	return cw.n - start, nil
}

// header encodes a tensor written with its data apart: its fields less the
// data (and, when lowered, with the new data type), plus the external data
// reference when the data goes to the data file.
func (w *writer) header(t *Tensor, p plan) ([]byte, error) {
	m := w.m
	raw := m.Bytes(t.raw)
	b := w.hdr[:0]
	defer func() { w.hdr = b }()
	if t.Lower {
		b = protowire.AppendTag(b, onnx.FieldTensorDataType, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(m.lowering.DataType))
	}
	err := onnx.Fields(raw, func(f onnx.WireField) bool {
		switch f.Num {
		case onnx.FieldTensorFloatData, onnx.FieldTensorRawData, onnx.FieldTensorExternalData, onnx.FieldTensorDataLocation:
			return true
		case onnx.FieldTensorDataType:
			if t.Lower {
				return true
			}
		}
		b = append(b, raw[f.Tag:f.End]...)
		return true
	})
	if err != nil {
		return nil, err
	}
	if p.external {
		for _, kv := range [][2]string{{"location", filepath.ToSlash(w.dataName)}, {"offset", strconv.FormatInt(p.offset, 10)}, {"length", strconv.FormatInt(p.size, 10)}} {
			e := protowire.AppendTag(nil, onnx.FieldEntryKey, protowire.BytesType)
			e = protowire.AppendString(e, kv[0])
			e = protowire.AppendTag(e, onnx.FieldEntryValue, protowire.BytesType)
			e = protowire.AppendString(e, kv[1])
			b = protowire.AppendTag(b, onnx.FieldTensorExternalData, protowire.BytesType)
			b = protowire.AppendBytes(b, e)
		}
		b = protowire.AppendTag(b, onnx.FieldTensorDataLocation, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(onnxpb.TensorProto_EXTERNAL))
	}
	return b, nil
}

// halves recycles the buffers lowered chunks are written from.
var halves = sync.Pool{New: func() any { return new([]byte) }}

// data writes a tensor's data, lowered when marked, checking its size.
func (w *writer) data(out io.Writer, t *Tensor, p plan) error {
	m := w.m
	cw := &countWriter{w: out}
	var err error
	if t.Lower {
		err = m.ReadData(t, func(c []byte) error {
			buf := halves.Get().(*[]byte)
			defer halves.Put(buf)
			if cap(*buf) < len(c)/2 {
				*buf = make([]byte, len(c)/2)
			}
			o := (*buf)[:len(c)/2]
			m.lowering.Convert(o, c)
			_, err := cw.Write(o)
			return err
		})
	} else {
		err = m.ReadData(t, func(c []byte) error { _, err := cw.Write(c); return err })
	}
	if err != nil {
		return fmt.Errorf("initializer %q: %w", m.String(t.Name), err)
	}
	if cw.n != p.size {
		return fmt.Errorf("initializer %q: %d bytes of data, expected %d", m.String(t.Name), cw.n, p.size)
	}
	return nil
}

// model writes the whole model to cw (or counts it, with sizeOnly).
func (w *writer) model(cw *countWriter, sizeOnly bool) error {
	if w.graphN < 0 {
		n, err := w.graph(&countWriter{w: io.Discard}, w.m.Graph, true)
		if err != nil {
			return err
		}
		w.graphN = n
	}
	graphN := w.graphN
	if _, err := cw.Write(w.meta); err != nil {
		return err
	}
	b := protowire.AppendTag(nil, onnx.FieldModelGraph, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(graphN))
	if _, err := cw.Write(b); err != nil {
		return err
	}
	if sizeOnly {
		cw.n += graphN
		return nil
	}
	n, err := w.graph(cw, w.m.Graph, false)
	if err != nil {
		return err
	}
	if n != graphN {
		return fmt.Errorf("wrote a graph of %d bytes, planned %d", n, graphN)
	}
	return nil
}

// InlineSize returns the size the model file would have without external
// data, to decide whether Write needs External.
func (m *Model) InlineSize() (int64, error) {
	w, err := m.newWriter(false, "")
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: io.Discard}
	if err := w.model(cw, true); err != nil {
		return 0, err
	}
	return cw.n, nil
}

// Write writes the model to path and, with opts.External, the data file
// next to it. Both files are written to temporary files and renamed into
// place, the data file first, so a reader never sees a model whose data is
// missing or partial.
func (m *Model) Write(path string, opts WriteOptions) (Written, error) {
	res := Written{ModelPath: path}
	name := opts.DataName
	if name == "" {
		name = filepath.Base(path) + ".data"
	}
	w, err := m.newWriter(opts.External, name)
	if err != nil {
		return res, err
	}
	var data *outpath.Pending
	defer func() {
		if data != nil {
			data.Cleanup()
		}
	}()
	anyExternal := false
	for _, p := range w.plans {
		anyExternal = anyExternal || p.external
	}
	if anyExternal {
		if _, err := SafeJoin(filepath.Dir(path), name); err != nil {
			return res, err
		}
		res.DataPath = filepath.Join(filepath.Dir(path), filepath.FromSlash(name))
		if data, err = outpath.CreateAs(res.DataPath, outpath.Own); err != nil {
			return res, fmt.Errorf("writing %s: %w", res.DataPath, err)
		}
		bw := bufio.NewWriterSize(data, 1<<20)
		cw := &countWriter{w: bw}
		for i := range w.plans {
			p := &w.plans[i]
			if !p.external {
				continue
			}
			if pad := (externalAlign - cw.n%externalAlign) % externalAlign; pad > 0 {
				if _, err := cw.Write(make([]byte, pad)); err != nil {
					return res, fmt.Errorf("writing %s: %w", res.DataPath, err)
				}
			}
			p.offset = cw.n
			w.graphN = -1 // the offsets change the headers' sizes
			if err := w.data(cw, &m.Graph.Inits[i], *p); err != nil {
				return res, fmt.Errorf("writing %s: %w", res.DataPath, err)
			}
		}
		if err := bw.Flush(); err != nil {
			return res, fmt.Errorf("writing %s: %w", res.DataPath, err)
		}
		res.DataSize = cw.n
	}
	size := &countWriter{w: io.Discard}
	if err := w.model(size, true); err != nil {
		return res, err
	}
	if size.n > MaxInline {
		return res, fmt.Errorf("the converted model would be %d bytes, more than the 2 GiB a protobuf file may hold; write its weights to an external data file", size.n)
	}
	out, err := outpath.CreateAs(path, opts.Use)
	if err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	defer out.Cleanup()
	bw := bufio.NewWriterSize(out, 1<<20)
	cw := &countWriter{w: bw}
	if err := w.model(cw, false); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	if cw.n != size.n {
		return res, fmt.Errorf("writing %s: wrote %d bytes, planned %d", path, cw.n, size.n)
	}
	res.ModelSize = cw.n
	if data != nil {
		if err := data.CloseAtomicallyReplace(); err != nil {
			return res, fmt.Errorf("writing %s: %w", res.DataPath, err)
		}
		data = nil
	}
	if err := out.CloseAtomicallyReplace(); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	return res, nil
}

// Encode writes the model to w with all data inline, as Write without
// External does, but without files.
func (m *Model) Encode(w io.Writer) (int64, error) {
	wr, err := m.newWriter(false, "")
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	err = wr.model(cw, false)
	return cw.n, err
}

// Decode returns the model decoded into the onnxpb types, with all data
// inline: for tests and small models.
func (m *Model) Decode() (*onnxpb.ModelProto, error) {
	var b bytes.Buffer
	if _, err := m.Encode(&b); err != nil {
		return nil, err
	}
	p := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(b.Bytes(), p); err != nil {
		return nil, err
	}
	return p, nil
}

// countWriter counts the bytes written through it and turns short writes into errors.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}
