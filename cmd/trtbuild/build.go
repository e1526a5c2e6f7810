package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// buildFlags are the flags of a build: the builder's options, and what only the command line
// has (the model as --onnx or an argument, the progress view).
type buildFlags struct {
	opts          builder.Options
	onnx          string
	progress      string
	profiles      profileFlags
	skipInference bool
}

func addBuildFlags(cmd *cobra.Command, o *buildFlags) {
	o.opts = builder.DefaultOptions()
	o.profiles.dst = &o.opts.Profiles
	f := cmd.Flags()
	f.StringVarP(&o.opts.Engine, "save-engine", "o", "", "write the engine here (default: the model's path with .engine)")
	f.StringVar(&o.onnx, "onnx", "", "the ONNX model (instead of the positional argument, as in trtexec)")
	f.StringVar(&o.opts.Backend, "backend", o.opts.Backend, "builder: auto, tensorrt or sim (sim simulates a build without a GPU)")
	f.StringVar(&o.progress, "progress", "auto", "progress output: auto, tty, plain, json or quiet (env TRTBUILD_PROGRESS applies when auto)")
	f.BoolVarP(&o.opts.Verbose, "verbose", "v", false, "show the builder's info and verbose log lines (slows TensorRT builds)")

	f.Var(shapeValue{&o.profiles, kindShapes}, "shapes", "input shapes for all of min/opt/max, e.g. images:1x3x224x224,mask:1x16")
	f.Var(shapeValue{&o.profiles, kindMin}, "min-shapes", "smallest input shapes of the optimization profile")
	f.Var(shapeValue{&o.profiles, kindOpt}, "opt-shapes", "input shapes the engine is tuned for")
	f.Var(shapeValue{&o.profiles, kindMax}, "max-shapes", "largest input shapes of the optimization profile")
	f.Var(profileValue{&o.profiles}, "profile", "start optimization profile N (0, 1, …): the shape flags after it belong to it, as in trtexec")
	f.StringVar(&o.opts.Workspace, "workspace", "", "workspace memory pool limit, e.g. 512M or 4G (a bare number is MiB)")
	f.StringVar(&o.opts.MemPoolSize, "mem-pool-size", "", "memory pool limits, trtexec syntax: workspace:4G,tacticSharedMem:48K (also dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM; a bare number is MiB)")

	f.BoolVar(&o.opts.FP16, "fp16", false, "build in FP16 (TensorRT 10: builder flag; TensorRT 11: converts the ONNX graph)")
	f.BoolVar(&o.opts.BF16, "bf16", false, "build in BF16 (as --fp16)")
	f.BoolVar(&o.opts.INT8, "int8", false, "INT8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.opts.FP8, "fp8", false, "FP8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.opts.NoTF32, "no-tf32", false, "disable TF32 tactics")
	f.BoolVar(&o.opts.Refit, "refit", false, "build a refittable engine")
	f.BoolVar(&o.opts.StripWeights, "strip-weights", false, "strip refittable weights from the plan")
	f.BoolVar(&o.opts.VersionCompatible, "version-compatible", false, "build a version-compatible engine")
	f.BoolVar(&o.opts.ExcludeLeanRuntime, "exclude-lean-runtime", false, "with --version-compatible: leave the lean runtime out of the plan")
	f.BoolVar(&o.opts.SparseWeights, "sparse-weights", false, "allow structured-sparsity tactics")
	f.Var(newOptionalInt(&o.opts.OptLevel, 0, 5), "opt-level", "builder optimization level 0-5 (default: TensorRT's, 3)")
	f.Var(newOptionalInt(&o.opts.MaxAuxStreams, 0, 64), "max-aux-streams", "auxiliary streams per inference (default: TensorRT's)")
	f.IntVar(&o.opts.AvgTiming, "avg-timing", o.opts.AvgTiming, "iterations each tactic's timing averages, 1-1000 (trtexec's --avgTiming; TensorRT's own default is 1)")
	f.StringVar(&o.opts.HardwareCompat, "hardware-compat", o.opts.HardwareCompat, "hardware compatibility: none, ampere+ or same-compute-capability")
	f.IntVar(&o.opts.Device, "device", 0, "CUDA device to build on")
	f.StringSliceVar(&o.opts.Plugins, "plugins", nil, "plugin libraries to load (this runs their code)")
	addTensorRTLibFlag(f, &o.opts.TensorRTLib)
	f.StringSliceVar(&o.opts.KeepFP32, "keep-fp32", nil, "with --fp16/--bf16 on TensorRT 11: operator types (Conv) or node names to keep in float32 when the model is converted")
	f.BoolVar(&o.opts.NoBuiltinPlugins, "no-builtin-plugins", false, "do not load TensorRT's standard plugins (libnvinfer_plugin), which trtexec always loads")
	addTrtexecFlags(f, &o.opts.Trtexec)
	f.BoolVar(&o.skipInference, "skip-inference", false, "accepted for trtexec compatibility; trtbuild never runs inference")
	_ = f.MarkHidden("skip-inference")

	f.BoolVar(&o.opts.NoPreflight, "no-preflight", false, "skip the checks of the model and the shapes before the build")
	f.StringVar(&o.opts.TimingCache, "timing-cache", o.opts.TimingCache, "timing cache `FILE` to load, and to merge what the build learned into (also when cancelled); auto: one per TensorRT version and GPU in the user cache folder")
	f.BoolVar(&o.opts.NoTimingCache, "no-timing-cache", false, "use no timing cache")
	f.BoolVar(&o.opts.StrictCache, "strict-cache", false, "fail when the timing cache cannot be read, used or saved, instead of warning")
	f.Var(newDuration(&o.opts.Timeout, 0), "timeout", "end the build after this long: cancel, then stop the worker after --kill-after (exit 124)")
	f.Var(newDuration(&o.opts.StallTimeout, 0), "stall-timeout", "end the build after this long without progress (off by default: TensorRT can be silent for minutes)")
	f.StringVar(&o.opts.Report, "report", "", "write a build report to `FILE` when the build ends: .json (phase tree, slowest phases, cache hits, peak memory) or .html (the same, with a timeline chart)")
	f.StringVar(&o.opts.Trace, "trace", "", "record the progress events to `FILE` as JSON lines, for trtbuild replay and trtbuild report")
	f.BoolVar(&o.opts.NoManifest, "no-manifest", false, "write no manifest (ENGINE.json: the build key, versions and SHA-256) beside the engine")
	addEngineCacheFlags(f, &o.opts.EngineCache)
	f.Var(newDuration(&o.opts.KillAfter, o.opts.KillAfter), "kill-after", "after a timeout, how long the builder may take to stop before it is killed")

	f.Float64Var(&o.opts.Sim.Speed, "sim-speed", o.opts.Sim.Speed, "with --backend sim: run the simulation this many times faster")
	f.StringVar(&o.opts.Sim.Scenario, "sim-scenario", "", "with --backend sim: play "+strings.Join(builder.SimScenarioNames(), ", ")+" (see README, \"See every view\")")
	f.IntVar(&o.opts.Sim.Threads, "sim-threads", 0, "simulated builder threads")
	f.IntVar(&o.opts.Sim.Tactics, "sim-tactics", 0, "simulated tactics per layer")
	f.IntVar(&o.opts.Sim.Iterations, "sim-iterations", 0, "simulated measuring steps per tactic")
	f.DurationVar(&o.opts.Sim.Step, "sim-step", 0, "simulated time of one measuring step (overrides --sim-speed)")
	f.DurationVar(&o.opts.Sim.Silent, "sim-silent", 0, "simulated silence at the start of timing")
	f.DurationVar(&o.opts.Sim.LongStep, "sim-long-step", 0, "make the first measuring step this long")
	f.StringVar(&o.opts.Sim.FailPhase, "sim-fail-phase", "", "fail when this phase starts (trailing * matches a prefix)")
	f.StringVar(&o.opts.Sim.EarlyPhase, "sim-early-phase", "", "finish this phase before all its steps")
	f.StringVar(&o.opts.Sim.AbortPhase, "sim-abort-phase", "", "crash the worker when this phase starts")
	f.BoolVar(&o.opts.Sim.IgnoreCancel, "sim-ignore-cancel", false, "keep building after a cancel request")
	f.Uint64Var(&o.opts.Sim.Seed, "sim-seed", 0, "seed of the simulated timings")
	f.BoolVar(&o.opts.Sim.Flood, "sim-flood", false, "report events as fast as possible, without sleeping (benchmarks)")
	f.DurationVar(&o.opts.Sim.PreSilent, "sim-pre-silent", 0, "simulated silence before the first phase (graph optimization)")
	f.DurationVar(&o.opts.Sim.PostSilent, "sim-post-silent", 0, "simulated silence after timing (engine generation)")
	f.BoolVar(&o.opts.Sim.SkipFinish, "sim-skip-finish", false, "send no phase finish after a cancel or a failure")
	f.StringVar(&o.opts.Sim.FP16FailNode, "sim-fp16-fail-node", "", "fail as TensorRT 11.2 does when this node runs in FP16")
	for _, name := range []string{"sim-threads", "sim-tactics", "sim-iterations", "sim-step", "sim-silent", "sim-long-step",
		"sim-fail-phase", "sim-early-phase", "sim-abort-phase", "sim-ignore-cancel", "sim-seed", "sim-flood",
		"sim-pre-silent", "sim-post-silent", "sim-skip-finish", "sim-fp16-fail-node"} {
		_ = f.MarkHidden(name)
	}
}

// options are the builder's options of this command line: args is the model, or empty.
func (o *buildFlags) options(args []string) (builder.Options, error) {
	opts := o.opts
	model := o.onnx
	switch {
	case len(args) > 1:
		return opts, exitcode.Usagef("expected one model, got %d arguments (%s); usage: trtbuild [flags] MODEL.onnx", len(args), strings.Join(args, " "))
	case len(args) == 1 && model != "" && args[0] != model:
		return opts, exitcode.Usagef("two models given (%s and --onnx %s); give one", args[0], model)
	case len(args) == 1:
		model = args[0]
	}
	opts.Model = model
	opts.Command = append([]string{"trtbuild"}, os.Args[1:]...)
	return opts, nil
}

// buildRun runs the build of the command line, shown as --progress says.
func buildRun(s *streams, o *buildFlags, args []string) error {
	return runBuild(s, o.progress, func() (builder.Options, error) { return o.options(args) })
}

// runBuild runs one build through the builder, shown in the view progressFlag selects; opts
// gives the build's options (an error is the build's refusal).
func runBuild(s *streams, progressFlag string, opts func() (builder.Options, error)) (err error) {
	began := time.Now() // --timeout counts from here: the engine cache's work is in the budget
	mode, err := progressMode(s, progressFlag, true)
	if err != nil {
		return err
	}
	// A program reading --progress json learns why a build was refused before it started
	// from the stream itself: a result line, as every stream ends with.
	streamed := false
	if mode == tui.ModeJSON {
		defer func() {
			if err != nil && !streamed {
				_ = tui.NewJSON(s.Out, nil).End(builder.RefusalResult(err))
			}
		}()
	}
	o, err := opts()
	if err != nil {
		return err
	}
	sigs, stop := buildSignals(s)
	defer stop()
	onTerminal := mode == tui.ModeTTY || (mode == tui.ModePlain && s.OutTTY)
	var notices = s.Err
	if onTerminal {
		notices = nil // the renderer shows them on the same terminal
	}
	// Progress goes through a writer that never blocks (internal/outstream): a reader that does
	// not read delays no signal, budget or kill timer. The live view keeps the terminal.
	var stdout *builder.ProgressOutput
	out := s.Out
	if mode != tui.ModeTTY {
		stdout = builder.NewProgressOutput(s.Out, s.Err)
		out = stdout
	}
	res, err := builder.Run(context.Background(), o, builder.Frontend{
		NewRenderer: func(c progress.Controls) progress.Renderer {
			streamed = true
			return newRenderer(mode, s, out, o.Verbose, c)
		},
		Cached: func(info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
			streamed = true
			return showCacheHit(s, mode, info, start, hit, res)
		},
		Diagnostics: s.Err,
		Notices:     notices,
		Signals:     sigs,
		Tick:        tickFor(mode),
		Began:       began,
	})
	if stdout != nil {
		if sig := stdout.Drain(sigs); sig != nil && err == nil {
			err = exitcode.SignalError(sig, fmt.Sprintf("while the progress output was written; the engine %s is built", q(res.Engine)))
		}
	}
	if err != nil && !onTerminal {
		// The outcome went to a pipe or nowhere: say it on stderr as well, unless it is a
		// time budget, whose message the notice already put there.
		var e *exitcode.Error
		if errors.As(err, &e) && !(e.Code == exitcode.TimedOut && notices != nil) {
			e.Reported = false
		}
	}
	return err
}

// showCacheHit shows an engine cache hit, which builds nothing: the JSON stream of a build
// (its build line, the hit, the result), or the hit's one line.
func showCacheHit(s *streams, mode tui.Mode, info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
	switch mode {
	case tui.ModeJSON:
		j := tui.NewJSON(s.Out, nil)
		j.Begin(progress.NewState(info, start))
		j.Handle(hit)
		if err := j.End(res); err != nil && !errors.Is(err, syscall.EPIPE) {
			return err
		}
	case tui.ModeQuiet:
	default:
		fmt.Fprintln(s.Out, escapeControls(hit[0].Message))
	}
	return nil
}

func newRenderer(mode tui.Mode, s *streams, out io.Writer, verbose bool, c progress.Controls) progress.Renderer {
	switch mode {
	case tui.ModeJSON:
		return tui.NewJSON(out, nil)
	case tui.ModeQuiet:
		return tui.Quiet{}
	case tui.ModeTTY:
		return tui.NewTTY(s.OutFile, s.In, tui.TTYOptions{
			Controls: c, Verbose: verbose, Color: tui.ColorFromEnv(s.Getenv, true), Getenv: s.Getenv,
		})
	default:
		// Plain text is for logs: colour only when the user forces it (CLICOLOR_FORCE).
		return tui.NewPlain(out, tui.PlainOptions{Verbose: verbose, Color: tui.ColorFromEnv(s.Getenv, false)})
	}
}

// tickFor is how often the session ticks the renderer: the live view takes its snapshots of
// the build's state on the tick, ten a second; the other modes only need heartbeats.
func tickFor(mode tui.Mode) time.Duration {
	if mode == tui.ModeTTY {
		return tui.TickEvery()
	}
	return time.Second
}
