package shapes

import (
	"fmt"
)

// Input is one input's entry in an optimization profile: the smallest, the
// typical and the largest shape TensorRT must support. The three slices have
// the same length and Min[i] <= Opt[i] <= Max[i] for every i.
type Input struct {
	Name string  `json:"name"`
	Min  []int64 `json:"min"`
	Opt  []int64 `json:"opt"`
	Max  []int64 `json:"max"`
}

// Profile is one optimization profile: a shape range per input. It is the one profile type
// of trtbuild: the worker's request, the build key's parts and the builder's options carry it.
type Profile struct {
	Inputs []Input `json:"inputs"`
}

// Flag names as the user sees them, used in warnings and errors.
const (
	flagShapes = "--shapes"
	flagMin    = "--min-shapes"
	flagOpt    = "--opt-shapes"
	flagMax    = "--max-shapes"
)

// Ranges combines the parsed --shapes, --min-shapes, --opt-shapes and
// --max-shapes lists into one optimization profile, following trtexec:
//
//   - An input named in --shapes and in none of the other three gets its
//     --shapes value as min, opt and max (a fixed shape).
//   - An input named in at least one of min/opt/max gets the missing ones
//     filled in, with a warning each: a missing min comes from opt (else max),
//     a missing opt from max (else min), a missing max from opt (else min).
//     Its --shapes value, if any, is not used for the profile.
//   - The three shapes of an input must have the same rank, and
//     min <= opt <= max must hold in every dimension.
//
// Inputs are returned in order of first appearance in shapes, min, opt, max.
// Ranges does not know the model; checking names, ranks and static
// dimensions against it is the caller's job (see package preflight).
func Ranges(shapes, min, opt, max []Spec) ([]Input, []string, error) {
	type sel struct {
		min, opt, max, shapes  []int64
		hasMin, hasOpt, hasMax bool
		hasShapes              bool
	}
	var order []string
	by := map[string]*sel{}
	get := func(name string) *sel {
		s, ok := by[name]
		if !ok {
			s = &sel{}
			by[name] = s
			order = append(order, name)
		}
		return s
	}
	for _, sp := range shapes {
		s := get(sp.Name)
		s.shapes, s.hasShapes = sp.Dims, true
	}
	for _, sp := range min {
		s := get(sp.Name)
		s.min, s.hasMin = sp.Dims, true
	}
	for _, sp := range opt {
		s := get(sp.Name)
		s.opt, s.hasOpt = sp.Dims, true
	}
	for _, sp := range max {
		s := get(sp.Name)
		s.max, s.hasMax = sp.Dims, true
	}

	var warnings []string
	inputs := make([]Input, 0, len(order))
	for _, name := range order {
		s := by[name]
		if !s.hasMin && !s.hasOpt && !s.hasMax {
			inputs = append(inputs, Input{Name: name, Min: clone(s.shapes), Opt: clone(s.shapes), Max: clone(s.shapes)})
			continue
		}
		// trtexec's broadcast: a missing selector takes the first given one of its fallbacks
		// (min: opt, then max; opt: max, then min; max: opt, then min).
		for _, f := range []struct {
			has      bool
			dst      *[]int64
			flag     string
			fallback [2]selector
		}{
			{s.hasMin, &s.min, flagMin, [2]selector{{s.hasOpt, &s.opt, flagOpt}, {s.hasMax, &s.max, flagMax}}},
			{s.hasOpt, &s.opt, flagOpt, [2]selector{{s.hasMax, &s.max, flagMax}, {true, &s.min, flagMin}}},
			{s.hasMax, &s.max, flagMax, [2]selector{{s.hasOpt, &s.opt, flagOpt}, {true, &s.min, flagMin}}},
		} {
			if f.has {
				continue
			}
			src := f.fallback[1]
			if f.fallback[0].has {
				src = f.fallback[0]
			}
			*f.dst = *src.dims
			warnings = append(warnings, fmt.Sprintf("input %q has no %s; using its %s value %s", name, f.flag, src.flag, FormatDims(*src.dims)))
		}
		in := Input{Name: name, Min: clone(s.min), Opt: clone(s.opt), Max: clone(s.max)}
		if err := checkOrder(in); err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, in)
	}
	return inputs, warnings, nil
}

// selector is one of an input's min, opt and max shapes while the fallbacks are resolved.
type selector struct {
	has  bool
	dims *[]int64
	flag string
}

// checkOrder enforces equal ranks and min <= opt <= max per dimension.
func checkOrder(in Input) error {
	if len(in.Min) != len(in.Opt) || len(in.Opt) != len(in.Max) {
		return fmt.Errorf("input %q has shapes of different ranks (%s %s, %s %s, %s %s); give min, opt and max the same number of dimensions",
			in.Name, flagMin, FormatDims(in.Min), flagOpt, FormatDims(in.Opt), flagMax, FormatDims(in.Max))
	}
	for i := range in.Min {
		if in.Min[i] > in.Opt[i] {
			return fmt.Errorf("input %q: dimension %d of %s (%d) is larger than of %s (%d); each dimension needs min <= opt <= max",
				in.Name, i, flagMin, in.Min[i], flagOpt, in.Opt[i])
		}
		if in.Opt[i] > in.Max[i] {
			return fmt.Errorf("input %q: dimension %d of %s (%d) is larger than of %s (%d); each dimension needs min <= opt <= max",
				in.Name, i, flagOpt, in.Opt[i], flagMax, in.Max[i])
		}
	}
	return nil
}

func clone(d []int64) []int64 {
	out := make([]int64, len(d))
	copy(out, d)
	return out
}
