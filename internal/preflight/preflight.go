// Package preflight checks a model and the build's shape flags before any
// builder starts, so that mistakes TensorRT would report late and cryptically
// (after seconds of initialisation) are reported at once, each as one line
// that names the problem and the fix.
//
// The rules, in the order they are checked:
//
//  1. The file is an ONNX model: the caller reads it with onnx.ReadMetadata first.
//  2. Every name in the shape flags is an input of the model.
//  3. Every shape has its input's rank and agrees with its fixed dimensions.
//  4. min <= opt <= max in every dimension, with trtexec's broadcasting of
//     missing flags (package shapes).
//     4a. Inside each shape flag, a named dimension the model's inputs share
//     ("batch", "seq") has one size in every input that has it.
//     4b. The same across the flags, for each of min, opt and max.
//  5. Every dynamic input has a shape. An input left out whose dynamic
//     dimensions are all named by given inputs is filled in from them (with
//     a warning); otherwise one error lists all inputs still missing with a
//     complete example flag line that keeps the sizes given.
//  6. Every shape the build gives TensorRT for an input is one it can build
//     for (limits.go): no opt or max size of 0, and no more than 2^63-1
//     elements. The same limits find the shapes Risks calls likely to fail.
//  7. External data references are well formed, stay inside the model's
//     folder (no absolute paths, no "..", no links leading out), and their
//     files exist, are regular files, and are large enough.
//
// Warnings, which do not stop a build: opset versions outside what the
// chosen TensorRT supports, operators from custom domains (plugins needed),
// non-tensor inputs, and the shapes package's broadcasting notes.
package preflight

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Params are what a build asks for, besides the model.
type Params struct {
	// Shapes, Min, Opt and Max are the parsed --shapes, --min-shapes,
	// --opt-shapes and --max-shapes flags (nil when not given).
	Shapes, Min, Opt, Max []shapes.Spec
	// MinOpset and MaxOpset are the range of ai.onnx opset versions the
	// chosen TensorRT's ONNX parser supports; 0 means unknown (no check).
	MinOpset, MaxOpset int
}

// Error is a preflight failure. Its message is one line naming the problem
// and the fix. Every error CheckProfile and CheckExternal return wraps an
// *Error (find it with errors.As) inside an *exitcode.Error with code
// exitcode.Usage: nothing was started, and the command exits with status 2.
type Error struct {
	// Rule is a short identifier of the failed check, for tests and
	// programs: "shape-name", "shape-rank", "shape-static",
	// "shape-shared-dim", "shape-order", "missing-shapes", "shape-empty",
	// "shape-volume", "external-data".
	Rule string
	Err  error
}

// Error implements error.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func fail(rule, format string, args ...any) error {
	return usage(&Error{Rule: rule, Err: fmt.Errorf(format, args...)})
}

// usage gives a preflight failure exit status 2.
func usage(e *Error) error {
	return exitcode.Wrap(exitcode.Usage, e)
}

// Result is what CheckProfile found.
type Result struct {
	// Inputs is the optimization profile to build with: the inputs of the
	// shape flags with trtexec's broadcasting (package shapes), then the
	// inputs filled in from the named dimensions they share with those, in
	// the model's order.
	Inputs []shapes.Input
	// Warnings do not stop a build; each is one line.
	Warnings []string
}

// CheckProfile applies rules 2 to 7 of the package comment to m, the model src
// holds (whose folder holds its external data), and returns the completed
// profile and the warnings, or the first failure as an *Error.
func CheckProfile(m *onnx.Model, src *onnx.Source, p Params) (Result, error) {
	var warnings []string
	if err := checkShapeFlags(m, p); err != nil {
		return Result{}, err
	}
	if err := checkFlagDims(m, p); err != nil {
		return Result{}, err
	}
	inputs, profileWarnings, err := shapes.Ranges(p.Shapes, p.Min, p.Opt, p.Max)
	if err != nil {
		return Result{}, usage(&Error{Rule: "shape-order", Err: err})
	}
	warnings = append(warnings, profileWarnings...)
	bound, err := bindProfile(m, inputs)
	if err != nil {
		return Result{}, err
	}
	filled, notes := fillShared(m, inputs, bound)
	inputs = append(inputs, filled...)
	warnings = append(warnings, notes...)
	if err := checkMissingShapes(m, inputs, bound, len(flagInputs(p)) > 0); err != nil {
		return Result{}, err
	}
	if err := checkLimits(m, inputs); err != nil {
		return Result{}, err
	}
	if err := checkExternal(m, src); err != nil {
		return Result{}, err
	}
	warnings = append(warnings, opsetWarnings(m, p)...)
	if custom := m.CustomOps(); len(custom) > 0 {
		names := make([]string, len(custom))
		for i, c := range custom {
			names[i] = c.String()
		}
		warnings = append(warnings, fmt.Sprintf("the model uses operators from custom domains (%s); TensorRT needs a plugin for each, loaded with --plugins",
			strings.Join(names, ", ")))
	}
	for _, in := range m.Inputs {
		if in.Kind != "tensor" && in.Kind != "" {
			warnings = append(warnings, fmt.Sprintf("input %q is a %s; TensorRT takes only tensor inputs", in.Name, strings.ReplaceAll(in.Kind, "_", " ")))
		}
	}
	return Result{Inputs: inputs, Warnings: warnings}, nil
}

// flagInputs returns the names the shape flags give.
func flagInputs(p Params) map[string]bool {
	given := map[string]bool{}
	for _, f := range flagSpecs(p) {
		for _, sp := range f.specs {
			given[sp.Name] = true
		}
	}
	return given
}

// flagSpecs pairs each shape flag's name with its specs.
func flagSpecs(p Params) []struct {
	flag  string
	specs []shapes.Spec
} {
	return []struct {
		flag  string
		specs []shapes.Spec
	}{{"--shapes", p.Shapes}, {"--min-shapes", p.Min}, {"--opt-shapes", p.Opt}, {"--max-shapes", p.Max}}
}

// checkShapeFlags applies rules 2 and 3.
func checkShapeFlags(m *onnx.Model, p Params) error {
	for _, f := range flagSpecs(p) {
		for _, sp := range f.specs {
			in, ok := m.Input(sp.Name)
			if !ok {
				return fail("shape-name", "%s names input %q, which %s does not have; %s",
					f.flag, sp.Name, filepath.Base(m.Path), inputHint(m, sp.Name))
			}
			if in.Shape == nil {
				continue // unknown rank: any shape may be right
			}
			if len(sp.Dims) != len(in.Shape) {
				ex, _, _ := ExampleShapes([]onnx.Value{in})
				return fail("shape-rank", "%s %s has %d dimensions but input %q has %d (%s); give %d, as in %s",
					f.flag, shapes.Format([]shapes.Spec{sp}), len(sp.Dims), in.Name, len(in.Shape), DimsString(in.Shape),
					len(in.Shape), shapes.Format(ex))
			}
			for i, d := range in.Shape {
				if d.Known && sp.Dims[i] != d.Value {
					return fail("shape-static", "%s %s does not fit input %q (%s): dimension %d is fixed at %d; use %d there",
						f.flag, shapes.Format([]shapes.Spec{sp}), in.Name, DimsString(in.Shape), i, d.Value, d.Value)
				}
			}
		}
	}
	return nil
}

// inputHint suggests the input the user probably meant, or lists them all.
func inputHint(m *onnx.Model, name string) string {
	if len(m.Inputs) == 0 {
		return "the model has no inputs"
	}
	best, bestDist := "", 3
	for _, in := range m.Inputs {
		if d := distance(strings.ToLower(name), strings.ToLower(in.Name)); d < bestDist {
			best, bestDist = in.Name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	names := make([]string, len(m.Inputs))
	for i, in := range m.Inputs {
		names[i] = fmt.Sprintf("%q", in.Name)
	}
	return "its inputs are " + strings.Join(names, ", ")
}

// distance is the Levenshtein edit distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkMissingShapes applies rule 5: every dynamic input needs a shape, from
// the flags (inputs, after broadcasting) or from the named dimensions it
// shares with them. anyGiven tells whether the user gave any shape flag.
func checkMissingShapes(m *onnx.Model, inputs []shapes.Input, bound map[string]binding, anyGiven bool) error {
	given := map[string]bool{}
	for _, in := range inputs {
		given[in.Name] = true
	}
	var missing []onnx.Value
	for _, in := range m.DynamicInputs() {
		if !given[in.Name] {
			missing = append(missing, in)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for _, in := range missing {
		if in.Shape == nil {
			return fail("missing-shapes", "input %q has an unknown number of dimensions and no shape was given; give its whole shape with --shapes (or --min-shapes, --opt-shapes and --max-shapes), as in --shapes %s for a batch of one image",
				in.Name, shellQuote(shapes.Format([]shapes.Spec{{Name: in.Name, Dims: []int64{1, 3, 224, 224}}})))
		}
	}
	verb := "add"
	if anyGiven {
		verb = "use"
	}
	line := FlagLine(completeExample(m, inputs, bound))
	if len(missing) == 1 {
		return fail("missing-shapes", "input %q has dynamic dimensions (%s) and no shape was given; %s: %s",
			missing[0].Name, DimsString(missing[0].Shape), verb, line)
	}
	parts := make([]string, len(missing))
	for i, in := range missing {
		parts[i] = fmt.Sprintf("%q (%s)", in.Name, DimsString(in.Shape))
	}
	return fail("missing-shapes", "inputs %s have dynamic dimensions and no shapes were given; %s: %s", joinAnd(parts), verb, line)
}

// completeExample returns a full set of min/opt/max flags for all dynamic
// inputs: what the user gave (broadcast as trtexec does, or filled from
// shared dimensions) and examples for the rest, whose named dimensions keep
// the sizes the given inputs bind them to, so that the line can replace the
// user's shape flags as it is.
func completeExample(m *onnx.Model, inputs []shapes.Input, bound map[string]binding) (min, opt, max []shapes.Spec) {
	given := map[string]shapes.Input{}
	for _, in := range inputs {
		given[in.Name] = in
	}
	sizes := make(map[string][3]int64, len(bound))
	for k, b := range bound {
		sizes[k] = b.size
	}
	exMin, exOpt, exMax := exampleShapes(m.DynamicInputs(), sizes)
	for i, sp := range exMin {
		if g, ok := given[sp.Name]; ok {
			min = append(min, shapes.Spec{Name: sp.Name, Dims: g.Min})
			opt = append(opt, shapes.Spec{Name: sp.Name, Dims: g.Opt})
			max = append(max, shapes.Spec{Name: sp.Name, Dims: g.Max})
			continue
		}
		min, opt, max = append(min, sp), append(opt, exOpt[i]), append(max, exMax[i])
	}
	return min, opt, max
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// CheckExternal applies only rule 7, the external data rule, which keeps every external data
// file inside the model's folder: it runs also when the other checks are skipped
// (--no-preflight). m is the model src holds; its external data files are examined through
// src's held folder.
func CheckExternal(m *onnx.Model, src *onnx.Source) error { return checkExternal(m, src) }

// checkExternal applies rule 7.
func checkExternal(m *onnx.Model, src *onnx.Source) error {
	modelPath := src.Path()
	for _, ref := range m.External {
		if ref.Problem != "" {
			return fail("external-data", "tensor %q of %s has a broken external data reference: %s; export the model again",
				ref.Tensor, filepath.Base(modelPath), ref.Problem)
		}
	}
	dir := src.Dir()
	for _, f := range src.ExternalFiles(m) {
		var tensors string
		if f.Tensors == 1 {
			tensors = "1 tensor"
		} else {
			tensors = fmt.Sprintf("%d tensors", f.Tensors)
		}
		switch {
		case f.Unsafe != "":
			return fail("external-data", "%s refers to external data file %q (%s), which is refused because %s; keep external data files in the model's folder and refer to them by relative path",
				filepath.Base(modelPath), f.Location, tensors, f.Unsafe)
		case f.StatErr != "":
			return fail("external-data", "external data file %q of %s cannot be read (%s); check its permissions",
				f.Location, filepath.Base(modelPath), f.StatErr)
		case !f.Exists:
			return fail("external-data", "external data file %q (%s) of %s is missing; copy it into %s",
				f.Location, tensors, filepath.Base(modelPath), dirName(dir))
		case !f.Regular:
			return fail("external-data", "external data %q of %s is not a regular file; replace it with the data file the model was exported with",
				f.Location, filepath.Base(modelPath))
		case f.Size < f.Needed:
			return fail("external-data", "external data file %q is %d bytes but %s needs %d; it is incomplete, copy it again",
				f.Location, f.Size, filepath.Base(modelPath), f.Needed)
		}
	}
	return nil
}

func dirName(dir string) string {
	if dir == "." {
		return "the current folder"
	}
	return dir
}

// opsetWarnings compares the model's ai.onnx opset with the supported range.
func opsetWarnings(m *onnx.Model, p Params) []string {
	v := m.Opset("")
	switch {
	case v == 0:
		return []string{"the model imports no ai.onnx opset; TensorRT's parser may refuse it"}
	case p.MaxOpset > 0 && v > int64(p.MaxOpset):
		return []string{fmt.Sprintf("the model uses ai.onnx opset %d, newer than the %d this TensorRT supports; the build may fail on operators added since, so export with opset %d if you can",
			v, p.MaxOpset, p.MaxOpset)}
	case p.MinOpset > 0 && v < int64(p.MinOpset):
		return []string{fmt.Sprintf("the model uses ai.onnx opset %d, older than the %d this TensorRT supports; convert it with onnx.version_converter if the build fails",
			v, p.MinOpset)}
	}
	return nil
}
