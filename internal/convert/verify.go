package convert

import (
	"errors"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// ErrInternal is wrapped by errors that are bugs in the conversion rather
// than problems of the model.
var ErrInternal = errors.New("internal error")

// verify analyses a converted model again and checks that every node's
// inputs and outputs have types its schema admits, consistently, and that
// control-flow nodes agree with their subgraphs. A failure is a bug in the
// conversion, reported rather than written.
//
// reuse are the slabs of the conversion's analysis (analysis.release), whose
// memory the check reuses.
func verify(m *onnxpb.ModelProto, target Target, table *opschema.Table, reuse slabs) error {
	a, err := analyseTypes(m, target, table, reuse)
	if err == nil {
		err = checkTypes(a)
	}
	if err != nil {
		return fmt.Errorf("%w: the converted model is not type-consistent (%v); nothing was written, please report this with the model", ErrInternal, err)
	}
	return nil
}

func checkTypes(a *analysis) error {
	for _, gc := range a.graphs {
		for _, ni := range gc.nodes {
			var err error
			if isControlFlow(ni) {
				err = checkControlFlow(ni)
			} else if ni.schema != nil {
				err = checkSchema(ni)
			}
			if err != nil {
				return fmt.Errorf("%s: %s: %w", gc.where(), ni.label(), err)
			}
		}
	}
	return nil
}

func checkSchema(ni *nodeInfo) error {
	s := ni.schema
	for i, p := range s.Inputs {
		if p.Option == opschema.Single && (i >= len(ni.ins) || ni.ins[i] == nil) {
			return fmt.Errorf("its required input %d (%s) is missing", i, p.Name)
		}
	}
	if n := len(ni.ins); n > len(s.Inputs) && (len(s.Inputs) == 0 || s.Inputs[len(s.Inputs)-1].Option != opschema.Variadic) {
		return fmt.Errorf("it has %d inputs, more than %s allows", n, s)
	}
	if n := len(ni.outs); n > len(s.Outputs) && (len(s.Outputs) == 0 || s.Outputs[len(s.Outputs)-1].Option != opschema.Variadic) {
		return fmt.Errorf("it has %d outputs, more than %s allows", n, s)
	}
	// binding maps type constraints to the type bound so far; a node has a
	// handful, so a slice beats a map allocated per node.
	var bindingArr [4]struct {
		param string
		typ   vtype
	}
	binding := bindingArr[:0]
	check := func(p opschema.Param, ok bool, v *value, kind string, i int) error {
		if v == nil {
			return nil
		}
		if !ok {
			return fmt.Errorf("%s has no %s %d", s, kind, i)
		}
		if !s.Admits(p.Type, string(v.typ)) {
			return fmt.Errorf("%s %d (%q) is %s, which %s does not accept for %s", kind, i, v.name, v.typ, s, p.Type)
		}
		if !s.IsConstraint(p.Type) || (p.Option == opschema.Variadic && !p.Homogeneous) {
			return nil
		}
		for _, b := range binding {
			if b.param == p.Type {
				if b.typ != v.typ {
					return fmt.Errorf("%s %d (%q) is %s but another value bound to %s is %s", kind, i, v.name, v.typ, p.Type, b.typ)
				}
				return nil
			}
		}
		binding = append(binding, struct {
			param string
			typ   vtype
		}{p.Type, v.typ})
		return nil
	}
	for i, v := range ni.ins {
		p, ok := s.Input(i)
		if err := check(p, ok, v, "input", i); err != nil {
			return err
		}
	}
	for j, v := range ni.outs {
		p, ok := s.Output(j)
		if err := check(p, ok, v, "output", j); err != nil {
			return err
		}
	}
	return nil
}

func checkControlFlow(ni *nodeInfo) error {
	same := func(what string, a, b vtype) error {
		if a != "" && b != "" && a != b {
			return fmt.Errorf("%s: %s against %s", what, a, b)
		}
		return nil
	}
	switch ni.n.GetOpType() {
	case "Loop":
		body := ni.subs[0]
		for i := 2; i < len(ni.ins); i++ {
			if err := same(fmt.Sprintf("loop-carried value %d enters as", i-2), typeAt(ni.ins, i), body.inputs[i].typ); err != nil {
				return err
			}
			if err := same(fmt.Sprintf("loop-carried value %d leaves the body as", i-2), body.inputs[i].typ, body.outputs[i-1].typ); err != nil {
				return err
			}
		}
	case "Scan":
		_, first, err := scanStates(ni)
		if err != nil {
			return err
		}
		body := ni.subs[0]
		for i := first; i < len(ni.ins); i++ {
			if err := same(fmt.Sprintf("scan input %d enters as", i), typeAt(ni.ins, i), body.inputs[i-first].typ); err != nil {
				return err
			}
		}
	}
	return nil
}
