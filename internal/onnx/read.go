package onnx

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// ReadMetadata reads the structure of the ONNX model at path without reading
// its tensor data. Errors for files that are not ONNX models, or are damaged,
// are *FormatError values (errors.Is ErrNotONNX, or ErrTruncated for a file
// that ends early) whose message is one line naming the file.
func ReadMetadata(path string) (*Model, error) {
	f, st, err := OpenModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := decode(f, st.Size(), path)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// decode reads a model from src, which holds size bytes, and turns decoding
// failures into *FormatError values naming path.
func decode(src io.ReadSeeker, size int64, path string) (*Model, error) {
	if size == 0 {
		return nil, &FormatError{Path: path, Offset: -1, Reason: "the file is empty"}
	}
	w := NewWalker(src, size, path)
	d := &decoder{r: w.r, m: &Model{Path: path, FileSize: size}}
	if err := d.model(); err != nil {
		return nil, w.Error(err)
	}
	if !d.sawGraph {
		return nil, w.NoGraph()
	}
	d.finish()
	return d.m, nil
}

// sniffSize is how much of a file's start sniff looks at.
const sniffSize = 64

// sniffFile reads the start of src and names its format if it is one often
// mistaken for ONNX.
func sniffFile(src io.ReadSeeker, onnxStart bool) string {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	head := make([]byte, sniffSize)
	n, _ := io.ReadFull(src, head)
	return sniff(head[:n], onnxStart)
}

// decoder fills a Model from a wireReader.
type decoder struct {
	r        *wireReader
	m        *Model
	sawGraph bool
	// rawInputs are the main graph's inputs before initializers are removed.
	rawInputs []Value
	// mainInits are the indexes in m.Initializers of the main graph's
	// initializers (a set of their names would cost a map entry each).
	mainInits []int32
	// strs holds the bytes of the names kept; see name.
	strs []byte
	// interned are the op types and domains met so far; see intern.
	interned map[string]string
	// dims holds the dimensions of tensors; see keepDims.
	dims []int64
	// scratch collects one tensor's dimensions.
	scratch []int64
	// lastDims are the dimensions keepDims kept last.
	lastDims []int64
}

// finish derives what needs the whole file: the real inputs.
func (d *decoder) finish() {
	// Before IR version 4 initializers were listed as inputs too; leave
	// them out. The set is of the inputs, which are few in current models.
	isInit := make(map[string]bool, len(d.rawInputs))
	for _, in := range d.rawInputs {
		isInit[in.Name] = false
	}
	for _, i := range d.mainInits {
		if _, ok := isInit[d.m.Initializers[i].Name]; ok {
			isInit[d.m.Initializers[i].Name] = true
		}
	}
	for _, in := range d.rawInputs {
		if !isInit[in.Name] {
			d.m.Inputs = append(d.m.Inputs, in)
		}
	}
}

func (d *decoder) model() error {
	r := d.r
	return r.message(r.size, 0, "the model", func(f field) (bool, error) {
		var err error
		switch {
		case f.num == FieldModelIRVersion && f.typ == protowire.VarintType:
			d.m.IRVersion, err = d.int64(r.size, "ir_version")
		case f.num == FieldModelModelVersion && f.typ == protowire.VarintType:
			d.m.ModelVersion, err = d.int64(r.size, "model_version")
		case f.num == FieldModelProducerName && f.typ == protowire.BytesType:
			d.m.ProducerName, err = r.str(f.end, "producer_name")
		case f.num == FieldModelProducerVersion && f.typ == protowire.BytesType:
			d.m.ProducerVersion, err = r.str(f.end, "producer_version")
		case f.num == FieldModelDomain && f.typ == protowire.BytesType:
			d.m.Domain, err = r.str(f.end, "domain")
		case f.num == FieldModelOpsetImport && f.typ == protowire.BytesType:
			err = d.opset(f.end)
		case f.num == FieldModelGraph && f.typ == protowire.BytesType:
			d.sawGraph = true
			err = d.graph(f.end, 1, true, "the graph")
		case f.num == FieldModelFunctions && f.typ == protowire.BytesType:
			err = d.function(f.end)
		default:
			return false, nil
		}
		return true, err
	})
}

// isModelField reports whether f could start a ModelProto.
func isModelField(f field) bool {
	switch f.num {
	case FieldModelIRVersion, FieldModelModelVersion:
		return f.typ == protowire.VarintType
	case FieldModelProducerName, FieldModelProducerVersion, FieldModelDomain, FieldModelDocString, FieldModelGraph, FieldModelOpsetImport,
		FieldModelMetadataProps, FieldModelTrainingInfo, FieldModelFunctions, FieldModelConfiguration:
		return f.typ == protowire.BytesType
	}
	return false
}

// Chunk sizes of the decoder's arenas. A model of 10^5 nodes has as many
// names and tensors: one allocation each would cost more than the names.
const (
	strChunk = 64 << 10
	dimChunk = 4 << 10
	// maxInterned bounds the strings intern keeps: op types and domains are
	// few; a file with more gets the rest as plain names.
	maxInterned = 4096
)

// name reads a string payload ending at end into the decoder's string
// arena: names are kept for the model's life, so they share large chunks
// instead of taking an allocation each. Long strings get their own.
func (d *decoder) name(end int64, what string) (string, error) {
	r := d.r
	n := end - r.pos()
	if n > maxString {
		return "", r.corrupt(r.pos(), "%s is %d bytes long, more than the %d this reader accepts", what, n, maxString)
	}
	if n == 0 {
		return "", nil
	}
	if n > strChunk/8 {
		return r.str(end, what)
	}
	if int64(cap(d.strs)-len(d.strs)) < n {
		d.strs = make([]byte, 0, strChunk)
	}
	start := len(d.strs)
	for int64(len(d.strs)-start) < n {
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return "", r.eof(r.pos(), text(what))
			}
			return "", err
		}
		k := min(int(n)-(len(d.strs)-start), r.w-r.r)
		d.strs = append(d.strs, r.buf[r.r:r.r+k]...)
		r.r += k
	}
	// The arena's bytes are never written again once appended.
	return unsafe.String(&d.strs[start], int(n)), nil
}

// intern reads a string payload that repeats across the model (an op type,
// a domain, a dimension name) and returns one shared copy of it.
func (d *decoder) intern(end int64, what string) (string, error) {
	if d.interned == nil {
		d.interned = map[string]string{}
	}
	n := end - d.r.pos()
	if n <= 0 || n > 256 || int64(d.r.w-d.r.r) < n {
		return d.name(end, what)
	}
	b := d.r.buf[d.r.r : d.r.r+int(n)]
	if s, ok := d.interned[string(b)]; ok { // no allocation for the lookup
		d.r.r += int(n)
		return s, nil
	}
	s, err := d.name(end, what)
	if err == nil && len(d.interned) < maxInterned {
		d.interned[s] = s
	}
	return s, err
}

// keepDims copies a tensor's dimensions into the decoder's dims arena.
func (d *decoder) keepDims(dims []int64) []int64 {
	if len(dims) == 0 {
		return nil
	}
	// Consecutive tensors often have the same shape (a model's layers
	// repeat): they share one copy, which nothing writes to.
	if slices.Equal(dims, d.lastDims) {
		return d.lastDims
	}
	var kept []int64
	switch {
	case len(dims) > dimChunk/8:
		kept = slices.Clone(dims)
	default:
		if cap(d.dims)-len(d.dims) < len(dims) {
			d.dims = make([]int64, 0, dimChunk)
		}
		start := len(d.dims)
		d.dims = append(d.dims, dims...)
		kept = d.dims[start:len(d.dims):len(d.dims)]
	}
	d.lastDims = kept
	return kept
}

func (d *decoder) int64(end int64, what string) (int64, error) {
	v, err := d.r.varint(end, text(what))
	return int64(v), err
}

func (d *decoder) opset(end int64) error {
	var o Opset
	err := d.r.message(end, 1, "an opset_import", func(f field) (bool, error) {
		var err error
		switch {
		case f.num == FieldOpsetDomain && f.typ == protowire.BytesType:
			o.Domain, err = d.r.str(f.end, "an opset domain")
		case f.num == FieldOpsetVersion && f.typ == protowire.VarintType:
			o.Version, err = d.int64(end, "an opset version")
		default:
			return false, nil
		}
		return true, err
	})
	d.m.Opsets = append(d.m.Opsets, o)
	return err
}

// graph reads a GraphProto. main is true for the model's graph; nodes of
// other graphs go to SubgraphNodes.
func (d *decoder) graph(end int64, depth int, main bool, what string) error {
	r := d.r
	if main {
		if err := d.presize(end, depth, what); err != nil {
			return err
		}
	}
	return r.message(end, depth, what, func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		var err error
		switch f.num {
		case FieldGraphNode:
			var n Node
			n, err = d.node(f.end, depth+1)
			if main {
				d.m.Nodes = append(d.m.Nodes, n)
			} else {
				d.m.SubgraphNodes = append(d.m.SubgraphNodes, n)
			}
		case FieldGraphName:
			var name string
			name, err = r.str(f.end, "a graph name")
			if main {
				d.m.GraphName = name
			}
		case FieldGraphInitializer:
			var t Tensor
			t, err = d.tensor(f.end, depth+1, "an initializer")
			if main {
				d.mainInits = append(d.mainInits, int32(len(d.m.Initializers)))
			}
			d.m.Initializers = append(d.m.Initializers, t)
		case FieldGraphSparseInitializer:
			var t Tensor
			t, err = d.sparse(f.end, depth+1)
			if main {
				d.mainInits = append(d.mainInits, int32(len(d.m.Initializers)))
			}
			d.m.Initializers = append(d.m.Initializers, t)
		case FieldGraphInput, FieldGraphOutput:
			if !main {
				return false, nil
			}
			var v Value
			v, err = d.value(f.end, depth+1)
			if f.num == FieldGraphInput {
				d.rawInputs = append(d.rawInputs, v)
			} else {
				d.m.Outputs = append(d.m.Outputs, v)
			}
		default:
			return false, nil
		}
		return true, err
	})
}

// presize counts the nodes and initializers of the main graph, which ends
// at end, with a first pass over its fields that reads only their tags and
// lengths, and sizes the model's slices to fit: a model of 10^5 nodes would
// otherwise grow them by copying, holding old and new copies at once.
func (d *decoder) presize(end int64, depth int, what string) error {
	r := d.r
	start := r.pos()
	var nodes, inits int
	err := r.message(end, depth, what, func(f field) (bool, error) {
		if f.typ == protowire.BytesType {
			switch f.num {
			case FieldGraphNode:
				nodes++
			case FieldGraphInitializer, FieldGraphSparseInitializer:
				inits++
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	d.m.Nodes = slices.Grow(d.m.Nodes, nodes)
	d.m.Initializers = slices.Grow(d.m.Initializers, inits)
	d.mainInits = slices.Grow(d.mainInits, inits)
	return r.seekBack(start)
}

func (d *decoder) node(end int64, depth int) (Node, error) {
	r := d.r
	var n Node
	err := r.message(end, depth, "a node", func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		var err error
		switch f.num {
		case FieldNodeName:
			n.Name, err = d.name(f.end, "a node name")
		case FieldNodeOpType:
			n.OpType, err = d.intern(f.end, "a node op_type")
		case FieldNodeDomain:
			n.Domain, err = d.intern(f.end, "a node domain")
		case FieldNodeAttribute:
			err = d.attribute(f.end, depth+1)
		default:
			return false, nil
		}
		return true, err
	})
	return n, err
}

// attribute reads the parts of an AttributeProto that hold subgraphs or
// tensors (whose data may be external); the rest is skipped.
func (d *decoder) attribute(end int64, depth int) error {
	return d.r.message(end, depth, "a node attribute", func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		var err error
		switch f.num {
		case FieldAttrT, FieldAttrTensors:
			_, err = d.tensor(f.end, depth+1, "a tensor attribute")
		case FieldAttrSparseTensor, FieldAttrSparseTensors:
			_, err = d.sparse(f.end, depth+1)
		case FieldAttrG, FieldAttrGraphs:
			err = d.graph(f.end, depth+1, false, "a subgraph")
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *decoder) function(end int64) error {
	r := d.r
	var fn Function
	err := r.message(end, 1, "a function", func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		var err error
		switch f.num {
		case FieldFuncName:
			fn.Name, err = r.str(f.end, "a function name")
		case FieldFuncDomain:
			fn.Domain, err = r.str(f.end, "a function domain")
		case FieldFuncOverload:
			fn.Overload, err = r.str(f.end, "a function overload")
		case FieldFuncNode:
			var n Node
			n, err = d.node(f.end, 2)
			fn.Nodes = append(fn.Nodes, n)
		default:
			return false, nil
		}
		return true, err
	})
	d.m.Functions = append(d.m.Functions, fn)
	return err
}

// tensor reads a TensorProto's name, type, shape and external data
// reference, and skips its data.
func (d *decoder) tensor(end int64, depth int, what string) (Tensor, error) {
	r := d.r
	var (
		t        Tensor
		stored   int64 // bytes of inline data as stored
		strBytes int64 // total length of string_data
		location int64
		entries  [][2]string
		badDims  bool
		dims     = d.scratch[:0]
	)
	err := r.message(end, depth, what, func(f field) (bool, error) {
		var err error
		switch {
		case f.num == FieldTensorDims && f.typ == protowire.VarintType:
			var v uint64
			v, err = r.varint(end, text("tensor dims"))
			dims = append(dims, int64(v))
		case f.num == FieldTensorDims && f.typ == protowire.BytesType:
			for r.pos() < f.end && err == nil {
				var v uint64
				v, err = r.varint(f.end, text("tensor dims"))
				dims = append(dims, int64(v))
			}
		case f.num == FieldTensorDataType && f.typ == protowire.VarintType:
			var v uint64
			v, err = r.varint(end, text("tensor data_type"))
			t.DataType = DataType(int32(v))
		case f.num == FieldTensorName && f.typ == protowire.BytesType:
			t.Name, err = d.name(f.end, "a tensor name")
		case f.num == FieldTensorStringData && f.typ == protowire.BytesType:
			strBytes = satAdd(strBytes, f.end-r.pos())
			return false, nil
		case f.typ == protowire.BytesType && (f.num == FieldTensorRawData || f.num == FieldTensorFloatData ||
			f.num == FieldTensorInt32Data || f.num == FieldTensorInt64Data || f.num == FieldTensorDoubleData ||
			f.num == FieldTensorUint64Data):
			stored = satAdd(stored, f.end-r.pos())
			return false, nil
		case f.num == FieldTensorExternalData && f.typ == protowire.BytesType:
			var kv [2]string
			kv, err = d.entry(f.end, depth+1)
			entries = append(entries, kv)
		case f.num == FieldTensorDataLocation && f.typ == protowire.VarintType:
			location, err = d.int64(end, "tensor data_location")
		default:
			return false, nil
		}
		return true, err
	})
	d.scratch = dims[:0]
	if err != nil {
		return t, err
	}
	t.Dims = d.keepDims(dims)
	for _, v := range t.Dims {
		if v < 0 {
			badDims = true
		}
	}
	size, sized := t.size()
	switch {
	case location == DataLocationExternal:
		t.External = true
		ref := externalRef(t.Name, entries)
		if !ref.HasLength && sized && !badDims {
			ref.Length = size
		}
		t.Bytes = ref.Length
		d.m.External = append(d.m.External, ref)
	case t.DataType == String:
		t.Bytes = strBytes
	case sized && !badDims:
		t.Bytes = size
	default:
		t.Bytes = stored
	}
	return t, nil
}

// size returns the number of data bytes t's type and shape call for, and
// false when the type has no fixed width or the size overflows.
func (t Tensor) size() (int64, bool) {
	b := t.DataType.Bits()
	if b == 0 {
		return 0, false
	}
	var n uint64 = 1
	for _, v := range t.Dims {
		if v < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, uint64(v))
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	hi, lo := bits.Mul64(n, uint64(b))
	if hi != 0 || lo > 1<<63-1-7 {
		return 0, false
	}
	return int64((lo + 7) / 8), true
}

// externalRef builds an ExternalRef from external_data entries.
func externalRef(tensor string, entries [][2]string) ExternalRef {
	ref := ExternalRef{Tensor: tensor}
	for _, kv := range entries {
		switch kv[0] {
		case "location":
			ref.Location = kv[1]
		case "offset":
			v, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil || v < 0 {
				ref.Problem = fmt.Sprintf("offset %q is not a byte count", kv[1])
				continue
			}
			ref.Offset = v
		case "length":
			v, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil || v < 0 {
				ref.Problem = fmt.Sprintf("length %q is not a byte count", kv[1])
				continue
			}
			ref.Length, ref.HasLength = v, true
		}
	}
	if ref.Location == "" && ref.Problem == "" {
		ref.Problem = "it has no location"
	}
	return ref
}

// entry reads a StringStringEntryProto.
func (d *decoder) entry(end int64, depth int) ([2]string, error) {
	var kv [2]string
	err := d.r.message(end, depth, "an external_data entry", func(f field) (bool, error) {
		if f.typ != protowire.BytesType || (f.num != FieldEntryKey && f.num != FieldEntryValue) {
			return false, nil
		}
		s, err := d.r.str(f.end, "an external_data entry")
		kv[f.num-1] = s
		return true, err
	})
	return kv, err
}

// sparse reads a SparseTensorProto as one Tensor: the name and type of its
// values, its dense shape, and the bytes of values and indices.
func (d *decoder) sparse(end int64, depth int) (Tensor, error) {
	var t Tensor
	t.Sparse = true
	err := d.r.message(end, depth, "a sparse tensor", func(f field) (bool, error) {
		var err error
		switch {
		case f.num == FieldSparseValues && f.typ == protowire.BytesType:
			var v Tensor
			v, err = d.tensor(f.end, depth+1, "sparse values")
			t.Name, t.DataType = v.Name, v.DataType
			t.Bytes = satAdd(t.Bytes, v.Bytes)
			t.External = t.External || v.External
		case f.num == FieldSparseIndices && f.typ == protowire.BytesType:
			var v Tensor
			v, err = d.tensor(f.end, depth+1, "sparse indices")
			t.Bytes = satAdd(t.Bytes, v.Bytes)
			t.External = t.External || v.External
		case f.num == FieldSparseDims && f.typ == protowire.VarintType:
			var v uint64
			v, err = d.r.varint(end, text("sparse dims"))
			t.Dims = append(t.Dims, int64(v))
		case f.num == FieldSparseDims && f.typ == protowire.BytesType:
			for d.r.pos() < f.end && err == nil {
				var v uint64
				v, err = d.r.varint(f.end, text("sparse dims"))
				t.Dims = append(t.Dims, int64(v))
			}
		default:
			return false, nil
		}
		return true, err
	})
	return t, err
}

// value reads a ValueInfoProto.
func (d *decoder) value(end int64, depth int) (Value, error) {
	r := d.r
	var v Value
	err := r.message(end, depth, "a graph input or output", func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		var err error
		switch f.num {
		case FieldValueName:
			v.Name, err = r.str(f.end, "a value name")
		case FieldValueType:
			err = d.typ(f.end, depth+1, &v)
		default:
			return false, nil
		}
		return true, err
	})
	return v, err
}

// typ reads a TypeProto into v's Kind, ElemType and Shape.
func (d *decoder) typ(end int64, depth int, v *Value) error {
	return d.r.message(end, depth, "a type", func(f field) (bool, error) {
		if f.typ != protowire.BytesType {
			return false, nil
		}
		switch f.num {
		case FieldTypeTensor, FieldTypeSparseTensor:
			v.Kind = "tensor"
			if f.num == FieldTypeSparseTensor {
				v.Kind = "sparse_tensor"
			}
			return true, d.tensorType(f.end, depth+1, v)
		case FieldTypeSequence:
			v.Kind = "sequence"
		case FieldTypeMap:
			v.Kind = "map"
		case FieldTypeOptional:
			v.Kind = "optional"
		case FieldTypeOpaque:
			v.Kind = "opaque"
		}
		return false, nil
	})
}

func (d *decoder) tensorType(end int64, depth int, v *Value) error {
	r := d.r
	return r.message(end, depth, "a tensor type", func(f field) (bool, error) {
		switch {
		case f.num == FieldTypeTensorElemType && f.typ == protowire.VarintType:
			e, err := r.varint(end, text("elem_type"))
			v.ElemType = DataType(int32(e))
			return true, err
		case f.num == FieldTypeTensorShape && f.typ == protowire.BytesType:
			if v.Shape == nil {
				v.Shape = []Dim{} // known rank, even if 0
			}
			return true, r.message(f.end, depth+1, "a shape", func(g field) (bool, error) {
				if g.num != FieldShapeDim || g.typ != protowire.BytesType {
					return false, nil
				}
				dim, err := d.dim(g.end, depth+2)
				v.Shape = append(v.Shape, dim)
				return true, err
			})
		}
		return false, nil
	})
}

func (d *decoder) dim(end int64, depth int) (Dim, error) {
	r := d.r
	var dim Dim
	err := r.message(end, depth, "a dimension", func(f field) (bool, error) {
		var err error
		switch {
		case f.num == FieldDimValue && f.typ == protowire.VarintType:
			var v uint64
			v, err = r.varint(end, text("dim_value"))
			// dim_value and dim_param are a oneof: the last one wins. Some
			// exporters write -1 for an unknown size; that is not a size.
			dim = Dim{Value: int64(v), Known: int64(v) >= 0}
			if !dim.Known {
				dim.Value = 0
			}
		case f.num == FieldDimParam && f.typ == protowire.BytesType:
			var s string
			s, err = d.intern(f.end, "dim_param")
			dim = Dim{Param: s}
		default:
			return false, nil
		}
		return true, err
	})
	return dim, err
}
