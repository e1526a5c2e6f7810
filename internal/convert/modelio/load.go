package modelio

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// maxBuf is the most the model's buffers may hold: Str offsets have 31 bits.
const maxBuf = arenaBit - 1

// maxPrealloc is the most Load reserves up front for the file's bytes.
const maxPrealloc = 64 << 20

// Load reads the ONNX model at path. The data of the main graph's
// initializers of 4 KiB or more stays in the model file, or in the external
// data file it names, until ReadData or Write needs it. External data of
// other tensors (in subgraphs or node attributes) is read into memory.
//
// The file is read once, front to back, with package onnx's Walker, so a
// damaged file gets the same one-line *onnx.FormatError as inspect and
// preflight give. External data is opened with onnx.OpenExternal: a
// location that is absolute, contains "..", or leads out of the model's
// folder through a symbolic link is refused, since a model could otherwise
// read any file, and so is anything but a regular file.
func Load(path string) (*Model, error) {
	f, st, err := onnx.OpenModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &Model{Path: path, Dir: filepath.Dir(path), FileSize: st.Size()}
	w := onnx.NewWalker(f, st.Size(), path)
	if st.Size() == 0 {
		return nil, &onnx.FormatError{Path: path, Offset: -1, Reason: "the file is empty"}
	}
	m.buf = make([]byte, 0, min(st.Size(), maxPrealloc))
	l := &loader{w: w, m: m}
	if err := l.model(); err != nil {
		return nil, w.Error(err)
	}
	if err := m.resolveExternal(); err != nil {
		return nil, err
	}
	return m, nil
}

// Parse reads a model from its encoding, all of whose data is inline. The
// model keeps b, which must not be changed.
func Parse(b []byte) (*Model, error) {
	if len(b) > maxBuf {
		return nil, fmt.Errorf("the model is larger than 2 GiB")
	}
	m := &Model{buf: b}
	var rest []byte
	gb := &graphBuilder{m: m}
	var gerr error
	found := false
	err := onnx.Fields(b, func(f onnx.WireField) bool {
		if f.Num == onnx.FieldModelGraph && f.Type == protowire.BytesType {
			if found {
				gerr = errors.New("the model has two graphs")
				return false
			}
			found = true
			gerr = gb.parse(Str{off: uint32(f.Start), n: uint32(len(f.Payload))})
			return gerr == nil
		}
		rest = append(rest, b[f.Tag:f.End]...)
		return true
	})
	if err == nil {
		err = gerr
	}
	if err != nil {
		return nil, fmt.Errorf("the model cannot be decoded (%v)", err)
	}
	if !found {
		return nil, errors.New("the model has no graph")
	}
	m.Graph = gb.g
	m.Meta = &onnxpb.ModelProto{}
	if err := proto.Unmarshal(rest, m.Meta); err != nil {
		return nil, fmt.Errorf("the model cannot be decoded (%v)", err)
	}
	if err := m.resolveExternal(); err != nil {
		return nil, err
	}
	return m, nil
}

// loader takes a model file apart with an onnx.Walker: it keeps the
// payloads of large main-graph initializers in the file (as spans) and
// copies everything else into the model's buffer.
type loader struct {
	w *onnx.Walker
	m *Model
}

func (l *loader) model() error {
	w, m := l.w, l.m
	var rest []byte
	var gb *graphBuilder
	err := w.Message(w.Size(), 0, "the model", func(f onnx.Field) (bool, error) {
		var err error
		if f.Num == onnx.FieldModelGraph && f.Type == protowire.BytesType {
			if gb != nil {
				return true, w.Corrupt(f.Start, "the model has two graphs")
			}
			gb = &graphBuilder{m: m}
			return true, l.graph(gb, f.End)
		}
		rest, err = w.AppendField(rest, f)
		return true, err
	})
	if err != nil {
		return err
	}
	m.Meta = &onnxpb.ModelProto{}
	if err := proto.Unmarshal(rest, m.Meta); err != nil {
		return w.Corrupt(0, "the model cannot be decoded (%v)", err)
	}
	if gb == nil {
		return w.NoGraph()
	}
	m.Graph = gb.g
	return nil
}

// graph copies the graph's fields into the model's buffer, each large
// initializer less its payload (which stays in the file as a span), and
// then parses them in memory: a first pass counts the nodes and
// initializers, so that their slices are allocated once.
func (l *loader) graph(gb *graphBuilder, end int64) error {
	w, m := l.w, l.m
	fileStart := w.Pos()
	start := len(m.buf)
	var hdr []byte
	err := w.Message(end, 1, "the graph", func(f onnx.Field) (bool, error) {
		var err error
		n := int64(16) // a tag, a length, a fixed-width or varint value
		if f.Type == protowire.BytesType {
			n += f.End - f.Start
		}
		if f.Num == onnx.FieldGraphInitializer && f.Type == protowire.BytesType && f.End-f.Start >= lazyMin {
			var sp int32
			sp, hdr, err = l.tensor(f.End, hdr[:0])
			if err != nil {
				return true, err
			}
			l.reserve(int64(len(hdr))+16, f.End)
			m.buf = protowire.AppendTag(m.buf, onnx.FieldGraphInitializer, protowire.BytesType)
			m.buf = protowire.AppendVarint(m.buf, uint64(len(hdr)))
			if sp >= 0 {
				gb.large = append(gb.large, largeRef{off: uint32(len(m.buf)), span: sp})
			}
			m.buf = append(m.buf, hdr...)
		} else {
			l.reserve(n, f.Start)
			m.buf, err = w.AppendField(m.buf, f)
		}
		if err == nil && len(m.buf) > maxBuf {
			err = w.Corrupt(f.Start, "the graph is larger than 2 GiB")
		}
		return true, err
	})
	if err != nil {
		return err
	}
	if err := gb.parse(Str{off: uint32(start), n: uint32(len(m.buf) - start)}); err != nil {
		return w.Corrupt(fileStart, "the graph cannot be decoded (%v)", err)
	}
	return nil
}

// reserve makes room in the model's buffer for n more bytes, read from
// the file at pos. The buffer grows to twice its size or, when the rest of
// the file fits in a quarter more than that, to all the rest can add: a
// model file whose bytes nearly all go into the buffer is not copied into
// ever larger buffers, whose garbage would double the memory it needs.
func (l *loader) reserve(n, pos int64) {
	m := l.m
	need := int64(len(m.buf)) + n
	if need <= int64(cap(m.buf)) {
		return
	}
	c := max(need, 2*int64(cap(m.buf)))
	if rest := int64(len(m.buf)) + max(l.w.Size()-pos, 0) + 16; c+c/4 >= rest {
		c = max(need, rest)
	}
	c = max(need, min(c, maxBuf+16))
	buf := make([]byte, len(m.buf), c)
	copy(buf, m.buf)
	m.buf = buf
}

// tensor appends a large initializer's fields to hdr, less a payload of
// 4 KiB or more, which stays in the file as a span. It returns the span's
// index, or -1.
func (l *loader) tensor(end int64, hdr []byte) (int32, []byte, error) {
	w, m := l.w, l.m
	sp := int32(-1)
	err := w.Message(end, 2, "an initializer", func(f onnx.Field) (bool, error) {
		lazy := f.Type == protowire.BytesType && f.End-f.Start >= lazyMin &&
			(f.Num == onnx.FieldTensorRawData || f.Num == onnx.FieldTensorFloatData)
		if lazy {
			if sp >= 0 {
				return true, w.Corrupt(f.Start, "an initializer holds its data twice")
			}
			sp = int32(len(m.spans))
			m.spans = append(m.spans, span{path: m.Path, offset: f.Start, length: f.End - f.Start})
			return true, w.SkipPayload(f)
		}
		var err error
		hdr, err = w.AppendField(hdr, f)
		return true, err
	})
	return sp, hdr, err
}

// sub returns the Str of bytes [start, start+n) of s.
func sub(s Str, start, n int) Str { return Str{off: s.off + uint32(start), n: uint32(n)} }

// graphBuilder builds a Graph from its fields.
type graphBuilder struct {
	m         *Model
	g         *Graph
	ins, outs []Str // a node's names, scratch
	// large are the initializers whose data Load left in the file, in
	// order: the offset of each one's fields in the buffer, and its span.
	large []largeRef
	// depth is the graph's nesting: 0 for the main graph, 1 for its
	// nodes' subgraphs, and so on.
	depth int
}

// maxViewDepth is the deepest subgraph (1 for a subgraph of the main
// graph) whose nodes' subgraphs heavyViews parses in place.
const maxViewDepth = 32

type largeRef struct {
	off  uint32
	span int32
}

func (gb *graphBuilder) begin() {
	gb.g = &Graph{m: gb.m}
}

// parse builds the graph encoded in s, in memory.
func (gb *graphBuilder) parse(s Str) error {
	gb.begin()
	b := gb.m.Bytes(s)
	var ferr error
	nodes, inits, names := 0, 0, 0
	if err := onnx.Fields(b, func(f onnx.WireField) bool {
		switch {
		case f.Num == onnx.FieldGraphNode && f.Type == protowire.BytesType:
			nodes++
			onnx.Fields(f.Payload, func(nf onnx.WireField) bool {
				if nf.Type == protowire.BytesType && (nf.Num == onnx.FieldNodeInput || nf.Num == onnx.FieldNodeOutput) {
					names++
				}
				return true
			})
		case f.Num == onnx.FieldGraphInitializer && f.Type == protowire.BytesType:
			inits++
		}
		return true
	}); err != nil {
		return err
	}
	// With room for the Casts a conversion adds (AddNode), so that the
	// slices are not copied for a few more.
	gb.g.Nodes = make([]Node, 0, nodes+nodes/256+8)
	gb.g.Names = make([]Str, 0, names+names/256+16)
	gb.g.Inits = make([]Tensor, 0, inits)
	err := onnx.Fields(b, func(f onnx.WireField) bool {
		var payload Str
		if f.Type == protowire.BytesType {
			payload = sub(s, f.Start, len(f.Payload))
		}
		ferr = gb.field(f.Num, f.Type, sub(s, f.Tag, f.End-f.Tag), payload)
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	return gb.finish()
}

// field adds one field of the graph: whole is its encoding, payload the
// payload of a length-delimited field.
func (gb *graphBuilder) field(num protowire.Number, typ protowire.Type, whole, payload Str) error {
	g, m := gb.g, gb.m
	if typ != protowire.BytesType {
		g.rest = append(g.rest, m.Bytes(whole)...)
		return nil
	}
	switch num {
	case onnx.FieldGraphNode:
		return gb.node(payload)
	case onnx.FieldGraphInitializer:
		sp := int32(-1)
		if len(gb.large) > 0 && gb.large[0].off == payload.off {
			sp = gb.large[0].span
			gb.large = gb.large[1:]
		}
		return gb.tensor(payload, sp)
	case onnx.FieldGraphInput, onnx.FieldGraphOutput, onnx.FieldGraphValueInfo:
		vi := &onnxpb.ValueInfoProto{}
		if err := proto.Unmarshal(m.Bytes(payload), vi); err != nil {
			return err
		}
		switch num {
		case onnx.FieldGraphInput:
			g.Inputs = append(g.Inputs, vi)
		case onnx.FieldGraphOutput:
			g.Outputs = append(g.Outputs, vi)
		default:
			g.ValueInfo = append(g.ValueInfo, vi)
		}
	case onnx.FieldGraphSparseInitializer:
		st := &onnxpb.SparseTensorProto{}
		if err := proto.Unmarshal(m.Bytes(payload), st); err != nil {
			return err
		}
		g.Sparse = append(g.Sparse, st)
	default:
		g.rest = append(g.rest, m.Bytes(whole)...)
	}
	return nil
}

var (
	errUTF8   = errors.New("a string field holds invalid UTF-8")
	errPacked = errors.New("a packed field is malformed")
)

// node parses a node's fields: its names, and whether its attributes hold
// tensors or graphs (then it is decoded now, for external data and
// subgraphs).
func (gb *graphBuilder) node(s Str) error {
	g, m := gb.g, gb.m
	b := m.Bytes(s)
	n := Node{raw: s}
	var op, domain Str
	ins, outs := gb.ins[:0], gb.outs[:0]
	// A Constant's value tensor, when it is the node's only attribute and
	// nothing else of the node is heavy (see constView).
	var value Str
	nattr, nvalue, other := 0, 0, false
	var ferr error
	str := func(f onnx.WireField) Str {
		if !utf8.Valid(f.Payload) {
			ferr = errUTF8
		}
		return sub(s, f.Start, len(f.Payload))
	}
	err := onnx.Fields(b, func(f onnx.WireField) bool {
		if f.Type != protowire.BytesType {
			return true
		}
		switch f.Num {
		case onnx.FieldNodeInput:
			ins = append(ins, str(f))
		case onnx.FieldNodeOutput:
			outs = append(outs, str(f))
		case onnx.FieldNodeName:
			n.Name = str(f)
		case onnx.FieldNodeOpType:
			op = str(f)
		case onnx.FieldNodeDomain:
			domain = str(f)
		case onnx.FieldNodeDocString, onnx.FieldNodeOverload:
			str(f)
		case onnx.FieldNodeAttribute:
			nattr++
			named := false
			if err := onnx.Fields(f.Payload, func(a onnx.WireField) bool {
				switch a.Num {
				case onnx.FieldAttrT:
					n.heavy = true
					if a.Type == protowire.BytesType {
						nvalue++
						value = sub(s, f.Start+a.Start, len(a.Payload))
					} else {
						other = true
					}
				case onnx.FieldAttrG, onnx.FieldAttrTensors, onnx.FieldAttrGraphs, onnx.FieldAttrTP, onnx.FieldAttrTypeProtos,
					onnx.FieldAttrSparseTensor, onnx.FieldAttrSparseTensors:
					n.heavy, other = true, true
				case onnx.FieldAttrName, onnx.FieldAttrDocString, onnx.FieldAttrRefAttrName:
					if a.Type == protowire.BytesType && !utf8.Valid(a.Payload) {
						ferr = errUTF8
					}
					if a.Num == onnx.FieldAttrName {
						named = a.Type == protowire.BytesType && string(a.Payload) == "value"
					}
				case onnx.FieldAttrFloats:
					if a.Type == protowire.BytesType && len(a.Payload)%4 != 0 {
						ferr = errPacked
					}
				case onnx.FieldAttrInts:
					if a.Type == protowire.BytesType && !onnx.PackedVarints(a.Payload, nil) {
						ferr = errPacked
					}
				}
				return ferr == nil
			}); err != nil {
				ferr = err
			}
			if !named {
				other = true
			}
		case onnx.FieldNodeMetadataProps:
			n.heavy, other = true, true
		}
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if n.Op, err = m.Intern(m.String(op)); err != nil {
		return err
	}
	if n.Domain, err = m.Intern(m.String(domain)); err != nil {
		return err
	}
	n.In, n.NIn = int32(len(g.Names)), int32(len(ins))
	g.Names = append(g.Names, ins...)
	n.NOut = int32(len(outs))
	g.Names = append(g.Names, outs...)
	gb.ins, gb.outs = ins, outs
	if n.heavy && !other && nattr == 1 && nvalue == 1 && domain.n == 0 {
		if o := m.String(op); o == "Constant" || o == "ConstantOfShape" {
			gb.constView(&n, value)
		}
	}
	g.Nodes = append(g.Nodes, n)
	if n.heavy {
		return gb.heavy(len(g.Nodes) - 1)
	}
	return nil
}

// constView makes the value tensor of a Constant or ConstantOfShape node,
// encoded in s, a view of the node's bytes (Graph.Value) instead of
// decoding the node, when it is of the common form: data in raw_data or
// float_data, not in segments or in an external file. Other forms, and a
// tensor that does not parse, leave the node heavy: decoded, with the
// errors and behaviour of the decoded form.
func (gb *graphBuilder) constView(n *Node, s Str) {
	t, err := gb.parseTensor(s, -1)
	if err != nil || t.span != -1 || t.segment {
		return
	}
	gb.g.Values = append(gb.g.Values, t)
	gb.g.valueNodes = append(gb.g.valueNodes, int32(len(gb.g.Nodes)))
	n.value, n.heavy = true, false
}

// heavy decodes node i, whose attributes hold tensors or graphs: it reads
// external data of its tensors into memory and parses its subgraphs.
func (gb *graphBuilder) heavy(i int) error {
	if gb.heavyViews(i) {
		return nil
	}
	g, m := gb.g, gb.m
	np, err := g.NodeProto(i)
	if err != nil {
		return err
	}
	if err := m.resolveNode(np); err != nil {
		return err
	}
	for _, at := range np.Attribute {
		if at.G != nil {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(at.G)
			if err != nil {
				return err
			}
			if len(m.arena)+len(b) > maxBuf {
				return fmt.Errorf("the subgraphs are larger than 2 GiB")
			}
			off := len(m.arena)
			m.arena = append(m.arena, b...)
			sb := &graphBuilder{m: m, depth: gb.depth + 1}
			if err := sb.parse(Str{off: uint32(off) | arenaBit, n: uint32(len(b))}); err != nil {
				return err
			}
			if g.Subgraphs == nil {
				g.Subgraphs = map[int32][]Subgraph{}
			}
			g.Subgraphs[int32(i)] = append(g.Subgraphs[int32(i)], Subgraph{Attr: at.GetName(), G: sb.g, at: at})
			// The compact graph is what is read and written from now on:
			// the decoded one is not kept (Write encodes the compact one
			// into the attribute).
			at.G = nil
		}
		if len(at.Graphs) > 0 {
			if g.Subgraphs == nil {
				g.Subgraphs = map[int32][]Subgraph{}
			}
			g.Subgraphs[int32(i)] = append(g.Subgraphs[int32(i)], Subgraph{Attr: at.GetName()})
		}
	}
	return nil
}

// heavyViews is heavy for the common case, without decoding the node's
// subgraphs: the node is decoded less its graph attributes' graphs, which
// are parsed where they lie in the node's bytes. It reports false, having
// done nothing that counts, when a subgraph does not parse or holds a tensor
// whose data is in an external file (which must be read into memory):
// heavy then takes the decoded way, with its errors.
func (gb *graphBuilder) heavyViews(i int) bool {
	if gb.depth >= maxViewDepth {
		// Deeper subgraphs are decoded, within the decoder's limits on
		// nesting, rather than parsed by a recursion without one.
		return false
	}
	g, m := gb.g, gb.m
	s := g.Nodes[i].raw
	b := m.Bytes(s)
	// The node's bytes less the g fields of its attributes, and those
	// fields' payloads, attribute by attribute.
	var stripped []byte
	var graphs []Str
	var hasGraph []bool
	nattr := 0
	ok := true
	if err := onnx.Fields(b, func(f onnx.WireField) bool {
		if f.Num != onnx.FieldNodeAttribute || f.Type != protowire.BytesType {
			stripped = append(stripped, b[f.Tag:f.End]...)
			return true
		}
		var at []byte
		var sg Str
		ng := 0
		if err := onnx.Fields(f.Payload, func(a onnx.WireField) bool {
			if a.Num == onnx.FieldAttrG && a.Type == protowire.BytesType {
				sg = sub(s, f.Start+a.Start, len(a.Payload))
				ng++
				return true
			}
			at = append(at, f.Payload[a.Tag:a.End]...)
			return true
		}); err != nil || ng > 1 {
			ok = false
			return false
		}
		stripped = protowire.AppendTag(stripped, onnx.FieldNodeAttribute, protowire.BytesType)
		stripped = protowire.AppendBytes(stripped, at)
		graphs = append(graphs, sg)
		hasGraph = append(hasGraph, ng == 1)
		nattr++
		return true
	}); err != nil || !ok {
		return false
	}
	np := &onnxpb.NodeProto{}
	if err := proto.Unmarshal(stripped, np); err != nil || len(np.Attribute) != nattr {
		return false
	}
	var subs []Subgraph
	for k, at := range np.Attribute {
		if hasGraph[k] {
			sb := &graphBuilder{m: m, depth: gb.depth + 1}
			if err := sb.parse(graphs[k]); err != nil || sb.g.external() {
				return false
			}
			subs = append(subs, Subgraph{Attr: at.GetName(), G: sb.g, at: at})
		}
		if len(at.Graphs) > 0 {
			subs = append(subs, Subgraph{Attr: at.GetName()})
		}
	}
	if err := m.resolveNode(np); err != nil {
		return false
	}
	if g.decoded == nil {
		g.decoded = map[int32]*onnxpb.NodeProto{}
	}
	g.decoded[int32(i)] = np
	if len(subs) > 0 {
		if g.Subgraphs == nil {
			g.Subgraphs = map[int32][]Subgraph{}
		}
		g.Subgraphs[int32(i)] = subs
	}
	return true
}

// external reports whether the graph holds a tensor whose data is in an
// external file, other than in nodes decoded (whose data heavy reads in).
func (g *Graph) external() bool {
	for i := range g.Inits {
		if g.Inits[i].span == -2 {
			return true
		}
	}
	for _, st := range g.Sparse {
		for _, t := range []*onnxpb.TensorProto{st.GetValues(), st.GetIndices()} {
			if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
				return true
			}
		}
	}
	return false
}

// tensor parses an initializer; sp is the index of the span holding its
// data, or -1.
func (gb *graphBuilder) tensor(s Str, sp int32) error {
	t, err := gb.parseTensor(s, sp)
	if err != nil {
		return err
	}
	gb.g.Inits = append(gb.g.Inits, t)
	return nil
}

// parseTensor parses a tensor in compact form; sp is the index of the span
// holding its data, or -1. External data is marked with span -2.
func (gb *graphBuilder) parseTensor(s Str, sp int32) (Tensor, error) {
	m := gb.m
	t := Tensor{raw: s, span: sp}
	var rawData, floatData Str
	var floats []byte
	nfloat := 0
	external := false
	var ferr error
	err := onnx.Fields(m.Bytes(s), func(f onnx.WireField) bool {
		switch f.Num {
		case onnx.FieldTensorDataType:
			if f.Type == protowire.VarintType {
				t.DataType = int32(f.Value)
			}
		case onnx.FieldTensorSegment:
			if f.Type == protowire.BytesType {
				t.segment = true
				if err := proto.Unmarshal(f.Payload, &onnxpb.TensorProto_Segment{}); err != nil {
					ferr = err
				}
			}
		case onnx.FieldTensorDims, onnx.FieldTensorInt32Data, onnx.FieldTensorInt64Data, onnx.FieldTensorUint64Data:
			if f.Type == protowire.BytesType && !onnx.PackedVarints(f.Payload, nil) {
				ferr = errPacked
			}
		case onnx.FieldTensorDoubleData:
			if f.Type == protowire.BytesType && len(f.Payload)%8 != 0 {
				ferr = errPacked
			}
		case onnx.FieldTensorFloatData:
			switch f.Type {
			case protowire.BytesType:
				if len(f.Payload)%4 != 0 {
					ferr = errors.New("float_data is not a whole number of floats")
					return false
				}
				if nfloat == 0 {
					floatData = sub(s, f.Start, len(f.Payload))
				}
				floats = append(floats, f.Payload...)
				nfloat++
			case protowire.Fixed32Type:
				floats = append(floats, byte(f.Value), byte(f.Value>>8), byte(f.Value>>16), byte(f.Value>>24))
				nfloat += 2 // never a single packed field
			}
		case onnx.FieldTensorName:
			if f.Type == protowire.BytesType {
				if !utf8.Valid(f.Payload) {
					ferr = errUTF8
				}
				t.Name = sub(s, f.Start, len(f.Payload))
			}
		case onnx.FieldTensorRawData:
			if f.Type == protowire.BytesType {
				rawData = sub(s, f.Start, len(f.Payload))
			}
		case onnx.FieldTensorDocString:
			if f.Type == protowire.BytesType && !utf8.Valid(f.Payload) {
				ferr = errUTF8
			}
		case onnx.FieldTensorDataLocation:
			if f.Type == protowire.VarintType {
				external = f.Value == uint64(onnxpb.TensorProto_EXTERNAL)
			}
		case onnx.FieldTensorExternalData, onnx.FieldTensorMetadataProps:
			if f.Type == protowire.BytesType {
				if err := proto.Unmarshal(f.Payload, &onnxpb.StringStringEntryProto{}); err != nil {
					ferr = err
				}
			}
		}
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return Tensor{}, err
	}
	if nfloat > 1 {
		off := len(m.arena)
		m.arena = append(m.arena, floats...)
		floatData = Str{off: uint32(off) | arenaBit, n: uint32(len(floats))}
	}
	if sp >= 0 && (rawData.n > 0 || floatData.n > 0 || external) {
		return Tensor{}, fmt.Errorf("initializer %q holds its data twice", m.String(t.Name))
	}
	// The data is raw_data unless that is empty, as protobuf readers take it.
	switch {
	case sp >= 0:
	case rawData.n > 0:
		t.data = rawData
	case nfloat > 0:
		t.data, t.floatData = floatData, true
	}
	if external {
		t.span = -2 // resolved by resolveExternal
	}
	return t, nil
}

func (gb *graphBuilder) finish() error {
	g := gb.g
	if len(g.rest) > 0 {
		if err := proto.Unmarshal(g.rest, &onnxpb.GraphProto{}); err != nil {
			return err
		}
	}
	return nil
}

// resolveExternal turns the external data references of main-graph
// initializers into spans and reads those of all other tensors into memory.
func (m *Model) resolveExternal() error {
	g := m.Graph
	for i := range g.Inits {
		t := &g.Inits[i]
		if t.span != -2 {
			continue
		}
		var ext []*onnxpb.StringStringEntryProto
		if err := onnx.Fields(m.Bytes(t.raw), func(f onnx.WireField) bool {
			if f.Num == onnx.FieldTensorExternalData && f.Type == protowire.BytesType {
				kv := &onnxpb.StringStringEntryProto{}
				if proto.Unmarshal(f.Payload, kv) == nil {
					ext = append(ext, kv)
				}
			}
			return true
		}); err != nil {
			return err
		}
		s, err := m.externalSpan(m.String(t.Name), ext)
		if err != nil {
			return err
		}
		t.span = int32(len(m.spans))
		t.data, t.floatData = Str{}, false
		m.spans = append(m.spans, s)
		m.External = true
	}
	var err error
	for _, st := range g.Sparse {
		for _, t := range []*onnxpb.TensorProto{st.Values, st.Indices} {
			if err == nil && t != nil {
				err = m.resolveTensor(t)
			}
		}
	}
	if err != nil {
		return err
	}
	for _, f := range m.Meta.Functions {
		for _, n := range f.Node {
			if err := m.resolveNode(n); err != nil {
				return err
			}
		}
		for _, a := range f.AttributeProto {
			walkAttr(a, func(t *onnxpb.TensorProto) {
				if err == nil {
					err = m.resolveTensor(t)
				}
			})
		}
	}
	for _, ti := range m.Meta.TrainingInfo {
		for _, sg := range []*onnxpb.GraphProto{ti.Initialization, ti.Algorithm} {
			walkGraph(sg, func(t *onnxpb.TensorProto) {
				if err == nil {
					err = m.resolveTensor(t)
				}
			})
		}
	}
	return err
}

// resolveNode reads the external data of the tensors in a decoded node's
// attributes (and their subgraphs) into memory.
func (m *Model) resolveNode(n *onnxpb.NodeProto) error {
	var err error
	for _, a := range n.Attribute {
		walkAttr(a, func(t *onnxpb.TensorProto) {
			if err == nil {
				err = m.resolveTensor(t)
			}
		})
	}
	return err
}

// resolveTensor reads a tensor's external data into memory.
func (m *Model) resolveTensor(t *onnxpb.TensorProto) error {
	if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
		return nil
	}
	if m.Path == "" {
		return fmt.Errorf("tensor %q keeps its data in an external file; convert the model file with ConvertFile, which reads it", t.GetName())
	}
	s, err := m.externalSpan(t.GetName(), t.ExternalData)
	if err != nil {
		return err
	}
	m.External = true
	data := make([]byte, 0, s.length)
	if err := readSpan(s, t.GetName(), func(c []byte) error { data = append(data, c...); return nil }); err != nil {
		return err
	}
	t.RawData, t.ExternalData, t.DataLocation = data, nil, onnxpb.TensorProto_DEFAULT
	return nil
}

func (m *Model) externalSpan(name string, entries []*onnxpb.StringStringEntryProto) (span, error) {
	if m.Path == "" {
		return span{}, fmt.Errorf("tensor %q keeps its data in an external file; convert the model file with ConvertFile, which reads it", name)
	}
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range entries {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 {
			return span{}, fmt.Errorf("tensor %q in %s: external data %s %q is not a byte count; export the model again", name, m.Path, kv.GetKey(), kv.GetValue())
		}
	}
	st, err := onnx.StatExternal(m.Dir, loc)
	if err != nil {
		return span{}, fmt.Errorf("tensor %q in %s: %w", name, m.Path, externalError(loc, err))
	}
	if length < 0 {
		length = st.Size() - offset
	}
	if length < 0 || offset+length > st.Size() {
		return span{}, fmt.Errorf("tensor %q in %s: external data file %s is %d bytes, but the tensor needs bytes %d to %d; the data file does not belong to this model or is truncated",
			name, m.Path, loc, st.Size(), offset, offset+length)
	}
	return span{path: filepath.Join(m.Dir, filepath.FromSlash(loc)), dir: m.Dir, loc: loc, offset: offset, length: length}, nil
}

// externalError says what is wrong with an external data location and what
// to do about it.
func externalError(loc string, err error) error {
	var ee *onnx.ExternalError
	if !errors.As(err, &ee) {
		return fmt.Errorf("external data: %w", err)
	}
	switch {
	case ee.Problem == onnx.ExternalUnsafe && ee.Reason == "it is empty":
		return fmt.Errorf("external data has no location; export the model again")
	case ee.Problem == onnx.ExternalUnsafe && ee.Reason == "it is an absolute path":
		return fmt.Errorf("external data location %q is absolute; trtbuild reads external data only from the model's folder: move the file there and give its name", loc)
	case ee.Problem == onnx.ExternalUnsafe && strings.Contains(ee.Reason, "link"):
		return fmt.Errorf("external data location %q is a link that leads out of the model's folder; copy the data file into the folder instead", loc)
	case ee.Problem == onnx.ExternalUnsafe:
		return fmt.Errorf("external data location %q leaves the model's folder (%s); trtbuild reads external data only from the model's folder: move the file there and give its name", loc, ee.Reason)
	case ee.Problem == onnx.ExternalMissing:
		return fmt.Errorf("its external data file %s does not exist; keep the data file next to the model", loc)
	case ee.Problem == onnx.ExternalNotRegular:
		return fmt.Errorf("its external data %s is not a regular file (%s); replace it with the data file the model was exported with", loc, ee.Reason)
	default:
		return fmt.Errorf("its external data file %s cannot be read (%s); check its permissions", loc, ee.Reason)
	}
}

// SafeJoin joins an external data location to the model's folder dir with
// the checks of onnx.StatExternal: it refuses empty and absolute locations,
// locations with a ".." element, and locations that a symbolic link leads
// out of dir. A location that does not exist yet is accepted (Write uses it
// for the file it creates).
func SafeJoin(dir, loc string) (string, error) {
	if _, err := onnx.StatExternal(dir, loc); err != nil {
		var ee *onnx.ExternalError
		if !errors.As(err, &ee) || ee.Problem != onnx.ExternalMissing {
			return "", externalError(loc, err)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(loc)), nil
}

// walkAttr calls fn for every tensor of an attribute, its sparse tensors'
// parts and the tensors of its subgraphs.
func walkAttr(a *onnxpb.AttributeProto, fn func(t *onnxpb.TensorProto)) {
	if a.T != nil {
		fn(a.T)
	}
	for _, t := range a.Tensors {
		fn(t)
	}
	for _, st := range append([]*onnxpb.SparseTensorProto{a.SparseTensor}, a.SparseTensors...) {
		if st != nil {
			if st.Values != nil {
				fn(st.Values)
			}
			if st.Indices != nil {
				fn(st.Indices)
			}
		}
	}
	if a.G != nil {
		walkGraph(a.G, fn)
	}
	for _, g := range a.Graphs {
		walkGraph(g, fn)
	}
}

// walkGraph calls fn for every tensor of a decoded graph.
func walkGraph(g *onnxpb.GraphProto, fn func(t *onnxpb.TensorProto)) {
	if g == nil {
		return
	}
	for _, t := range g.Initializer {
		fn(t)
	}
	for _, st := range g.SparseInitializer {
		if st.Values != nil {
			fn(st.Values)
		}
		if st.Indices != nil {
			fn(st.Indices)
		}
	}
	for _, n := range g.Node {
		for _, a := range n.Attribute {
			walkAttr(a, fn)
		}
	}
}
