// Package modelio reads and writes ONNX model files for the precision
// converter in a compact form, without holding the weights in memory.
//
// Load reads the model file once into one buffer, except the data of the
// main graph's large initializers, which stays where it is: in the model
// file or in an external data file next to it. The main graph is not
// decoded into the generated onnxpb types: its nodes, initializers and
// names are views into that buffer (Str), and a node keeps its wire bytes,
// so that Write copies the nodes the converter did not change instead of
// encoding them again. What the converter needs decoded it asks for: the
// attributes of a node (Graph.NodeProto), the subgraphs of If, Loop and
// Scan (each a Graph of its own), the value infos (small, decoded), and
// everything of the model outside its main graph (Model.Meta). The value
// tensor of a Constant or ConstantOfShape node of the common form is not
// decoded either: it is a Tensor viewing the node's bytes (Graph.Value),
// lowered as it is written like an initializer.
//
// The converter records its changes in the Graph (renamed inputs and
// outputs, new node order with inserted nodes, tensors to lower to a
// 16-bit type, value infos to lower) and Write streams the result.
//
// A Model is not safe for concurrent mutation; ReadData may be called from
// several goroutines at once.
package modelio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// lazyMin is the smallest payload Load leaves in its file.
const lazyMin = 4 << 10

// chunkSize is how much ReadData hands to its callback at a time; a
// multiple of 8, so chunks never split a value.
const chunkSize = 4 << 20

// span is a byte range of a file holding a tensor's data as little-endian
// fixed-width values (raw_data, a packed float_data field, or external data).
type span struct {
	path string // the file, for messages and SourceFiles
	// dir and loc are the model's folder and the external data location
	// for external data; loc is "" for data in the model file.
	dir, loc string
	offset   int64
	length   int64
}

// open opens the span's file with the checks of package onnx: the model
// file with OpenModel, external data with OpenExternal, so that no read of
// data can leave the model's folder or block on a FIFO.
func (s span) open() (*os.File, error) {
	var f *os.File
	var err error
	if s.loc == "" {
		f, _, err = onnx.OpenModel(s.path)
	} else {
		f, _, err = onnx.OpenExternal(s.dir, s.loc)
	}
	return f, err
}

// Str is a string held in a model's buffers (see Model.String): two
// integers instead of a string header, so that the records holding them
// have no pointers for the garbage collector to follow.
type Str struct{ off, n uint32 }

// arenaBit marks a Str in the model's arena rather than its file buffer.
const arenaBit = 1 << 31

// Len returns the string's length in bytes.
func (s Str) Len() int { return int(s.n) }

// Model is an ONNX model in compact form.
type Model struct {
	// Meta is the model without its main graph: opset imports, functions,
	// metadata, fields this program does not know. Tensors in functions
	// hold their data in memory.
	Meta *onnxpb.ModelProto
	// Graph is the main graph.
	Graph *Graph
	// Path is the file the model was read from ("" for a model parsed from memory).
	Path string
	// Dir is the folder external data locations are relative to.
	Dir string
	// FileSize is the size of the model file.
	FileSize int64
	// External tells whether any tensor's data was in an external file.
	External bool

	buf   []byte // the model file's bytes, less the payloads left in files
	arena []byte // bytes that are not in the file: subgraphs, new names
	spans []span
	// syms are the interned op types and domains.
	syms   []string
	symIDs map[string]uint16
	// lowering converts the data of the tensors marked Lower as Write
	// writes them.
	lowering Lowering
}

// Lowering is how Write writes the tensors marked Tensor.Lower: with
// DataType, and their float32 data through Convert, which fills dst (half
// the length of src) from src.
type Lowering struct {
	DataType int32
	Convert  func(dst, src []byte)
}

// SetLowering sets how the tensors marked Lower are written.
func (m *Model) SetLowering(l Lowering) { m.lowering = l }

// Bytes returns the bytes of s. They must not be changed.
func (m *Model) Bytes(s Str) []byte {
	if s.off&arenaBit != 0 {
		o := s.off &^ arenaBit
		return m.arena[o : o+s.n : o+s.n]
	}
	return m.buf[s.off : s.off+s.n : s.off+s.n]
}

// String returns s as a string that shares the model's memory.
func (m *Model) String(s Str) string {
	b := m.Bytes(s)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// NewStr stores a string in the model's arena.
func (m *Model) NewStr(s string) Str {
	off := len(m.arena)
	m.arena = append(m.arena, s...)
	return Str{off: uint32(off) | arenaBit, n: uint32(len(s))}
}

// Graph is a graph of the model in compact form: the main graph, or the
// subgraph of an If, Loop or Scan node.
type Graph struct {
	// Nodes are the graph's nodes in file order.
	Nodes []Node
	// Names are the nodes' inputs and outputs: node i's inputs are
	// Names[Nodes[i].In : Nodes[i].In+Nodes[i].NIn], its outputs follow.
	// An omitted optional input or output is an empty Str.
	Names []Str
	// Inits are the graph's initializers in file order.
	Inits []Tensor
	// Inputs, Outputs and ValueInfo are decoded (they are few, or small).
	Inputs, Outputs, ValueInfo []*onnxpb.ValueInfoProto
	// Values are the value tensors of Constant and ConstantOfShape nodes
	// kept as views of the nodes' bytes (see Graph.Value), in node order;
	// valueNodes are their nodes' indexes (a search, not a field of every
	// Node, finds a node's tensor).
	Values     []Tensor
	valueNodes []int32
	// Sparse are the sparse initializers, decoded.
	Sparse []*onnxpb.SparseTensorProto
	// Subgraphs are the graph attributes of nodes (If's branches, the
	// bodies of Loop and Scan), by node index, each parsed as a Graph.
	Subgraphs map[int32][]Subgraph

	// Order, when set, is the order Write writes the nodes in, as indexes
	// of Nodes. Nil writes Nodes as they are.
	Order []int32

	m *Model
	// rest holds the graph's other fields (name, doc string, annotations,
	// unknown fields) in their wire encoding.
	rest []byte
	// decoded holds the nodes decoded with NodeProto.
	decoded map[int32]*onnxpb.NodeProto
}

// Subgraph is a graph attribute of a node.
type Subgraph struct {
	Attr string
	G    *Graph
	at   *onnxpb.AttributeProto
}

// Node is one node of a graph. Its names are views into the model; its
// attributes stay in its wire bytes until Graph.NodeProto decodes them.
type Node struct {
	Name Str
	raw  Str // the node's wire encoding
	// In indexes the node's inputs in Graph.Names; its outputs follow them.
	In, NIn, NOut int32
	// Op and Domain are interned (Model.Sym): a model has few of them.
	Op, Domain uint16
	// Changed makes Write encode the node anew (from its names and, when
	// decoded, its NodeProto) instead of copying its bytes. Set it after
	// changing Op or Names.
	Changed bool
	// heavy: its attributes hold tensors or graphs, so Load decodes it.
	heavy bool
	// value: its value tensor is a view, in Graph.Values (see Graph.Value).
	value bool
}

// Out is the index of the node's first output in Graph.Names.
func (n *Node) Out() int32 { return n.In + n.NIn }

// Sym returns an interned string (an op type or domain).
func (m *Model) Sym(id uint16) string { return m.syms[id] }

// Intern returns the id of an op type or domain, adding it if new.
func (m *Model) Intern(s string) (uint16, error) {
	if id, ok := m.symIDs[s]; ok {
		return id, nil
	}
	if len(m.syms) > 1<<16-1 {
		return 0, fmt.Errorf("the model has more than %d operator types and domains", 1<<16-1)
	}
	if m.symIDs == nil {
		m.symIDs = map[string]uint16{}
	}
	id := uint16(len(m.syms))
	m.syms = append(m.syms, s)
	m.symIDs[s] = id
	return id, nil
}

// NodeInputs returns the inputs of node i: views into Names, so that
// changing one renames the input (set the node's Changed too).
func (g *Graph) NodeInputs(i int) []Str {
	n := &g.Nodes[i]
	return g.Names[n.In : n.In+n.NIn : n.In+n.NIn]
}

// NodeOutputs returns the outputs of node i (see NodeInputs).
func (g *Graph) NodeOutputs(i int) []Str {
	n := &g.Nodes[i]
	o := n.Out()
	return g.Names[o : o+n.NOut : o+n.NOut]
}

// NodeProto returns node i decoded, for its attributes. Its inputs,
// outputs, name, op type and domain are those of the file; Names and Op
// are what Write writes. The NodeProto may be changed; a node whose
// NodeProto was asked for is written from it.
func (g *Graph) NodeProto(i int) (*onnxpb.NodeProto, error) {
	if n, ok := g.decoded[int32(i)]; ok {
		return n, nil
	}
	n := &onnxpb.NodeProto{}
	if err := proto.Unmarshal(g.m.Bytes(g.Nodes[i].raw), n); err != nil {
		return nil, fmt.Errorf("node %d cannot be decoded (%v)", i, err)
	}
	if g.decoded == nil {
		g.decoded = map[int32]*onnxpb.NodeProto{}
	}
	g.decoded[int32(i)] = n
	return n, nil
}

// Value returns the value tensor of node i, a Constant or
// ConstantOfShape node whose only attribute is "value", as a view of the
// node's bytes; nil when the node has no such view (it is decoded: use
// NodeProto). The tensor's data is read with ReadData; marking it Lower
// makes Write encode the node with the tensor lowered (the node must then
// not be decoded with NodeProto).
func (g *Graph) Value(i int) *Tensor {
	if !g.Nodes[i].value {
		return nil
	}
	k, ok := slices.BinarySearch(g.valueNodes, int32(i))
	if !ok {
		panic(fmt.Sprintf("modelio: node %d has a value view but no tensor", i))
	}
	return &g.Values[k]
}

// AddNode appends a node made by the converter and returns its index. It
// is written from n, with the names Names holds for it (n's to begin with).
func (g *Graph) AddNode(n *onnxpb.NodeProto) (int32, error) {
	m := g.m
	idx := int32(len(g.Nodes))
	nd := Node{Name: m.NewStr(n.GetName()), Changed: true}
	var err error
	if nd.Op, err = m.Intern(n.GetOpType()); err != nil {
		return 0, err
	}
	if nd.Domain, err = m.Intern(n.GetDomain()); err != nil {
		return 0, err
	}
	nd.In, nd.NIn = int32(len(g.Names)), int32(len(n.Input))
	for _, s := range n.Input {
		g.Names = append(g.Names, m.NewStr(s))
	}
	nd.NOut = int32(len(n.Output))
	for _, s := range n.Output {
		g.Names = append(g.Names, m.NewStr(s))
	}
	g.Nodes = append(g.Nodes, nd)
	if g.decoded == nil {
		g.decoded = map[int32]*onnxpb.NodeProto{}
	}
	g.decoded[idx] = n
	return idx, nil
}

// TypeOf returns the data type t is written with: its own, or the
// Lowering's when it is marked Lower.
func (m *Model) TypeOf(t *Tensor) int32 {
	if t.Lower {
		return m.lowering.DataType
	}
	return t.DataType
}

// Tensor is an initializer in compact form.
type Tensor struct {
	Name Str
	raw  Str // the tensor's fields, less its data (raw_data, float_data, external data)
	// data is its raw_data, or its float_data as little-endian bytes
	// (floatData), when in memory.
	data     Str
	DataType int32
	span     int32 // index of its span in the model when the data is in a file; -1 if not
	// Lower makes Write write the tensor with the data type and the data
	// of the model's Lowering (see SetLowering).
	Lower     bool
	floatData bool
	segment   bool
}

// InFile reports whether the tensor's data is still in a file.
func (t *Tensor) InFile() bool { return t.span >= 0 }

// Segmented reports whether the tensor is stored in segments.
func (t *Tensor) Segmented() bool { return t.segment }

// Elements returns the number of values the tensor's shape holds; an
// error for a negative dimension or a count whose float32 data would not
// fit an int64.
func (m *Model) Elements(t *Tensor) (int64, error) {
	n := int64(1)
	var err error
	dim := func(d int64) {
		switch {
		case err != nil:
		case d < 0:
			err = fmt.Errorf("tensor %q has a negative dimension", m.String(t.Name))
		case d > 0 && n > math.MaxInt64/4/d:
			err = fmt.Errorf("tensor %q is too large", m.String(t.Name))
		default:
			n *= d
		}
	}
	m.forDims(t, dim)
	return n, err
}

// AppendDims appends the tensor's shape to dims.
func (m *Model) AppendDims(dims []int64, t *Tensor) []int64 {
	m.forDims(t, func(d int64) { dims = append(dims, d) })
	return dims
}

// forDims calls fn for each dimension of t's shape, packed or not.
func (m *Model) forDims(t *Tensor, fn func(d int64)) {
	onnx.Fields(m.Bytes(t.raw), func(f onnx.WireField) bool {
		switch {
		case f.Num != onnx.FieldTensorDims:
		case f.Type == protowire.VarintType:
			fn(int64(f.Value))
		case f.Type == protowire.BytesType:
			onnx.PackedVarints(f.Payload, func(v uint64) { fn(int64(v)) })
		}
		return true
	})
}

// SourceFiles returns the files the model's data is read from: the model
// file and the external data files of tensors still in files.
func (m *Model) SourceFiles() []string {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	add(m.Path)
	for _, s := range m.spans {
		add(s.path)
	}
	return files
}

// DataSize returns the number of bytes of t's data in its fixed-width
// little-endian form, or an error for types without one (strings).
func (m *Model) DataSize(t *Tensor) (int64, error) {
	switch {
	case t.span >= 0:
		return m.spans[t.span].length, nil
	case !t.floatData && t.data.n > 0:
		return int64(t.data.n), nil
	case t.DataType == int32(onnxpb.TensorProto_FLOAT):
		return int64(t.data.n), nil // float_data, or none
	case t.data.n > 0:
		return 0, fmt.Errorf("tensor %q: float_data holds %s values, not float", m.String(t.Name), dataTypeName(t.DataType))
	default:
		// Types whose values live in other typed fields are read through
		// their raw form only when they are float; the converter asks for no others.
		return 0, fmt.Errorf("tensor %q: data type %s is not stored as raw bytes", m.String(t.Name), dataTypeName(t.DataType))
	}
}

// ReadData calls fn with t's data in its fixed-width little-endian form, in
// chunks of at most 4 MiB, each a whole number of values. fn must not keep
// the chunk. It works for data in files, raw_data and float_data.
func (m *Model) ReadData(t *Tensor, fn func(chunk []byte) error) error {
	if t.span >= 0 {
		return readSpan(m.spans[t.span], m.String(t.Name), fn)
	}
	if _, err := m.DataSize(t); err != nil {
		return err
	}
	for b := m.Bytes(t.data); len(b) > 0; {
		n := min(len(b), chunkSize)
		if err := fn(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// ReadProtoData is ReadData for a decoded tensor, whose data is in memory
// (raw_data or float_data).
func ReadProtoData(t *onnxpb.TensorProto, fn func(chunk []byte) error) error {
	if len(t.RawData) > 0 {
		for b := t.RawData; len(b) > 0; {
			n := min(len(b), chunkSize)
			if err := fn(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	if _, err := ProtoDataSize(t); err != nil {
		return err
	}
	buf := make([]byte, 0, min(4*len(t.FloatData), chunkSize))
	for i, v := range t.FloatData {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(t.FloatData)-1 {
			if err := fn(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// ProtoDataSize is DataSize for a decoded tensor.
func ProtoDataSize(t *onnxpb.TensorProto) (int64, error) {
	switch {
	case len(t.RawData) > 0:
		return int64(len(t.RawData)), nil
	case t.GetDataType() == int32(onnxpb.TensorProto_FLOAT):
		return 4 * int64(len(t.FloatData)), nil
	case len(t.FloatData) > 0:
		return 0, fmt.Errorf("tensor %q: float_data holds %s values, not float", t.GetName(), dataTypeName(t.GetDataType()))
	default:
		return 0, fmt.Errorf("tensor %q: data type %s is not stored as raw bytes", t.GetName(), dataTypeName(t.GetDataType()))
	}
}

// chunks recycles ReadData's buffers.
var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// readSpan calls fn with the span's bytes, chunk by chunk. A goroutine
// reads the next chunk while fn works on the current one.
func readSpan(s span, name string, fn func([]byte) error) error {
	f, err := s.open()
	if err != nil {
		return fmt.Errorf("reading data of tensor %q: %w", name, err)
	}
	defer f.Close()
	type chunk struct {
		buf *[]byte
		n   int64
		err error
	}
	ready := make(chan chunk, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		for off := int64(0); off < s.length; {
			buf := chunks.Get().(*[]byte)
			n := min(int64(len(*buf)), s.length-off)
			_, err := f.ReadAt((*buf)[:n], s.offset+off)
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			select {
			case ready <- chunk{buf, n, err}:
			case <-stop:
				chunks.Put(buf)
				return
			}
			if err != nil {
				return
			}
			off += n
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for c := range ready {
		if c.err != nil {
			chunks.Put(c.buf)
			return fmt.Errorf("reading data of tensor %q from %s: %w", name, s.path, c.err)
		}
		err := fn((*c.buf)[:c.n])
		chunks.Put(c.buf)
		if err != nil {
			return err
		}
	}
	return nil
}

func dataTypeName(dt int32) string {
	if n, ok := onnxpb.TensorProto_DataType_name[dt]; ok {
		return n
	}
	return fmt.Sprintf("%d", dt)
}
