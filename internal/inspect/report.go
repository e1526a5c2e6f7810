// Package inspect describes an ONNX model for people (Text) and programs
// (JSON): its versions, inputs and outputs, operators, weights, external
// data files, custom operators and, for dynamic inputs, the shape flags a
// build needs.
package inspect

import (
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// SchemaVersion is the "v" field of the JSON output. It changes when a
// field is removed or changes meaning; new fields may appear without a
// change.
const SchemaVersion = 1

// Report is everything inspect shows, and the JSON document it writes.
type Report struct {
	V               int         `json:"v"`
	Path            string      `json:"path"`
	FileBytes       int64       `json:"file_bytes"`
	IRVersion       int64       `json:"ir_version"`
	Opsets          []Opset     `json:"opsets"`
	ProducerName    string      `json:"producer_name"`
	ProducerVersion string      `json:"producer_version"`
	Domain          string      `json:"domain,omitempty"`
	ModelVersion    int64       `json:"model_version,omitempty"`
	Graph           string      `json:"graph"`
	Inputs          []Value     `json:"inputs"`
	Outputs         []Value     `json:"outputs"`
	Nodes           int         `json:"nodes"`
	SubgraphNodes   int         `json:"subgraph_nodes"`
	Functions       []string    `json:"functions"`
	Ops             []OpCount   `json:"ops"`
	Initializers    int         `json:"initializers"`
	InitializerSize int64       `json:"initializer_bytes"`
	ExternalData    []External  `json:"external_data"`
	CustomOps       []OpCount   `json:"custom_ops"`
	ShapeFlags      *ShapeFlags `json:"shape_flags"`
}

// Opset is one imported operator set; Domain "ai.onnx" for the standard one.
type Opset struct {
	Domain  string `json:"domain"`
	Version int64  `json:"version"`
}

// Value is a graph input or output. Shape holds, per dimension, a number (a
// fixed size), a string (a named dynamic dimension) or null (unknown); it is
// null when the rank is unknown.
type Value struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	ElemType int32  `json:"elem_type"`
	Shape    []any  `json:"shape"`
	Dynamic  bool   `json:"dynamic"`
}

// OpCount is an operator with its number of nodes. Domain is "" for
// standard ONNX.
type OpCount struct {
	Domain string `json:"domain"`
	Op     string `json:"op"`
	Count  int    `json:"count"`
}

// External is one external data file and its state.
type External struct {
	Location    string `json:"location"`
	Tensors     int    `json:"tensors"`
	NeededBytes int64  `json:"needed_bytes"`
	Exists      bool   `json:"exists"`
	SizeBytes   int64  `json:"size_bytes"`
	OK          bool   `json:"ok"`
	// Problem is "" when OK, else why the file cannot be used.
	Problem string `json:"problem"`
}

// ShapeFlags are example shape flags for the model's dynamic inputs (see
// preflight.ExampleShapes); nil when every input is static.
type ShapeFlags struct {
	Inputs []string `json:"inputs"`
	Min    string   `json:"min"`
	Opt    string   `json:"opt"`
	Max    string   `json:"max"`
	// Line is the three flags as one command-line fragment.
	Line string `json:"line"`
	// UnknownRank lists dynamic inputs of unknown rank, for which no
	// example can be given.
	UnknownRank []string `json:"unknown_rank"`
}

// New builds the report for m; dir is the folder that holds the model's
// external data (normally the model's own folder).
func New(m *onnx.Model, dir string) *Report {
	r := &Report{
		V:               SchemaVersion,
		Path:            m.Path,
		FileBytes:       m.FileSize,
		IRVersion:       m.IRVersion,
		ProducerName:    m.ProducerName,
		ProducerVersion: m.ProducerVersion,
		Domain:          m.Domain,
		ModelVersion:    m.ModelVersion,
		Graph:           m.GraphName,
		Nodes:           len(m.Nodes),
		SubgraphNodes:   len(m.SubgraphNodes),
		Initializers:    len(m.Initializers),
		InitializerSize: m.InitializerBytes(),
		Opsets:          []Opset{},
		Inputs:          []Value{},
		Outputs:         []Value{},
		Functions:       []string{},
		Ops:             []OpCount{},
		ExternalData:    []External{},
		CustomOps:       []OpCount{},
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		r.Opsets = append(r.Opsets, Opset{Domain: d, Version: o.Version})
	}
	for _, v := range m.Inputs {
		r.Inputs = append(r.Inputs, newValue(v))
	}
	for _, v := range m.Outputs {
		r.Outputs = append(r.Outputs, newValue(v))
	}
	for _, f := range m.Functions {
		name := f.Name
		if f.Domain != "" {
			name = f.Domain + "::" + name
		}
		r.Functions = append(r.Functions, name)
	}
	for _, c := range m.OpHistogram() {
		r.Ops = append(r.Ops, OpCount{Domain: c.Domain, Op: c.OpType, Count: c.Count})
	}
	for _, c := range m.CustomOps() {
		r.CustomOps = append(r.CustomOps, OpCount{Domain: c.Domain, Op: c.OpType, Count: c.Count})
	}
	for _, f := range m.ExternalFiles(dir) {
		r.ExternalData = append(r.ExternalData, External{
			Location:    f.Location,
			Tensors:     f.Tensors,
			NeededBytes: f.Needed,
			Exists:      f.Exists,
			SizeBytes:   f.Size,
			OK:          f.OK(),
			Problem:     externalProblem(f),
		})
	}
	for _, ref := range m.External {
		if ref.Location == "" {
			r.ExternalData = append(r.ExternalData, External{Tensors: 1, NeededBytes: satAdd(ref.Offset, ref.Length), Problem: "tensor " + quote(ref.Tensor) + ": " + ref.Problem})
		}
	}
	if dyn := m.DynamicInputs(); len(dyn) > 0 {
		sf := &ShapeFlags{Inputs: []string{}, UnknownRank: []string{}}
		for _, in := range dyn {
			if in.Shape == nil {
				sf.UnknownRank = append(sf.UnknownRank, in.Name)
			} else {
				sf.Inputs = append(sf.Inputs, in.Name)
			}
		}
		if len(sf.Inputs) > 0 {
			min, opt, max := preflight.ExampleShapes(dyn)
			sf.Min, sf.Opt, sf.Max = shapes.Format(min), shapes.Format(opt), shapes.Format(max)
			sf.Line = preflight.FlagLine(min, opt, max)
		}
		r.ShapeFlags = sf
	}
	return r
}

func newValue(v onnx.Value) Value {
	out := Value{Name: v.Name, Kind: v.Kind, Type: v.ElemType.String(), ElemType: int32(v.ElemType), Dynamic: v.IsDynamic()}
	if v.Kind == "" {
		out.Type = ""
	}
	if v.Shape != nil {
		out.Shape = make([]any, len(v.Shape))
		for i, d := range v.Shape {
			switch {
			case d.Known:
				out.Shape[i] = d.Value
			case d.Param != "":
				out.Shape[i] = d.Param
			}
		}
	}
	return out
}

// externalProblem says why an external data file cannot be used.
func externalProblem(f onnx.ExternalFile) string {
	switch {
	case f.Unsafe != "":
		return "refused: " + f.Unsafe
	case f.StatErr != "":
		return "unreadable: " + f.StatErr
	case !f.Exists:
		return "missing"
	case !f.Regular:
		return "not a regular file"
	case f.Size < f.Needed:
		return "too small"
	}
	return ""
}

// satAdd adds two non-negative sizes, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
