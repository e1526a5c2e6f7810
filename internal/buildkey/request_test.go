package buildkey

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildreq"
	"github.com/trtbuild/trtbuild/internal/shapes"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

func TestFromRequest(t *testing.T) {
	model := tm.Bundled(t, "dynamic_batch.onnx")
	base := buildreq.Request{Model: model, Backend: "tensorrt", OptLevel: -1, MaxAuxStreams: -1,
		Profiles: []shapes.Profile{{Inputs: []shapes.Input{{Name: "images", Min: []int64{1, 3, 64, 64}, Opt: []int64{4, 3, 64, 64}, Max: []int64{8, 3, 64, 64}}}}}}
	trt10 := Target{Backend: "tensorrt", TensorRT: "10.16.0.32", TRTMajor: 10, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	trt11 := Target{Backend: "tensorrt", TensorRT: "11.1.0.5", TRTMajor: 11, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	fp16 := base
	fp16.FP16 = true
	cases := []struct {
		name          string
		req           buildreq.Request
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
	if _, _, err := FromRequest(buildreq.Request{Model: model, Plugins: []string{"/nonexistent/plugin.so"}}, Target{Backend: "sim"}); err == nil {
		t.Error("a missing plugin library was hashed")
	}
}

// TestNormalizedKeys: option sets that build the same engine have one key; those that do not
// have different keys.
func TestNormalizedKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plugA := write("libplugin.so", "plugin bytes")
	plugRenamed := write("libplugin-copy.so", "plugin bytes")
	plugOther := write("libother.so", "other plugin bytes")
	hashes := ModelHashes{Graph: "sha256:g", Weights: "sha256:w"}
	trt10 := Target{Backend: "tensorrt", TensorRT: "10.16.0.32", TRTMajor: 10, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	trt11 := Target{Backend: "tensorrt", TensorRT: "11.1.0.5", TRTMajor: 11, GPU: "NVIDIA L4", ComputeCapability: "8.9", SMs: 58}
	sim := Target{Backend: "sim"}
	base := buildreq.Request{Backend: "tensorrt", OptLevel: -1, MaxAuxStreams: -1, AvgTiming: 8}
	with := func(f func(r *buildreq.Request)) buildreq.Request {
		r := base
		f(&r)
		return r
	}
	key := func(req buildreq.Request, target Target) string {
		t.Helper()
		p, _, err := FromHashes(req, target, hashes)
		if err != nil {
			t.Fatal(err)
		}
		return p.Key()
	}
	cases := []struct {
		name   string
		a, b   buildreq.Request
		target Target
		same   bool
	}{
		{"--opt-level 3 is TensorRT 10's default", base, with(func(r *buildreq.Request) { r.OptLevel = 3 }), trt10, true},
		{"--opt-level 4 is not", base, with(func(r *buildreq.Request) { r.OptLevel = 4 }), trt10, false},
		{"--opt-level 3 on TensorRT 11 is its default too", base, with(func(r *buildreq.Request) { r.OptLevel = 3 }), trt11, true},
		{"--opt-level 3 on the simulated builder is left alone", base, with(func(r *buildreq.Request) { r.OptLevel = 3 }), sim, false},
		{"layer_names_only is TensorRT 10's default", base, with(func(r *buildreq.Request) { r.ProfilingVerbosity = "layer_names_only" }), trt10, true},
		{"detailed is not", base, with(func(r *buildreq.Request) { r.ProfilingVerbosity = "detailed" }), trt10, false},
		{"layer_names_only on TensorRT 11 is its default too", base, with(func(r *buildreq.Request) { r.ProfilingVerbosity = "layer_names_only" }), trt11, true},
		{"a plugin renamed with the same bytes", with(func(r *buildreq.Request) { r.Plugins = []string{plugA} }), with(func(r *buildreq.Request) { r.Plugins = []string{plugRenamed} }), trt10, true},
		{"a plugin with other bytes", with(func(r *buildreq.Request) { r.Plugins = []string{plugA} }), with(func(r *buildreq.Request) { r.Plugins = []string{plugOther} }), trt10, false},
		{"plugins in another load order", with(func(r *buildreq.Request) { r.Plugins = []string{plugA, plugOther} }), with(func(r *buildreq.Request) { r.Plugins = []string{plugOther, plugA} }), trt10, false},
		{"no plugin and one", base, with(func(r *buildreq.Request) { r.Plugins = []string{plugA} }), trt10, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ka, kb := key(c.a, c.target), key(c.b, c.target)
			if (ka == kb) != c.same {
				t.Errorf("keys %s and %s: same=%v, want %v", ka, kb, ka == kb, c.same)
			}
		})
	}
	// The parts keep the plugin's file name for people; only the key leaves it out.
	p, _, err := FromHashes(with(func(r *buildreq.Request) { r.Plugins = []string{plugA} }), trt10, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Plugins) != 1 || p.Plugins[0].Name != "libplugin.so" {
		t.Errorf("plugins %+v, want libplugin.so named", p.Plugins)
	}
}
