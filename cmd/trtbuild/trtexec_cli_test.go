package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// TestTrtexecBuildFlags pastes trtexec's build flags and checks that each reaches TensorRT: the
// stand-in TensorRT writes into its plan what the shim set on the builder config and the
// network (TensorRT's enum values: DataType kHALF 1, kFLOAT 0; TensorFormat bits kLINEAR 1,
// kHWC8 4; MemoryPoolType kWORKSPACE 0, kTACTIC_SHARED_MEMORY 5; ProfilingVerbosity kDETAILED 2).
// TensorRT 10 takes the weakly typed flags; TensorRT 11 refuses them and takes the build route.
func TestTrtexecBuildFlags(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	engine := filepath.Join(filepath.Dir(model), "out.engine")
	for _, tt := range []struct {
		major string
		args  []string
		want  []string
	}{
		{"10", []string{"--inputIOFormats=fp16:chw", "--outputIOFormats=fp16:chw+hwc8", "--precisionConstraints=obey",
			"--layerPrecisions=stem/conv1:fp16,*:fp32", "--tacticSources=-CUDNN,+CUBLAS"},
			[]string{"input images type 1 formats 1\n", "output probs type 1 formats 5\n", "kOBEY_PRECISION_CONSTRAINTS", "tactic_sources 0x19\n", "strongly_typed no\n"}},
		{"11", []string{"--stronglyTyped", "--tacticSources=-JIT_CONVOLUTIONS", "--setBuildRoute=-conv_use_long_w=off"},
			[]string{"strongly_typed yes\n", "build_route -conv_use_long_w=off\n", "tactic_sources 0x"}},
	} {
		args := append([]string{"--backend=sim", "--sim-tensorrt=" + tt.major, "--sim-speed=100", "--progress=quiet", "--onnx=" + model, "--saveEngine=" + engine,
			"--profilingVerbosity=detailed", "--memPoolSize=workspace:1G,tacticSharedMem:1K", "--avgTiming=4"}, tt.args...)
		r := trtbuild(t, nil, args...)
		if r.code != 0 {
			t.Fatalf("TensorRT %s: exit %d\nstderr: %s", tt.major, r.code, r.stderr)
		}
		plan, err := os.ReadFile(engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range append(tt.want, "workspace_bytes 1073741824\n", "memory_pools 0:1073741824 5:1024\n", "profiling_verbosity 2\n", "avg_timing 4\n") {
			if !strings.Contains(string(plan), want) {
				t.Errorf("TensorRT %s: the plan lacks %q:\n%s", tt.major, want, plan)
			}
		}
	}
	// TensorRT 11 refuses what it removed, in one line that says what to do.
	r := trtbuild(t, nil, "--backend=sim", "--sim-speed=100", "--progress=quiet", "-o", engine, model, "--precisionConstraints=obey", "--layerPrecisions=stem/conv1:fp16")
	if r.code == 0 || !strings.Contains(r.stderr, "trtbuild: warning: --precisionConstraints and --layerPrecisions work on TensorRT 10 only: TensorRT 11 builds every network strongly typed") {
		t.Errorf("TensorRT 11 with precision constraints: exit %d\n%s", r.code, r.stderr)
	}

	// --best: TensorRT 10's precision flags, which TensorRT 11 does not have.
	r = trtbuild(t, nil, "--backend=sim", "--sim-tensorrt=10", "--sim-speed=100", "--progress=quiet", "--best", "-o", engine, model)
	if r.code != 0 {
		t.Fatalf("--best: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if plan, _ := os.ReadFile(engine); !strings.Contains(string(plan), "kFP16") || !strings.Contains(string(plan), "kINT8") {
		t.Errorf("--best did not set the precision flags:\n%s", plan)
	}
	r = trtbuild(t, nil, "--backend=sim", "--sim-speed=100", "--progress=quiet", "--best", "-o", engine, model)
	if !strings.Contains(r.stderr, "TensorRT 11 has no weak typing") {
		t.Errorf("--best does not explain TensorRT 11: exit %d\n%s", r.code, r.stderr)
	}
}

// TestTrtexecFlagErrors checks that bad values of trtexec's build flags, and trtexec flags
// trtbuild does not take, end with one line naming the problem and the fix, exit 2.
func TestTrtexecFlagErrors(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "bert_tiny.onnx")
	shapes := "--shapes=input_ids:1x16"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"io format type", []string{"--inputIOFormats=half:chw"}, `--inputIOFormats entry "half:chw": unknown type "half"; use one of fp32`},
		{"io format count", []string{"--inputIOFormats=int64:chw,int64:chw"},
			"--inputIOFormats gives 2 formats but bert_tiny.onnx has 3 inputs (input_ids, attention_mask, token_type_ids); give one format for all of them or one per input, in this order"},
		{"output format count", []string{"--outputIOFormats=fp32:chw,fp32:chw,fp32:chw"}, "--outputIOFormats gives 3 formats but bert_tiny.onnx has 2 outputs"},
		{"layer precisions alone", []string{"--layerPrecisions=pooler/dense:fp16"}, "--layerPrecisions has no effect without --precisionConstraints: add --precisionConstraints obey"},
		{"bad constraints", []string{"--precisionConstraints=strict"}, "invalid --precisionConstraints"},
		{"bad verbosity", []string{"--profilingVerbosity=all"}, "use layer_names_only, detailed or none"},
		{"bad tactic source", []string{"--tacticSources=CUDNN"}, "needs a + (enable) or - (disable)"},
		{"fallback without DLA", []string{"--allowGPUFallback"}, "--allowGPUFallback needs --useDLACore N"},
		{"negative DLA core", []string{"--useDLACore=-1"}, "use 0 to 63"},
		{"best and strongly typed", []string{"--best", "--stronglyTyped"}, "--best and --stronglyTyped contradict each other"},
		{"unknown pool", []string{"--memPoolSize=scratch:1G"}, `--memPoolSize pool "scratch" is unknown: use workspace, tacticSharedMem, dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM`},
		{"pool twice", []string{"--memPoolSize=tacticSharedMem:1K,tacticSharedMem:2K"}, "gives pool tacticSharedMem twice"},
		{"workspace twice", []string{"--workspace=1G", "--memPoolSize=workspace:2G"}, "give the workspace once"},
		{"iterations", []string{"--iterations=100"}, "--iterations is a trtexec flag for running inference; trtbuild builds the engine and never runs it: build with trtbuild, then for inference run trtexec --loadEngine=model.engine with --iterations"},
		{"use cuda graph", []string{"--useCudaGraph"}, "--useCudaGraph is a trtexec flag for running inference"},
		{"load engine", []string{"--loadEngine=model.engine"}, "for inference run trtexec --loadEngine=model.engine"},
		{"export layer info", []string{"--exportLayerInfo=layers.json"}, "--exportLayerInfo is a trtexec flag that reads a built engine's layers, which only TensorRT can read: trtbuild engine inspect model.engine shows"},
		{"export times", []string{"--exportTimes", "t.json"}, "--exportTimes is a trtexec flag for running inference"},
		{"calibration", []string{"--calib=cache.bin"}, "INT8 calibration"},
		{"builder flag not set", []string{"--maxTactics=4"}, "--maxTactics is a trtexec builder flag that trtbuild does not set"},
		{"avg timing 0", []string{"--avgTiming=0"}, "invalid --avg-timing 0: give how many iterations each tactic's timing averages, 1 to 1000"},
		{"avg timing not a number", []string{"--avgTiming=eight"}, `invalid argument "eight" for "--avg-timing"`},
		{"build route", []string{"--setBuildRoute=conv_use_long_w"}, `--setBuildRoute knob "conv_use_long_w" is not -NAME=VALUE`},
		{"tuning loop", []string{"--tuneBuildRoutes=-conv_use_long_w=[on|off]"}, "--tuneBuildRoutes is a trtexec 11 flag of its build-route tuning loop"},
		{"tuning cache", []string{"--tuningCacheFile=t.json"}, "then build the best route with trtbuild --set-build-route"},
		{"help build route", []string{"--helpBuildRoute"}, "run trtexec --helpBuildRoute, then build with trtbuild --set-build-route"},
		{"green context", []string{"--greenContext=sm:16"}, "--greenContext is a trtexec builder flag that trtbuild does not set: it profiles on a CUDA green context"},
		{"wildcard matching nothing", []string{"--optShapes=pixel*:1x16"}, `invalid --opt-shapes: "pixel*" matches no input of the model; its inputs are "input_ids", "attention_mask", "token_type_ids"`},
		{"wildcards overlapping", []string{"--minShapes=*_ids:1x16,input*:1x16"}, `invalid --min-shapes: input "input_ids" matches both "*_ids" and "input*"; give it once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, append([]string{"--backend", "sim", shapes, model}, tt.args...)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "trtbuild: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("exit %d, want 2 and one line containing %q; stderr:\n%s", r.code, tt.want, r.stderr)
			}
			if strings.Contains(r.stderr, "unknown flag") {
				t.Errorf("a bare unknown flag: %s", r.stderr)
			}
			if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
				t.Error("an engine was written")
			}
		})
	}
}

// TestTrtexecNamesNormalize checks that trtexec's spellings of the build flags reach trtbuild's
// flags, and that no flag trtbuild takes is also on the list of refused trtexec flags.
func TestTrtexecNamesNormalize(t *testing.T) {
	cmd := newRootCmd(&streams{}, nil)
	f := cmd.Flags()
	for trtexecName, want := range map[string]string{
		"inputIOFormats": "input-io-formats", "outputIOFormats": "output-io-formats",
		"precisionConstraints": "precision-constraints", "layerPrecisions": "layer-precisions",
		"profilingVerbosity": "profiling-verbosity", "tacticSources": "tactic-sources", "useDLACore": "use-dla-core",
		"allowGPUFallback": "allow-gpu-fallback", "stronglyTyped": "strongly-typed", "best": "best", "memPoolSize": "mem-pool-size",
		"avgTiming": "avg-timing", "setBuildRoute": "set-build-route",
	} {
		if got := string(buildflags.Normalize(f, trtexecName)); got != want {
			t.Errorf("%s normalizes to %s, want %s", trtexecName, got, want)
		}
		if f.Lookup(want) == nil {
			t.Errorf("no flag --%s", want)
		}
	}
	f.VisitAll(func(fl *pflag.Flag) {
		if msg, ok := trtexec.Unsupported(fl.Name); ok {
			t.Errorf("--%s is a flag and also refused: %s", fl.Name, msg)
		}
	})
}

// TestMessages checks messages that used to give no fix.
func TestMessages(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", "0"}, `trtbuild: invalid --workspace: "0" is too small: give at least 1 byte, like 512M or 4G (leave the flag out for TensorRT's default)`},
		{[]string{"--timeout", "2"}, `trtbuild: invalid argument "2" for "--timeout" flag: a duration needs a unit: use a unit, like 2s or 2m`},
		{[]string{"--stall-timeout", "90"}, "use a unit, like 90s or 90m"},
		{[]string{"--kill-after", "soon"}, "not a duration: write a number with a unit, like 90s, 20m or 1h30m"},
	}
	for _, tt := range tests {
		r := trtbuild(t, nil, append([]string{"--backend", "sim", model}, tt.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
			t.Errorf("%q: exit %d, want 2 and one line containing %q; stderr:\n%s", tt.args, r.code, tt.want, r.stderr)
		}
		if strings.Contains(r.stderr, "missing unit") || strings.Contains(r.stderr, "out of range") {
			t.Errorf("%q: Go's message leaks: %s", tt.args, r.stderr)
		}
	}
}

// TestEmptyTrtexecValuesRefused: a trtexec setting given with an empty value (`--setBuildRoute=`,
// `--tactic-sources ""`) is refused in one line, exit 2, never built as if it were not there.
func TestEmptyTrtexecValuesRefused(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--setBuildRoute="}, `invalid argument "" for "--set-build-route" flag: the value is empty; give one, or leave the flag out`},
		{[]string{"--set-build-route", " "}, `"--set-build-route" flag: the value is empty`},
		{[]string{"--tactic-sources", ""}, `"--tactic-sources" flag: the value is empty`},
		{[]string{"--profilingVerbosity="}, `"--profiling-verbosity" flag: the value is empty`},
		{[]string{"--inputIOFormats="}, `"--input-io-formats" flag: the value is empty`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			engine := filepath.Join(t.TempDir(), "m.engine")
			r := trtbuild(t, nil, append([]string{"--backend", "sim", "--sim-speed", "50", "-o", engine, model}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", r.code, r.stderr, tt.want)
			}
			if _, err := os.Stat(engine); err == nil {
				t.Errorf("an engine was written")
			}
		})
	}
}
