package preflight

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Named dimensions. ONNX exporters give dynamic dimensions symbolic names ("batch", "seq"), and
// a name shared by several inputs means one size: BERT's input_ids, attention_mask and
// token_type_ids are all batch x seq. TensorRT only finds a profile that breaks this when it
// builds, late and cryptically, so preflight enforces it (rule 4b) and uses it: an input the
// shape flags leave out whose dynamic dimensions are all named by given inputs is filled in
// from them, and example lines keep the sizes the user gave.

// use is one place where a shape gives a named dimension its size.
type use struct {
	input string
	dim   int
}

// binding is the size a profile gives a named dimension (min, opt, max), and where it was
// first given.
type binding struct {
	size [3]int64
	from use
}

// selectorNames name min, opt and max in messages.
var selectorNames = [3]string{"min", "opt", "max"}

// sharedDimConflict describes two uses of the named dimension param with different sizes.
func sharedDimConflict(param string, a, b use, sa, sb int64) string {
	if a.input == b.input {
		return fmt.Sprintf("dimensions %d and %d of input %q are both %q but are given %d and %d",
			a.dim, b.dim, a.input, param, sa, sb)
	}
	return fmt.Sprintf("inputs %q and %q share the dimension %q but are given %d and %d",
		a.input, b.input, param, sa, sb)
}

// checkFlagDims applies rule 4a to each shape flag on its own: inside one flag, every named
// dimension has one size. The fix shown is the flag with every named dimension set to the size
// it was first given.
func checkFlagDims(m *onnx.Model, p Params) error {
	for _, f := range flagSpecs(p) {
		first := map[string]use{}
		sizes := map[string]int64{}
		for _, sp := range f.specs {
			in, ok := m.Input(sp.Name)
			if !ok || len(in.Shape) != len(sp.Dims) {
				continue // checkShapeFlags has refused it
			}
			for i, d := range in.Shape {
				if d.Known || d.Param == "" {
					continue
				}
				prev, seen := first[d.Param]
				if !seen {
					first[d.Param], sizes[d.Param] = use{sp.Name, i}, sp.Dims[i]
					continue
				}
				if sizes[d.Param] != sp.Dims[i] {
					return fail("shape-shared-dim", "%s %s: %s; give every input the same %s, as in %s %s",
						f.flag, shellQuote(shapes.Format(f.specs)),
						sharedDimConflict(d.Param, prev, use{sp.Name, i}, sizes[d.Param], sp.Dims[i]),
						d.Param, f.flag, shellQuote(shapes.Format(withSizes(m, f.specs, sizes))))
				}
			}
		}
	}
	return nil
}

// withSizes returns specs with every named dimension set to its size in sizes.
func withSizes(m *onnx.Model, specs []shapes.Spec, sizes map[string]int64) []shapes.Spec {
	out := make([]shapes.Spec, len(specs))
	for k, sp := range specs {
		dims := append([]int64(nil), sp.Dims...)
		if in, ok := m.Input(sp.Name); ok && len(in.Shape) == len(dims) {
			for i, d := range in.Shape {
				if s, ok := sizes[d.Param]; ok && !d.Known && d.Param != "" {
					dims[i] = s
				}
			}
		}
		out[k] = shapes.Spec{Name: sp.Name, Dims: dims}
	}
	return out
}

// bindProfile applies rule 4b to a resolved profile (after trtexec's broadcasting, so across
// flags): every named dimension has one min, one opt and one max size in all inputs. It returns
// the sizes of the named dimensions.
func bindProfile(m *onnx.Model, inputs []shapes.Input) (map[string]binding, error) {
	bound := map[string]binding{}
	for _, pin := range inputs {
		in, ok := m.Input(pin.Name)
		if !ok || len(in.Shape) != len(pin.Min) {
			continue
		}
		for i, d := range in.Shape {
			if d.Known || d.Param == "" {
				continue
			}
			size := [3]int64{pin.Min[i], pin.Opt[i], pin.Max[i]}
			b, seen := bound[d.Param]
			if !seen {
				bound[d.Param] = binding{size: size, from: use{pin.Name, i}}
				continue
			}
			for s := range size {
				if b.size[s] != size[s] {
					fixed := fixProfile(m, inputs, bound)
					return nil, fail("shape-shared-dim", "the profile's %s shapes: %s; give every input the same %s, as in %s",
						selectorNames[s], sharedDimConflict(d.Param, b.from, use{pin.Name, i}, b.size[s], size[s]),
						d.Param, FlagLine(fixed[0], fixed[1], fixed[2]))
				}
			}
		}
	}
	return bound, nil
}

// fixProfile returns the profile's min, opt and max lists with every named dimension set to the
// sizes in bound (the first ones given), completed from the first use for names not yet bound.
func fixProfile(m *onnx.Model, inputs []shapes.Input, bound map[string]binding) (out [3][]shapes.Spec) {
	b := map[string]binding{}
	for k, v := range bound {
		b[k] = v
	}
	for _, pin := range inputs {
		sel := [3][]int64{append([]int64(nil), pin.Min...), append([]int64(nil), pin.Opt...), append([]int64(nil), pin.Max...)}
		if in, ok := m.Input(pin.Name); ok && len(in.Shape) == len(pin.Min) {
			for i, d := range in.Shape {
				if d.Known || d.Param == "" {
					continue
				}
				v, seen := b[d.Param]
				if !seen {
					v = binding{size: [3]int64{pin.Min[i], pin.Opt[i], pin.Max[i]}}
					b[d.Param] = v
				}
				for s := range sel {
					sel[s][i] = v.size[s]
				}
			}
		}
		for s := range sel {
			out[s] = append(out[s], shapes.Spec{Name: pin.Name, Dims: sel[s]})
		}
	}
	return out
}

// fillShared returns a profile entry for every dynamic input of m that inputs leave out and
// whose dynamic dimensions are all named by given inputs, with a note for each.
func fillShared(m *onnx.Model, inputs []shapes.Input, bound map[string]binding) ([]shapes.Input, []string) {
	given := map[string]bool{}
	for _, in := range inputs {
		given[in.Name] = true
	}
	var filled []shapes.Input
	var notes []string
	for _, in := range m.DynamicInputs() {
		if given[in.Name] || in.Shape == nil {
			continue
		}
		var sel [3][]int64
		var from []string
		var params []string
		ok := true
		for _, d := range in.Shape {
			if d.Known {
				for s := range sel {
					sel[s] = append(sel[s], d.Value)
				}
				continue
			}
			b, seen := bound[d.Param]
			if d.Param == "" || !seen {
				ok = false
				break
			}
			for s := range sel {
				sel[s] = append(sel[s], b.size[s])
			}
			if !contains(params, d.Param) {
				params = append(params, d.Param)
			}
			if !contains(from, b.from.input) {
				from = append(from, b.from.input)
			}
		}
		if !ok {
			continue
		}
		filled = append(filled, shapes.Input{Name: in.Name, Min: sel[0], Opt: sel[1], Max: sel[2]})
		quoted := make([]string, len(from))
		for i, f := range from {
			quoted[i] = fmt.Sprintf("%q", f)
		}
		notes = append(notes, fmt.Sprintf("input %q has no shape; using %s, from the dimensions it shares with %s (%s)",
			in.Name, rangeString(sel), joinAnd(quoted), strings.Join(params, ", ")))
	}
	return filled, notes
}

// rangeString writes one input's min, opt and max: "1x128" when they are equal, else
// "min 1x1, opt 8x128, max 16x512".
func rangeString(sel [3][]int64) string {
	a, b, c := shapes.FormatDims(sel[0]), shapes.FormatDims(sel[1]), shapes.FormatDims(sel[2])
	if a == b && b == c {
		return a
	}
	return fmt.Sprintf("min %s, opt %s, max %s", a, b, c)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
