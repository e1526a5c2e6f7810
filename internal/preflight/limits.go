package preflight

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Shape limits (rule 6): what TensorRT can build an engine for, judged on every shape a build
// gives TensorRT for an input — each input's min, opt and max, and the model's own shape of an
// input the profile leaves out. One rule with two strengths:
//
//   - Refused (CheckProfile; so the CLI, matrix cells, the HTTP API and MCP refuse, and
//     `inspect --check` reports a refusal): an opt or max size of 0, and more than 2^63-1
//     elements. TensorRT times its kernels at opt and must take every shape up to max, so an
//     empty opt or max leaves it nothing to build for; and its sizes are 64-bit (Dims64), so a
//     larger count cannot even be described to it. A min size of 0 is allowed: TensorRT supports
//     empty tensors, and such an engine also takes empty inputs at run time.
//   - Likely to fail (Risks, reported by `inspect --check` only): more than MaxVolume elements.
//     Many TensorRT layers index with 32-bit integers (TensorRT 10.10 made most of them take
//     larger tensors), so a build may still succeed, and is not refused.

// MaxVolume is the most elements an input may have before a build is judged likely to fail:
// many TensorRT layers index tensors with 32-bit integers, and an input larger than that is
// nearly always a typo in a shape flag (99999999999x3x224x224).
const MaxVolume = 1<<31 - 1

// inputShapes are one input's shapes as a build gives them to TensorRT.
type inputShapes struct {
	name string
	sel  [3][]int64 // min, opt, max
	// in is the model's input of that name: its fixed dimensions are the model's, not the
	// flags'; ok is false when the model has no such input.
	in onnx.Value
	ok bool
	// own is true for the model's own shape of an input the profile leaves out.
	own bool
	// where names the profile in messages: " in profile 1", or "".
	where string
}

// buildShapes returns the shapes a build with the profile inputs gives TensorRT: each input of
// inputs, then the model's own shape of each input inputs leave out whose shape is fixed.
func buildShapes(m *onnx.Model, inputs []shapes.Input, where string) []inputShapes {
	var out []inputShapes
	given := map[string]bool{}
	for _, pin := range inputs {
		given[pin.Name] = true
		in, ok := m.Input(pin.Name)
		out = append(out, inputShapes{name: pin.Name, sel: [3][]int64{pin.Min, pin.Opt, pin.Max}, in: in, ok: ok, where: where})
	}
	for _, in := range m.Inputs {
		if given[in.Name] || in.Shape == nil || in.IsDynamic() {
			continue
		}
		dims := make([]int64, len(in.Shape))
		for i, d := range in.Shape {
			dims[i] = d.Value
		}
		out = append(out, inputShapes{name: in.Name, sel: [3][]int64{dims, dims, dims}, in: in, ok: true, own: true})
	}
	return out
}

// limit is what the shape limits say of one input's shapes: nothing (rule ""), a refusal, or a
// risk. The message is one line naming the problem and the fix.
type limit struct {
	rule, message string
	refused       bool
}

// check applies the shape limits to s: the first refusal, else the first risk. One is reported
// an input: the others follow from it.
func (s inputShapes) check() limit {
	for _, k := range [...]int{1, 2} { // opt, max
		for i, d := range s.sel[k] {
			if d != 0 {
				continue
			}
			dim := fmt.Sprintf("dimension %d", i)
			if i == 0 {
				dim = "dimension 0 (the batch)"
			}
			fix := "give sizes of 1 or more"
			switch {
			case s.own || s.ok && i < len(s.in.Shape) && s.in.Shape[i].Known:
				fix = "the size is the model's own, so export the model with a size of 1 or more there"
			case !s.equal():
				fix = "give opt and max sizes of 1 or more (only min may be 0, for an engine that also takes empty inputs)"
			}
			return limit{rule: "shape-empty", refused: true, message: fmt.Sprintf("input %q: %s gives %s the size 0, an empty tensor, which leaves TensorRT nothing to build for; %s",
				s.name, s.what(k), dim, fix)}
		}
	}
	for k, dims := range s.sel {
		v, ok := volume(dims)
		switch {
		case !ok:
			fix := "check the shape flags for a typo"
			if s.own {
				fix = "export the model again with the input's real shape"
			}
			return limit{rule: "shape-volume", refused: true, message: fmt.Sprintf("input %q: %s is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; %s",
				s.name, s.what(k), fix)}
		case v > MaxVolume:
			fix := "check the shape flags for a typo"
			if s.own {
				fix = "check that the model is meant to take an input this large"
			}
			return limit{rule: "shape-volume", message: fmt.Sprintf("input %q: %s is %d elements, more than the 2^31-1 many TensorRT layers can index; %s",
				s.name, s.what(k), v, fix)}
		}
	}
	return limit{}
}

// equal reports whether min, opt and max are one shape.
func (s inputShapes) equal() bool { return rangeString(s.sel) == shapes.FormatDims(s.sel[1]) }

// what names shape k (0 min, 1 opt, 2 max) of s in messages: "the opt shape 8x3x224x224", "the
// shape 1x3x224x224" when all three are one, "the model's shape 1 x 3 x 224 x 224".
func (s inputShapes) what(k int) string {
	switch {
	case s.own:
		return "the model's shape " + DimsString(s.in.Shape) + s.where
	case s.equal():
		return "the shape " + shapes.FormatDims(s.sel[k]) + s.where
	}
	return fmt.Sprintf("the %s shape %s%s", selectorNames[k], shapes.FormatDims(s.sel[k]), s.where)
}

// checkLimits applies rule 6 to the completed profile inputs of m: the first refusal, as an
// *Error.
func checkLimits(m *onnx.Model, inputs []shapes.Input) error {
	for _, s := range buildShapes(m, inputs, "") {
		if l := s.check(); l.refused {
			return fail(l.rule, "%s", l.message)
		}
	}
	return nil
}

// volume multiplies dims; ok is false when the product is more than 2^63-1, the most a
// TensorRT size holds. Negative sizes never get here: the shape flags refuse them, and the ONNX
// reader takes a negative fixed dimension for an unknown one.
func volume(dims []int64) (uint64, bool) {
	for _, d := range dims {
		if d == 0 {
			return 0, true
		}
	}
	v := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(v, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		v = lo
	}
	return v, true
}
