//go:build !windows

package cgo

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// These drive the shim of each TensorRT major compiled in; TensorRT itself is played by
// stand-in libraries of that major.

// shimOptionsChildEnv makes TestShimOptionsChild run: in a child process, since the libraries
// it installs stay for the life of the process. shimOptionsOutEnv names the file where it
// writes the TensorRT backend's refusals.
const (
	shimOptionsChildEnv = "TRTBUILD_SHIM_OPTIONS_CHILD"
	shimOptionsOutEnv   = "TRTBUILD_SHIM_OPTIONS_OUT"
)

// shimOptionCases are malformed options, each refused by the one checker of trtb_options
// (check_options) whichever TensorRT the shim builds over.
var shimOptionCases = []struct {
	name   string
	change func(t *testing.T, o *Options)
}{
	{"read-only plan", func(t *testing.T, o *Options) {
		f, err := os.Open(o.PlanFile.Name())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		o.PlanFile = f
	}},
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

// refusal is NewBuild's refusal of options changed by change, on backend b.
func refusal(t *testing.T, b Backend, change func(t *testing.T, o *Options)) codeMessage {
	t.Helper()
	o := options(t, nil)
	change(t, &o)
	build, err := NewBuild(b, o)
	if err == nil {
		build.Close()
		t.Fatalf("backend %v accepted the options", b)
	}
	return codeMessageOf(err)
}

// TestShimChecksOptionsAsTheSimDoes runs TestShimOptionsChild in a child process with stand-in
// libraries of each TensorRT major compiled in on LD_LIBRARY_PATH (the shim of that major
// builds over them, loaded by the run-time loader), and compares each refusal it saw with this
// process's simulated builds' (the shim over the stand-in compiled in): both come from one
// checker, with the same code and message.
func TestShimChecksOptionsAsTheSimDoes(t *testing.T) {
	if os.Getenv(shimOptionsChildEnv) != "" {
		t.Skip("the child runs only TestShimOptionsChild")
	}
	noSystemTensorRT(t)
	sim := map[string]codeMessage{}
	for _, tt := range shimOptionCases {
		sim[tt.name] = refusal(t, BackendSim, tt.change)
	}
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
			report := filepath.Join(t.TempDir(), "refusals.json")
			cmd := exec.Command(exe, "-test.run=^TestShimOptionsChild$", "-test.v")
			cmd.Env = append(os.Environ(), shimOptionsChildEnv+"="+major, shimOptionsOutEnv+"="+report, "LD_LIBRARY_PATH="+dir,
				"TENSORRT_ROOT=", "TRTBUILD_TENSORRT_LIB=", "VIRTUAL_ENV=", "CONDA_PREFIX=", "PYTHONUSERBASE="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestShimOptionsChild") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var loaded map[string]codeMessage
			if err := json.Unmarshal(data, &loaded); err != nil {
				t.Fatalf("child's report %q: %v", data, err)
			}
			for _, tt := range shimOptionCases {
				if got, want := loaded[tt.name], sim[tt.name]; got != want || got.Code != CodeInvalidArgument {
					t.Errorf("%s: TensorRT %s refused with %v %q, the simulated build with %v %q; want both CodeInvalidArgument, the same",
						tt.name, major, got.Code, got.Message, want.Code, want.Message)
				}
			}
		})
	}
}

// TestShimOptionsChild: the TensorRT backend over loaded stand-in libraries refuses every
// malformed option (written to the report file for its parent to compare), accepts valid ones,
// and adds only its own refusals after the common check.
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
	report := map[string]codeMessage{}
	for _, tt := range shimOptionCases {
		t.Run(tt.name, func(t *testing.T) { report[tt.name] = refusal(t, BackendTensorRT, tt.change) })
	}
	data, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv(shimOptionsOutEnv), data, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("valid options", func(t *testing.T) {
		b, err := NewBuild(BackendTensorRT, options(t, nil))
		if err != nil {
			t.Fatalf("NewBuild: %v", err)
		}
		b.Close()
	})
	t.Run("simulated build refused", func(t *testing.T) {
		// A process that loaded TensorRT plays no stand-in.
		_, err := NewBuild(BackendSim, options(t, nil))
		if e := asError(t, err, CodeState); !strings.Contains(e.Message, "this process loaded TensorRT's libraries") {
			t.Errorf("message %q", e.Message)
		}
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
