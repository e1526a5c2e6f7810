package buildflags

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// Flags are the flags of a build: the builder's options, and what only the command line has
// (the model as --onnx or an argument, the progress view). Bind fills them.
type Flags struct {
	// Opts are the builder's options the flags set, from builder.DefaultOptions.
	Opts builder.Options
	// ONNX is --onnx (the model, as trtexec names it), Progress the --progress view.
	ONNX, Progress string
	// SkipInference is trtexec's --skipInference, accepted and ignored.
	SkipInference bool
	profiles      profileFlags
}

// NewFlagSet is a build's flag set, named name, as the build command parses it (trtexec's
// spellings included), and the Flags it fills.
func NewFlagSet(name string) (*pflag.FlagSet, *Flags) {
	f := pflag.NewFlagSet(name, pflag.ContinueOnError)
	f.SetNormalizeFunc(Normalize)
	o := &Flags{}
	Bind(f, o)
	return f, o
}

// Bind adds a build's flags to f, filling o: every option of builder.Options a user sets, with
// its usage line. f should normalize names with Normalize, so that trtexec's spellings work.
func Bind(f *pflag.FlagSet, o *Flags) {
	o.Opts = builder.DefaultOptions()
	o.profiles.dst = &o.Opts.Profiles
	f.StringVarP(&o.Opts.Engine, "save-engine", "o", "", "write the engine here (default: the model's path with .engine)")
	f.StringVar(&o.ONNX, "onnx", "", "the ONNX model (instead of the positional argument, as in trtexec)")
	f.StringVar(&o.Opts.Backend, "backend", o.Opts.Backend, "builder: auto, tensorrt or sim (sim simulates a build without a GPU)")
	f.StringVar(&o.Progress, "progress", "auto", "progress output: auto, tty, plain, json or quiet (env TRTBUILD_PROGRESS applies when auto)")
	f.BoolVarP(&o.Opts.Verbose, "verbose", "v", false, "show the builder's info and verbose log lines (slows TensorRT builds)")

	f.Var(shapeValue{&o.profiles, KindShapes}, "shapes", "input shapes for all of min/opt/max, e.g. images:1x3x224x224,mask:1x16")
	f.Var(shapeValue{&o.profiles, KindMin}, "min-shapes", "smallest input shapes of the optimization profile")
	f.Var(shapeValue{&o.profiles, KindOpt}, "opt-shapes", "input shapes the engine is tuned for")
	f.Var(shapeValue{&o.profiles, KindMax}, "max-shapes", "largest input shapes of the optimization profile")
	f.Var(profileValue{&o.profiles}, "profile", "start optimization profile N (0, 1, …): the shape flags after it belong to it, as in trtexec")
	f.StringVar(&o.Opts.Workspace, "workspace", "", "workspace memory pool limit, e.g. 512M or 4G (a bare number is MiB)")
	f.StringVar(&o.Opts.MemPoolSize, "mem-pool-size", "", "memory pool limits, trtexec syntax: workspace:4G,tacticSharedMem:48K (also dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM; a bare number is MiB)")

	f.BoolVar(&o.Opts.FP16, "fp16", false, "build in FP16 (TensorRT 10: builder flag; TensorRT 11: converts the ONNX graph)")
	f.BoolVar(&o.Opts.BF16, "bf16", false, "build in BF16 (as --fp16)")
	f.BoolVar(&o.Opts.INT8, "int8", false, "INT8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.Opts.FP8, "fp8", false, "FP8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.Opts.NoTF32, "no-tf32", false, "disable TF32 tactics")
	f.BoolVar(&o.Opts.Refit, "refit", false, "build a refittable engine")
	f.BoolVar(&o.Opts.StripWeights, "strip-weights", false, "strip refittable weights from the plan")
	f.BoolVar(&o.Opts.VersionCompatible, "version-compatible", false, "build a version-compatible engine")
	f.BoolVar(&o.Opts.ExcludeLeanRuntime, "exclude-lean-runtime", false, "with --version-compatible: leave the lean runtime out of the plan")
	f.BoolVar(&o.Opts.SparseWeights, "sparse-weights", false, "allow structured-sparsity tactics")
	f.Var(newOptionalInt(&o.Opts.OptLevel, 0, 5), "opt-level", "builder optimization level 0-5 (default: TensorRT's, 3)")
	f.Var(newOptionalInt(&o.Opts.MaxAuxStreams, 0, 64), "max-aux-streams", "auxiliary streams per inference (default: TensorRT's)")
	f.IntVar(&o.Opts.AvgTiming, "avg-timing", o.Opts.AvgTiming, "iterations each tactic's timing averages, 1-1000 (trtexec's --avgTiming; TensorRT's own default is 1)")
	f.StringVar(&o.Opts.HardwareCompat, "hardware-compat", o.Opts.HardwareCompat, "hardware compatibility: none, ampere+ or same-compute-capability")
	f.IntVar(&o.Opts.Device, "device", 0, "CUDA device to build on")
	f.StringSliceVar(&o.Opts.Plugins, "plugins", nil, "plugin libraries to load (this runs their code)")
	AddTensorRTLib(f, &o.Opts.TensorRTLib)
	f.StringSliceVar(&o.Opts.KeepFP32, "keep-fp32", nil, "with --fp16/--bf16 on TensorRT 11: operator types (Conv) or node names to keep in float32 when the model is converted")
	f.BoolVar(&o.Opts.NoBuiltinPlugins, "no-builtin-plugins", false, "do not load TensorRT's standard plugins (libnvinfer_plugin), which trtexec always loads")
	addTrtexecFlags(f, &o.Opts.Trtexec)
	f.BoolVar(&o.SkipInference, "skip-inference", false, "accepted for trtexec compatibility; trtbuild never runs inference")
	_ = f.MarkHidden("skip-inference")

	f.BoolVar(&o.Opts.NoPreflight, "no-preflight", false, "skip the checks of the model and the shapes before the build")
	f.StringVar(&o.Opts.TimingCache, "timing-cache", o.Opts.TimingCache, "timing cache `FILE` to load, and to merge what the build learned into (also when cancelled); auto: one per TensorRT version and GPU in the user cache folder")
	f.BoolVar(&o.Opts.NoTimingCache, "no-timing-cache", false, "use no timing cache")
	f.BoolVar(&o.Opts.StrictCache, "strict-cache", false, "fail when the timing cache cannot be read, used or saved, instead of warning")
	f.Var(newDuration(&o.Opts.Timeout, 0), "timeout", "end the build after this long: cancel, then stop the worker after --kill-after (exit 124)")
	f.Var(newDuration(&o.Opts.StallTimeout, 0), "stall-timeout", "end the build after this long without progress (off by default: TensorRT can be silent for minutes)")
	f.StringVar(&o.Opts.Report, "report", "", "write a build report to `FILE` when the build ends: .json (phase tree, slowest phases, cache hits, peak memory) or .html (the same, with a timeline chart)")
	f.StringVar(&o.Opts.Trace, "trace", "", "record the progress events to `FILE` as JSON lines, for trtbuild replay and trtbuild report")
	f.BoolVar(&o.Opts.NoManifest, "no-manifest", false, "write no manifest (ENGINE.json: the build key, versions and SHA-256) beside the engine")
	AddEngineCache(f, &o.Opts.EngineCache)
	f.Var(newDuration(&o.Opts.KillAfter, o.Opts.KillAfter), "kill-after", "after a timeout, how long the builder may take to stop before it is killed")

	f.Float64Var(&o.Opts.Sim.Speed, "sim-speed", o.Opts.Sim.Speed, "with --backend sim: run the simulation this many times faster")
	f.StringVar(&o.Opts.Sim.Scenario, "sim-scenario", "", "with --backend sim: play "+strings.Join(builder.SimScenarioNames(), ", ")+" (see docs/usage.md, \"See every view\")")
	f.IntVar(&o.Opts.Sim.TensorRT, "sim-tensorrt", 0, "with --backend sim: the TensorRT major the stand-in plays, 10 or 11 (default 11)")
	f.IntVar(&o.Opts.Sim.Threads, "sim-threads", 0, "simulated builder threads")
	f.IntVar(&o.Opts.Sim.Tactics, "sim-tactics", 0, "simulated tactics per layer")
	f.IntVar(&o.Opts.Sim.Iterations, "sim-iterations", 0, "simulated measuring steps per tactic")
	f.Var(newDuration(&o.Opts.Sim.Step, 0), "sim-step", "simulated time of one measuring step (overrides --sim-speed)")
	f.Var(newDuration(&o.Opts.Sim.Silent, 0), "sim-silent", "simulated silence at the start of timing")
	f.Var(newDuration(&o.Opts.Sim.LongStep, 0), "sim-long-step", "make the first measuring step this long")
	f.StringVar(&o.Opts.Sim.FailPhase, "sim-fail-phase", "", "fail when this phase starts (trailing * matches a prefix)")
	f.StringVar(&o.Opts.Sim.EarlyPhase, "sim-early-phase", "", "finish this phase before all its steps")
	f.StringVar(&o.Opts.Sim.AbortPhase, "sim-abort-phase", "", "crash the worker when this phase starts")
	f.BoolVar(&o.Opts.Sim.IgnoreCancel, "sim-ignore-cancel", false, "keep building after a cancel request")
	f.Uint64Var(&o.Opts.Sim.Seed, "sim-seed", 0, "seed of the simulated timings")
	f.BoolVar(&o.Opts.Sim.Flood, "sim-flood", false, "report events as fast as possible, without sleeping (benchmarks)")
	f.BoolVar(&o.Opts.Sim.TimeCallbacks, "sim-time-callbacks", false, "log the percentiles of the progress monitor's callbacks (benchmarks)")
	f.Var(newDuration(&o.Opts.Sim.PreSilent, 0), "sim-pre-silent", "simulated silence before the first phase (graph optimization)")
	f.Var(newDuration(&o.Opts.Sim.PostSilent, 0), "sim-post-silent", "simulated silence after timing (engine generation)")
	f.BoolVar(&o.Opts.Sim.SkipFinish, "sim-skip-finish", false, "send no phase finish after a cancel or a failure")
	f.StringVar(&o.Opts.Sim.FP16FailNode, "sim-fp16-fail-node", "", "fail as TensorRT 11.2 does when this node runs in FP16")
	for _, name := range []string{"sim-threads", "sim-tactics", "sim-iterations", "sim-step", "sim-silent", "sim-long-step",
		"sim-fail-phase", "sim-early-phase", "sim-abort-phase", "sim-ignore-cancel", "sim-seed", "sim-flood",
		"sim-pre-silent", "sim-post-silent", "sim-skip-finish", "sim-fp16-fail-node", "sim-time-callbacks"} {
		_ = f.MarkHidden(name)
	}
}

// AddEngineCache binds --engine-cache, --engine-cache-size and --engine-cache-trust.
func AddEngineCache(f *pflag.FlagSet, c *builder.EngineCache) {
	f.StringVar(&c.Dir, "engine-cache", "", "reuse engines from, and store new ones in, this `DIR`, by build key (see trtbuild key); auto: the user cache folder's trtbuild/engines")
	f.StringVar(&c.Size, "engine-cache-size", c.Size, "with --engine-cache: remove the least recently used engines beyond this size")
	f.StringVar(&c.Trust, "engine-cache-trust", c.Trust, "with --engine-cache: whose entries are served: self, group (every member of the cache folder's group), user names or ids, comma-separated (see docs/engine-cache.md)")
}
