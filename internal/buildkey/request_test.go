package buildkey

import (
	"testing"

	"github.com/trtbuild/trtbuild/internal/shapes"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
	"github.com/trtbuild/trtbuild/internal/worker"
)

func TestFromRequest(t *testing.T) {
	model := tm.Bundled(t, "dynamic_batch.onnx")
	base := worker.Request{Model: model, Backend: "tensorrt", OptLevel: -1, MaxAuxStreams: -1,
		Profiles: []shapes.Profile{{Inputs: []shapes.Input{{Name: "images", Min: []int64{1, 3, 64, 64}, Opt: []int64{4, 3, 64, 64}, Max: []int64{8, 3, 64, 64}}}}}}
	trt10 := Target{Backend: "tensorrt", TensorRT: "10.16.0.32", TRTMajor: 10, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	trt11 := Target{Backend: "tensorrt", TensorRT: "11.1.0.5", TRTMajor: 11, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	fp16 := base
	fp16.FP16 = true
	cases := []struct {
		name          string
		req           worker.Request
		target        Target
		wantConverter bool
	}{
		{"TensorRT 10 fp32", base, trt10, false},
		{"TensorRT 10 fp16 is a builder flag", fp16, trt10, false},
		{"TensorRT 11 fp16 converts the graph", fp16, trt11, true},
		{"simulated fp16", fp16, Target{Backend: "sim"}, false},
	}
	keys := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, h, err := FromRequest(c.req, c.target)
			if err != nil {
				t.Fatal(err)
			}
			if (p.Converter != "") != c.wantConverter {
				t.Errorf("converter %q, want set=%v", p.Converter, c.wantConverter)
			}
			if p.Graph != h.Graph || p.Weights != h.Weights || len(p.Profiles) != 1 || p.TensorRT != c.target.TensorRT {
				t.Errorf("parts %+v do not carry the request", p)
			}
			if (p.Sim != nil) != (c.target.Backend == "sim") {
				t.Errorf("sim part %+v for backend %s", p.Sim, c.target.Backend)
			}
			if other, dup := keys[p.Key()]; dup {
				t.Errorf("same key as %s", other)
			}
			keys[p.Key()] = c.name
		})
	}
	if _, _, err := FromRequest(worker.Request{Model: model, Plugins: []string{"/nonexistent/plugin.so"}}, Target{Backend: "sim"}); err == nil {
		t.Error("a missing plugin library was hashed")
	}
}
