package convert

import (
	"errors"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/convert/opschema"
)

// ErrInternal is wrapped by errors that are bugs in the conversion rather
// than problems of the model.
var ErrInternal = errors.New("internal error")

// verify analyses a converted model again and checks that every node's
// inputs and outputs have types its schema admits, consistently, and that
// control-flow nodes agree with their subgraphs. A failure is a bug in the
// conversion, reported rather than written.
//
// The check reads the converted model as Write will write it: the nodes in
// their new order with the inserted Casts, the renamed inputs and outputs,
// the changed attributes, the declared types and the initializers' new
// types, all from the compact form, with an analysis of its own, which
// reuses the memory of the conversion's (reuse, from analysis.release).
func verify(m *modelio.Model, target Target, table *opschema.Table, reuse *reusable) error {
	a := newAnalysis(m, target, table, true)
	a.reuse = reuse
	err := a.run()
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
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			var err error
			if a.isControlFlow(n) {
				err = checkControlFlow(a, n)
			} else if a.schema(n) != nil {
				err = checkSchema(a, n)
			}
			if err != nil {
				return fmt.Errorf("%s: %s: %w", a.where(gc), a.label(n), err)
			}
		}
	}
	return nil
}

func checkSchema(a *analysis, n int32) error {
	// Whether a node passes depends on its schema and types alone: nodes
	// alike are checked once (a failure is checked again, for its message).
	key, memo := a.sig(n, true)
	if memo && a.checked[key] {
		return nil
	}
	if err := checkSchemaOnce(a, n); err != nil {
		return err
	}
	if memo {
		a.checked[key] = true
	}
	return nil
}

func checkSchemaOnce(a *analysis, n int32) error {
	s := a.schema(n)
	ins, outs := a.ins(n), a.outs(n)
	for i, p := range s.Inputs {
		if p.Option == opschema.Single && (i >= len(ins) || ins[i] < 0) {
			return fmt.Errorf("its required input %d (%s) is missing", i, p.Name)
		}
	}
	if k := len(ins); k > len(s.Inputs) && (len(s.Inputs) == 0 || s.Inputs[len(s.Inputs)-1].Option != opschema.Variadic) {
		return fmt.Errorf("it has %d inputs, more than %s allows", k, s)
	}
	if k := len(outs); k > len(s.Outputs) && (len(s.Outputs) == 0 || s.Outputs[len(s.Outputs)-1].Option != opschema.Variadic) {
		return fmt.Errorf("it has %d outputs, more than %s allows", k, s)
	}
	// binding maps type constraints to the type bound so far; a node has a
	// handful, so a slice beats a map allocated per node.
	type bound struct {
		param string
		typ   typeID
	}
	var bindingArr [4]bound
	binding := bindingArr[:0]
	check := func(p opschema.Param, ok bool, v int32, kind string, i int) error {
		if v < 0 {
			return nil
		}
		if !ok {
			return fmt.Errorf("%s has no %s %d", s, kind, i)
		}
		t := a.values[v].typ
		if !s.Admits(p.Type, string(a.types[t])) {
			return fmt.Errorf("%s %d (%q) is %s, which %s does not accept for %s", kind, i, a.vname(v), a.types[t], s, p.Type)
		}
		if !s.IsConstraint(p.Type) || (p.Option == opschema.Variadic && !p.Homogeneous) {
			return nil
		}
		for _, b := range binding {
			if b.param == p.Type {
				if b.typ != t {
					return fmt.Errorf("%s %d (%q) is %s but another value bound to %s is %s", kind, i, a.vname(v), a.types[t], p.Type, a.types[b.typ])
				}
				return nil
			}
		}
		binding = append(binding, bound{p.Type, t})
		return nil
	}
	for i, v := range ins {
		p, ok := s.Input(i)
		if err := check(p, ok, v, "input", i); err != nil {
			return err
		}
	}
	for j, v := range outs {
		p, ok := s.Output(j)
		if err := check(p, ok, v, "output", j); err != nil {
			return err
		}
	}
	return nil
}

func checkControlFlow(a *analysis, n int32) error {
	same := func(what string, x, y vtype) error {
		if x != "" && y != "" && x != y {
			return fmt.Errorf("%s: %s against %s", what, x, y)
		}
		return nil
	}
	ins := a.ins(n)
	switch a.opOf(n) {
	case "Loop":
		body := a.subs(n)[0]
		for i := 2; i < len(ins); i++ {
			if err := same(fmt.Sprintf("loop-carried value %d enters as", i-2), a.typeAt(ins, i), a.vtyp(body.inputs[i])); err != nil {
				return err
			}
			if err := same(fmt.Sprintf("loop-carried value %d leaves the body as", i-2), a.vtyp(body.inputs[i]), a.vtyp(body.outputs[i-1])); err != nil {
				return err
			}
		}
	case "Scan":
		_, first, err := a.scanStates(n)
		if err != nil {
			return err
		}
		body := a.subs(n)[0]
		for i := first; i < len(ins); i++ {
			if err := same(fmt.Sprintf("scan input %d enters as", i), a.typeAt(ins, i), a.vtyp(body.inputs[i-first])); err != nil {
				return err
			}
		}
	}
	return nil
}
