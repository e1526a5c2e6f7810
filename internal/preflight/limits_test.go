package preflight

import (
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestShapeLimits checks rule 6: shapes TensorRT cannot build for are refused, with rule and
// one-line message, and the shapes next to them pass.
func TestShapeLimits(t *testing.T) {
	dynamic := func(t *testing.T) *onnx.Model {
		m, err := onnx.ReadMetadata(testmodels.Bundled(t, "dynamic_batch.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name  string
		model func(t *testing.T) *onnx.Model
		p     []string // shapes, min, opt, max
		rule  string   // "" when the build may start
		want  string   // the message (contained in it, when it starts with "...")
	}{
		{"batch 0", dynamic, []string{"images:0x3x64x64"}, "shape-empty",
			`input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more`},
		{"batch 2^63-1", dynamic, []string{"images:9223372036854775807x3x64x64"}, "shape-volume",
			`input "images": the shape 9223372036854775807x3x64x64 is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; check the shape flags for a typo`},
		{"opt 0", dynamic, []string{"", "images:0x3x64x64", "images:0x3x64x64", "images:8x3x64x64"}, "shape-empty",
			`input "images": the opt shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; ` +
				`give opt and max sizes of 1 or more (only min may be 0, for an engine that also takes empty inputs)`},
		{"max 0 by broadcasting", dynamic, []string{"", "images:0x3x64x64"}, "shape-empty",
			`...the shape 0x3x64x64 gives dimension 0 (the batch) the size 0`},
		{"only max overflows", dynamic, []string{"", "images:1x3x64x64", "images:1x3x64x64", "images:9223372036854775807x3x64x64"}, "shape-volume",
			`...input "images": the max shape 9223372036854775807x3x64x64 is more than 2^63-1 elements`},
		{"min 0: the engine also takes empty inputs", dynamic, []string{"", "images:0x3x64x64", "images:4x3x64x64", "images:8x3x64x64"}, "", ""},
		{"a huge batch is a risk, not a refusal", dynamic, []string{"images:99999999999x3x64x64"}, "", ""},
		{"2^63-1 elements fit", func(t *testing.T) *onnx.Model { return riskModel(t, "Relu", "a", "b") },
			[]string{"x:9223372036854775807x1"}, "", ""},
		{"2^63 elements do not", func(t *testing.T) *onnx.Model { return riskModel(t, "Relu", "a", "b") },
			[]string{"x:4611686018427387904x2"}, "shape-volume", `...the shape 4611686018427387904x2 is more than 2^63-1 elements`},
		{"a 0 the model fixes", func(t *testing.T) *onnx.Model { return riskModel(t, "Relu", "batch", 0) },
			[]string{"x:2x0"}, "shape-empty",
			`input "x": the shape 2x0 gives dimension 1 the size 0, an empty tensor, which leaves TensorRT nothing to build for; the size is the model's own, so export the model with a size of 1 or more there`},
		{"a static model's empty input", func(t *testing.T) *onnx.Model { return riskModel(t, "Relu", 0, 3) }, nil, "shape-empty",
			`input "x": the model's shape 0 x 3 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; the size is the model's own, so export the model with a size of 1 or more there`},
		{"a static model's overflowing input", func(t *testing.T) *onnx.Model { return riskModel(t, "Relu", 1<<62, 4) }, nil, "shape-volume",
			`input "x": the model's shape 4611686018427387904 x 4 is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; export the model again with the input's real shape`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.model(t)
			_, err := Check(m, m.Path, params(t, tt.p...))
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantFailure(t, err, tt.rule, tt.want)
		})
	}
}

// The limits refuse what Risks would otherwise call likely to fail, so inspect --check reports
// each shape once: as the build's refusal.
func TestRisksLeaveRefusalsToTheBuild(t *testing.T) {
	for _, m := range []*onnx.Model{riskModel(t, "Relu", 0, 3), riskModel(t, "Relu", 1<<62, 4)} {
		_, err := Check(m, m.Path, Params{})
		if err == nil {
			t.Fatalf("%s: not refused", DimsString(m.Inputs[0].Shape))
		}
		if risks := Risks(m, nil, nil); len(risks) != 0 {
			t.Errorf("%s: refused (%v) and also the risks %+v", DimsString(m.Inputs[0].Shape), err, risks)
		}
	}
}
