package cgo

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// runBuild is build that stops at NewBuild's refusal: it returns that error, or the outcome
// of the build.
func runBuild(t *testing.T, o Options) (outcome, error) {
	t.Helper()
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		return outcome{}, err
	}
	b.Close()
	out := build(t, o, nil)
	return out, out.err
}

// refusedWith checks that err is a refusal of code whose message holds each of wants.
func refusedWith(t *testing.T, err error, code Code, wants []string) {
	t.Helper()
	e := asError(t, err, code)
	for _, want := range wants {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q, want it to contain %q", e.Message, want)
		}
	}
}

// TestBuildSettingsReachTheBuilder checks that trtexec's build settings cross the C boundary
// to TensorRT (11's stand-in, in this process): a set TensorRT 11 takes builds, and the plan,
// where the stand-in records what the shim set on its config and network, holds each one in
// TensorRT's terms (memory pool 5 is kTACTIC_SHARED_MEMORY, verbosity 2 kDETAILED, formats 5
// kLINEAR and kHWC8, tactic source bit 0 EDGE_MASK_CONVOLUTIONS); a build without them
// has none of them. Each one TensorRT 11 cannot take is refused by the shim, at NewBuild or as
// it applies it to the network the stand-in parsed, with the code and words of that refusal.
func TestBuildSettingsReachTheBuilder(t *testing.T) {
	tests := []struct {
		name     string
		settings BuildSettings
		code     Code     // CodeOK: builds
		want     []string // in the plan or an INFO line, or (refused) in the error
		absent   []string // from the plan
	}{
		{"none", BuildSettings{}, CodeOK,
			[]string{"\navg_timing 1\n", "\ninput images type 0 formats 0\n", "\noutput probs type 0 formats 0\n"},
			[]string{"memory_pools", "profiling_verbosity", "tactic_sources", "build_route"}},
		{"taken", BuildSettings{
			InputFormats:       []IOFormat{{TypeFP32, TensorFormats["chw"]}},
			OutputFormats:      []IOFormat{{TypeFP32, TensorFormats["chw"] | TensorFormats["hwc8"]}},
			ProfilingVerbosity: ProfilingDetailed,
			TacticSourcesOn:    TacticSources["edge_mask_convolutions"],
			TacticSourcesOff:   TacticSources["jit_convolutions"],
			StronglyTyped:      true,
			Pools:              map[uint32]uint64{PoolTacticSharedMemory: 1024},
			AvgTiming:          8,
			BuildRoute:         "-conv_use_long_w=off",
		}, CodeOK, []string{
			"\navg_timing 8\n", "\nmemory_pools 5:1024\n", "\nprofiling_verbosity 2\n", "\ntactic_sources 0x1\n",
			"\nbuild_route -conv_use_long_w=off\n", "\ninput images type 0 formats 1\n", "\noutput probs type 0 formats 5\n",
			"\nstrongly_typed yes\n", "using build route -conv_use_long_w=off",
		}, nil},
		{"profiling none", BuildSettings{ProfilingVerbosity: ProfilingNone}, CodeOK, []string{"\nprofiling_verbosity 1\n"}, nil},
		{"input type", BuildSettings{InputFormats: []IOFormat{{TypeFP16, TensorFormats["chw"]}}},
			CodeInvalidArgument, []string{"--inputIOFormats asks for fp16 at tensor images, but the network is strongly typed"}, nil},
		{"format count", BuildSettings{OutputFormats: []IOFormat{{TypeFP32, TensorFormats["chw"]}, {TypeFP32, TensorFormats["chw"]}}},
			CodeInvalidArgument, []string{"--outputIOFormats gives 2 formats but the network has 1 outputs"}, nil},
		{"route TensorRT refuses", BuildSettings{BuildRoute: "not a route"},
			CodeInvalidArgument, []string{`TensorRT refused --set-build-route "not a route"`, "is not a build route"}, nil},
		{"precision constraints", BuildSettings{PrecisionConstraints: PrecisionConstraintsObey, LayerPrecisions: []LayerPrecision{{"stem/conv1", TypeFP16}}},
			CodeUnsupported, []string{"--precisionConstraints and --layerPrecisions have nothing to constrain"}, nil},
		{"tactic source of TensorRT 10", BuildSettings{TacticSourcesOn: TacticSources["cublas"]},
			CodeUnsupported, []string{"TensorRT 11 has no tactic source CUBLAS"}, nil},
		{"DLA", BuildSettings{UseDLA: true, GPUFallback: true},
			CodeUnsupported, []string{"--useDLACore 0: this device has 0 DLA cores; build without --useDLACore"}, nil},
		{"best", BuildSettings{Best: true}, CodeUnsupported, []string{"--best has no precisions to choose from"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t, quick())
			o.BuildSettings = tt.settings
			out, err := runBuild(t, o)
			if tt.code != CodeOK {
				refusedWith(t, err, tt.code, tt.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tr := checkEvents(t, out.events)
			for _, want := range tt.want {
				if !strings.Contains(string(out.plan), want) && !slices.Contains(tr.logs[SeverityInfo], want) {
					t.Errorf("neither the plan nor an INFO line has %q; plan:\n%s", want, out.plan)
				}
			}
			for _, key := range tt.absent {
				if strings.Contains(string(out.plan), "\n"+key) {
					t.Errorf("plan has a %s line:\n%s", key, out.plan)
				}
			}
		})
	}
}

// ioTypesModel is a model with an input of each type an I/O format names besides fp32 and
// fp16, each passed by an Identity to an output of its type: in_<type> and out_<type>, in
// ioTypes' order.
func ioTypesModel(t testing.TB) string {
	t.Helper()
	g := &onnxpb.GraphProto{Name: "io_types"}
	for _, io := range ioTypes {
		in, out := "in_"+io.name, "out_"+io.name
		g.Node = append(g.Node, testmodels.Node("identity_"+io.name, "Identity", []string{in}, []string{out}))
		g.Input = append(g.Input, testmodels.Value(in, io.onnx, 1, 8))
		g.Output = append(g.Output, testmodels.Value(out, io.onnx, 1, 8))
	}
	return writeModel(t, "io_types.onnx", g)
}

// ioTypes are the types of ioTypesModel's tensors: trtbuild's, ONNX's and TensorRT's
// (DataType, NvInferRuntimeBase.h, the same in 10 and 11).
var ioTypes = []struct {
	name string
	typ  DataType
	onnx onnxpb.TensorProto_DataType
	trt  int
}{
	{"bf16", TypeBF16, onnxpb.TensorProto_BFLOAT16, 7},
	{"int8", TypeINT8, onnxpb.TensorProto_INT8, 2},
	{"fp8", TypeFP8, onnxpb.TensorProto_FLOAT8E4M3FN, 6},
	{"int32", TypeINT32, onnxpb.TensorProto_INT32, 3},
	{"int64", TypeINT64, onnxpb.TensorProto_INT64, 8},
	{"bool", TypeBool, onnxpb.TensorProto_BOOL, 4},
	{"uint8", TypeUINT8, onnxpb.TensorProto_UINT8, 5},
	{"int4", TypeINT4, onnxpb.TensorProto_INT4, 9},
}

// TestBuildOptionsReachTheBuilder checks that build options beside BuildSettings, and I/O
// formats of every type, cross the C boundary to TensorRT (11's stand-in, in this process):
// the plan, where the stand-in records the config, has the builder flags by name and the
// hardware compatibility level (kAMPERE_PLUS 1, kSAME_COMPUTE_CAPABILITY 2), and each I/O
// tensor with the type its format names (which on TensorRT 11, strongly typed, must be the
// model's own). Precision flags are refused, each named.
func TestBuildOptionsReachTheBuilder(t *testing.T) {
	var ioFormats, outFormats []IOFormat
	var ioLines []string
	for _, io := range ioTypes {
		ioFormats = append(ioFormats, IOFormat{io.typ, TensorFormats["chw"]})
		outFormats = append(outFormats, IOFormat{io.typ, TensorFormats["chw"] | TensorFormats["hwc8"]})
		ioLines = append(ioLines, fmt.Sprintf("\ninput in_%s type %d formats 1\n", io.name, io.trt),
			fmt.Sprintf("\noutput out_%s type %d formats 5\n", io.name, io.trt))
	}
	tests := []struct {
		name   string
		model  func(testing.TB) string // nil: convnet.onnx
		change func(o *Options)
		code   Code     // CodeOK: builds
		flags  []string // the plan's builder flags, all of them
		want   []string // in the plan, or (refused) in the error
		absent []string // from the plan
	}{
		{"none", nil, func(o *Options) {}, CodeOK, []string{"kTF32"}, nil, []string{"hardware_compat", "max_aux_streams"}},
		{"flags", nil, func(o *Options) { o.Flags = FlagRefit | FlagStripWeights | FlagErrorOnTimingCacheMiss }, CodeOK,
			[]string{"kREFIT", "kTF32", "kERROR_ON_TIMING_CACHE_MISS", "kSTRIP_PLAN"}, nil, nil},
		{"ampere+", nil, func(o *Options) { o.HardwareCompat = 1 }, CodeOK, []string{"kTF32"}, []string{"\nhardware_compat 1\n"}, nil},
		{"same compute capability", nil, func(o *Options) { o.HardwareCompat = 2 }, CodeOK, []string{"kTF32"},
			[]string{"\nhardware_compat 2\n"}, nil},
		{"I/O types", ioTypesModel, func(o *Options) { o.InputFormats, o.OutputFormats = ioFormats, outFormats }, CodeOK,
			[]string{"kTF32"}, ioLines, nil},
		{"precision flags", nil, func(o *Options) { o.Precision = PrecisionFP16 | PrecisionBF16 | PrecisionINT8 | PrecisionFP8 },
			CodeUnsupported, nil, []string{"--fp16, --bf16, --int8, --fp8 cannot be builder flags on TensorRT 11"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t, quick())
			if tt.model != nil {
				o = optionsFor(t, tt.model(t), quick())
			}
			tt.change(&o)
			out, err := runBuild(t, o)
			if tt.code != CodeOK {
				refusedWith(t, err, tt.code, tt.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			plan := string(out.plan)
			flags := regexp.MustCompile(`(?m)^builder_flags (.*)$`).FindStringSubmatch(plan)
			if flags == nil {
				t.Fatalf("the plan has no builder flags:\n%s", plan)
			}
			if got := strings.Split(flags[1], ","); !sameSet(got, tt.flags) {
				t.Errorf("the plan's builder flags are %q, want %q", got, tt.flags)
			}
			for _, want := range tt.want {
				if !strings.Contains(plan, want) {
					t.Errorf("the plan lacks %q:\n%s", want, plan)
				}
			}
			for _, key := range tt.absent {
				if strings.Contains(plan, "\n"+key) {
					t.Errorf("plan has a %s line:\n%s", key, plan)
				}
			}
		})
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestBuildSettingsReachTensorRT10 checks the settings only TensorRT 10 takes, over its
// stand-in in a child process: precision constraints with layer precisions (a name the network
// lacks is warned about), on a weakly typed network whose precision flags reach the builder;
// the tactic sources of libraries, which TensorRT 11 dropped (TensorRT 10 numbers CUBLAS 0,
// CUBLAS_LT 1, CUDNN 2 and has EDGE_MASK_CONVOLUTIONS 3 and JIT_CONVOLUTIONS 4 on by default);
// and auxiliary streams, whose setter returns nothing before TensorRT 11.
func TestBuildSettingsReachTensorRT10(t *testing.T) {
	auxStreams := 3
	got := standinBuild(t, standinJob{Major: 10, Settings: "tactics=2;iterations=1;step=1us", Model: testmodels.Bundled(t, "convnet.onnx"), OptLevel: -1,
		Precision: PrecisionFP16, MaxAuxStreams: &auxStreams, Build: BuildSettings{
			PrecisionConstraints: PrecisionConstraintsObey,
			LayerPrecisions:      []LayerPrecision{{"stem/conv1", TypeFP16}, {"no/such/layer", TypeFP32}, {"*", TypeFP32}},
			ProfilingVerbosity:   ProfilingLayerNamesOnly,
			TacticSourcesOn:      TacticSources["cublas_lt"],
			TacticSourcesOff:     TacticSources["cudnn"] | TacticSources["cublas"],
			AvgTiming:            4,
		}})
	if got.Error != "" {
		t.Fatalf("build: %s", got.Error)
	}
	warnings, _ := logsOf(got.Events, SeverityWarning)
	if !slices.Contains(warnings, "--layerPrecisions: the network has no layer named no/such/layer; its precision was not set") {
		t.Errorf("warnings %q", warnings)
	}
	flags := regexp.MustCompile(`(?m)^builder_flags (.*)$`).FindStringSubmatch(got.Plan)
	for _, want := range []string{"kFP16", "kOBEY_PRECISION_CONSTRAINTS"} {
		if flags == nil || !slices.Contains(strings.Split(flags[1], ","), want) {
			t.Errorf("the plan's builder flags %q lack %s", flags, want)
		}
	}
	for _, want := range []string{"\nprecision fp16\n", "\navg_timing 4\n", "\nstrongly_typed no\n", "\nprofiling_verbosity 0\n",
		"\ntactic_sources 0x1a\n", "\nmax_aux_streams 3\n"} {
		if !strings.Contains(got.Plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, got.Plan)
		}
	}
}

// TestTensorRT10RefusesStronglyTypedWithWeakTyping: on TensorRT 10 (its stand-in, in a child
// process) a strongly typed network with an option of weak typing is refused at NewBuild, with
// the options named and the way out.
func TestTensorRT10RefusesStronglyTypedWithWeakTyping(t *testing.T) {
	tests := []struct {
		name      string
		precision uint32
		build     BuildSettings
	}{
		{"fp16", PrecisionFP16, BuildSettings{StronglyTyped: true}},
		{"bf16", PrecisionBF16, BuildSettings{StronglyTyped: true}},
		{"precision constraints", 0, BuildSettings{StronglyTyped: true, PrecisionConstraints: PrecisionConstraintsPrefer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := standinBuild(t, standinJob{Major: 10, Settings: "tactics=2;iterations=1;step=1us", Model: testmodels.Bundled(t, "convnet.onnx"),
				OptLevel: -1, Precision: tt.precision, Build: tt.build, Refused: true})
			if got.Code != CodeInvalidArgument {
				t.Errorf("code %v (%s), want %v", got.Code, got.Error, CodeInvalidArgument)
			}
			for _, want := range []string{"--stronglyTyped cannot go with --fp16, --bf16, --int8, --fp8, --best, --precisionConstraints or --useDLACore on TensorRT 10", "drop --stronglyTyped or the others"} {
				if !strings.Contains(got.Error, want) {
					t.Errorf("error %q, want it to contain %q", got.Error, want)
				}
			}
		})
	}
}

// TestAvgTimingScalesSimulatedMeasuring: a measuring step of the stand-in averages avg_timing
// runs, so 64 iterations make each step 8 times the step given for trtexec's 8. Only a lower
// bound is asserted: a busy machine may take longer, never shorter.
func TestAvgTimingScalesSimulatedMeasuring(t *testing.T) {
	const step, iterations = 2 * time.Millisecond, 3 // 3: a warm-up measurement has 2 steps
	o := optionsFor(t, reluModel(t, "act"), &SimOptions{Tactics: 2, Iterations: iterations, Step: step})
	o.AvgTiming = 64
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	starts := map[uint64]RawEvent{}
	measured := 0
	for _, ev := range out.events {
		if ev.Name != phaseMeasure {
			continue
		}
		switch ev.Kind {
		case EventPhaseStart:
			starts[ev.Thread] = ev
		case EventPhaseFinish:
			start := starts[ev.Thread]
			if start.Steps != iterations {
				continue // a warm-up measurement
			}
			measured++
			if took, least := ev.Time-start.Time, iterations*8*step; took < least {
				t.Errorf("a measurement of %d steps at --avg-timing 64 took %v, less than %v", iterations, took, least)
			}
		}
	}
	if measured == 0 {
		t.Error("no full measurement")
	}
	if !strings.Contains(string(out.plan), "\navg_timing 64\n") {
		t.Errorf("plan lacks avg_timing 64:\n%s", out.plan)
	}
}

// TestBuildSettingsInvalid: NewBuild refuses malformed build settings with CodeInvalidArgument
// and one line that names the setting.
func TestBuildSettingsInvalid(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *BuildSettings)
		want   string
	}{
		{"data type", func(s *BuildSettings) { s.InputFormats = []IOFormat{{DataType(42), 1}} }, "input format 0: unknown data type 42"},
		{"no format", func(s *BuildSettings) { s.OutputFormats = []IOFormat{{TypeFP16, 0}} }, "output format 0: give one or more known tensor formats"},
		{"format bits", func(s *BuildSettings) { s.InputFormats = []IOFormat{{TypeFP16, 1 << 20}} }, "known tensor formats"},
		{"constraints", func(s *BuildSettings) { s.PrecisionConstraints = 3 }, "unknown precision constraints 3"},
		{"layers without constraints", func(s *BuildSettings) { s.LayerPrecisions = []LayerPrecision{{"a", TypeFP16}} }, "without precision constraints"},
		{"empty layer", func(s *BuildSettings) {
			s.PrecisionConstraints, s.LayerPrecisions = PrecisionConstraintsPrefer, []LayerPrecision{{"", TypeFP16}}
		}, "no layer name"},
		{"layer type", func(s *BuildSettings) {
			s.PrecisionConstraints, s.LayerPrecisions = PrecisionConstraintsPrefer, []LayerPrecision{{"a", 0}}
		}, "layer a: unknown data type 0"},
		{"verbosity", func(s *BuildSettings) { s.ProfilingVerbosity = 4 }, "unknown profiling verbosity 4"},
		{"tactic bits", func(s *BuildSettings) { s.TacticSourcesOn = 1 << 7 }, "unknown tactic source bits"},
		{"tactic both ways", func(s *BuildSettings) { s.TacticSourcesOn, s.TacticSourcesOff = 1, 1 }, "both enabled and disabled"},
		{"negative DLA core", func(s *BuildSettings) { s.UseDLA, s.DLACore = true, -1 }, "DLA core -1 is negative"},
		{"fallback without DLA", func(s *BuildSettings) { s.GPUFallback = true }, "GPU fallback needs a DLA core"},
		{"best and strongly typed", func(s *BuildSettings) { s.Best, s.StronglyTyped = true, true }, "strongly typed network"},
		{"pool", func(s *BuildSettings) { s.Pools = map[uint32]uint64{1 << 9: 1} }, "unknown memory pool"},
		{"NUL in layer", func(s *BuildSettings) {
			s.PrecisionConstraints, s.LayerPrecisions = PrecisionConstraintsPrefer, []LayerPrecision{{"a\x00", TypeFP16}}
		}, "contains a NUL byte"},
		{"negative avg timing", func(s *BuildSettings) { s.AvgTiming = -1 }, "--avg-timing -1 is negative: give how many iterations each tactic's timing averages, 1 or more"},
		{"avg timing overflow", func(s *BuildSettings) { s.AvgTiming = 1 << 40 }, "averaging iterations 1099511627776 is out of range"},
		{"control character in route", func(s *BuildSettings) { s.BuildRoute = "-a=b\n-c=d" }, "the build route holds a control character"},
		{"NUL in route", func(s *BuildSettings) { s.BuildRoute = "-a=\x00" }, "contains a NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t, &SimOptions{})
			tt.change(&o.BuildSettings)
			b, err := NewBuild(BackendSim, o)
			if err == nil {
				b.Close()
				t.Fatal("NewBuild accepted the settings")
			}
			e := asError(t, err, CodeInvalidArgument)
			if !strings.Contains(e.Message, tt.want) || strings.Contains(e.Message, "\n") {
				t.Errorf("message %q, want one line containing %q", e.Message, tt.want)
			}
		})
	}
}
