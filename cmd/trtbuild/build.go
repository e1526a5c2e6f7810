package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/outstream"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/tui"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// buildOptions are the flags of a build.
type buildOptions struct {
	model, onnx, engine string
	backend, progress   string
	verbose             bool

	profiles               profileFlags
	workspace, memPoolSize string

	fp16, bf16, int8, fp8                                                      bool
	noTF32, refit, stripWeights, versionCompatible, excludeLeanRuntime, sparse bool
	optLevel, maxAuxStreams, device                                            int
	hardwareCompat                                                             string
	plugins                                                                    []string
	skipInference, noPreflight                                                 bool

	keepFP32         []string
	tensorrtLib      string // --tensorrt-lib: the folder of the TensorRT libraries
	noBuiltinPlugins bool   // --no-builtin-plugins: do not load libnvinfer_plugin

	noManifest bool // --no-manifest: write no ENGINE.json beside the engine
	ownOutputs bool // the engine and report paths are trtbuild's own (a matrix cell's): no links followed

	timingCache   string
	noTimingCache bool
	strictCache   bool
	out           outputFlags
	engineCache   engineCacheFlags
	keyTarget     *buildkey.Target                                 // a matrix cell's GPU target, for simulated builds' keys
	modelHashes   func(model string) (buildkey.ModelHashes, error) // a matrix's, hashing each model once

	timeout, stallTimeout, killAfter time.Duration

	sim simFlags
	tx  trtexecFlags
}

// simFlags are the simulated builder's knobs. Only --sim-speed is shown in --help; the others
// exist for tests and demos.
type simFlags struct {
	speed                             float64
	threads, tactics, iterations      int
	step, silent, longStep            time.Duration
	failPhase, earlyPhase, abortPhase string
	ignoreCancel                      bool
	seed                              uint64
	flood                             bool
	preSilent, postSilent             time.Duration
	skipFinish                        bool
	fp16FailNode                      string
	scenario                          string
}

// The --sim-speed range: beyond it a simulated step is shorter than a nanosecond or longer
// than a minute.
const minSimSpeed, maxSimSpeed = 0.001, 1e6

// defaultSimStep makes a simulated build of the bundled model last several seconds at speed 1.
const defaultSimStep = 40 * time.Millisecond

func addBuildFlags(cmd *cobra.Command, o *buildOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.engine, "save-engine", "o", "", "write the engine here (default: the model's path with .engine)")
	f.StringVar(&o.onnx, "onnx", "", "the ONNX model (instead of the positional argument, as in trtexec)")
	f.StringVar(&o.backend, "backend", "auto", "builder: auto, tensorrt or sim (sim simulates a build without a GPU)")
	f.StringVar(&o.progress, "progress", "auto", "progress output: auto, tty, plain, json or quiet (env TRTBUILD_PROGRESS applies when auto)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "show the builder's info and verbose log lines (slows TensorRT builds)")

	f.Var(shapeValue{&o.profiles, kindShapes}, "shapes", "input shapes for all of min/opt/max, e.g. images:1x3x224x224,mask:1x16")
	f.Var(shapeValue{&o.profiles, kindMin}, "min-shapes", "smallest input shapes of the optimization profile")
	f.Var(shapeValue{&o.profiles, kindOpt}, "opt-shapes", "input shapes the engine is tuned for")
	f.Var(shapeValue{&o.profiles, kindMax}, "max-shapes", "largest input shapes of the optimization profile")
	f.Var(profileValue{&o.profiles}, "profile", "start optimization profile N (0, 1, …): the shape flags after it belong to it, as in trtexec")
	f.StringVar(&o.workspace, "workspace", "", "workspace memory pool limit, e.g. 512M or 4G (a bare number is MiB)")
	f.StringVar(&o.memPoolSize, "mem-pool-size", "", "memory pool limits, trtexec syntax: workspace:4G,tacticSharedMem:48K (also dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM; a bare number is MiB)")

	f.BoolVar(&o.fp16, "fp16", false, "build in FP16 (TensorRT 10: builder flag; TensorRT 11: converts the ONNX graph)")
	f.BoolVar(&o.bf16, "bf16", false, "build in BF16 (as --fp16)")
	f.BoolVar(&o.int8, "int8", false, "INT8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.fp8, "fp8", false, "FP8 (TensorRT 10 only; on 11 use a Q/DQ-quantized model)")
	f.BoolVar(&o.noTF32, "no-tf32", false, "disable TF32 tactics")
	f.BoolVar(&o.refit, "refit", false, "build a refittable engine")
	f.BoolVar(&o.stripWeights, "strip-weights", false, "strip refittable weights from the plan")
	f.BoolVar(&o.versionCompatible, "version-compatible", false, "build a version-compatible engine")
	f.BoolVar(&o.excludeLeanRuntime, "exclude-lean-runtime", false, "with --version-compatible: leave the lean runtime out of the plan")
	f.BoolVar(&o.sparse, "sparse-weights", false, "allow structured-sparsity tactics")
	f.Var(newOptionalInt(&o.optLevel, 0, 5), "opt-level", "builder optimization level 0-5 (default: TensorRT's, 3)")
	f.Var(newOptionalInt(&o.maxAuxStreams, 0, 64), "max-aux-streams", "auxiliary streams per inference (default: TensorRT's)")
	f.StringVar(&o.hardwareCompat, "hardware-compat", "none", "hardware compatibility: none, ampere+ or same-compute-capability")
	f.IntVar(&o.device, "device", 0, "CUDA device to build on")
	f.StringSliceVar(&o.plugins, "plugins", nil, "plugin libraries to load (this runs their code)")
	addTensorRTLibFlag(f, &o.tensorrtLib)
	f.StringSliceVar(&o.keepFP32, "keep-fp32", nil, "with --fp16/--bf16 on TensorRT 11: operator types (Conv) or node names to keep in float32 when the model is converted")
	f.BoolVar(&o.noBuiltinPlugins, "no-builtin-plugins", false, "do not load TensorRT's standard plugins (libnvinfer_plugin), which trtexec always loads")
	addTrtexecFlags(f, &o.tx)
	f.BoolVar(&o.skipInference, "skip-inference", false, "accepted for trtexec compatibility; trtbuild never runs inference")
	_ = f.MarkHidden("skip-inference")

	f.BoolVar(&o.noPreflight, "no-preflight", false, "skip the checks of the model and the shapes before the build")
	f.StringVar(&o.timingCache, "timing-cache", "auto", "timing cache `FILE` to load, and to merge what the build learned into (also when cancelled); auto: one per TensorRT version and GPU in the user cache folder")
	f.BoolVar(&o.noTimingCache, "no-timing-cache", false, "use no timing cache")
	f.BoolVar(&o.strictCache, "strict-cache", false, "fail when the timing cache cannot be read, used or saved, instead of warning")
	f.Var(newDuration(&o.timeout, 0), "timeout", "end the build after this long: cancel, then stop the worker after --kill-after (exit 124)")
	f.Var(newDuration(&o.stallTimeout, 0), "stall-timeout", "end the build after this long without progress (off by default: TensorRT can be silent for minutes)")
	addOutputFlags(f, &o.out)
	f.BoolVar(&o.noManifest, "no-manifest", false, "write no manifest (ENGINE.json: the build key, versions and SHA-256) beside the engine")
	addEngineCacheFlags(f, &o.engineCache)
	f.Var(newDuration(&o.killAfter, 30*time.Second), "kill-after", "after a timeout, how long the builder may take to stop before it is killed")

	f.Float64Var(&o.sim.speed, "sim-speed", 1, "with --backend sim: run the simulation this many times faster")
	f.StringVar(&o.sim.scenario, "sim-scenario", "", "with --backend sim: play "+strings.Join(simScenarioNames(), ", ")+" (see README, \"See every view\")")
	f.IntVar(&o.sim.threads, "sim-threads", 0, "simulated builder threads")
	f.IntVar(&o.sim.tactics, "sim-tactics", 0, "simulated tactics per layer")
	f.IntVar(&o.sim.iterations, "sim-iterations", 0, "simulated measuring steps per tactic")
	f.DurationVar(&o.sim.step, "sim-step", 0, "simulated time of one measuring step (overrides --sim-speed)")
	f.DurationVar(&o.sim.silent, "sim-silent", 0, "simulated silence at the start of timing")
	f.DurationVar(&o.sim.longStep, "sim-long-step", 0, "make the first measuring step this long")
	f.StringVar(&o.sim.failPhase, "sim-fail-phase", "", "fail when this phase starts (trailing * matches a prefix)")
	f.StringVar(&o.sim.earlyPhase, "sim-early-phase", "", "finish this phase before all its steps")
	f.StringVar(&o.sim.abortPhase, "sim-abort-phase", "", "crash the worker when this phase starts")
	f.BoolVar(&o.sim.ignoreCancel, "sim-ignore-cancel", false, "keep building after a cancel request")
	f.Uint64Var(&o.sim.seed, "sim-seed", 0, "seed of the simulated timings")
	f.BoolVar(&o.sim.flood, "sim-flood", false, "report events as fast as possible, without sleeping (benchmarks)")
	f.DurationVar(&o.sim.preSilent, "sim-pre-silent", 0, "simulated silence before the first phase (graph optimization)")
	f.DurationVar(&o.sim.postSilent, "sim-post-silent", 0, "simulated silence after timing (engine generation)")
	f.BoolVar(&o.sim.skipFinish, "sim-skip-finish", false, "send no phase finish after a cancel or a failure")
	f.StringVar(&o.sim.fp16FailNode, "sim-fp16-fail-node", "", "fail as TensorRT 11.2 does when this node runs in FP16")
	for _, name := range []string{"sim-threads", "sim-tactics", "sim-iterations", "sim-step", "sim-silent", "sim-long-step",
		"sim-fail-phase", "sim-early-phase", "sim-abort-phase", "sim-ignore-cancel", "sim-seed", "sim-flood",
		"sim-pre-silent", "sim-post-silent", "sim-skip-finish", "sim-fp16-fail-node"} {
		_ = f.MarkHidden(name)
	}
}

// prepareRequest turns the flags into the worker's request for model: the backend, the shape
// profiles, trtexec's build settings and the model's preflight checks (which complete the
// profiles). It returns the model as read and the warnings to show. A build and `trtbuild key`
// share it, so a key is computed from the request the build would send.
func prepareRequest(o *buildOptions, model string) (worker.Request, *onnx.Model, []string, error) {
	backend, err := resolveBackend(o.backend)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	flags, err := parseShapeFlags(o)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	req, err := buildRequest(o, model, backend, flags)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	txWarnings, err := applyTrtexecFlags(o.tx, &req)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	m, warnings, err := checkModel(model, &req, flags, o.noPreflight)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	return req, m, append(txWarnings, warnings...), nil
}

// buildRun validates everything it can before starting the worker, then runs the build.
func buildRun(s *streams, o *buildOptions, args []string) (err error) {
	began := time.Now() // --timeout counts from here: the engine cache's work is in the budget
	mode, warning, err := tui.SelectMode(o.progress, s.Getenv("TRTBUILD_PROGRESS"), s.OutTTY, s.Getenv("TERM"))
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	if warning != "" {
		fmt.Fprintln(s.Err, "trtbuild: "+escapeControls(warning))
	}
	// A program reading --progress json learns why a build was refused before it started
	// from the stream itself: a result line, as every stream ends with.
	streamed := false
	if mode == tui.ModeJSON {
		defer func() {
			if err != nil && !streamed {
				_ = tui.NewJSON(s.Out, nil).End(refusalResult(err))
			}
		}()
	}
	model, err := resolveModel(o, args)
	if err != nil {
		return err
	}
	engine, err := resolveEngine(model, o.engine)
	if err != nil {
		return err
	}
	req, m, warnings, err := prepareRequest(o, model)
	if err != nil {
		return err
	}
	backend := req.Backend
	if err := applyScenario(o.sim.scenario, backend, o.sim.speed, o.sim, &req); err != nil {
		return err
	}
	paths, cacheWarnings, err := checkBuildPaths(o, model, engine, backend, m)
	if err != nil {
		return err
	}
	for _, w := range append(warnings, cacheWarnings...) {
		fmt.Fprintln(s.Err, "trtbuild: warning: "+escapeControls(w))
	}
	exe, err := workerCommand()
	if err != nil {
		return err
	}

	sigs := s.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, handled...)
		defer signal.Stop(ch)
		sigs = ch
	}
	// A signal during the checks: stop before anything is started or written.
	select {
	case sig := <-sigs:
		return signalError(sig, "before the build started; nothing was written")
	default:
	}

	outs, err := openOutputs(o.out, paths)
	if err != nil {
		return err
	}
	defer outs.cleanup()
	files, err := createBuildFiles(paths)
	if err != nil {
		return err
	}
	defer files.cleanup()
	info := progress.BuildInfo{Model: model, Engine: engine, Backend: backend, Precision: precisionName(o), Layers: len(req.NodeNames), Version: version,
		Command: append([]string{"trtbuild"}, os.Args[1:]...), Settings: buildSettings(req)}
	ctl := watchCacheWork(sigs, began, o.timeout)
	keyed, hit, err := engineCacheLookup(ctl.ctx, s, o, mode, req, info, files, outs)
	defer keyed.close()
	streamed = hit
	when := "during the engine cache lookup; nothing was built"
	if hit {
		when = fmt.Sprintf("as the engine was copied from the engine cache; the engine %s is in place", q(engine))
	}
	if stop := ctl.end(when); stop != nil {
		return stop
	}
	if err != nil || hit {
		return err
	}
	onTerminal := mode == tui.ModeTTY || (mode == tui.ModePlain && s.OutTTY)
	var notices = s.Err
	if onTerminal {
		notices = nil // the renderer shows them on the same terminal
	}
	// Progress goes through a writer that never blocks (internal/outstream): a reader that does
	// not read delays no signal, budget or kill timer. The live view keeps the terminal.
	var stdout *outstream.Writer
	out := s.Out
	if mode != tui.ModeTTY {
		stdout = outstream.New(s.Out, outstream.Options{OnError: func(err error) {
			fmt.Fprintf(s.Err, "trtbuild: stdout was closed (%v); progress output stops here, the build goes on\n", unwrapSyscall(err))
		}})
		out = stdout
	}
	streamed = true
	res, err := builder.Run(builder.Config{
		Worker:       worker.StartOptions{Command: exe, Request: req},
		Engine:       engine,
		Output:       files.engine,
		Commit:       func(*progress.Result) error { return files.commitEngine(context.Background()) },
		Began:        began,
		Info:         info,
		NewRenderer:  func(c progress.Controls) progress.Renderer { return outs.wrap(newRenderer(mode, s, out, o, c)) },
		Notices:      notices,
		Signals:      sigs,
		Timeout:      o.timeout,
		StallTimeout: o.stallTimeout,
		KillAfter:    o.killAfter,
		Tick:         tickFor(mode),
	})
	late := outs.finish(s.Err, sigs)
	if res.Status == progress.StatusBuilt && exitcode.Of(err) == exitcode.OK {
		ctl := watchCacheWork(sigs, began, o.timeout)
		if late != nil {
			ctl.cancel(errors.New(signalName(late))) // the manifest, but no store: the user asked to stop
		}
		keyed.afterBuild(ctl.ctx, s, res, files)
		when := "while the manifest was written"
		if keyed != nil && keyed.cache != nil {
			when += " and the engine stored in the engine cache"
		}
		when += fmt.Sprintf("; the engine %s is built", q(engine))
		if stop := ctl.end(when); stop != nil {
			err = stop
		} else if late != nil {
			err = signalError(late, fmt.Sprintf("after the build; the engine %s is built", q(engine)))
		}
	}
	if stdout != nil {
		if sig := drain(stdout, s.Err, sigs); sig != nil && err == nil {
			err = signalError(sig, fmt.Sprintf("while the progress output was written; the engine %s is built", q(engine)))
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

// refusalResult is the result line of a build that never started: err's message, split at its
// first "; " into what is wrong and what to do.
func refusalResult(err error) progress.Result {
	msg := oneLine(err)
	res := progress.Result{Status: progress.StatusFailed, Error: msg}
	if what, hint, ok := strings.Cut(msg, "; "); ok {
		res.Error, res.Hint = what, hint
	}
	switch code := exitcode.Of(err); {
	case code == exitcode.Usage:
		res.UsageError = true
	case code == exitcode.TimedOut:
		res.Status = progress.StatusTimedOut
	case exitcode.BySignal(code):
		res.Status = progress.StatusCancelled
	}
	return res
}

// outputStall is how long the end of a build waits for a stdout reader that accepts nothing
// before it gives up on the progress output that is left (the engine is written already).
const outputStall = 5 * time.Second

// drain waits for the progress output to reach stdout: until it did, the reader stopped
// reading for outputStall, or a signal came; that signal is returned, for the caller to answer.
func drain(w *outstream.Writer, errOut io.Writer, sigs <-chan os.Signal) os.Signal {
	stop, end := stopOnSignal(sigs)
	n, err := w.Close(outputStall, stop)
	late := end()
	if n > 0 && err == nil {
		fmt.Fprintf(errOut, "trtbuild: %d bytes of progress output were not written: stdout is not being read\n", n)
	}
	return late
}

// stopOnSignal watches sigs until end is called: stop is closed when a signal comes, and end
// returns that signal (nil if none came), so that it is answered, not lost.
func stopOnSignal(sigs <-chan os.Signal) (stop <-chan struct{}, end func() os.Signal) {
	stopped := make(chan struct{})
	done := make(chan struct{})
	var got os.Signal
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case sig := <-sigs:
			got = sig
			close(stopped)
		case <-done:
		}
	}()
	return stopped, func() os.Signal {
		close(done)
		<-finished
		return got
	}
}

// signalError is the exit error for a signal that came at a point where there was nothing to
// cancel.
func signalError(sig os.Signal, when string) error {
	return &exitcode.Error{Code: exitcode.ForSignal(sig), Err: fmt.Errorf("%s %s", signalName(sig), when)}
}

func signalName(sig os.Signal) string { return exitcode.SignalName(sig) }

func unwrapSyscall(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if errno == syscall.EPIPE {
			return errors.New("broken pipe")
		}
		return errno
	}
	return err
}

func newRenderer(mode tui.Mode, s *streams, out io.Writer, o *buildOptions, c progress.Controls) progress.Renderer {
	switch mode {
	case tui.ModeJSON:
		return tui.NewJSON(out, nil)
	case tui.ModeQuiet:
		return tui.Quiet{}
	case tui.ModeTTY:
		return tui.NewTTY(s.OutFile, s.In, tui.TTYOptions{
			Controls: c, Verbose: o.verbose, Color: tui.ColorFromEnv(s.Getenv, true), Getenv: s.Getenv,
		})
	default:
		// Plain text is for logs: colour only when the user forces it (CLICOLOR_FORCE).
		return tui.NewPlain(out, tui.PlainOptions{Verbose: o.verbose, Color: tui.ColorFromEnv(s.Getenv, false)})
	}
}

func resolveModel(o *buildOptions, args []string) (string, error) {
	model := o.onnx
	switch {
	case len(args) > 1:
		return "", exitcode.Usagef("expected one model, got %d arguments (%s); usage: trtbuild [flags] MODEL.onnx", len(args), strings.Join(args, " "))
	case len(args) == 1 && model != "" && args[0] != model:
		return "", exitcode.Usagef("two models given (%s and --onnx %s); give one", args[0], model)
	case len(args) == 1:
		model = args[0]
	}
	if model == "" {
		return "", exitcode.Usagef("no model given; usage: trtbuild [flags] MODEL.onnx (try: trtbuild --backend sim testdata/models/convnet.onnx)")
	}
	if err := checkInputFile("model", model); err != nil {
		return "", err
	}
	return model, nil
}

func resolveEngine(model, engine string) (string, error) {
	if engine == "" {
		ext := filepath.Ext(model)
		if strings.EqualFold(ext, ".onnx") {
			engine = strings.TrimSuffix(model, ext) + ".engine"
		} else {
			engine = model + ".engine"
		}
	}
	if st, err := os.Stat(engine); err == nil && st.IsDir() {
		return "", exitcode.Usagef("engine path %s is a directory; give a file name with -o", q(engine))
	}
	if sameFile(model, engine) {
		return "", exitcode.Usagef("engine path %s is the model itself; choose another path with -o", q(engine))
	}
	return engine, nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// errNoTensorRT is the one-line explanation for a binary built without TensorRT.
var errNoTensorRT = "this trtbuild was built without TensorRT; build it with `go build -tags tensorrt ./cmd/trtbuild` (see README, \"Building with TensorRT\", or Dockerfile.cuda), or preview the build without a GPU with --backend sim"

func resolveBackend(name string) (string, error) {
	switch name {
	case "auto", "tensorrt":
		// Whether TensorRT loads is found out by the worker, which alone loads it: with auto
		// as with tensorrt, a TensorRT that cannot be loaded fails the build (exit 2) with the
		// places searched, never a silent simulated build.
		if !cgo.Available(cgo.BackendTensorRT) {
			return "", exitcode.Usagef("%s", errNoTensorRT)
		}
		return "tensorrt", nil
	case "sim":
		return "sim", nil
	}
	return "", exitcode.Usagef("invalid --backend %q: use auto, tensorrt or sim", name)
}

func buildRequest(o *buildOptions, model, backend string, flags []shapeFlags) (worker.Request, error) {
	req := worker.Request{
		Model: model, Backend: backend, LogSeverity: progress.SeverityWarning, Device: o.device,
		FP16: o.fp16, BF16: o.bf16, INT8: o.int8, FP8: o.fp8,
		NoTF32: o.noTF32, Refit: o.refit, StripWeights: o.stripWeights, VersionCompatible: o.versionCompatible,
		ExcludeLeanRuntime: o.excludeLeanRuntime, SparseWeights: o.sparse,
		OptLevel: o.optLevel, MaxAuxStreams: o.maxAuxStreams, HardwareCompat: o.hardwareCompat,
		Plugins: o.plugins, NoTimingCache: o.noTimingCache, TimingCache: o.timingCache, StrictCache: o.strictCache,
		NoBuiltinPlugins: o.noBuiltinPlugins, KeepFP32: o.keepFP32,
	}
	lib, err := resolveTensorRTLib(o.tensorrtLib)
	if err != nil {
		return req, err
	}
	req.TensorRTLib = lib
	if o.verbose {
		req.LogSeverity = progress.SeverityVerbose
	}
	if err := checkPlugins(o.plugins); err != nil {
		return req, err
	}
	if o.noTimingCache && o.timingCache != "auto" {
		return req, exitcode.Usagef("give --timing-cache %s or --no-timing-cache, not both", o.timingCache)
	}
	if o.killAfter <= 0 {
		return req, exitcode.Usagef("invalid --kill-after %s: give how long a cancelled build may take to stop, like 30s", o.killAfter)
	}
	if o.timeout < 0 || o.stallTimeout < 0 {
		return req, exitcode.Usagef("invalid time budget: --timeout and --stall-timeout take a positive duration, like 20m")
	}
	if o.device < 0 {
		return req, exitcode.Usagef("invalid --device %d: use a CUDA device number, 0 or more", o.device)
	}
	switch o.hardwareCompat {
	case "none", "ampere+", "same-compute-capability":
	case "ampere_plus", "ampereplus":
		req.HardwareCompat = "ampere+"
	case "sameComputeCapability", "same_compute_capability":
		req.HardwareCompat = "same-compute-capability"
	default:
		return req, exitcode.Usagef("invalid --hardware-compat %q: use none, ampere+ or same-compute-capability", o.hardwareCompat)
	}
	if o.fp8 && (req.HardwareCompat == "ampere+" || (req.HardwareCompat == "" && o.hardwareCompat == "ampere+")) {
		// TensorRT 10's FP8 flag "is not supported when HardwareCompatibilityLevel::kAMPERE_PLUS
		// is enabled" (NvInfer.h); TensorRT 11 has no FP8 flag at all.
		return req, exitcode.Usagef("--fp8 cannot be combined with --hardware-compat ampere+ (TensorRT does not support it); drop one of them")
	}
	if len(o.keepFP32) > 0 && !o.fp16 && !o.bf16 {
		return req, exitcode.Usagef("--keep-fp32 keeps nodes in float32 when --fp16 or --bf16 converts the model; add one of them, or drop --keep-fp32")
	}
	if o.excludeLeanRuntime && !o.versionCompatible {
		return req, exitcode.Usagef("--exclude-lean-runtime needs --version-compatible")
	}
	if o.stripWeights && !o.refit {
		// TensorRT strips weights only from refittable engines.
		req.Refit = true
	}
	if o.workspace != "" {
		ws, err := parseSize(o.workspace, false)
		if err != nil {
			return req, exitcode.Usagef("invalid --workspace: %v", err)
		}
		req.WorkspaceBytes = ws
	}
	if o.memPoolSize != "" {
		ws, pools, err := parseMemPoolSize(o.memPoolSize)
		if err != nil {
			return req, exitcode.Usagef("invalid %v", err)
		}
		if ws != 0 && o.workspace != "" {
			return req, exitcode.Usagef("give the workspace once: --workspace or --memPoolSize workspace:SIZE, not both")
		}
		if ws != 0 {
			req.WorkspaceBytes = ws
		}
		req.MemPools = pools
	}
	for i, f := range flags {
		profile, err := shapeProfile(f)
		if err != nil {
			if len(flags) > 1 {
				return req, exitcode.Usagef("profile %d: %v", i, err)
			}
			return req, err
		}
		if len(profile.Inputs) > 0 || len(flags) > 1 {
			req.Profiles = append(req.Profiles, profile)
		}
	}
	sim, err := simConfig(o.sim)
	if err != nil {
		return req, err
	}
	req.Sim = sim
	return req, nil
}

func shapeProfile(f shapeFlags) (worker.Profile, error) {
	inputs, _, err := shapes.Profile(f.shapes, f.min, f.opt, f.max)
	if err != nil {
		return worker.Profile{}, exitcode.Usagef("invalid shapes: %v", err)
	}
	var p worker.Profile
	for _, in := range inputs {
		p.Inputs = append(p.Inputs, worker.ShapeRange{Name: in.Name, Min: in.Min, Opt: in.Opt, Max: in.Max})
	}
	return p, nil
}

func simConfig(f simFlags) (worker.SimConfig, error) {
	// Written so that NaN fails too: every comparison with NaN is false.
	if !(f.speed >= minSimSpeed && f.speed <= maxSimSpeed) {
		return worker.SimConfig{}, exitcode.Usagef("invalid --sim-speed %g: use a number from %g to %g, like 1 or 20", f.speed, minSimSpeed, maxSimSpeed)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--sim-threads", f.threads}, {"--sim-tactics", f.tactics}, {"--sim-iterations", f.iterations}} {
		if n.v < 0 || n.v > 256 {
			return worker.SimConfig{}, exitcode.Usagef("invalid %s %d: use 1 to 256", n.name, n.v)
		}
	}
	step := f.step
	if step == 0 {
		step = time.Duration(float64(defaultSimStep) / f.speed)
		if step <= 0 {
			step = time.Nanosecond
		}
	}
	return worker.SimConfig{
		Threads: f.threads, Tactics: f.tactics, Iterations: f.iterations, Step: step,
		FailPhase: f.failPhase, EarlyPhase: f.earlyPhase, AbortPhase: f.abortPhase,
		Silent: f.silent, LongStep: f.longStep, IgnoreCancel: f.ignoreCancel, Seed: f.seed,
		Flood: f.flood, PreSilent: f.preSilent, PostSilent: f.postSilent, SkipFinishOnStop: f.skipFinish,
		FP16FailNode: f.fp16FailNode,
	}, nil
}

func precisionName(o *buildOptions) string {
	var names []string
	for _, p := range []struct {
		on   bool
		name string
	}{{o.fp16, "fp16"}, {o.bf16, "bf16"}, {o.int8, "int8"}, {o.fp8, "fp8"}} {
		if p.on {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return "as typed in the model"
	}
	return strings.Join(names, "+")
}

// workerCommand returns the argv that starts a worker of this same binary.
func workerCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the trtbuild executable to start the build worker: %w", err)
	}
	return []string{exe, worker.Subcommand}, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// buildSettings is the request as the report and trace record it, so that a build can be
// repeated: every setting, without the model's layer names (which only the simulated builder
// uses, and which the model has).
func buildSettings(req worker.Request) json.RawMessage {
	req.NodeNames = nil
	b, err := json.Marshal(req)
	if err != nil {
		return nil
	}
	return b
}

// tickFor is how often the session ticks the renderer: the live view takes its snapshots of
// the build's state on the tick, ten a second; the other modes only need heartbeats.
func tickFor(mode tui.Mode) time.Duration {
	if mode == tui.ModeTTY {
		return tui.TickEvery()
	}
	return time.Second
}
