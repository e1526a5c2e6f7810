//go:build !windows

package cgo

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// These drive the shim of each TensorRT major compiled in; TensorRT itself is played by
// stand-in libraries of that major.

// shimOptionsChildEnv makes TestShimOptionsChild run: in a child process, since the libraries
// it installs stay for the life of the process.
const shimOptionsChildEnv = "TRTBUILD_SHIM_OPTIONS_CHILD"

// TestShimChecksOptionsAsTheSimDoes runs TestShimOptionsChild in a child process with stand-ins
// of each TensorRT major compiled in on LD_LIBRARY_PATH: the shim of that major takes the
// build.
func TestShimChecksOptionsAsTheSimDoes(t *testing.T) {
	if os.Getenv(shimOptionsChildEnv) != "" {
		t.Skip("the child runs only TestShimOptionsChild")
	}
	noSystemTensorRT(t)
	for _, c := range CompiledShims() {
		major := strconv.Itoa(c.Major())
		t.Run("TensorRT "+major, func(t *testing.T) {
			dir := buildStandIns(t, t.TempDir(),
				standIn{File: "libnvinfer.so." + major, Src: inferSrc(c.TensorRT, c.Build)},
				standIn{File: "libnvonnxparser.so." + major, Src: parserSrc},
				driverStandIn("Stand-in GPU", 9, 0, 132))
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run=^TestShimOptionsChild$", "-test.v")
			cmd.Env = append(os.Environ(), shimOptionsChildEnv+"="+major, "LD_LIBRARY_PATH="+dir, "TENSORRT_ROOT=", "TRTBUILD_TENSORRT_LIB=", "VIRTUAL_ENV=", "CONDA_PREFIX=", "PYTHONUSERBASE="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestShimOptionsChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}

// TestShimOptionsChild: the TensorRT backend refuses every malformed option with the same code
// and message as the simulated builder (both call trtb::check_options), and adds only its own
// refusals after it.
func TestShimOptionsChild(t *testing.T) {
	if os.Getenv(shimOptionsChildEnv) == "" {
		t.Skip("runs in a child process of TestShimChecksOptionsAsTheSimDoes")
	}
	major, _ := strconv.Atoi(os.Getenv(shimOptionsChildEnv))
	c, _ := CompiledFor(major)
	loc := trt.SearchFromEnv(CompiledMajors(), c.CUDA/1000, "", os.Getenv).Locate()
	found, err := FindTensorRT(loc, false)
	if err != nil {
		t.Fatal(err)
	}
	if found.Infer.Info.Version != c.TensorRT {
		t.Fatalf("loaded libnvinfer %d, want the stand-in of %d", found.Infer.Info.Version, c.TensorRT)
	}
	if err := found.Install(); err != nil {
		t.Fatal(err)
	}
	readOnly := func(t *testing.T, o *Options) {
		f, err := os.Open(o.PlanFile.Name())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		o.PlanFile = f
	}
	cases := []struct {
		name   string
		change func(t *testing.T, o *Options)
	}{
		{"read-only plan", readOnly},
		{"plan not empty", func(t *testing.T, o *Options) {
			if _, err := o.PlanFile.WriteString("old engine"); err != nil {
				t.Fatal(err)
			}
		}},
		{"log severity", func(t *testing.T, o *Options) { o.LogSeverity = 5 }},
		{"negative device", func(t *testing.T, o *Options) { o.Device = -1 }},
		{"opt level", func(t *testing.T, o *Options) { o.OptLevel = 6 }},
		{"aux streams", func(t *testing.T, o *Options) { o.MaxAuxStreams = -2 }},
		{"hardware compat", func(t *testing.T, o *Options) { o.HardwareCompat = 3 }},
		{"precision bits", func(t *testing.T, o *Options) { o.Precision = 1 << 9 }},
		{"flag bits", func(t *testing.T, o *Options) { o.Flags = 1 << 20 }},
		{"lean runtime", func(t *testing.T, o *Options) { o.Flags = FlagExcludeLeanRuntime }},
		{"miss without cache", func(t *testing.T, o *Options) { o.Flags = FlagDisableTimingCache | FlagErrorOnTimingCacheMiss }},
		{"min above opt", func(t *testing.T, o *Options) {
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: []int64{1, 8}, Opt: []int64{1, 4}, Max: []int64{1, 16}}}}}
		}},
		{"empty plugin", func(t *testing.T, o *Options) { o.PluginPaths = []string{""} }},
		{"negative avg timing", func(t *testing.T, o *Options) { o.AvgTiming = -1 }},
		{"control character in build route", func(t *testing.T, o *Options) { o.BuildRoute = "-a=b\t-c=d" }},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var msgs [2]string
			for i, backend := range []Backend{BackendSim, BackendTensorRT} {
				o := options(t, &SimOptions{})
				tt.change(t, &o)
				b, err := NewBuild(backend, o)
				if err == nil {
					b.Close()
					t.Fatalf("backend %d accepted the options", backend)
				}
				msgs[i] = asError(t, err, CodeInvalidArgument).Message
			}
			if msgs[0] != msgs[1] {
				t.Errorf("the backends disagree:\n  sim:      %s\n  tensorrt: %s", msgs[0], msgs[1])
			}
		})
	}

	t.Run("valid options", func(t *testing.T) {
		b, err := NewBuild(BackendTensorRT, options(t, nil))
		if err != nil {
			t.Fatalf("NewBuild: %v", err)
		}
		b.Close()
	})
	t.Run("build route", func(t *testing.T) {
		// IBuilderConfig::setBuildRoute came with TensorRT 11.1: older headers refuse the route
		// before anything is built.
		o := options(t, nil)
		o.AvgTiming, o.BuildRoute = 8, "-conv_use_long_w=off"
		b, err := NewBuild(BackendTensorRT, o)
		if major < 11 {
			if e := asError(t, err, CodeUnsupported); !strings.Contains(e.Message, "--set-build-route needs TensorRT 11.1 or newer") {
				t.Errorf("message %q", e.Message)
			}
			return
		}
		if err != nil {
			t.Fatalf("TensorRT %d refused a build route: %v", major, err)
		}
		b.Close()
	})
	t.Run("backend refusal", func(t *testing.T) {
		o := options(t, nil)
		code, want := CodeUnsupported, "cannot be builder flags on TensorRT"
		o.Precision = PrecisionFP16
		if major < 11 {
			// TensorRT 10's FP8 flag is not supported in ampere+ engines (NvInfer.h 10.x).
			code, want = CodeInvalidArgument, "--fp8 cannot be combined with --hardware-compat ampere+"
			o.Precision, o.HardwareCompat = PrecisionFP8, 1
		}
		_, err := NewBuild(BackendTensorRT, o)
		if e := asError(t, err, code); !strings.Contains(e.Message, want) {
			t.Errorf("message %q, want it to contain %q", e.Message, want)
		}
	})
}
