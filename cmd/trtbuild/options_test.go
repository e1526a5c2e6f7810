package main

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trtexec"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// parseBuildLine takes a command line through trtbuild's root command, in process (its runF
// seam), to the builder's options: what `trtbuild ARGS` would hand builder.Run.
func parseBuildLine(t *testing.T, args []string) (builder.Options, error) {
	t.Helper()
	var got *builder.Options
	var stderr strings.Builder
	cmd := newRootCmd(&streams{Out: io.Discard, Err: &stderr, Getenv: func(string) string { return "" }}, func(o builder.Options) error {
		got = &o
		return nil
	})
	cmd.SetArgs(args)
	if _, err := cmd.ExecuteC(); err != nil {
		return builder.Options{}, err
	}
	if got == nil {
		t.Fatalf("trtbuild %s ran no build (stderr %q)", strings.Join(args, " "), stderr.String())
	}
	return *got, nil
}

// TestCommandLineToRequest walks command lines, trtexec's spellings included, through the flag
// set, builder.Options and builder.Check to the request the worker would get, without
// starting a process. Each case says how its request differs from the plain build's.
func TestCommandLineToRequest(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	libDir := t.TempDir()
	cacheFile := filepath.Join(dir, "my.cache")
	// Every case runs the simulated builder on the bundled model, without a timing cache
	// folder of the user's.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base := []string{"--backend", "sim", model}
	basePlan, err := checkLine(t, base)
	if err != nil {
		t.Fatalf("plain build: %v", err)
	}
	if basePlan.Engine != filepath.Join(dir, "convnet.engine") || basePlan.Request.Backend != "sim" || basePlan.Request.OptLevel != -1 ||
		basePlan.Request.MaxAuxStreams != -1 || basePlan.Request.AvgTiming != 8 || basePlan.Request.Sim.Step != builder.DefaultSimStep {
		t.Fatalf("plain build plan %+v", basePlan)
	}
	dla0 := 0
	tests := []struct {
		name string
		args []string
		want func(r *worker.Request) // the plain request changed as these flags change it
	}{
		{"fp16", []string{"--fp16"}, func(r *worker.Request) { r.FP16 = true }},
		{"bf16", []string{"--bf16"}, func(r *worker.Request) { r.BF16 = true }},
		{"int8", []string{"--int8"}, func(r *worker.Request) { r.INT8 = true }},
		{"fp8", []string{"--fp8"}, func(r *worker.Request) { r.FP8 = true }},
		{"fp16 and int8", []string{"--fp16", "--int8"}, func(r *worker.Request) { r.FP16, r.INT8 = true, true }},
		{"trtexec noTF32", []string{"--noTF32"}, func(r *worker.Request) { r.NoTF32 = true }},
		{"no-tf32", []string{"--no-tf32"}, func(r *worker.Request) { r.NoTF32 = true }},
		{"refit", []string{"--refit"}, func(r *worker.Request) { r.Refit = true }},
		{"trtexec stripWeights implies refit", []string{"--stripWeights"}, func(r *worker.Request) { r.StripWeights, r.Refit = true, true }},
		{"trtexec versionCompatible", []string{"--versionCompatible"}, func(r *worker.Request) { r.VersionCompatible = true }},
		{"trtexec vc and excludeLeanRuntime", []string{"--vc", "--excludeLeanRuntime"}, func(r *worker.Request) { r.VersionCompatible, r.ExcludeLeanRuntime = true, true }},
		{"sparse weights", []string{"--sparse-weights"}, func(r *worker.Request) { r.SparseWeights = true }},
		{"trtexec builderOptimizationLevel", []string{"--builderOptimizationLevel=5"}, func(r *worker.Request) { r.OptLevel = 5 }},
		{"opt-level 0", []string{"--opt-level", "0"}, func(r *worker.Request) { r.OptLevel = 0 }},
		{"trtexec maxAuxStreams", []string{"--maxAuxStreams=2"}, func(r *worker.Request) { r.MaxAuxStreams = 2 }},
		{"trtexec avgTiming", []string{"--avgTiming=2"}, func(r *worker.Request) { r.AvgTiming = 2 }},
		{"avg-timing 1, TensorRT's default", []string{"--avg-timing", "1"}, func(r *worker.Request) { r.AvgTiming = 1 }},
		{"trtexec setBuildRoute", []string{"--setBuildRoute=-conv_use_long_w=off  -kgen:codegen:cuda_tile=2"}, func(r *worker.Request) {
			r.BuildRoute = "-conv_use_long_w=off -kgen:codegen:cuda_tile=2"
		}},
		{"wildcard shapes of the static model's own shapes are none", []string{"--shapes", "im*:1x3x224x224"}, func(r *worker.Request) {}},
		{"wildcard shapes without preflight", []string{"--no-preflight", "--optShapes=*:1x3x224x224"}, func(r *worker.Request) {
			r.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "images", Min: []int64{1, 3, 224, 224}, Opt: []int64{1, 3, 224, 224}, Max: []int64{1, 3, 224, 224}}}}}
		}},
		{"trtexec hardwareCompatibilityLevel", []string{"--hardwareCompatibilityLevel=ampere_plus"}, func(r *worker.Request) { r.HardwareCompat = "ampere+" }},
		{"hardware-compat camelCase", []string{"--hardware-compat", "sameComputeCapability"}, func(r *worker.Request) { r.HardwareCompat = "same-compute-capability" }},
		{"device", []string{"--device", "1"}, func(r *worker.Request) { r.Device = 1 }},
		{"workspace", []string{"--workspace", "512M"}, func(r *worker.Request) { r.WorkspaceBytes = 512 << 20 }},
		{"trtexec memPoolSize", []string{"--memPoolSize=workspace:1G,tacticSharedMem:1K"}, func(r *worker.Request) {
			r.WorkspaceBytes, r.MemPools = 1<<30, map[string]uint64{"tacticSharedMem": 1024}
		}},
		{"trtexec inputIOFormats", []string{"--inputIOFormats=fp16:chw"}, func(r *worker.Request) {
			r.InputFormats = mustIOFormats(t, "--inputIOFormats", "fp16:chw")
		}},
		{"trtexec outputIOFormats", []string{"--outputIOFormats=fp16:chw"}, func(r *worker.Request) {
			r.OutputFormats = mustIOFormats(t, "--outputIOFormats", "fp16:chw")
		}},
		{"trtexec outputIOFormats of the output's own type are none", []string{"--outputIOFormats=fp32:chw"}, func(r *worker.Request) {}},
		{"trtexec precisionConstraints and layerPrecisions", []string{"--precisionConstraints=obey", "--layerPrecisions=*:fp16"}, func(r *worker.Request) {
			r.PrecisionConstraints = "obey"
			lp, err := trtexec.ParseLayerPrecisions("*:fp16")
			if err != nil {
				t.Fatal(err)
			}
			r.LayerPrecisions = lp
		}},
		{"trtexec profilingVerbosity", []string{"--profilingVerbosity=detailed"}, func(r *worker.Request) { r.ProfilingVerbosity = "detailed" }},
		{"trtexec tacticSources", []string{"--tacticSources=-CUDNN,+CUBLAS"}, func(r *worker.Request) {
			ts, err := trtexec.ParseTacticSources("-CUDNN,+CUBLAS")
			if err != nil {
				t.Fatal(err)
			}
			r.TacticSources = ts
		}},
		{"trtexec useDLACore and allowGPUFallback", []string{"--useDLACore=0", "--allowGPUFallback"}, func(r *worker.Request) { r.DLACore, r.GPUFallback = &dla0, true }},
		{"trtexec stronglyTyped", []string{"--stronglyTyped"}, func(r *worker.Request) { r.StronglyTyped = true }},
		{"trtexec best", []string{"--best"}, func(r *worker.Request) { r.Best = true }},
		{"trtexec timingCacheFile", []string{"--timingCacheFile=" + cacheFile}, func(r *worker.Request) { r.TimingCache = cacheFile }},
		{"trtexec noBuilderCache", []string{"--noBuilderCache"}, func(r *worker.Request) { r.NoTimingCache, r.TimingCache = true, "auto" }},
		{"verbose", []string{"--verbose"}, func(r *worker.Request) { r.LogSeverity = progress.SeverityVerbose }},
		{"the static model's own shapes are none", []string{"--shapes", "images:1x3x224x224"}, func(r *worker.Request) {}},
		{"trtexec minShapes optShapes maxShapes of the model's own shapes are none", []string{"--minShapes=images:1x3x224x224", "--optShapes=images:1x3x224x224", "--maxShapes=images:1x3x224x224"}, func(r *worker.Request) {}},
		{"two profiles", []string{"--profile", "0", "--shapes", "images:1x3x224x224", "--profile", "1", "--shapes", "images:1x3x224x224"}, func(r *worker.Request) {
			p := shapes.Profile{Inputs: []shapes.Input{{Name: "images", Min: []int64{1, 3, 224, 224}, Opt: []int64{1, 3, 224, 224}, Max: []int64{1, 3, 224, 224}}}}
			r.Profiles = []shapes.Profile{p, p}
		}},
		{"keep-fp32 with fp16", []string{"--fp16", "--keep-fp32", "Conv,Softmax"}, func(r *worker.Request) { r.FP16, r.KeepFP32 = true, []string{"Conv", "Softmax"} }},
		{"no builtin plugins", []string{"--no-builtin-plugins"}, func(r *worker.Request) { r.NoBuiltinPlugins = true }},
		{"strict cache", []string{"--strict-cache", "--timing-cache", cacheFile}, func(r *worker.Request) { r.StrictCache, r.TimingCache = true, cacheFile }},
		{"tensorrt-lib", []string{"--tensorrt-lib", libDir}, func(r *worker.Request) { r.TensorRTLib = libDir }},
		{"sim threads", []string{"--sim-threads", "3"}, func(r *worker.Request) { r.Sim.Threads = 3 }},
		{"sim tensorrt", []string{"--sim-tensorrt", "10"}, func(r *worker.Request) { r.Sim.TensorRT = 10 }},
		{"sim speed", []string{"--sim-speed", "2"}, func(r *worker.Request) { r.Sim.Step = builder.DefaultSimStep / 2 }},
		{"sim step wins over speed", []string{"--sim-speed", "2", "--sim-step", "1ms"}, func(r *worker.Request) { r.Sim.Step = time.Millisecond }},
		{"sim scenario", []string{"--sim-scenario", "slow-cancel"}, func(r *worker.Request) { r.Sim.Step = 2 * time.Second }},
		{"trtexec skipInference is accepted", []string{"--skipInference"}, func(r *worker.Request) {}},
		{"no-preflight keeps the request", []string{"--no-preflight"}, func(r *worker.Request) {}},
		{"explicit defaults", []string{"--timing-cache", "auto", "--hardware-compat", "none", "--backend", "sim"}, func(r *worker.Request) {}},
	}
	if len(tests) < 40 {
		t.Fatalf("%d command lines; walk at least 40", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkLine(t, append(append([]string{}, base...), tt.args...))
			if err != nil {
				t.Fatalf("trtbuild %s: %v", strings.Join(tt.args, " "), err)
			}
			want := basePlan.Request
			want.Sim = basePlan.Request.Sim
			tt.want(&want)
			if !reflect.DeepEqual(got.Request, want) {
				t.Errorf("trtbuild %s:\nrequest %+v\nwant    %+v", strings.Join(tt.args, " "), got.Request, want)
			}
		})
	}
}

// TestCommandLineEngineAndModel: trtexec's --onnx and --saveEngine name the model and the
// engine as the argument and -o do.
func TestCommandLineEngineAndModel(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	engine := filepath.Join(filepath.Dir(model), "x.engine")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, args := range [][]string{
		{"--backend", "sim", "--onnx=" + model, "--saveEngine=" + engine},
		{"--backend", "sim", model, "-o", engine},
		{"--backend=sim", "--onnx", model, "--save-engine", engine, model},
	} {
		p, err := checkLine(t, args)
		if err != nil {
			t.Fatalf("trtbuild %s: %v", strings.Join(args, " "), err)
		}
		if p.Model != model || p.Engine != engine || p.Request.Model != model {
			t.Errorf("trtbuild %s: model %s, engine %s", strings.Join(args, " "), p.Model, p.Engine)
		}
	}
}

// TestCommandLineRefusals: options the builder refuses, with the message that says what to
// fix and exit status 2, before anything starts.
func TestCommandLineRefusals(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--exclude-lean-runtime"}, "--exclude-lean-runtime needs --version-compatible"},
		{[]string{"--allowGPUFallback"}, "--allowGPUFallback needs --useDLACore N"},
		{[]string{"--fp8", "--hardware-compat", "ampere+"}, "--fp8 cannot be combined with --hardware-compat ampere+"},
		{[]string{"--keep-fp32", "Conv"}, "--keep-fp32 keeps nodes in float32 when --fp16 or --bf16"},
		{[]string{"--kill-after", "0s"}, "invalid --kill-after"},
		{[]string{"--best", "--stronglyTyped"}, "--best and --stronglyTyped contradict each other"},
		{[]string{"--layerPrecisions=*:fp16"}, "--layerPrecisions has no effect without --precisionConstraints"},
		{[]string{"--device", "-1"}, "invalid --device -1"},
		{[]string{"--workspace", "0"}, "invalid --workspace"},
		{[]string{"--workspace", "1G", "--memPoolSize=workspace:2G"}, "give the workspace once"},
		{[]string{"--hardware-compat", "turing"}, `invalid --hardware-compat "turing"`},
		{[]string{"--timing-cache", "x.cache", "--no-timing-cache"}, "not both"},
		{[]string{"--shapes", "images:1x3"}, "images"},
		{[]string{"--sim-speed", "0"}, "invalid --sim-speed"},
		{[]string{"--avgTiming=0"}, "invalid --avg-timing 0: give how many iterations each tactic's timing averages, 1 to 1000 (trtexec's default, and trtbuild's, is 8)"},
		{[]string{"--avg-timing", "1001"}, "invalid --avg-timing 1001"},
		{[]string{"--setBuildRoute=conv_use_long_w=off"}, `--setBuildRoute knob "conv_use_long_w=off" is not -NAME=VALUE`},
		{[]string{"--shapes", "pixels*:1x3x224x224"}, `invalid --shapes: "pixels*" matches no input of the model; its inputs are "images"`},
		{[]string{"--profile", "0", "--shapes", "images:1x3x224x224", "--profile", "1", "--max-shapes", "i*g*:1x3x224x224"}, `invalid --max-shapes (profile 1): name "i*g*" holds more than one '*'`},
		{[]string{"--sim-scenario", "storm"}, `invalid --sim-scenario "storm"`},
		{[]string{"--plugins", "a.so,,b.so"}, "--plugins has an empty item"},
		// An empty value is refused as the flag's parser would, never taken for the default.
		{[]string{"--engine-cache", "ec", "--engine-cache-size", ""}, "invalid --engine-cache-size"},
		{[]string{"--backend", ""}, `invalid --backend ""`},
		{[]string{"--timing-cache", "", "--no-timing-cache"}, "not both"},
	}
	for _, tt := range tests {
		_, err := checkLine(t, append([]string{"--backend", "sim", model}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("trtbuild %s: %v (exit %d), want a usage error containing %q", strings.Join(tt.args, " "), err, exitcode.Of(err), tt.want)
		}
	}
	// Whether TensorRT loads is the worker's to find out: the checks pass a TensorRT build.
	if _, err := checkLine(t, []string{"--backend", "tensorrt", model}); err != nil {
		t.Errorf("--backend tensorrt: %v", err)
	}
}

// checkLine is parseBuildLine then builder.Check.
func checkLine(t *testing.T, args []string) (*builder.Plan, error) {
	t.Helper()
	o, err := parseBuildLine(t, args)
	if err != nil {
		return nil, err
	}
	return builder.Check(o)
}

func mustIOFormats(t *testing.T, flag, s string) []trtexec.IOFormat {
	t.Helper()
	f, err := trtexec.ParseIOFormats(flag, s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestArgvThroughTheRootCommand takes command lines through the whole root command in process
// (the runF seam): what each hands the builder, or the usage error each is refused with, its
// problem and its hint apart.
func TestArgvThroughTheRootCommand(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	tests := []struct {
		name          string
		args          []string
		check         func(o builder.Options) bool // for a line that builds
		problem, hint string                       // for a refused line
	}{
		{name: "flags after the model", args: []string{model, "--backend", "sim", "--fp16"},
			check: func(o builder.Options) bool { return o.Model == model && o.Backend == "sim" && o.FP16 }},
		{name: "trtexec's spellings", args: []string{"--onnx=" + model, "--saveEngine=out.engine", "--Backend=sim"},
			check: func(o builder.Options) bool {
				return o.Model == model && o.Engine == "out.engine" && o.Backend == "sim"
			}},
		{name: "the model after --", args: []string{"--backend", "sim", "--", model},
			check: func(o builder.Options) bool { return o.Model == model }},
		{name: "a typo of a command", args: []string{"inspekt", "m.onnx"},
			problem: `unknown command "inspekt" (did you mean "inspect"?)`, hint: "run 'trtbuild --help' for the commands"},
		{name: "a typo of a flag", args: []string{"--fp61", model},
			problem: "unknown flag: --fp61 (did you mean --fp16?)", hint: "run 'trtbuild --help' for the flags"},
		{name: "two models", args: []string{model, "--onnx", "other.onnx"},
			problem: "two models given (" + model + " and --onnx other.onnx)", hint: "give one"},
		{name: "--version with a model", args: []string{"--version", model},
			problem: "--version takes no model (got " + model + ")", hint: "run 'trtbuild --version' alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBuildLine(t, tt.args)
			if tt.check != nil {
				if err != nil || !tt.check(got) {
					t.Fatalf("trtbuild %s: err %v, options %+v", strings.Join(tt.args, " "), err, got)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("trtbuild %s: err %v (exit %d); want a usage error", strings.Join(tt.args, " "), err, exitcode.Of(err))
			}
			if problem, hint := exitcode.Split(err); problem != tt.problem || hint != tt.hint {
				t.Errorf("refused with %q, hint %q; want %q, hint %q", problem, hint, tt.problem, tt.hint)
			}
		})
	}
}
