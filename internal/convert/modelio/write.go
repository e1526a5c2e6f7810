package modelio

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

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
	// empty means the model file's name with ".data" appended.
	DataName string
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
	t        *onnxpb.TensorProto
	size     int64
	write    func(io.Writer) error // nil: the data stays in the tensor's fields
	external bool
	offset   int64
}

// InlineSize returns the size the model file would have without external
// data, to decide whether Write needs External.
func (m *Model) InlineSize() (int64, error) {
	plans, err := m.plans(false)
	if err != nil {
		return 0, err
	}
	hdr, err := m.headers(plans, true)
	if err != nil {
		return 0, err
	}
	return hdr.total, nil
}

func (m *Model) plans(external bool) ([]*plan, error) {
	var plans []*plan
	for _, t := range m.Proto.GetGraph().GetInitializer() {
		p := &plan{t: t}
		switch r, ok := m.replaced[t]; {
		case ok:
			p.size, p.write = r.Size, r.WriteTo
		case m.InFile(t):
			s := m.spans[t]
			p.size = s.length
			p.write = func(w io.Writer) error {
				return readSpan(s, t.GetName(), func(c []byte) error { _, err := w.Write(c); return err })
			}
		case external && t.GetDataLocation() == onnxpb.TensorProto_DEFAULT:
			if n, err := m.DataSize(t); err == nil && n >= ExternalMin {
				p.size = n
				p.write = func(w io.Writer) error {
					return m.ReadData(t, func(c []byte) error { _, err := w.Write(c); return err })
				}
			}
		}
		p.external = external && p.write != nil && p.size >= ExternalMin
		plans = append(plans, p)
	}
	return plans, nil
}

// headers holds the encoded parts of the model around the streamed data.
type headers struct {
	model []byte // the model without its graph
	graph []byte // the graph without its initializers
	// tensors holds the initializers without streamed data, encoded one
	// after the other in one buffer (not one allocation per tensor);
	// initializer i is tensors[ends[i-1]:ends[i]].
	tensors []byte
	ends    []int
	lens    []int64 // each initializer's encoded length
	graphN  int64
	total   int64
}

var marshal = proto.MarshalOptions{Deterministic: true}

// headers encodes everything but the streamed data. It detaches and
// reattaches fields of m.Proto while it works. With sizeOnly it only
// computes the sizes (lens, graphN, total), encoding nothing.
func (m *Model) headers(plans []*plan, sizeOnly bool) (*headers, error) {
	g := m.Proto.Graph
	h := &headers{}
	for _, p := range plans {
		t := p.t
		raw, fd, ext, loc := t.RawData, t.FloatData, t.ExternalData, t.DataLocation
		if p.write != nil {
			t.RawData, t.FloatData = nil, nil
		}
		if p.external {
			t.DataLocation = onnxpb.TensorProto_EXTERNAL // ExternalData is set by Write
		}
		var n int64
		var err error
		if sizeOnly {
			n = int64(marshal.Size(t))
		} else {
			start := len(h.tensors)
			h.tensors, err = marshal.MarshalAppend(h.tensors, t)
			n = int64(len(h.tensors) - start)
			h.ends = append(h.ends, len(h.tensors))
		}
		t.RawData, t.FloatData, t.ExternalData, t.DataLocation = raw, fd, ext, loc
		if err != nil {
			return nil, fmt.Errorf("encoding initializer %q: %w", t.GetName(), err)
		}
		if p.write != nil && !p.external && p.size > 0 {
			n += int64(protowire.SizeTag(onnx.FieldTensorRawData)+protowire.SizeVarint(uint64(p.size))) + p.size
		}
		h.lens = append(h.lens, n)
	}
	inits := g.Initializer
	g.Initializer = nil
	var gb []byte
	var err error
	if sizeOnly {
		h.graphN = int64(marshal.Size(g))
	} else {
		gb, err = marshal.Marshal(g)
		h.graphN = int64(len(gb))
	}
	g.Initializer = inits
	if err != nil {
		return nil, fmt.Errorf("encoding graph: %w", err)
	}
	h.graph = gb
	for _, n := range h.lens {
		h.graphN += int64(protowire.SizeTag(onnx.FieldGraphInitializer)+protowire.SizeVarint(uint64(n))) + n
	}
	m.Proto.Graph = nil
	var mb []byte
	var modelN int
	if sizeOnly {
		modelN = marshal.Size(m.Proto)
	} else {
		mb, err = marshal.Marshal(m.Proto)
		modelN = len(mb)
	}
	m.Proto.Graph = g
	if err != nil {
		return nil, fmt.Errorf("encoding model: %w", err)
	}
	h.model = mb
	h.total = int64(modelN+protowire.SizeTag(onnx.FieldModelGraph)+protowire.SizeVarint(uint64(h.graphN))) + h.graphN
	return h, nil
}

// Write writes the model to path and, with opts.External, the data file
// next to it. Both files are written to temporary files and renamed into
// place, the data file first, so a reader never sees a model whose data is
// missing or partial. Initializers replaced with Replace are written with
// their new data.
func (m *Model) Write(path string, opts WriteOptions) (Written, error) {
	w := Written{ModelPath: path}
	plans, err := m.plans(opts.External)
	if err != nil {
		return w, err
	}
	var data *outpath.Pending
	defer func() {
		if data != nil {
			data.Cleanup()
		}
	}()
	anyExternal := false
	for _, p := range plans {
		anyExternal = anyExternal || p.external
	}
	if anyExternal {
		name := opts.DataName
		if name == "" {
			name = filepath.Base(path) + ".data"
		}
		if _, err := SafeJoin(filepath.Dir(path), name); err != nil {
			return w, err
		}
		w.DataPath = filepath.Join(filepath.Dir(path), filepath.FromSlash(name))
		if data, err = outpath.CreatePath(w.DataPath); err != nil {
			return w, fmt.Errorf("writing %s: %w", w.DataPath, err)
		}
		bw := bufio.NewWriterSize(data, 1<<20)
		cw := &countWriter{w: bw}
		for _, p := range plans {
			if !p.external {
				continue
			}
			if pad := (externalAlign - cw.n%externalAlign) % externalAlign; pad > 0 {
				if _, err := cw.Write(make([]byte, pad)); err != nil {
					return w, fmt.Errorf("writing %s: %w", w.DataPath, err)
				}
			}
			p.offset = cw.n
			if err := writeExactly(cw, p); err != nil {
				return w, fmt.Errorf("writing %s: %w", w.DataPath, err)
			}
			p.t.ExternalData = []*onnxpb.StringStringEntryProto{
				{Key: "location", Value: filepath.ToSlash(name)},
				{Key: "offset", Value: strconv.FormatInt(p.offset, 10)},
				{Key: "length", Value: strconv.FormatInt(p.size, 10)},
			}
		}
		if err := bw.Flush(); err != nil {
			return w, fmt.Errorf("writing %s: %w", w.DataPath, err)
		}
		w.DataSize = cw.n
	}
	// The external data entries are in place; encode for real.
	hdr, err := m.headers(plans, false)
	for _, p := range plans {
		if p.external {
			p.t.ExternalData = nil
		}
	}
	if err != nil {
		return w, err
	}
	if hdr.total > MaxInline {
		return w, fmt.Errorf("the converted model would be %d bytes, more than the 2 GiB a protobuf file may hold; write its weights to an external data file", hdr.total)
	}
	out, err := outpath.CreatePath(path)
	if err != nil {
		return w, fmt.Errorf("writing %s: %w", path, err)
	}
	defer out.Cleanup()
	bw := bufio.NewWriterSize(out, 1<<20)
	cw := &countWriter{w: bw}
	if err := m.stream(cw, hdr, plans); err != nil {
		return w, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return w, fmt.Errorf("writing %s: %w", path, err)
	}
	if cw.n != hdr.total {
		return w, fmt.Errorf("writing %s: wrote %d bytes, planned %d", path, cw.n, hdr.total)
	}
	w.ModelSize = cw.n
	if data != nil {
		if err := data.CloseAtomicallyReplace(); err != nil {
			return w, fmt.Errorf("writing %s: %w", w.DataPath, err)
		}
		data = nil
	}
	if err := out.CloseAtomicallyReplace(); err != nil {
		return w, fmt.Errorf("writing %s: %w", path, err)
	}
	return w, nil
}

// Encode writes the model to w with all data inline, as Write without
// External does, but without files.
func (m *Model) Encode(w io.Writer) (int64, error) {
	plans, err := m.plans(false)
	if err != nil {
		return 0, err
	}
	hdr, err := m.headers(plans, false)
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	err = m.stream(cw, hdr, plans)
	return cw.n, err
}

func (m *Model) stream(w io.Writer, hdr *headers, plans []*plan) error {
	// The encoded model and graph are written as they are, not copied
	// into one buffer first: the graph's encoding is about as large as the
	// model file.
	if _, err := w.Write(hdr.model); err != nil {
		return err
	}
	b := protowire.AppendTag(nil, onnx.FieldModelGraph, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(hdr.graphN))
	if _, err := w.Write(b); err != nil {
		return err
	}
	if _, err := w.Write(hdr.graph); err != nil {
		return err
	}
	start := 0
	for i, p := range plans {
		b = protowire.AppendTag(b[:0], onnx.FieldGraphInitializer, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(hdr.lens[i]))
		b = append(b, hdr.tensors[start:hdr.ends[i]]...)
		start = hdr.ends[i]
		if p.write != nil && !p.external && p.size > 0 {
			b = protowire.AppendTag(b, onnx.FieldTensorRawData, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(p.size))
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		if p.write != nil && !p.external && p.size > 0 {
			if err := writeExactly(w, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeExactly(w io.Writer, p *plan) error {
	cw := &countWriter{w: w}
	if err := p.write(cw); err != nil {
		return fmt.Errorf("initializer %q: %w", p.t.GetName(), err)
	}
	if cw.n != p.size {
		return fmt.Errorf("initializer %q: %d bytes of data, expected %d", p.t.GetName(), cw.n, p.size)
	}
	return nil
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
