package builder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// Version is trtbuild's version, recorded in manifests and reports; set at link time with
// -ldflags "-X github.com/trtbuild/trtbuild/internal/builder.Version=…".
var Version = "dev"

// Frontend is what Run needs of the program that shows a build: how to make its renderer,
// how to show an engine cache hit, where warnings go, and the signals that cancel it.
type Frontend struct {
	// NewRenderer makes the renderer of a build that starts; it receives the session's
	// controls for key handling. nil shows nothing.
	NewRenderer func(progress.Controls) progress.Renderer
	// Cached shows an engine cache hit, which starts no build: the build's description, when
	// the lookup began, the hit's log line and the result. nil shows nothing.
	Cached func(info progress.BuildInfo, began time.Time, hit []progress.Event, res progress.Result) error
	// Diagnostics receives warnings and problems that do not change the outcome, one
	// "trtbuild: warning: …" line each (stderr).
	Diagnostics io.Writer
	// Notices, when not nil, also receives cancel and stop messages as plain lines (stderr,
	// when the renderer's output is not on the terminal).
	Notices io.Writer
	// Signals delivers SIGINT, SIGTERM and SIGHUP, each a rung of the cancel ladder, and
	// SIGQUIT, which stops the worker at once; nil means none.
	Signals <-chan os.Signal
	// Tick is how often the renderer's clock advances; zero means one second.
	Tick time.Duration
	// Began is when the time budget started counting; zero means when Run starts.
	Began time.Time
	// CancelMessage, when not empty, replaces the notice of a first cancel, whose default
	// speaks of Ctrl-C (a service says how its clients stop a build now).
	CancelMessage string
}

// ErrNotCached is Run's error for Options.CacheOnly when the engine cache has no engine for
// the build: nothing was built or written.
var ErrNotCached = errors.New("the engine cache has no engine for this build")

// Run checks o (every rule, with the message that says what to fix), plans the build (the
// model's preflight, the files it writes, its key), looks it up in the engine cache, and
// otherwise builds it in a worker process, committing the engine and its manifest only when
// the build succeeded, and storing it in the engine cache. ctx ending cancels the build as a
// first signal does (the builder stops at its next step boundary; KillAfter later the worker
// is killed). The error carries the exit code (internal/exitcode); it is nil only when the
// engine is in place.
func Run(ctx context.Context, o Options, fe Frontend) (progress.Result, error) {
	began := fe.Began // --timeout counts from here: the engine cache's work is in the budget
	if began.IsZero() {
		began = time.Now()
	}
	if fe.Diagnostics == nil {
		fe.Diagnostics = io.Discard
	}
	if fe.NewRenderer == nil {
		fe.NewRenderer = func(progress.Controls) progress.Renderer { return progress.Discard{} }
	}
	p, err := planBuild(&o)
	if err != nil {
		return progress.Result{}, err
	}
	defer p.src.Close()
	for _, w := range p.warnings {
		fmt.Fprintln(fe.Diagnostics, "trtbuild: warning: "+pathtext.Line(w))
	}
	exe, err := workerCommand()
	if err != nil {
		return progress.Result{}, err
	}
	sigs := fe.Signals
	// A signal during the checks: stop before anything is started or written.
	select {
	case sig := <-sigs:
		return progress.Result{}, exitcode.SignalError(sig, "before the build started; nothing was written")
	default:
	}
	model, engine, req := p.model, p.engine, p.req

	outs, err := openOutputs(outputFiles{report: o.Report, trace: o.Trace}, p.paths)
	if err != nil {
		return progress.Result{}, err
	}
	defer outs.cleanup()
	files, err := createBuildFiles(p.paths)
	if err != nil {
		return progress.Result{}, err
	}
	defer files.cleanup()
	info := progress.BuildInfo{Model: model, Engine: engine, Backend: req.Backend, Precision: precisionName(&o), Layers: p.nodes, Version: Version,
		Command: o.Command, Settings: buildSettings(req)}
	ctl := watchCacheWork(ctx, sigs, began, o.Timeout)
	keyed, hit, err := engineCacheLookup(ctl.ctx, &fe, &o, p.src, req, info, files, outs)
	defer keyed.close()
	when := "during the engine cache lookup; nothing was built"
	if hit.Cached {
		when = fmt.Sprintf("as the engine was copied from the engine cache; the engine %s is in place", q(engine))
	}
	if stop := ctl.end(when); stop != nil {
		return hit, stop
	}
	if err != nil || hit.Cached {
		return hit, err
	}
	if o.CacheOnly {
		return progress.Result{}, ErrNotCached
	}
	// The worker works in the folder the model was opened in, held open, and reads the model
	// by its name there: a folder or link swapped on the model's path meanwhile cannot give it
	// another model than the one checked, hashed and keyed (Source.Changed pins the name).
	folder, err := p.src.OpenFolder()
	if err != nil {
		return progress.Result{}, fmt.Errorf("opening the folder of the model %s: %w", q(model), err)
	}
	defer folder.Close()
	workerReq := req
	workerReq.Model = p.src.Base()
	res, err := runSession(Config{
		Worker:        worker.StartOptions{Command: exe, Request: workerReq, ModelFolder: folder, ModelDir: p.src.Dir()},
		Engine:        engine,
		Output:        files.engine,
		Commit:        func(res *progress.Result) error { return commitBuilt(p.src, keyed, files, res) },
		Began:         began,
		Info:          info,
		NewRenderer:   func(c progress.Controls) progress.Renderer { return outs.wrap(fe.NewRenderer(c)) },
		Notices:       fe.Notices,
		Signals:       sigs,
		Stop:          ctx.Done(),
		Timeout:       o.Timeout,
		StallTimeout:  o.StallTimeout,
		KillAfter:     o.KillAfter,
		Tick:          fe.Tick,
		CancelMessage: fe.CancelMessage,
	})
	late := outs.finish(fe.Diagnostics, sigs)
	if res.Status == progress.StatusBuilt && exitcode.Of(err) == exitcode.OK {
		ctl := watchCacheWork(ctx, sigs, began, o.Timeout)
		if late != nil {
			ctl.cancel(errors.New(exitcode.SignalName(late))) // the manifest, but no store: the user asked to stop
		}
		keyed.afterBuild(ctl.ctx, fe.Diagnostics, res, files)
		when := "while the manifest was written"
		if keyed != nil && keyed.cache != nil {
			when += " and the engine stored in the engine cache"
		}
		when += fmt.Sprintf("; the engine %s is built", q(engine))
		if stop := ctl.end(when); stop != nil {
			err = stop
		} else if late != nil {
			err = exitcode.SignalError(late, fmt.Sprintf("after the build; the engine %s is built", q(engine)))
		}
	}
	return res, err
}

// planned is what a build will do, decided before anything starts.
type planned struct {
	model, engine string
	// src is the model, opened once: every check, the key and the pin of commitBuilt read it.
	src      *onnx.Source
	req      worker.Request
	nodes    int // the model's main-graph nodes (0 when it was not read)
	paths    *buildPaths
	warnings []string
}

// commitBuilt puts the engine the worker built in place, unless the model it read by its name
// in the held folder may not be the one src holds, which the key and the preflight read (the
// pin, Source.Changed; with an engine cache, whose entries others take by the key, the bytes
// hashed again too): then the build fails with what changed, and nothing is written (the
// right engine or none).
func commitBuilt(src *onnx.Source, keyed *keyedBuild, files *buildFiles, res *progress.Result) error {
	err := src.Changed()
	if err == nil && keyed != nil && keyed.cache != nil {
		// The engine goes where other builds take it by its key: the bytes are hashed again.
		err = keyed.sameBytes()
	}
	if err != nil {
		res.Status = progress.StatusFailed
		res.Error = pathtext.Line(err.Error()) + "; the engine built may not be of the model that was checked, so it was not kept"
		res.Hint = "build again once the model is in place"
		return nil
	}
	return files.commitEngine(context.Background())
}

// Plan is a build as Check decides it, before anything starts: the model, the engine, the
// request its worker gets (every setting, the model's preflight applied) and the warnings to
// show.
type Plan struct {
	Model, Engine string
	Request       worker.Request
	Warnings      []string
}

// Check applies every rule to o, as Run does first (the same messages, exit status 2 for bad
// options), and returns the plan of its build. It writes nothing.
func Check(o Options) (Plan, error) {
	p, err := planBuild(&o)
	if err != nil {
		return Plan{}, err
	}
	p.src.Close()
	return Plan{Model: p.model, Engine: p.engine, Request: p.req, Warnings: p.warnings}, nil
}

// planBuild checks o and decides the build: the model, the engine, the worker's request (the
// model's preflight included) and every file it writes, with the warnings to show.
// The model it opens (planned.src) is the caller's to close.
func planBuild(o *Options) (_ *planned, err error) {
	src, err := openModel(o.Model)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			src.Close()
		}
	}()
	engine, derived, err := resolveEngine(src, o.Engine)
	if err != nil {
		return nil, err
	}
	req, m, warnings, err := prepareRequest(o, src)
	if err != nil {
		return nil, err
	}
	if err := applyScenario(o.Sim.Scenario, req.Backend, o.Sim.Speed, o.Sim, &req); err != nil {
		return nil, err
	}
	paths, cacheWarnings, err := checkBuildPaths(o, src, engine, derived, req.Backend, m)
	if err != nil {
		return nil, err
	}
	if _, _, err := checkEngineCache(o.EngineCache); err != nil {
		return nil, err
	}
	nodes := 0
	if m != nil {
		nodes = len(m.Nodes)
	}
	return &planned{model: src.Path(), engine: engine, src: src, req: req, nodes: nodes, paths: paths, warnings: append(warnings, cacheWarnings...)}, nil
}

// openModel opens the model, once for everything a build reads of it (onnx.Source): it must be
// given and be a readable regular file.
func openModel(model string) (*onnx.Source, error) {
	if model == "" {
		return nil, exitcode.Usagef("no model given; usage: trtbuild [flags] MODEL.onnx (try: trtbuild --backend sim testdata/models/convnet.onnx)")
	}
	src, err := onnx.OpenSource(model)
	if err != nil {
		return nil, regfile.InputError("model", model, err)
	}
	return src, nil
}

// RefusalResult is the result line of a build that never started: err's message, split at its
// first "; " into what is wrong and what to do.
func RefusalResult(err error) progress.Result {
	msg := exitcode.OneLine(err)
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

// WorkerSubcommand is the hidden trtbuild command a build's worker process runs.
const WorkerSubcommand = worker.Subcommand

// ServeWorker is the worker process's side of a build: it reads the request from its
// parent, builds, and reports events until the build ends (internal/worker).
func ServeWorker() error { return worker.ServeFiles() }

// TensorRTLibUsage is the help of the flag naming the TensorRT libraries' folder.
var TensorRTLibUsage = "`DIR` holding libnvinfer.so.N, libnvonnxparser.so.N and libnvinfer_plugin.so.N (env " +
	trt.EnvLibDir + "; default: $" + trt.EnvRoot + "/lib, then the system's library search)"
