package builder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
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

// ErrNotCached is the error of Plan.Lookup when the engine cache has no engine for the build
// (and of Run with Options.CacheOnly): nothing was built or written.
var ErrNotCached = errors.New("the engine cache has no engine for this build")

// Run prepares the build o describes (Prepare: every rule, with the message that says what to
// fix), looks it up in the engine cache, and otherwise builds it in a worker process,
// committing the engine and its manifest only when the build succeeded, and storing it in the
// engine cache; with o.CacheOnly it ends at the lookup (ErrNotCached on a miss). ctx ending
// cancels the build as a first signal does (the builder stops at its next step boundary;
// KillAfter later the worker is killed). The error carries the exit code (internal/exitcode);
// it is nil only when the engine is in place.
func Run(ctx context.Context, o Options, fe Frontend) (progress.Result, error) {
	if fe.Began.IsZero() {
		fe.Began = time.Now() // --timeout counts from here: the checks and the engine cache are in it
	}
	p, err := Prepare(o, nil)
	if err != nil {
		return progress.Result{}, err
	}
	defer p.Close()
	if o.CacheOnly {
		return p.Lookup(ctx, fe).Wait()
	}
	return p.Start(ctx, fe).Wait()
}

// Plan is one build as Prepare decided it, before anything starts: the model (held open: every
// check, the key and the build read that one opening), the engine, the request its worker gets
// (every setting, the model's preflight applied), the files it writes and the warnings to
// show. Key computes its build key; Lookup answers it from the engine cache; Start builds it.
// A plan may be looked up and started more than once, one at a time (a service looks a
// submission up, queues it, then builds it on the GPU it got: SetDevice), and is released with
// Close once nothing runs.
type Plan struct {
	// Model and Engine are the model's path and the engine's; Request what the build's worker
	// is sent; Warnings the checks' warnings, shown on Frontend.Diagnostics when it first starts.
	Model, Engine string
	Request       worker.Request
	Warnings      []string

	o     Options
	env   *Env
	src   *onnx.Source
	nodes int // the model's main-graph nodes (0 when it was not read)
	paths *buildPaths

	mu     sync.Mutex
	hashes *buildkey.ModelHashes // the model's, once hashed
	warned bool
}

// Prepare applies every rule to o, as a build does first (the same messages, exit status 2 for
// bad options), and decides the build: the model, the engine, the worker's request (the
// model's preflight included) and every file it writes, with the warnings to show. It starts
// nothing and writes nothing. env answers what the plan asks of the machine (its target); nil
// is an Env of the plan's own. The plan holds the model open until Close.
func Prepare(o Options, env *Env) (_ *Plan, err error) {
	if env == nil {
		env = NewEnv()
	}
	env.plans.Add(1)
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
	req, m, warnings, err := prepareRequest(&o, src)
	if err != nil {
		return nil, err
	}
	if err := applyScenario(o.Sim.Scenario, req.Backend, o.Sim.Speed, o.Sim, &req); err != nil {
		return nil, err
	}
	paths, cacheWarnings, err := checkBuildPaths(&o, src, engine, derived, req.Backend, m)
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
	return &Plan{Model: src.Path(), Engine: engine, Request: req, Warnings: append(warnings, cacheWarnings...),
		o: o, env: env, src: src, nodes: nodes, paths: paths}, nil
}

// Check applies every rule to o, as Run does first, and returns the plan of its build, closed
// (its fields say what the build would do). It writes nothing.
func Check(o Options) (*Plan, error) {
	p, err := Prepare(o, nil)
	if err != nil {
		return nil, err
	}
	p.Close()
	return p, nil
}

// SetDevice makes the plan's build run on the CUDA device d (its key that device's target):
// for a front end that picks a GPU after planning. Not while the plan is looked up or started.
func (p *Plan) SetDevice(d int) {
	p.o.Device, p.Request.Device = d, d
}

// Changed says, with an error that says how, whether the model the plan holds is no longer the
// file at its path (replaced, rewritten, moved) since the plan opened it: a build of it would be
// thrown away at its end (commitBuilt), so a front end that planned long before it builds (a
// queue) plans again.
func (p *Plan) Changed() error { return p.src.Changed() }

// Close releases the model the plan holds. A key computed in the background of a build holds it
// until the key is done.
func (p *Plan) Close() error { return p.src.Close() }

// Key computes the plan's build key on its device: the target asked of its Env, the model
// hashed once per plan.
func (p *Plan) Key() (BuildKey, error) { return p.KeyFor(p.Request.Device) }

// KeyFor is the plan's build key were it built on device: what a front end that picks the GPU
// later (a service) looks up and shares by. Safe to call concurrently, but not with SetDevice.
func (p *Plan) KeyFor(device int) (BuildKey, error) {
	k, err := p.keyedOn(device, nil, "")
	if err != nil {
		return BuildKey{}, err
	}
	return BuildKey{Key: k.key, Parts: k.parts}, nil
}

// Lookup starts the plan's engine cache lookup: the handle's result is the hit's (the engine
// in place), or ErrNotCached when the cache has no engine for it (nothing was written).
func (p *Plan) Lookup(ctx context.Context, fe Frontend) *Handle {
	return p.start(ctx, fe, true)
}

// Start starts the plan's build: the engine cache's answer when it has the engine, else a build
// in a worker process. The handle cancels, stops and waits for it.
func (p *Plan) Start(ctx context.Context, fe Frontend) *Handle {
	return p.start(ctx, fe, false)
}

func (p *Plan) start(ctx context.Context, fe Frontend, lookupOnly bool) *Handle {
	if fe.Began.IsZero() {
		fe.Began = time.Now()
	}
	h := newHandle(ctx)
	go func() {
		defer h.finish()
		h.res, h.err = p.run(h, fe, lookupOnly)
	}()
	return h
}

// Handle is a build that was started (Plan.Start, Plan.Lookup): Cancel stops it at its next
// step boundary, Stop at once; Wait returns its outcome. Safe for concurrent use.
type Handle struct {
	ctx    context.Context // ends on Cancel, Stop or the caller's context
	cancel context.CancelFunc
	kill   chan struct{} // closed by Stop
	stop   sync.Once
	done   chan struct{}
	res    progress.Result
	err    error
	key    string // the key its engine was described under (Key)
}

// Key is the build key the engine was described and stored under, once Wait returned: a cache
// hit's key, or the key of what built it (the worker's target, when the Env's answer was
// stale); "" when there is none (nothing built, no key computed).
func (h *Handle) Key() string {
	<-h.done
	return h.key
}

func newHandle(parent context.Context) *Handle {
	ctx, cancel := context.WithCancel(parent)
	return &Handle{ctx: ctx, cancel: cancel, kill: make(chan struct{}), done: make(chan struct{})}
}

// Cancel asks the build to stop at its next step boundary (the first rung of the cancel ladder:
// the builder finishes the step it is in, which can take a while; the worker is killed if it
// has not stopped within KillAfter). Before the build started, nothing is started. Cancelling
// again changes nothing: Stop is the next rung.
func (h *Handle) Cancel() { h.cancel() }

// Stop ends the build now: the worker is killed (the second rung). Nothing is kept.
func (h *Handle) Stop() {
	h.cancel()
	h.stop.Do(func() { close(h.kill) })
}

// Wait waits for the build to end and returns its result; the error is nil only when the engine
// is in place, and carries the exit code (internal/exitcode).
func (h *Handle) Wait() (progress.Result, error) {
	<-h.done
	return h.res, h.err
}

// Done is closed when the build has ended.
func (h *Handle) Done() <-chan struct{} { return h.done }

func (h *Handle) finish() {
	h.cancel()
	close(h.done)
}

// run looks the plan up in the engine cache and, on a miss (unless lookupOnly), builds it.
func (p *Plan) run(h *Handle, fe Frontend, lookupOnly bool) (progress.Result, error) {
	began := fe.Began
	if fe.Diagnostics == nil {
		fe.Diagnostics = io.Discard
	}
	if fe.NewRenderer == nil {
		fe.NewRenderer = func(progress.Controls) progress.Renderer { return progress.Discard{} }
	}
	p.mu.Lock()
	if !p.warned {
		p.warned = true
		for _, w := range p.Warnings {
			fmt.Fprintln(fe.Diagnostics, "trtbuild: warning: "+pathtext.Line(w))
		}
	}
	p.mu.Unlock()
	o := &p.o
	exe, err := workerCommand()
	if err != nil {
		return progress.Result{}, err
	}
	sigs := fe.Signals
	// A signal or a cancel during the checks: stop before anything is started or written.
	select {
	case sig := <-sigs:
		return progress.Result{}, exitcode.SignalError(sig, "before the build started; nothing was written")
	default:
	}
	if h.ctx.Err() != nil {
		return progress.Result{}, &exitcode.Error{Code: exitcode.Interrupted, Err: errors.New("cancelled before the build started; nothing was written")}
	}
	model, engine, req := p.Model, p.Engine, p.Request

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
	info := progress.BuildInfo{Model: model, Engine: engine, Backend: req.Backend, Precision: precisionName(o), Layers: p.nodes, Version: Version,
		Command: o.Command, Settings: buildSettings(req)}
	said := newWorkerTarget()
	defer func() {
		select {
		case <-said.ended:
		default:
			said.end(false) // the build did not run: the key is not needed
		}
	}()
	ctl := watchCacheWork(h.ctx, sigs, began, o.Timeout)
	keyed, hit, err := p.engineCacheLookup(ctl.ctx, &fe, info, files, outs, said)
	defer keyed.close()
	when := "during the engine cache lookup; nothing was built"
	if hit.Cached {
		when = fmt.Sprintf("as the engine was copied from the engine cache; the engine %s is in place", q(engine))
	}
	if stop := ctl.end(when); stop != nil {
		return hit, stop
	}
	if err != nil || hit.Cached {
		if hit.Cached {
			h.key = keyed.knownKey()
		}
		return hit, err
	}
	if lookupOnly {
		return progress.Result{}, ErrNotCached
	}
	if err := p.src.Changed(); err != nil {
		// Planned long ago (queued), and the model is no longer the one checked and keyed:
		// a build would be thrown away at its end.
		msg := strings.NewReplacer("changed while it was being built", "changed after the build was planned",
			"changed while the model was being built", "changed after the build was planned").Replace(pathtext.Line(err.Error()))
		return progress.Result{Status: progress.StatusFailed, Error: msg + "; nothing was built", Hint: "build again once the model is in place"},
			exitcode.Wrap(exitcode.Failed, errors.New(msg))
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
	view := fe
	view.NewRenderer = func(c progress.Controls) progress.Renderer { return outs.wrap(fe.NewRenderer(c)) }
	res, err := runSession(Config{
		Frontend:     view,
		Worker:       worker.StartOptions{Command: exe, Request: workerReq, ModelFolder: folder, ModelDir: p.src.Dir()},
		Engine:       engine,
		Output:       files.engine,
		Commit:       func(res *progress.Result) error { return commitBuilt(p.src, keyed, files, res) },
		Info:         info,
		Stop:         h.ctx.Done(),
		Kill:         h.kill,
		Loaded:       said.loaded,
		Timeout:      o.Timeout,
		StallTimeout: o.StallTimeout,
		KillAfter:    o.KillAfter,
	})
	said.end(res.Status == progress.StatusBuilt)
	if res.Status == progress.StatusBuilt {
		keyed = p.rekey(keyed, said, fe.Diagnostics)
	}
	late := outs.finish(fe.Diagnostics, sigs)
	if res.Status == progress.StatusBuilt && exitcode.Of(err) == exitcode.OK {
		ctl := watchCacheWork(h.ctx, sigs, began, o.Timeout)
		if late != nil {
			ctl.cancel(errors.New(exitcode.SignalName(late))) // the manifest, but no store: the user asked to stop
		}
		keyed.afterBuild(ctl.ctx, fe.Diagnostics, res, files)
		h.key = keyed.knownKey()
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

// openModel opens the model, once for everything a build reads of it (onnx.Source): it must be
// given and be a readable regular file.
func openModel(model string) (*onnx.Source, error) {
	if model == "" {
		return nil, exitcode.Usagef("no model given").Hintf("usage: trtbuild [flags] MODEL.onnx (try: trtbuild --backend sim testdata/models/convnet.onnx)")
	}
	src, err := onnx.OpenSource(model)
	if err != nil {
		return nil, regfile.InputError("model", model, err)
	}
	return src, nil
}

// RefusalResult is the result line of a build that never started: what is wrong and what to
// do, as err carries them (exitcode.Split).
func RefusalResult(err error) progress.Result {
	res := progress.Result{Status: progress.StatusFailed}
	res.Error, res.Hint = exitcode.Split(err)
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
