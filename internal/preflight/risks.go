package preflight

import (
	"fmt"
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
	// Rule is "shape-volume" (limits.go) or "unsupported-op".
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Risks returns the risks of building m with profiles, the optimization profiles as the build
// completes them (nil or empty when the model is static), for the ONNX parser whose operator
// list is ops (nil: no operator check). The order is stable: shapes, then operators. Shapes the
// limits refuse are CheckProfile's to report, not risks.
func Risks(m *onnx.Model, profiles []shapes.Profile, ops *parserops.List) []Risk {
	var risks []Risk
	var all []inputShapes
	given := map[string]bool{}
	for i, p := range profiles {
		where := ""
		if len(profiles) > 1 {
			where = fmt.Sprintf(" in profile %d", i)
		}
		for _, s := range buildShapes(m, p.Inputs, where) {
			if !s.own {
				given[s.name] = true
				all = append(all, s)
			}
		}
	}
	for _, s := range buildShapes(m, nil, "") {
		if !given[s.name] {
			all = append(all, s)
		}
	}
	for _, s := range all {
		if l := s.check(); l.rule != "" && !l.refused {
			risks = append(risks, Risk{Rule: l.rule, Message: l.message})
		}
	}
	if ops != nil {
		risks = append(risks, operatorRisks(m, ops)...)
	}
	return dedupe(risks)
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
