package builder

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trtexec"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// shapeFlagNames name the four shape flags of a Profile in messages.
var shapeFlagNames = [...]string{"--shapes", "--min-shapes", "--opt-shapes", "--max-shapes"}

// parseShapeFlags parses every profile's shapes. Errors name the flag, and the profile when
// there are several.
func parseShapeFlags(o *Options) ([]shapeFlags, error) {
	groups := o.Profiles
	out := make([]shapeFlags, len(groups))
	for i, g := range groups {
		dst := [4]*[]shapes.Spec{&out[i].shapes, &out[i].min, &out[i].opt, &out[i].max}
		for k, text := range [4]string{g.Shapes, g.Min, g.Opt, g.Max} {
			s, err := shapes.Parse(text)
			if err != nil {
				return nil, exitcode.Usagef("invalid %s%s: %v", shapeFlagNames[k], profileSuffix(i, len(groups)), err)
			}
			*dst[k] = s
		}
	}
	return out, nil
}

// profileSuffix names profile i in messages when there is more than one.
func profileSuffix(i, n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf(" (profile %d)", i)
}

// minTensorRTOpset is the oldest ai.onnx opset the ONNX parser of TensorRT 10 and 11 supports
// (onnx-tensorrt's operator matrix: opset 9 and newer). The newest differs by release and is
// not checked: the parent never loads TensorRT to ask.
const minTensorRTOpset = 9

// checkModel reads the model's structure before any builder starts and applies the preflight
// rules (internal/preflight) to every optimization profile: a file that is not ONNX, shapes
// that do not fit the model's inputs, missing shapes for dynamic inputs, shapes TensorRT cannot
// build for (an opt or max size of 0, more than 2^63-1 elements) and unsafe or missing external
// data are refused here, with exit status 2, before any GPU time is spent. The
// simulated builder gets the model's real node names. Inputs the flags leave out whose dynamic
// dimensions are all named by given inputs are added to the request's profiles. With skip
// (--no-preflight) the shape and opset rules are skipped, never the external data rule:
// external data files stay inside the model's folder.
func checkModel(src *onnx.Source, req *worker.Request, profiles []shapeFlags, skip bool) (m *onnx.Model, warnings []string, err error) {
	m, err = src.Metadata()
	if err != nil && skip {
		return nil, nil, exitcode.Hinted(exitcode.Wrap(exitcode.Usage, err), "--no-preflight skips the shape checks, not this one: trtbuild must read the model to keep its external data inside its folder")
	}
	if err != nil {
		return nil, nil, exitcode.Wrap(exitcode.Usage, err)
	}
	// Names with a '*' (trtexec 11's wildcards) become the inputs they match, with or without
	// the preflight: only here is the model's list of inputs known.
	if profiles, err = expandShapeNames(m, profiles); err != nil {
		return nil, nil, err
	}
	if req.Profiles, err = flagProfiles(profiles); err != nil {
		return nil, nil, err
	}
	if skip {
		if err := preflight.CheckExternal(m, src); err != nil {
			return nil, nil, exitcode.Wrap(exitcode.Usage, err)
		}
		return m, nil, nil
	}
	if len(profiles) == 0 {
		profiles = []shapeFlags{{}}
	}
	seen := map[string]bool{}
	var completed []shapes.Profile
	for i, f := range profiles {
		r, err := preflight.CheckProfile(m, src, preflight.Params{
			Shapes: f.shapes, Min: f.min, Opt: f.opt, Max: f.max, MinOpset: minTensorRTOpset,
		})
		if err != nil {
			if len(profiles) > 1 {
				return nil, nil, exitcode.Usagef("profile %d: %v", i, err)
			}
			return nil, nil, err
		}
		var p shapes.Profile
		p.Inputs = append(p.Inputs, r.Inputs...) // nil when there are none
		completed = append(completed, p)
		w := r.Warnings
		if len(profiles) > 1 {
			w = make([]string, len(r.Warnings))
			for k, x := range r.Warnings {
				w[k] = fmt.Sprintf("profile %d: %s", i, x)
			}
		}
		for _, x := range w {
			if !seen[x] {
				seen[x] = true
				warnings = append(warnings, x)
			}
		}
	}
	if err := checkIOFormats(m, req); err != nil {
		return nil, nil, err
	}
	// Formats that say what TensorRT does anyway (fp32:chw for a float32 tensor) are the build
	// without them, so they neither change the build nor its key.
	if ownIOFormats(m.Inputs, req.InputFormats) {
		req.InputFormats = nil
	}
	if ownIOFormats(m.Outputs, req.OutputFormats) {
		req.OutputFormats = nil
	}
	warnings = append(warnings, layerPrecisionWarnings(m, req)...)
	// The profiles preflight completed (inputs filled in from the named dimensions they share
	// with given ones) replace the ones parsed from the flags.
	if len(completed) > 1 || len(completed) == 1 && len(completed[0].Inputs) > 0 {
		req.Profiles = completed
	}
	if ownStaticShapes(m, req.Profiles) {
		// A static model's own shapes, given explicitly: the build (and its key) is the one
		// without them.
		req.Profiles = nil
	}
	return m, warnings, nil
}

// checkIOFormats checks that --inputIOFormats and --outputIOFormats give one format for all
// tensors or one per tensor, as trtexec requires.
func checkIOFormats(m *onnx.Model, req *worker.Request) error {
	for _, c := range []struct {
		flag, what string
		n          int
		values     []onnx.Value
	}{
		{"--inputIOFormats", "inputs", len(req.InputFormats), m.Inputs},
		{"--outputIOFormats", "outputs", len(req.OutputFormats), m.Outputs},
	} {
		if c.n <= 1 || c.n == len(c.values) {
			continue
		}
		names := make([]string, len(c.values))
		for i, v := range c.values {
			names[i] = v.Name
		}
		return exitcode.Usagef("%s gives %d formats but %s has %d %s (%s)", c.flag, c.n, filepath.Base(m.Path), len(c.values), c.what, strings.Join(names, ", ")).Hintf("give one format for all of them or one per %s, in this order", strings.TrimSuffix(c.what, "s"))
	}
	return nil
}

// layerPrecisionWarnings names the --layerPrecisions layers that are no node of the model.
// TensorRT names the layers it makes from ONNX nodes after them, so such a name probably
// matches nothing; it is not an error, since TensorRT may add layers of its own.
func layerPrecisionWarnings(m *onnx.Model, req *worker.Request) []string {
	nodes := map[string]bool{}
	for _, n := range m.NodeNames() {
		nodes[n] = true
	}
	var unknown []string
	for _, lp := range req.LayerPrecisions {
		if lp.Layer != "*" && !nodes[lp.Layer] {
			unknown = append(unknown, strconv.Quote(lp.Layer))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("--layerPrecisions names %s, which %s has no node of; TensorRT names layers after the ONNX nodes, so check the names with trtbuild inspect",
		strings.Join(unknown, ", "), filepath.Base(m.Path))}
}

// expandShapeNames gives each shape flag's wildcard names (input_*:1x128) to the model's
// inputs they match (shapes.ExpandWildcards). Errors name the flag, and the profile when there
// are several.
func expandShapeNames(m *onnx.Model, profiles []shapeFlags) ([]shapeFlags, error) {
	inputs := make([]string, len(m.Inputs))
	for i, in := range m.Inputs {
		inputs[i] = in.Name
	}
	out := make([]shapeFlags, len(profiles))
	for i, f := range profiles {
		src := [4][]shapes.Spec{f.shapes, f.min, f.opt, f.max}
		dst := [4]*[]shapes.Spec{&out[i].shapes, &out[i].min, &out[i].opt, &out[i].max}
		for k := range src {
			specs, err := shapes.ExpandWildcards(shapeFlagNames[k]+profileSuffix(i, len(profiles)), src[k], inputs)
			if err != nil {
				return nil, exitcode.Usagef("invalid %v", err)
			}
			*dst[k] = specs
		}
	}
	return out, nil
}

// shapeFlags are one optimization profile's parsed --shapes, --min-shapes, --opt-shapes and
// --max-shapes.
type shapeFlags struct {
	shapes, min, opt, max []shapes.Spec
}

// ownStaticShapes reports whether profiles are one profile that fixes every input of m, a
// model whose inputs all have fixed shapes, at its own shape: what a build without shapes does.
func ownStaticShapes(m *onnx.Model, profiles []shapes.Profile) bool {
	if len(profiles) != 1 || len(profiles[0].Inputs) != len(m.Inputs) || len(m.Inputs) == 0 {
		return false
	}
	given := map[string]shapes.Input{}
	for _, in := range profiles[0].Inputs {
		given[in.Name] = in
	}
	for _, v := range m.Inputs {
		in, ok := given[v.Name]
		if !ok || v.Shape == nil || len(in.Min) != len(v.Shape) {
			return false
		}
		for i, d := range v.Shape {
			if !d.Known || d.Param != "" || in.Min[i] != d.Value || in.Opt[i] != d.Value || in.Max[i] != d.Value {
				return false
			}
		}
	}
	return true
}

// linearTypes are the ONNX element types whose network tensors TensorRT gives that type in
// its linear format (trtexec's chw) unless told otherwise, by trtexec's names.
var linearTypes = map[onnx.DataType]string{onnx.Float: "fp32", onnx.Float16: "fp16", onnx.BFloat16: "bf16", onnx.Int32: "int32"}

// ownIOFormats reports whether formats (one for all of values, or one each) give every tensor
// its own type in the linear format and nothing else: TensorRT's default I/O format.
func ownIOFormats(values []onnx.Value, formats []trtexec.IOFormat) bool {
	if len(formats) == 0 || len(values) == 0 || len(formats) != 1 && len(formats) != len(values) {
		return false
	}
	for i, v := range values {
		f := formats[0]
		if len(formats) > 1 {
			f = formats[i]
		}
		own, ok := linearTypes[v.ElemType]
		if !ok || v.Kind != "tensor" || f.Type != own || len(f.Formats) != 1 || f.Formats[0] != "chw" {
			return false
		}
	}
	return true
}
