package cgo

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// Failure paths of the TensorRT shim that a simulated build reaches: the caller's mistakes the
// shim finds (a device the driver lacks, a folder for a model), and what TensorRT and the CUDA
// driver refuse (the stand-in's refuse setting), each a status that names the problem and the
// fix.

// TestShimCallerMistakes: a device the driver does not have, and a model path that is a folder,
// fail the build with the shim's own words; so does the builder check of such a device.
func TestShimCallerMistakes(t *testing.T) {
	t.Run("device", func(t *testing.T) {
		o := options(t, quick())
		o.Device = 8
		e := asError(t, build(t, o, nil).err, CodeInvalidArgument)
		if want := "--device 8: invalid device ordinal, CUDA sees 8 GPU(s) numbered from 0"; e.Message != want {
			t.Errorf("Run on device 8: %q, want %q", e.Message, want)
		}
		// The build installed the stand-in: the builder check asks its driver too.
		err := CheckBuilder(8)
		if e := asError(t, err, CodeUnavailable); !strings.Contains(e.Message, "--device 8: invalid device ordinal") {
			t.Errorf("CheckBuilder(8): %q, want the device refused", e.Message)
		}
	})
	t.Run("model folder", func(t *testing.T) {
		o := options(t, quick())
		o.ModelPath = testDir(t)
		e := asError(t, build(t, o, nil).err, CodeIO)
		if want := "cannot read model " + o.ModelPath + ": it is a directory; give the .onnx file"; e.Message != want {
			t.Errorf("Run on a folder: %q, want %q", e.Message, want)
		}
	})
}

// TestShimDriverRefusesStream: a CUDA driver that cannot make the builder's profile stream
// (out of memory) fails the build before TensorRT builds, quoting the driver.
func TestShimDriverRefusesStream(t *testing.T) {
	sim := quick()
	sim.Refuse = "cuStreamCreate"
	e := asError(t, build(t, options(t, sim), nil).err, CodeUnavailable)
	if want := "cannot create the builder's profile stream: cuStreamCreate: out of memory (CUDA error 2)"; e.Message != want {
		t.Errorf("Run: %q, want %q", e.Message, want)
	}
}

// TestShimCacheNotSavedAfterFailure: after a build that failed, a timing cache TensorRT will
// not serialize is not saved, and a warning says so beside the build's own error.
func TestShimCacheNotSavedAfterFailure(t *testing.T) {
	sim := quick()
	sim.Refuse = "ITimingCache::serialize"
	sim.FailAt = ptr(0.5)
	out := build(t, options(t, sim), nil)
	e := asError(t, out.err, CodeBuildFailed)
	if !strings.Contains(e.Message, "Could not find any implementation for node") {
		t.Errorf("Run: %q, want TensorRT's error", e.Message)
	}
	tr := checkEvents(t, out.events)
	if len(out.cache) != 0 || !slices.Contains(tr.logs[SeverityWarning], "the timing cache could not be saved after the build that did not finish") {
		t.Errorf("cache %q, warnings %q; want none saved, and a warning saying why", out.cache, tr.logs[SeverityWarning])
	}
}

// shapeTensorModel is a model whose input "shape", of values int64 values, is the shape a
// Reshape gives "data": a shape tensor input, whose values a profile gives.
func shapeTensorModel(t *testing.T, values int) string {
	t.Helper()
	return writeModel(t, "reshape.onnx", &onnxpb.GraphProto{
		Name:   "reshape",
		Node:   []*onnxpb.NodeProto{testmodels.Node("reshape", "Reshape", []string{"data", "shape"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{testmodels.Value("data", onnxpb.TensorProto_FLOAT, 6), testmodels.Value("shape", onnxpb.TensorProto_INT64, values)},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("y", onnxpb.TensorProto_FLOAT, "a", "b")},
	})
}

// TestShimShapeTensorInputs: a shape tensor input takes values, not dimensions: as many as it
// has (a shape of another count is refused, naming both), 1 for each when none are given (with
// a warning, as trtexec), and at most 8.
func TestShimShapeTensorInputs(t *testing.T) {
	values := func(v ...int64) []shapes.Profile {
		return []shapes.Profile{{Inputs: []shapes.Input{{Name: "shape", Min: v, Opt: v, Max: v}}}}
	}
	for _, tt := range []struct {
		name     string
		values   int
		profiles []shapes.Profile
		code     Code
		message  string // the error's, or a warning of a build that succeeds
	}{
		{"given", 2, values(2, 3), CodeOK, ""},
		{"none given", 2, nil, CodeOK, "input shape is dynamic (2) and has no shape; using 1x1 (give it with --shapes)"},
		{"wrong count", 2, values(1, 2, 3), CodeInvalidArgument, "input shape is a shape tensor of 2 values; give it 2 values, not 3"},
		{"too many", 9, nil, CodeUnsupported, "input shape is a shape tensor of more than 8 values"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := optionsFor(t, shapeTensorModel(t, tt.values), quick())
			o.Profiles = tt.profiles
			out := build(t, o, nil)
			if tt.code != CodeOK {
				if e := asError(t, out.err, tt.code); e.Message != tt.message {
					t.Errorf("Run: %q, want %q", e.Message, tt.message)
				}
				return
			}
			if out.err != nil || out.res.PlanBytes == 0 {
				t.Fatalf("Run: %v, %d plan bytes; want the engine", out.err, out.res.PlanBytes)
			}
			tr := checkEvents(t, out.events)
			if tt.message != "" && !slices.Contains(tr.logs[SeverityWarning], tt.message) {
				t.Errorf("warnings %q, want %q", tr.logs[SeverityWarning], tt.message)
			}
		})
	}
}

// TestShimRefusedByTensorRTOfEachMajor: what only one major's API can refuse. TensorRT 10
// ignores a builder flag it refuses, with an error: the build fails before building, quoting
// the last eight errors and counting the ones before (and --fp8 warns that it only concerns
// plugins). initLibNvInferPlugins failing fails the build, naming --no-builtin-plugins.
func TestShimRefusedByTensorRTOfEachMajor(t *testing.T) {
	model := testmodels.Bundled(t, "convnet.onnx")
	t.Run("TensorRT 10 flags", func(t *testing.T) {
		t.Parallel()
		got := standinBuild(t, standinJob{Major: 10, Settings: "refuse=IBuilderConfig::setFlag", Model: model, OptLevel: -1,
			Precision: PrecisionFP16 | PrecisionBF16 | PrecisionINT8 | PrecisionFP8,
			Flags:     FlagRefit | FlagSparseWeights | FlagVersionCompatible | FlagExcludeLeanRuntime | FlagDisableTimingCache})
		const want = "TensorRT refused a build option: (1 earlier error in the log) IBuilderConfig::setFlag: Error Code 5: Internal Error (the stand-in refuses it (its refuse setting))"
		if got.Code != CodeInvalidArgument || !strings.HasPrefix(got.Error, want) {
			t.Errorf("build: %v %q, want %v starting %q", got.Code, got.Error, CodeInvalidArgument, want)
		}
		warnings, _ := logsOf(got.Events, SeverityWarning)
		if !slices.ContainsFunc(warnings, func(l string) bool {
			return strings.HasPrefix(l, "--fp8 on TensorRT 10 only lets plugins take FP8 inputs and outputs")
		}) {
			t.Errorf("warnings %q, want --fp8's", warnings)
		}
	})
	t.Run("builtin plugins", func(t *testing.T) {
		t.Parallel()
		got := standinBuild(t, standinJob{Major: 11, Settings: "refuse=initLibNvInferPlugins", Model: model, OptLevel: -1})
		const want = "initLibNvInferPlugins could not register TensorRT's standard plugins: initLibNvInferPlugins: Could not register plugin creator: the stand-in refuses it (its refuse setting); pass --no-builtin-plugins to build without them"
		if got.Code != CodeUnavailable || got.Error != want {
			t.Errorf("build: %v %q, want %v %q", got.Code, got.Error, CodeUnavailable, want)
		}
	})
}

// TestShimMoreRefusals: a version-compatible engine builds (the stand-in's parser names no
// plugin library for it to carry); TensorRT 10 refusing the flag --precisionConstraints sets
// fails the build before building; a timing cache file that cannot take the cache (a full
// disk) fails the save with the system's reason, after the engine was built.
func TestShimMoreRefusals(t *testing.T) {
	t.Run("version compatible", func(t *testing.T) {
		o := options(t, quick())
		o.Flags = FlagVersionCompatible
		if out := build(t, o, nil); out.err != nil || out.res.PlanBytes == 0 {
			t.Fatalf("Run: %v, %d plan bytes; want the engine", out.err, out.res.PlanBytes)
		}
	})
	model := testmodels.Bundled(t, "convnet.onnx")
	t.Run("TensorRT 10 precision constraints", func(t *testing.T) {
		t.Parallel()
		got := standinBuild(t, standinJob{Major: 10, Settings: "refuse=IBuilderConfig::setFlag", Model: model, OptLevel: -1,
			Build: BuildSettings{PrecisionConstraints: PrecisionConstraintsPrefer}})
		const want = "TensorRT refused a build option: IBuilderConfig::setFlag: Error Code 5: Internal Error (the stand-in refuses it (its refuse setting))"
		if got.Code != CodeInvalidArgument || got.Error != want {
			t.Errorf("build: %v %q, want %v %q", got.Code, got.Error, CodeInvalidArgument, want)
		}
	})
	t.Run("cache file full", func(t *testing.T) {
		t.Parallel()
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		got := standinBuild(t, standinJob{Major: 11, Model: model, OptLevel: -1, CacheOut: "/dev/full"})
		if got.Code != CodeOK || got.Result.PlanBytes == 0 {
			t.Fatalf("build: %v %q, want the engine", got.Code, got.Error)
		}
		if want := "writing the timing cache: " + syscall.ENOSPC.Error(); !strings.Contains(strings.ToLower(got.CacheErr), strings.ToLower(want)) {
			t.Errorf("saving the cache: %q, want %q", got.CacheErr, want)
		}
	})
}
