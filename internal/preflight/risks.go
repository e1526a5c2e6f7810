package preflight

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/parserops"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Risks. The rules above refuse a build; these only find what makes a build that starts likely
// to fail: TensorRT reports them late (at parse time or deep in the build), so `trtbuild inspect
// --check` reports them first, with the refusals, and fails on either.

// Risk is one reason a build is likely to fail although preflight lets it start. Message is one
// line naming the problem and the fix.
type Risk struct {
	// Rule is "shape-volume", "shape-empty" or "unsupported-op".
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// MaxVolume is the most elements an input may have before a build is judged likely to fail:
// most TensorRT layers index tensors with 32-bit integers, and an input larger than that is
// nearly always a typo in a shape flag (99999999999x3x224x224).
const MaxVolume = 1<<31 - 1

// Risks returns the risks of building m with profiles, the optimization profiles as the build
// completes them (nil or empty when the model is static), for the ONNX parser whose operator
// list is ops (nil: no operator check). The order is stable: shapes, then operators.
func Risks(m *onnx.Model, profiles []shapes.Profile, ops *parserops.List) []Risk {
	var risks []Risk
	given := map[string]bool{}
	for i, p := range profiles {
		where := ""
		if len(profiles) > 1 {
			where = fmt.Sprintf(" in profile %d", i)
		}
		for _, in := range p.Inputs {
			given[in.Name] = true
			sel := [3][]int64{in.Min, in.Opt, in.Max}
			if rangeString(sel) == shapes.FormatDims(in.Opt) {
				risks = append(risks, shapeRisks(in.Name, "the shape "+shapes.FormatDims(in.Opt)+where, in.Opt)...)
				continue
			}
			for s, dims := range sel {
				if r := shapeRisks(in.Name, fmt.Sprintf("the %s shape %s%s", selectorNames[s], shapes.FormatDims(dims), where), dims); len(r) > 0 {
					risks = append(risks, r...)
					break // one risk per input: the others follow from it
				}
			}
		}
	}
	for _, in := range m.Inputs {
		if given[in.Name] || in.Shape == nil || in.IsDynamic() {
			continue
		}
		dims := make([]int64, len(in.Shape))
		for i, d := range in.Shape {
			dims[i] = d.Value
		}
		risks = append(risks, shapeRisks(in.Name, "the model's shape "+DimsString(in.Shape), dims)...)
	}
	if ops != nil {
		risks = append(risks, operatorRisks(m, ops)...)
	}
	return dedupe(risks)
}

// shapeRisks checks one shape of input: what names the shape for the message.
func shapeRisks(input, what string, dims []int64) []Risk {
	var risks []Risk
	for i, d := range dims {
		// Negative sizes never get here: the shape flags refuse them, and the ONNX reader takes
		// a negative fixed dimension for an unknown one.
		if d == 0 {
			dim := fmt.Sprintf("dimension %d", i)
			if i == 0 {
				dim = "dimension 0 (the batch)"
			}
			risks = append(risks, Risk{Rule: "shape-empty", Message: fmt.Sprintf("input %q: %s gives %s the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more", input, what, dim)})
		}
	}
	if len(risks) > 0 {
		return risks[:1]
	}
	if v, ok := volume(dims); !ok || v > MaxVolume {
		return []Risk{{Rule: "shape-volume", Message: fmt.Sprintf("input %q: %s is %s elements, more than the 2^31-1 most TensorRT layers can index; check the shape flags for a typo", input, what, volumeText(v, ok))}}
	}
	return nil
}

// volume multiplies dims; ok is false when the product overflows 64 bits.
func volume(dims []int64) (uint64, bool) {
	v := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(v, uint64(d))
		if hi != 0 {
			return 0, false
		}
		v = lo
	}
	return v, true
}

func volumeText(v uint64, ok bool) string {
	if !ok {
		return "more than 2^64"
	}
	return fmt.Sprintf("%d", v)
}

// operatorRisks names the standard operators of the main graph and its subgraphs that ops does
// not import, one risk per operator, with up to three of its nodes.
func operatorRisks(m *onnx.Model, ops *parserops.List) []Risk {
	local := map[string]bool{}
	for _, f := range m.Functions {
		if onnx.IsStandardDomain(f.Domain) {
			local[f.Name] = true
		}
	}
	nodes := map[string][]string{}
	var order []string
	for _, list := range [][]onnx.Node{m.Nodes, m.SubgraphNodes} {
		for _, n := range list {
			if !onnx.IsStandardDomain(n.Domain) || local[n.OpType] || ops.Support(n.OpType) == parserops.Supported {
				continue
			}
			if _, seen := nodes[n.OpType]; !seen {
				order = append(order, n.OpType)
			}
			nodes[n.OpType] = append(nodes[n.OpType], n.Name)
		}
	}
	sort.Strings(order)
	var risks []Risk
	for _, op := range order {
		why := "is not imported by"
		if ops.Support(op) == parserops.Unlisted {
			why = "is not in onnx-tensorrt's operator list for"
		}
		risks = append(risks, Risk{Rule: "unsupported-op", Message: fmt.Sprintf("operator %s (%s) %s the ONNX parser of TensorRT %s, so the build would fail when TensorRT parses the model; replace it in the model before export, or give TensorRT a plugin for it",
			op, nodeList(nodes[op]), why, ops.TensorRT)})
	}
	return risks
}

// nodeList writes "2 nodes: "a", "b"", naming at most three.
func nodeList(names []string) string {
	quoted := make([]string, 0, 3)
	for _, n := range names {
		if len(quoted) == 3 {
			quoted = append(quoted, "…")
			break
		}
		if n == "" {
			n = "(unnamed)"
		}
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	count := "1 node"
	if len(names) != 1 {
		count = fmt.Sprintf("%d nodes", len(names))
	}
	return count + ": " + strings.Join(quoted, ", ")
}

func dedupe(risks []Risk) []Risk {
	seen := map[string]bool{}
	out := risks[:0]
	for _, r := range risks {
		if !seen[r.Message] {
			seen[r.Message] = true
			out = append(out, r)
		}
	}
	return out
}
