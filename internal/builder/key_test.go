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

// TestKeyOfOptionPairs: option sets that build the same engine have one key (a static model's
// own shapes given explicitly are no shapes), and those that do not have different keys.
func TestKeyOfOptionPairs(t *testing.T) {
	models := filepath.Join("..", "..", "testdata", "models")
	key := func(model string, edit func(o *Options)) string {
		t.Helper()
		o := DefaultOptions()
		o.Backend = "sim"
		o.Model = filepath.Join(models, model)
		edit(&o)
		k, _, err := Key(o)
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	none := func(o *Options) {}
	shapes := func(s ...string) func(o *Options) {
		return func(o *Options) {
			for _, p := range s {
				o.Profiles = append(o.Profiles, Profile{Shapes: p})
			}
		}
	}
	for _, c := range []struct {
		what  string
		model string
		a, b  func(o *Options)
		same  bool
	}{
		{"a static model's own shapes", "convnet.onnx", none, shapes("images:1x3x224x224"), true},
		{"a static model's own shapes as min, opt and max", "convnet.onnx", none, func(o *Options) {
			o.Profiles = []Profile{{Min: "images:1x3x224x224", Opt: "images:1x3x224x224", Max: "images:1x3x224x224"}}
		}, true},
		{"a static model's own shapes in two profiles", "convnet.onnx", none, shapes("images:1x3x224x224", "images:1x3x224x224"), false},
		{"a dynamic model's shapes, as --shapes or min, opt and max", "dynamic_batch.onnx", shapes("images:4x3x64x64"), func(o *Options) {
			o.Profiles = []Profile{{Min: "images:4x3x64x64", Opt: "images:4x3x64x64", Max: "images:4x3x64x64"}}
		}, true},
		{"--inputIOFormats fp32:chw for a float32 input", "convnet.onnx", none, func(o *Options) { o.Trtexec.InputFormats = "fp32:chw" }, true},
		{"--outputIOFormats fp32:chw for a float32 output", "convnet.onnx", none, func(o *Options) { o.Trtexec.OutputFormats = "FP32:CHW" }, true},
		{"--inputIOFormats fp16:chw for a float32 input", "convnet.onnx", none, func(o *Options) { o.Trtexec.InputFormats = "fp16:chw" }, false},
		{"--inputIOFormats fp32:hwc for a float32 input", "convnet.onnx", none, func(o *Options) { o.Trtexec.InputFormats = "fp32:hwc" }, false},
		{"--inputIOFormats fp32:chw+hwc allows more", "convnet.onnx", none, func(o *Options) { o.Trtexec.InputFormats = "fp32:chw+hwc" }, false},
		{"a dynamic model's two batch sizes", "dynamic_batch.onnx", shapes("images:1x3x64x64"), shapes("images:8x3x64x64"), false},
	} {
		t.Run(c.what, func(t *testing.T) {
			ka, kb := key(c.model, c.a), key(c.model, c.b)
			if (ka == kb) != c.same {
				t.Errorf("keys %s and %s: same=%v, want %v", ka, kb, ka == kb, c.same)
			}
		})
	}
}
