package convert

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// rewriter changes the model's graphs to the decided types.
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

func (r *rewriter) castNode(from, to string, lowered bool) *onnxpb.NodeProto {
	dt := onnxpb.TensorProto_FLOAT
	if lowered {
		dt = r.a.target.dataType()
	}
	return &onnxpb.NodeProto{
		Name:   r.used.fresh(to + "_cast"),
		OpType: "Cast",
		Input:  []string{from},
		Output: []string{to},
		Attribute: []*onnxpb.AttributeProto{
			{Name: "to", Type: onnxpb.AttributeProto_INT, I: int64(dt)},
		},
	}
}

func (r *rewriter) typeName(lowered bool) string {
	if lowered {
		return r.a.target.elemName()
	}
	return "float"
}

// ref returns the name under which gc's nodes read v in the wanted type,
// adding a Cast to out when no visible one exists.
func (r *rewriter) ref(gc *graphCtx, v *value, lowered bool, out *[]*onnxpb.NodeProto) (string, error) {
	if lowered == v.lowered {
		return v.cur, nil
	}
	if !v.typ.isFloat() {
		return v.cur, nil
	}
	for g := gc; g != nil; g = g.parent {
		if name, ok := g.casts[castKey{v, lowered}]; ok {
			return name, nil
		}
		if g == v.g {
			break
		}
	}
	if v.typ != floatTensor {
		return "", fmt.Errorf("%s: %q is a %s and would need a type change, which Cast cannot do; keep its readers and producer in the same precision with --keep-fp32-nodes",
			gc.where(), v.name, v.typ)
	}
	name := r.used.fresh(v.name + r.suffix(lowered))
	n := r.castNode(v.cur, name, lowered)
	*out = append(*out, n)
	gc.casts[castKey{v, lowered}] = name
	r.sum.InsertedCasts = append(r.sum.InsertedCasts, InsertedCast{Node: n.Name, Tensor: v.name, To: r.typeName(lowered), Graph: gc.path()})
	return name, nil
}

func (r *rewriter) isMainOutput(v *value) bool {
	for _, u := range v.uses {
		if u.n == nil && u.g.owner == nil {
			return true
		}
	}
	return false
}

// graph rewrites one graph and, first, the subgraphs of its nodes.
func (r *rewriter) graph(gc *graphCtx) error {
	var out []*onnxpb.NodeProto
	for _, ni := range gc.nodes {
		for _, sub := range ni.subs {
			if err := r.graph(sub); err != nil {
				return err
			}
		}
		for i, v := range ni.ins {
			if v == nil {
				continue
			}
			want := v.lowered
			if v.typ.isFloat() && !ni.follow {
				want = ni.wantIn[i]
			}
			name, err := r.ref(gc, v, want, &out)
			if err != nil {
				return err
			}
			ni.n.Input[i] = name
		}
		if err := r.edit(ni); err != nil {
			return fmt.Errorf("%s: %s: %w", gc.where(), ni.label(), err)
		}
		out = append(out, ni.n)
		if gc.owner != nil {
			continue
		}
		// The main graph's outputs keep their names: a node whose output
		// changes type writes a new name, and a Cast makes the output.
		for j, v := range ni.outs {
			if v == nil || !v.typ.isFloat() || !r.isMainOutput(v) {
				continue
			}
			req := r.c.required(gc, v)
			if req == v.lowered {
				continue
			}
			if v.typ != floatTensor {
				return fmt.Errorf("main graph: output %q is a %s and would need a type change, which Cast cannot do; convert with --keep-io-types=false",
					v.name, v.typ)
			}
			renamed := r.used.fresh(v.name + r.suffix(v.lowered))
			ni.n.Output[j], v.cur = renamed, renamed
			n := r.castNode(renamed, v.name, req)
			out = append(out, n)
			gc.casts[castKey{v, req}] = v.name
			r.sum.InsertedCasts = append(r.sum.InsertedCasts, InsertedCast{Node: n.Name, Tensor: v.name, To: r.typeName(req), Graph: gc.path()})
		}
	}
	for i, v := range gc.outputs {
		req := r.c.required(gc, v)
		name, err := r.ref(gc, v, req, &out)
		if err != nil {
			return err
		}
		if gc.owner == nil && name != v.name {
			return fmt.Errorf("%w: main graph output %q would be renamed to %q", ErrInternal, v.name, name)
		}
		gc.g.Output[i].Name = name
		if req {
			lowerTypeProto(gc.g.Output[i].Type, r.a.target)
		}
	}
	gc.g.Node = out
	for i, v := range gc.inputs {
		if v.lowered {
			lowerTypeProto(gc.g.Input[i].Type, r.a.target)
		}
	}
	for _, vi := range gc.g.ValueInfo {
		v := gc.lookup(vi.GetName())
		if v == nil {
			continue
		}
		lowered := v.lowered
		if v.cur != v.name && gc.owner == nil {
			lowered = r.c.required(gc, v) // the name now belongs to the output Cast
		}
		if lowered {
			lowerTypeProto(vi.Type, r.a.target)
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

// edit changes the attributes that set a converted node's output type.
func (r *rewriter) edit(ni *nodeInfo) error {
	if ni.follow && ni.ins[0] != nil && ni.ins[0].lowered {
		// A Cast to the target type whose input is converted too.
		r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, ni.label()+" (now Identity: its input is already "+r.a.target.elemName()+")")
		ni.n.OpType, ni.n.Attribute = "Identity", nil
		return nil
	}
	if ni.schema == nil || ni.schema.Domain != "" || len(ni.outLow) == 0 || !ni.outLow[0] {
		return nil
	}
	n, target := ni.n, r.a.target
	switch n.GetOpType() {
	case "Cast":
		if in := ni.ins[0]; in != nil && (in.typ == tensorType(int32(target.dataType())) || (in.typ == floatTensor && ni.wantIn[0])) {
			// Its input arrives in the target type: a Cast to the target
			// type would cast a type to itself.
			r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, ni.label()+" (now Identity: its input is already "+target.elemName()+")")
			n.OpType, n.Attribute = "Identity", nil
			return nil
		}
		setDtype(n, "to", target.dataType())
		r.sum.RetargetedCasts = append(r.sum.RetargetedCasts, ni.label())
	case "Constant", "ConstantOfShape":
		at := constantTensor(n)
		switch {
		case at == nil: // ConstantOfShape's default value, a float32 zero
			n.Attribute = append(n.Attribute, &onnxpb.AttributeProto{Name: "value", Type: onnxpb.AttributeProto_TENSOR,
				T: &onnxpb.TensorProto{Dims: []int64{1}, DataType: int32(target.dataType()), RawData: []byte{0, 0}}})
		case at.T != nil:
			return lowerTensor(r.m, at.T, target, false)
		default:
			lowerAttrFloats(at, target)
		}
	case "EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "RandomNormal", "RandomUniform", "SequenceEmpty":
		setDtype(n, "dtype", target.dataType())
	case "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix":
		setDtype(n, "output_datatype", target.dataType())
	case "DequantizeLinear":
		if at := attrOf(n, "output_dtype"); at != nil && at.GetI() != 0 {
			setDtype(n, "output_dtype", target.dataType())
		}
	}
	return nil
}
