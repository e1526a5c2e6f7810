package preflight

// Test-only API of package preflight: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import "github.com/trtbuild/trtbuild/internal/onnx"

// Run reads the model at modelPath with onnx.ReadMetadata, as trtbuild does (a failure is
// rule "model"), and checks it with Check. The model is returned whenever it could be read,
// also when a check fails.
func Run(modelPath string, p Params) (*onnx.Model, []string, error) {
	m, err := onnx.ReadMetadata(modelPath)
	if err != nil {
		return nil, nil, usage(&Error{Rule: "model", Err: err})
	}
	warnings, err := Check(m, modelPath, p)
	return m, warnings, err
}

// Check is CheckProfile without the profile, for the model at modelPath.
func Check(m *onnx.Model, modelPath string, p Params) ([]string, error) {
	r, err := CheckPath(m, modelPath, p)
	return r.Warnings, err
}

// CheckPath is CheckProfile of the model at modelPath, opened as a Source for the check.
func CheckPath(m *onnx.Model, modelPath string, p Params) (Result, error) {
	src, err := onnx.OpenSource(modelPath)
	if err != nil {
		return Result{}, err
	}
	defer src.Close()
	return CheckProfile(m, src, p)
}
