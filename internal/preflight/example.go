package preflight

import (
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Example values for dynamic dimensions, used when trtbuild shows the shape
// flags a user must add. They are placeholders to edit, chosen so that the
// line works as it is for common models:
//
//   - a batch dimension (named like "batch", "N" or "bs", or the first
//     dimension when unnamed or named otherwise): 1 / 8 / 16;
//   - a sequence dimension (named like "seq", "sequence", "length", "tokens",
//     "time"): 1 / 128 / 512;
//   - an image side (named like "height", "width", "H", "W", or, unnamed,
//     the last two dimensions of a rank-4 input with 1 to 4 channels):
//     224 for min, opt and max, the size most image models are trained at;
//   - any other dimension: 1 / 64 / 256.
//
// Min is 1 wherever a dimension may shrink, so the engine accepts the
// smallest input. A symbolic dimension shared by several inputs ("batch")
// gets the same values everywhere. Fixed dimensions keep their size.
var (
	batchRange    = [3]int64{1, 8, 16}
	sequenceRange = [3]int64{1, 128, 512}
	imageRange    = [3]int64{224, 224, 224}
	otherRange    = [3]int64{1, 64, 256}
)

// ExampleShapes returns example --min-shapes, --opt-shapes and
// --max-shapes values for inputs (see the rules above). Inputs of unknown
// rank are left out: no example can be given for them.
func ExampleShapes(inputs []onnx.Value) (min, opt, max []shapes.Spec) {
	return exampleShapes(inputs, nil)
}

// exampleShapes is ExampleShapes with the named dimensions in bound already
// sized (min, opt, max), as the user's shape flags gave them.
func exampleShapes(inputs []onnx.Value, bound map[string][3]int64) (min, opt, max []shapes.Spec) {
	byParam := map[string][3]int64{}
	for k, v := range bound {
		byParam[k] = v
	}
	for _, in := range inputs {
		if in.Shape == nil {
			continue
		}
		var dims [3][]int64
		for i, d := range in.Shape {
			r, shared := byParam[d.Param]
			switch {
			case d.Known:
				r = [3]int64{d.Value, d.Value, d.Value}
			case d.Param != "" && shared:
			default:
				r = exampleRange(in, i)
				if d.Param != "" {
					byParam[d.Param] = r
				}
			}
			for s := range dims {
				dims[s] = append(dims[s], r[s])
			}
		}
		min = append(min, shapes.Spec{Name: in.Name, Dims: dims[0]})
		opt = append(opt, shapes.Spec{Name: in.Name, Dims: dims[1]})
		max = append(max, shapes.Spec{Name: in.Name, Dims: dims[2]})
	}
	return min, opt, max
}

// exampleRange picks the example range for dynamic dimension i of in.
func exampleRange(in onnx.Value, i int) [3]int64 {
	name := strings.ToLower(in.Shape[i].Param)
	switch {
	case name == "n" || name == "b" || name == "bs" || strings.Contains(name, "batch"):
		return batchRange
	case strings.Contains(name, "seq") || strings.Contains(name, "len") || strings.Contains(name, "token") ||
		strings.Contains(name, "time"):
		return sequenceRange
	case name == "h" || name == "w" || strings.Contains(name, "height") || strings.Contains(name, "width"):
		return imageRange
	case name == "" && len(in.Shape) == 4 && i >= 2 && in.Shape[1].Known && in.Shape[1].Value >= 1 && in.Shape[1].Value <= 4:
		return imageRange
	case i == 0:
		return batchRange
	}
	return otherRange
}

// FlagLine formats the three lists as command-line flags, shell-quoting
// each value when it holds characters a shell would interpret:
//
//	--min-shapes images:1x3x224x224 --opt-shapes images:8x3x224x224 --max-shapes images:16x3x224x224
func FlagLine(min, opt, max []shapes.Spec) string {
	return "--min-shapes " + shellQuote(shapes.Format(min)) +
		" --opt-shapes " + shellQuote(shapes.Format(opt)) +
		" --max-shapes " + shellQuote(shapes.Format(max))
}

// shellQuote single-quotes s for POSIX shells unless it only holds
// characters that need no quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:,=@%+", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DimsString writes a shape for messages: "batch x 3 x 224 x 224", "scalar",
// or "unknown rank".
func DimsString(shape []onnx.Dim) string {
	if shape == nil {
		return "unknown rank"
	}
	if len(shape) == 0 {
		return "scalar"
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = d.String()
	}
	return strings.Join(parts, " x ")
}
