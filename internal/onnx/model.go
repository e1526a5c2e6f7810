// Package onnx reads ONNX models.
//
// ReadMetadata walks a model file's protobuf encoding without decoding it
// into memory: it reads names, types, shapes and the graph's structure, and
// seeks past tensor payloads (raw_data, float_data ...) without reading them,
// so that a model of several gigabytes is described in milliseconds with a
// small, fixed buffer. Every length and nesting depth is checked against the
// file, so a damaged or hostile file yields an error, never a panic or a
// large allocation. Code that changes a model and writes it back reads it
// with internal/convert/modelio, which walks the same wire format.
package onnx

import (
	"fmt"
	"sort"
	"strconv"
)

// Model is what ReadMetadata learns about an ONNX file.
type Model struct {
	// Path is the file that was read, as given to ReadMetadata.
	Path string
	// FileSize is the model file's size in bytes.
	FileSize int64

	IRVersion       int64
	Opsets          []Opset
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	GraphName       string

	// Inputs are the main graph's real inputs: graph inputs that are not
	// also initializers (before IR version 4, initializers were listed as
	// inputs too).
	Inputs []Value
	// Outputs are the main graph's outputs.
	Outputs []Value
	// Nodes are the main graph's nodes, in file order.
	Nodes []Node
	// SubgraphNodes are the nodes of graphs nested in node attributes (the
	// bodies of If, Loop, Scan ...), at any depth, in file order.
	SubgraphNodes []Node
	// Functions are the model-local functions.
	Functions []Function

	// Initializers are the constant tensors of the main graph and of its
	// subgraphs (dense and sparse), without their data.
	Initializers []Tensor
	// External lists every tensor stored outside the model file, wherever
	// it appears (initializers, Constant nodes' attributes, subgraphs).
	External []ExternalRef
}

// Opset is one operator set the model imports. Domain "" is ai.onnx.
type Opset struct {
	Domain  string
	Version int64
}

// Value is a graph input or output.
type Value struct {
	Name string
	// Kind is "tensor", "sparse_tensor", "sequence", "map", "optional",
	// "opaque", or "" when the value has no type.
	Kind string
	// ElemType is the element type of a tensor or sparse tensor.
	ElemType DataType
	// Shape is nil when the rank is unknown.
	Shape []Dim
}

// Dim is one dimension of a Value's shape: a fixed size, a symbolic name, or
// unknown.
type Dim struct {
	// Value is the size when Param is "" and Known is true.
	Value int64
	// Param is the symbolic name ("batch", "seq_len") of a dynamic dimension.
	Param string
	// Known is true when Value holds a fixed size.
	Known bool
}

// IsDynamic reports whether the dimension has no fixed size.
func (d Dim) IsDynamic() bool { return !d.Known }

// String returns the size, the symbolic name, or "?" when unknown.
func (d Dim) String() string {
	switch {
	case d.Known:
		return strconv.FormatInt(d.Value, 10)
	case d.Param != "":
		return d.Param
	default:
		return "?"
	}
}

// IsDynamic reports whether the value's rank is unknown or any dimension has
// no fixed size.
func (v Value) IsDynamic() bool {
	if v.Shape == nil {
		return true
	}
	for _, d := range v.Shape {
		if d.IsDynamic() {
			return true
		}
	}
	return false
}

// Node is one operator application.
type Node struct {
	Name   string
	OpType string
	// Domain is the operator set's domain; "" and "ai.onnx" are standard
	// ONNX.
	Domain string
}

// Function is a model-local function: an operator defined in the model
// itself by a body of nodes.
type Function struct {
	Domain, Name, Overload string
	Nodes                  []Node
}

// Tensor describes one initializer without its data. Dims may be shared
// between tensors of the same shape: do not write to it.
type Tensor struct {
	Name string
	Dims []int64
	// Bytes is the size of the tensor's data: elements times element size
	// when the type has a fixed width, else what the file stores (the sum
	// of string lengths for STRING).
	Bytes int64
	// DataType is after the 8-byte fields so that the struct, of which a
	// model has one per initializer, has no padding.
	DataType DataType
	// Sparse is true for a sparse initializer (Dims is the dense shape and
	// Bytes the stored values and indices).
	Sparse bool
	// External is true when the data lives in an external file.
	External bool
}

// ExternalRef is one tensor whose data lives in a file beside the model.
type ExternalRef struct {
	// Tensor is the tensor's name.
	Tensor string
	// Location is the file's path relative to the model's folder, exactly as
	// written in the model. It is untrusted: see ExternalFiles.
	Location string
	// Offset is where the data starts in the file.
	Offset int64
	// Length is the number of bytes; HasLength is false when the model does
	// not say, and then Length is the size the tensor's type and shape need
	// (or 0 when that is unknown).
	Length    int64
	HasLength bool
	// Problem is set when the reference itself is malformed (a non-numeric
	// offset, for example); the other fields may then be incomplete.
	Problem string
}

// OpCount is one operator and how often it occurs.
type OpCount struct {
	Domain string
	OpType string
	Count  int
}

// String returns "OpType", or "domain::OpType" outside standard ONNX.
func (o OpCount) String() string {
	if IsStandardDomain(o.Domain) {
		return o.OpType
	}
	return o.Domain + "::" + o.OpType
}

// IsStandardDomain reports whether domain names the standard ONNX operator
// set ("" or "ai.onnx").
func IsStandardDomain(domain string) bool {
	return domain == "" || domain == "ai.onnx"
}

// NodeNames returns the main graph's node names in order. An unnamed node is
// called "<op_type>_<index>", index being its position in the graph. These
// are the layer names the simulated builder times.
func (m *Model) NodeNames() []string {
	names := make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		if n.Name != "" {
			names[i] = n.Name
		} else {
			names[i] = n.OpType + "_" + strconv.Itoa(i)
		}
	}
	return names
}

// Opset returns the version of the operator set imported for domain ("" for
// ai.onnx; "ai.onnx" is treated the same), or 0 when it is not imported.
func (m *Model) Opset(domain string) int64 {
	for _, o := range m.Opsets {
		if o.Domain == domain || (IsStandardDomain(domain) && IsStandardDomain(o.Domain)) {
			return o.Version
		}
	}
	return 0
}

// OpHistogram counts the main graph's operators, most frequent first, ties
// by name.
func (m *Model) OpHistogram() []OpCount {
	return histogram(m.Nodes)
}

// CustomOps counts the operators, in the main graph, its subgraphs and its
// functions, whose domain is not standard ONNX and that no model-local
// function defines. TensorRT needs a plugin for each of them.
func (m *Model) CustomOps() []OpCount {
	local := map[[2]string]bool{}
	for _, f := range m.Functions {
		local[[2]string{f.Domain, f.Name}] = true
	}
	var custom []Node
	add := func(nodes []Node) {
		for _, n := range nodes {
			if !IsStandardDomain(n.Domain) && !local[[2]string{n.Domain, n.OpType}] {
				custom = append(custom, n)
			}
		}
	}
	add(m.Nodes)
	add(m.SubgraphNodes)
	for _, f := range m.Functions {
		add(f.Nodes)
	}
	return histogram(custom)
}

// InitializerBytes returns the total data size of all initializers,
// external ones included.
func (m *Model) InitializerBytes() int64 {
	var total int64
	for _, t := range m.Initializers {
		total = satAdd(total, t.Bytes)
	}
	return total
}

// DynamicInputs returns the inputs whose shape is not fully fixed.
func (m *Model) DynamicInputs() []Value {
	var dyn []Value
	for _, in := range m.Inputs {
		if in.IsDynamic() {
			dyn = append(dyn, in)
		}
	}
	return dyn
}

// Input returns the input named name.
func (m *Model) Input(name string) (Value, bool) {
	for _, in := range m.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return Value{}, false
}

func histogram(nodes []Node) []OpCount {
	counts := map[[2]string]int{}
	for _, n := range nodes {
		d := n.Domain
		if IsStandardDomain(d) {
			d = ""
		}
		counts[[2]string{d, n.OpType}]++
	}
	out := make([]OpCount, 0, len(counts))
	for k, c := range counts {
		out = append(out, OpCount{Domain: k[0], OpType: k[1], Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].OpType < out[j].OpType
	})
	return out
}

// satAdd adds two non-negative sizes, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}

// String returns a short description, for debugging.
func (m *Model) String() string {
	return fmt.Sprintf("onnx.Model{%s ir=%d nodes=%d inputs=%d outputs=%d initializers=%d}",
		m.Path, m.IRVersion, len(m.Nodes), len(m.Inputs), len(m.Outputs), len(m.Initializers))
}
