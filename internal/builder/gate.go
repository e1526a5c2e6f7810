package builder

import (
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// Preflighted is what Preflight found: the model as read, the optimization profiles the build
// would use (completed by the preflight; none for a static model without shape flags) and the
// warnings the build would show.
type Preflighted struct {
	Model    *onnx.Model
	Profiles []shapes.Profile
	Warnings []string
}

// Preflight applies the rules a build applies to its model and settings before anything starts
// — the same code as Run, with the same messages and exit status 2 — but for no backend in
// particular and without looking at the engine's or any other output's path, so that it runs
// where no TensorRT is installed (`trtbuild inspect --check`). It writes nothing.
func Preflight(o Options) (Preflighted, error) {
	src, err := openModel(o.Model)
	if err != nil {
		return Preflighted{}, err
	}
	defer src.Close()
	req, m, warnings, err := prepareRequestOn(&o, src, "sim")
	if err != nil {
		return Preflighted{}, err
	}
	return Preflighted{Model: m, Profiles: req.Profiles, Warnings: warnings}, nil
}
