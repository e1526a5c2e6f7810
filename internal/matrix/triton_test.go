package matrix

import (
	"strings"
	"testing"
)

func TestTriton(t *testing.T) {
	f := load(t)
	engines, err := f.TritonEngines("classifier", "fp16", "b8")
	if err != nil {
		t.Fatal(err)
	}
	if len(engines) != 2 || engines[0].ComputeCapability != "8.0" || engines[0].File != "a100-mig.plan" || engines[1].Cell.ID() != "h100/classifier/b8/fp16" {
		t.Fatalf("engines %+v", engines)
	}
	got := TritonConfig("classifier", engines)
	want := `# Written by trtbuild matrix emit triton.
# engines of: classifier/b8/fp16
name: "classifier"
platform: "tensorrt_plan"
cc_model_filenames [
  { key: "8.0" value: "a100-mig.plan" },
  { key: "9.0" value: "h100.plan" }
]
`
	if got != want {
		t.Errorf("config:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range []struct{ model, prec, profile, want string }{
		{"classifier", "fp16", "", "no cell"},
		{"nope", "fp16", "", "no cell"},
	} {
		if _, err := f.TritonEngines(c.model, c.prec, c.profile); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("TritonEngines(%s, %s, %q): %v", c.model, c.prec, c.profile, err)
		}
	}
	f.Targets[1].ComputeCapability = "9.0"
	if _, err := f.TritonEngines("convnet", "fp16", ""); err == nil || !strings.Contains(err.Error(), "both have compute capability 9.0") {
		t.Errorf("two targets of one capability: %v", err)
	}
	f.Targets[1].ComputeCapability = ""
	if _, err := f.TritonEngines("convnet", "fp16", ""); err == nil || !strings.Contains(err.Error(), "no compute_capability") {
		t.Errorf("a target without capability: %v", err)
	}
}

// TestComputeCapabilityAsTritonLooksItUp: Triton looks cc_model_filenames up by
// std::to_string(major) + "." + std::to_string(minor), so a target's capability must be
// written so, or the matrix file is refused with the form to write.
func TestComputeCapabilityAsTritonLooksItUp(t *testing.T) {
	for _, c := range []struct{ cc, want string }{
		{"9.0", ""}, {"8.9", ""}, {"12.1", ""}, {"10.0", ""}, {"7.5", ""},
		{"9.00", `compute_capability "9.00": write major.minor as CUDA and Triton name it, one digit after the point and no leading zero (Triton looks engines up by that text): "9.0"`},
		{"09.0", `: "9.0"`},
		{"8.60", `: "8.6"`},
		{"9", `compute_capability "9": write major.minor as CUDA and Triton name it, one digit after the point and no leading zero (Triton looks engines up by that text), e.g. "9.0"`},
		{"9.", `compute_capability "9."`},
		{"sm_90", `compute_capability "sm_90"`},
		{"0.0", `compute_capability "0.0"`},
	} {
		err := CheckComputeCapability(c.cc)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.cc, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cc, err, c.want)
		}
		body := "version: 1\nmodels: [{path: m.onnx}]\nprecisions: [fp16]\ntargets: [{name: h100, gpu: NVIDIA-H100-80GB-HBM3, compute_capability: \"" + c.cc + "\"}]\n"
		if _, err := Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), "targets[0] (h100): compute_capability") {
			t.Errorf("a matrix file with compute_capability %s: %v", c.cc, err)
		}
	}
}

// TestTritonOwner: a model folder is replaced only with the same model, profile and precision
// (the engines rebuilt), never with another profile's or precision's, nor over a config that
// trtbuild did not write.
func TestTritonOwner(t *testing.T) {
	engines, err := load(t).TritonEngines("classifier", "fp16", "b8")
	if err != nil {
		t.Fatal(err)
	}
	ours := []byte(TritonConfig("classifier", engines))
	for _, c := range []struct {
		what     string
		existing []byte
		variant  string
		want     string
	}{
		{"no model yet", nil, "classifier/b8/fp16", ""},
		{"the same engines, rebuilt", ours, "classifier/b8/fp16", ""},
		{"another profile", ours, "classifier/b1/fp16", "Triton model classifier (repo/classifier/config.pbtxt) holds the engines of classifier/b8/fp16, not classifier/b1/fp16: one Triton model serves one profile and precision; give this one its own name (--name classifier-b1-fp16)"},
		{"another precision", ours, "classifier/b8/fp32", "holds the engines of classifier/b8/fp16, not classifier/b8/fp32"},
		{"a config of someone else", []byte("name: \"classifier\"\nplatform: \"onnxruntime_onnx\"\n"), "classifier/b8/fp16", "repo/classifier/config.pbtxt was not written by trtbuild matrix emit triton; give the model another name (--name) or remove that folder"},
	} {
		err := checkTritonOwner("repo/classifier/config.pbtxt", c.existing, "classifier", c.variant)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{{"classifier", true}, {"classifier-b8.v2", true}, {"../up", false}, {"a/b", false}, {".hidden", false}, {"", false}} {
		if err := CheckTritonName(c.name); (err == nil) != c.ok {
			t.Errorf("CheckTritonName(%q): %v", c.name, err)
		}
	}
}
