package cgo

import (
	"strings"
	"testing"
	"time"
)

// TestBuildSettingsReachTheBuilder checks that trtexec's build settings cross the C boundary:
// the simulated builder writes each one it was given into its plan, in trtexec's spelling.
func TestBuildSettingsReachTheBuilder(t *testing.T) {
	o := options(t, &SimOptions{NbLayers: 1, Step: time.Microsecond})
	o.BuildSettings = BuildSettings{
		InputFormats:         []IOFormat{{TypeFP16, TensorFormats["chw"]}, {TypeINT8, TensorFormats["chw4"] | TensorFormats["chw32"]}},
		OutputFormats:        []IOFormat{{TypeFP32, TensorFormats["chw"]}},
		PrecisionConstraints: PrecisionConstraintsObey,
		LayerPrecisions:      []LayerPrecision{{"conv1", TypeFP16}, {"*", TypeFP32}},
		ProfilingVerbosity:   ProfilingDetailed,
		TacticSourcesOn:      TacticSources["cublas"],
		TacticSourcesOff:     TacticSources["cudnn"] | TacticSources["jit_convolutions"],
		UseDLA:               true, DLACore: 1, GPUFallback: true,
		StronglyTyped: true,
		Pools:         map[uint32]uint64{PoolTacticSharedMemory: 1024, PoolDLAManagedSRAM: 1 << 20},
		AvgTiming:     8,
		BuildRoute:    "-conv_use_long_w=off -kgen:codegen:cuda_tile=2",
	}
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	for _, want := range []string{
		"input_formats fp16:chw,int8:chw4+chw32\n",
		"output_formats fp32:chw\n",
		"precision_constraints obey\n",
		"layer_precisions conv1:fp16,*:fp32\n",
		"profiling_verbosity detailed\n",
		"tactic_sources +cublas,-cudnn,-jit_convolutions\n",
		"dla_core 1 gpu_fallback\n",
		"strongly_typed\n",
		"mem_pools tacticSharedMem:1024,dlaSRAM:1048576\n",
		"avg_timing 8\n",
		"build_route -conv_use_long_w=off -kgen:codegen:cuda_tile=2\n",
	} {
		if !strings.Contains(string(out.plan), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.plan)
		}
	}
}

// TestBuildSettingsDefaultPlan checks that a build without them writes none of their lines.
func TestBuildSettingsDefaultPlan(t *testing.T) {
	out := build(t, options(t, &SimOptions{NbLayers: 1, Step: time.Microsecond}), nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	for _, key := range []string{"input_formats", "layer_precisions", "profiling_verbosity", "tactic_sources", "dla_core", "strongly_typed", "best", "mem_pools", "avg_timing", "build_route"} {
		if strings.Contains(string(out.plan), "\n"+key) {
			t.Errorf("plan has a %s line:\n%s", key, out.plan)
		}
	}
}

// TestAvgTimingScalesSimulatedMeasuring: a measuring step of the simulation averages
// avg_timing runs, so 64 iterations make each step 8 times the step given for trtexec's 8.
// Only a lower bound is asserted: a busy machine may take longer, never shorter.
func TestAvgTimingScalesSimulatedMeasuring(t *testing.T) {
	const step = 2 * time.Millisecond
	o := options(t, &SimOptions{NbLayers: 2, Tactics: 2, Iterations: 2, Step: step})
	o.AvgTiming = 64
	began := time.Now()
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	// 2 layers × 2 tactics × 2 steps of 8×step each, less the simulation's ±20% jitter.
	if took, least := time.Since(began), time.Duration(float64(2*2*2*8*step)*0.75); took < least {
		t.Errorf("a build of 8 measuring steps at --avg-timing 64 took %v, less than %v", took, least)
	}
	if !strings.Contains(string(out.plan), "\navg_timing 64\n") {
		t.Errorf("plan lacks avg_timing 64:\n%s", out.plan)
	}
}

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
