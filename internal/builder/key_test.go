package builder

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildkey"
)

// TestKeyOn: the key of a build on a recorded target is the key the build computes on that
// target (a simulated build: Key, which probes), follows the options, names a matrix target's
// GPU for a simulated build as the build does, and refuses a backend no build has.
func TestKeyOn(t *testing.T) {
	o := DefaultOptions()
	o.Backend = "sim"
	o.Model = filepath.Join("..", "..", "testdata", "models", "convnet.onnx")
	probed, _, err := Key(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what   string
		edit   func(o *Options)
		target buildkey.Target
		same   bool
	}{
		{"the same build", func(o *Options) {}, buildkey.Target{Backend: "sim"}, true},
		{"fp16", func(o *Options) { o.FP16 = true }, buildkey.Target{Backend: "sim"}, false},
		{"another opt level", func(o *Options) { o.OptLevel = 2 }, buildkey.Target{Backend: "sim"}, false},
		{"a matrix target's GPU", func(o *Options) {
			o.KeyTarget = &buildkey.Target{GPU: "NVIDIA-L4", ComputeCapability: "8.9"}
		}, buildkey.Target{Backend: "sim"}, false},
	} {
		oo := o
		c.edit(&oo)
		k, err := KeyOn(oo, c.target)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if (k.Key == probed.Key) != c.same {
			t.Errorf("%s: key %s, the build's %s", c.what, k.Key, probed.Key)
		}
		if c.what == "a matrix target's GPU" && (k.Parts.GPU != "NVIDIA-L4" || k.Parts.ComputeCapability != "8.9") {
			t.Errorf("%s: parts %+v", c.what, k.Parts)
		}
	}
	if _, err := KeyOn(o, buildkey.Target{Backend: "cuda"}); err == nil || !strings.Contains(err.Error(), `invalid backend "cuda"`) {
		t.Errorf("an unknown backend: %v", err)
	}
}
