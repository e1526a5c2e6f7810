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
