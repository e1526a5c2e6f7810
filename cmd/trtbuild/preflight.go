package main

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// shapeFlags are one optimization profile's parsed --shapes, --min-shapes, --opt-shapes and
// --max-shapes.
type shapeFlags struct {
	shapes, min, opt, max []shapes.Spec
}

// parseShapeFlags parses every profile's shape flags (see profileFlags). Errors name the flag,
// and the profile when there are several.
func parseShapeFlags(o *buildOptions) ([]shapeFlags, error) {
	groups := o.profiles.groups
	out := make([]shapeFlags, len(groups))
	for i, g := range groups {
		dst := [4]*[]shapes.Spec{&out[i].shapes, &out[i].min, &out[i].opt, &out[i].max}
		for k, text := range g.text {
			if !g.set[k] {
				continue
			}
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
// that do not fit the model's inputs, missing shapes for dynamic inputs and unsafe or missing
// external data are refused here, with exit status 2, before any GPU time is spent. The
// simulated builder gets the model's real node names. With skip (--no-preflight) the shape
// and opset rules are skipped, never the external data rule: external data files stay inside
// the model's folder.
func checkModel(model string, req *worker.Request, profiles []shapeFlags, skip bool) (m *onnx.Model, warnings []string, err error) {
	m, err = onnx.ReadMetadata(model)
	if err != nil && skip {
		return nil, nil, exitcode.Usagef("%v; --no-preflight skips the shape checks, not this one: trtbuild must read the model to keep its external data inside its folder", err)
	}
	if err != nil {
		return nil, nil, exitcode.Wrap(exitcode.Usage, err)
	}
	if skip {
		if err := preflight.CheckExternal(m, model); err != nil {
			return nil, nil, exitcode.Wrap(exitcode.Usage, err)
		}
		req.Layers = m.NodeNames()
		return m, nil, nil
	}
	if len(profiles) == 0 {
		profiles = []shapeFlags{{}}
	}
	seen := map[string]bool{}
	for i, f := range profiles {
		w, err := preflight.Check(m, model, preflight.Params{
			Shapes: f.shapes, Min: f.min, Opt: f.opt, Max: f.max, MinOpset: minTensorRTOpset,
		})
		if err != nil {
			if len(profiles) > 1 {
				return nil, nil, exitcode.Usagef("profile %d: %v", i, err)
			}
			return nil, nil, err
		}
		for _, x := range w {
			if !seen[x] {
				seen[x] = true
				warnings = append(warnings, x)
			}
		}
	}
	req.Layers = m.NodeNames()
	return m, warnings, nil
}
