package convert

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// rewriter changes the model's graphs to the decided types. Nodes it does
// not change keep their bytes; the changes go into the compact graphs
// (renamed inputs and outputs, new op types and attributes, the order of
// the nodes with the inserted Casts), which modelio writes.
type rewriter struct {
	a    *analysis
	c    *classifier
	m    *modelio.Model
	used *names
	sum  *Summary
}

func (r *rewriter) suffix(lowered bool) string {
	if lowered {
		return "_" + string(r.a.target)
	}
	return "_fp32"
}

// castNode adds a Cast node to gc's graph and returns its index.
func (r *rewriter) castNode(gc *graphCtx, from, to string, lowered bool) (int32, *onnxpb.NodeProto, error) {
	dt := onnxpb.TensorProto_FLOAT
	if lowered {
		dt = r.a.target.dataType()
	}
	n := &onnxpb.NodeProto{
		Name:   r.used.fresh(to + "_cast"),
		OpType: "Cast",
		Input:  []string{from},
		Output: []string{to},
		Attribute: []*onnxpb.AttributeProto{
			{Name: "to", Type: onnxpb.AttributeProto_INT, I: int64(dt)},
		},
	}
	k, err := gc.g.AddNode(n)
	return k, n, err
}

func (r *rewriter) typeName(lowered bool) string {
	if lowered {
		return r.a.target.elemName()
	}
	return "float"
}

// ref returns the name under which gc's nodes read v in the wanted type,
// adding a Cast to out when no visible one exists.
func (r *rewriter) ref(gc *graphCtx, v int32, lowered bool, out *[]int32) (string, error) {
	a := r.a
	if lowered == a.values[v].lowered || !a.vfloat(v) {
		return a.cur(v), nil
	}
	for g := gc; g != nil; g = g.parent {
		if name, ok := g.casts[castKey{v, lowered}]; ok {
			return name, nil
		}
		if g == a.graphs[a.values[v].g] {
			break
		}
	}
	if a.vtyp(v) != floatTensor {
		return "", fmt.Errorf("%s: %q is a %s and would need a type change, which Cast cannot do; keep its readers and producer in the same precision with --keep-fp32-nodes",
			a.where(gc), a.vname(v), a.vtyp(v))
	}
	name := r.used.fresh(a.vname(v) + r.suffix(lowered))
	k, n, err := r.castNode(gc, a.cur(v), name, lowered)
	if err != nil {
		return "", err
	}
	*out = append(*out, k)
	gc.casts[castKey{v, lowered}] = name
	r.sum.InsertedCasts = append(r.sum.InsertedCasts, InsertedCast{Node: n.Name, Tensor: a.vname(v), To: r.typeName(lowered), Graph: a.gpath(gc)})
	return name, nil
}

func (r *rewriter) isMainOutput(v int32) bool {
	for _, u := range r.a.usesOf(v) {
		if u.n < 0 && r.a.useGraph(u).owner < 0 {
			return true
		}
	}
	return false
}

// rename makes slot of gc's names read name, marking node i changed.
func (r *rewriter) rename(gc *graphCtx, i int, slot int32, name string) {
	if r.m.String(gc.g.Names[slot]) == name {
		return
	}
	gc.g.Names[slot] = r.m.NewStr(name)
	gc.g.Nodes[i].Changed = true
}

// graph rewrites one graph and, first, the subgraphs of its nodes.
func (r *rewriter) graph(gc *graphCtx) error {
	a := r.a
	g := gc.g
	out := make([]int32, 0, gc.nn)
	for n := gc.n0; n < gc.n0+gc.nn; n++ {
		i := int(a.nodes[n].idx)
		for _, sub := range a.subs(n) {
			if err := r.graph(sub); err != nil {
				return err
			}
		}
		in0, out0 := g.Nodes[i].In, g.Nodes[i].Out() // g.Nodes grows with the Casts
		follow := a.has(n, flagFollow)
		wantIn := a.wantIn(n)
		for k, v := range a.ins(n) {
			if v < 0 {
				continue
			}
			want := a.values[v].lowered
			if a.vfloat(v) && !follow {
				want = wantIn[k]
			}
			name, err := r.ref(gc, v, want, &out)
			if err != nil {
				return err
			}
			r.rename(gc, i, in0+int32(k), name)
		}
		if err := r.edit(n); err != nil {
			return fmt.Errorf("%s: %s: %w", a.where(gc), a.label(n), err)
		}
		out = append(out, int32(i))
		if gc.owner >= 0 {
			continue
		}
		// The main graph's outputs keep their names: a node whose output
		// changes type writes a new name, and a Cast makes the output.
		for j, v := range a.outs(n) {
			if v < 0 || !a.vfloat(v) || !r.isMainOutput(v) {
				continue
			}
			req := r.c.required(gc, v)
			if req == a.values[v].lowered {
				continue
			}
			if a.vtyp(v) != floatTensor {
				return fmt.Errorf("main graph: output %q is a %s and would need a type change, which Cast cannot do; convert with --keep-io-types=false",
					a.vname(v), a.vtyp(v))
			}
			renamed := r.used.fresh(a.vname(v) + r.suffix(a.values[v].lowered))
			r.rename(gc, i, out0+int32(j), renamed)
			a.notes(v).cur = renamed
			k, cn, err := r.castNode(gc, renamed, a.vname(v), req)
			if err != nil {
				return err
			}
			out = append(out, k)
			gc.casts[castKey{v, req}] = a.vname(v)
			r.sum.InsertedCasts = append(r.sum.InsertedCasts, InsertedCast{Node: cn.Name, Tensor: a.vname(v), To: r.typeName(req), Graph: a.gpath(gc)})
		}
	}
	for i, v := range gc.outputs {
		req := r.c.required(gc, v)
		name, err := r.ref(gc, v, req, &out)
		if err != nil {
			return err
		}
		if gc.owner < 0 && name != a.vname(v) {
			return fmt.Errorf("%w: main graph output %q would be renamed to %q", ErrInternal, a.vname(v), name)
		}
		g.Outputs[i].Name = name
		if req {
			lowerTypeProto(g.Outputs[i].Type, a.target)
		}
	}
	if len(g.Nodes) > int(gc.nn) {
		g.Order = out
	}
	for i, v := range gc.inputs {
		if a.values[v].lowered {
			lowerTypeProto(g.Inputs[i].Type, a.target)
		}
	}
	for _, vi := range g.ValueInfo {
		v := a.lookup(gc, vi.GetName())
		if v < 0 {
			continue
		}
		lowered := a.values[v].lowered
		if a.cur(v) != a.vname(v) && gc.owner < 0 {
			lowered = r.c.required(gc, v) // the name now belongs to the output Cast
		}
		if lowered {
			lowerTypeProto(vi.Type, a.target)
		}
	}
	return nil
}

// setDtype sets an integer data-type attribute, adding it when absent.
func setDtype(n *onnxpb.NodeProto, name string, dt onnxpb.TensorProto_DataType) {
	if at := attrOf(n, name); at != nil {
		at.Type, at.I, at.S = onnxpb.AttributeProto_INT, int64(dt), nil
		return
	}
	n.Attribute = append(n.Attribute, &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_INT, I: int64(dt)})
}

// identity turns node n into an Identity.
func (r *rewriter) identity(n int32) error {
	op, err := r.m.Intern("Identity")
	if err != nil {
		return err
	}
	r.a.proto(n).Attribute = nil
	mn := r.a.mnode(n)
	mn.Op, mn.Changed = op, true
	return nil
}

// edit changes the attributes that set a converted node's output type.
func (r *rewriter) edit(n int32) error {
	a := r.a
	ins := a.ins(n)
	if a.has(n, flagFollow) && ins[0] >= 0 && a.values[ins[0]].lowered {
		// A Cast to the target type whose input is converted too.
		r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, a.label(n)+" (now Identity: its input is already "+a.target.elemName()+")")
		return r.identity(n)
	}
	s := a.schema(n)
	if s == nil || s.Domain != "" {
		return nil
	}
	if outLow := a.outLow(n); len(outLow) == 0 || !outLow[0] {
		return nil
	}
	target := a.target
	switch op := a.opOf(n); op {
	case "Cast":
		if in := ins[0]; in >= 0 && (a.vtyp(in) == tensorType(int32(target.dataType())) || (a.vtyp(in) == floatTensor && a.wantIn(n)[0])) {
			// Its input arrives in the target type: a Cast to the target
			// type would cast a type to itself.
			r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, a.label(n)+" (now Identity: its input is already "+target.elemName()+")")
			return r.identity(n)
		}
		setDtype(a.proto(n), "to", target.dataType())
		r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, a.label(n))
	case "Constant", "ConstantOfShape":
		if t := a.value(n); t != nil && t.DataType == int32(onnxpb.TensorProto_FLOAT) {
			// Converted as it is written, as initializers are.
			if _, err := r.m.DataSize(t); err != nil {
				return err
			}
			t.Lower = true
			return nil
		}
		np := a.proto(n)
		at := constantTensor(np)
		switch {
		case at == nil: // ConstantOfShape's default value, a float32 zero
			np.Attribute = append(np.Attribute, &onnxpb.AttributeProto{Name: "value", Type: onnxpb.AttributeProto_TENSOR,
				T: &onnxpb.TensorProto{Dims: []int64{1}, DataType: int32(target.dataType()), RawData: []byte{0, 0}}})
		case at.T != nil:
			return lowerProtoTensor(at.T, target)
		default:
			lowerAttrFloats(at, target)
		}
	case "EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "RandomNormal", "RandomUniform", "SequenceEmpty":
		setDtype(a.proto(n), "dtype", target.dataType())
	case "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix":
		setDtype(a.proto(n), "output_datatype", target.dataType())
	case "DequantizeLinear":
		np := a.proto(n)
		if at := attrOf(np, "output_dtype"); at != nil && at.GetI() != 0 {
			setDtype(np, "output_dtype", target.dataType())
		}
	}
	return nil
}
