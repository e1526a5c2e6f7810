package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/probe"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// drainWait bounds how long one Drain call waits for the first event of a batch. Drain sleeps
// until the builder reports or the build ends, so this only bounds how long the loop is away;
// cancel goes straight to the builder from the control goroutine.
const drainWait = time.Second

// ParentGoneGrace is how long a worker whose parent died may take to stop by itself
// (cancel the build, save what the timing cache learned, remove its temporary files) before it
// exits regardless of what the builder is doing. The parent's death is seen at once: the
// control pipe reaches EOF, and the kernel sends SIGTERM (PR_SET_PDEATHSIG, see Start).
//
// With the time to notice the death and to exit, the worker is gone within a second of its
// parent: measured 0.76–0.78 s after the parent's SIGKILL, during a step the builder never
// ends, with two CPU-bound processes on a 2-core machine (scripts/bench/worker-orphan.sh).
//
// On Windows the worker does not get this grace: its job ends it together with its parent
// (see processGroup), so a cancelled build's timing-cache additions are not saved then.
const ParentGoneGrace = 750 * time.Millisecond

// cleanupWait bounds the cleanups before the hard exit: the exit waits for nothing the
// builder, a lock or a disk does.
const cleanupWait = 100 * time.Millisecond

// ServeFiles runs the worker on the channels the parent set up (see the package comment).
// When the parent dies, the worker is gone within ParentGoneGrace, whatever the builder does
// (on Windows at once: its job ends it).
func ServeFiles() error {
	// The C++'s line counts, when built with the gcov tag (scripts/check/shim-coverage.sh): the
	// process leaves through os.Exit, which writes none.
	defer cgo.FlushCoverage()
	events, plan, err := Channels()
	if err != nil {
		return err
	}
	defer events.Close()
	defer plan.Close()
	wd := newWatchdog(func() { os.Exit(int(exitcode.ParentGone)) })
	defer watchParent(wd)()
	return serveWith(os.Stdin, events, plan, wd)
}

// Channels returns the event pipe and the plan file that the parent passed to this worker
// process (see the package comment): fds 3 and 4, or on Windows the inherited handles that
// TRTBUILD_WORKER_HANDLES names. ServeFiles uses them; a stand-in worker in a test can too.
func Channels() (events, plan *os.File, err error) { return inheritedFiles() }

// parentPIDEnv carries the parent's pid to the worker (Start sets it).
const parentPIDEnv = "TRTBUILD_WORKER_PARENT"

// watchdog stops the worker when its parent is gone: it cancels the build and any lock wait at
// once, and after ParentGoneGrace removes the worker's temporary files and calls exit.
type watchdog struct {
	mu       sync.Mutex
	build    *cgo.Build
	gone     bool
	asked    bool // a cancel arrived, perhaps before the build existed
	cleanups []func()
	exit     func() // nil: no hard exit (Serve in tests)
	ctx      context.Context
	cancel   context.CancelFunc
}

func newWatchdog(exit func()) *watchdog {
	ctx, cancel := context.WithCancel(context.Background())
	return &watchdog{exit: exit, ctx: ctx, cancel: cancel}
}

// setBuild registers the running build, cancelling it at once when the parent already left.
func (w *watchdog) setBuild(b *cgo.Build) {
	w.mu.Lock()
	w.build = b
	cancel := w.gone || w.asked
	w.mu.Unlock()
	if cancel {
		b.Cancel()
	}
}

// onExit registers a cleanup that must run also on the hard exit.
func (w *watchdog) onExit(f func()) {
	w.mu.Lock()
	w.cleanups = append(w.cleanups, f)
	w.mu.Unlock()
}

// cancelBuild cancels the build, now or as soon as it exists.
func (w *watchdog) cancelBuild() {
	w.mu.Lock()
	w.asked = true
	b := w.build
	w.mu.Unlock()
	if b != nil {
		b.Cancel()
	}
}

// parentGone is called when the control pipe ends or the parent-death signal arrives.
func (w *watchdog) parentGone() {
	w.mu.Lock()
	if w.gone {
		w.mu.Unlock()
		return
	}
	w.gone = true
	w.mu.Unlock()
	w.cancel()
	w.cancelBuild()
	if w.exit != nil {
		time.AfterFunc(ParentGoneGrace, func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.mu.Lock()
				cleanups := w.cleanups
				w.mu.Unlock()
				for _, f := range cleanups {
					f()
				}
			}()
			select {
			case <-done:
			case <-time.After(cleanupWait):
			}
			w.exit()
		})
	}
}

// serveWith runs one build: it reads the request from ctrl, runs the builder, and writes
// events and a final result line to events. It returns an error only when it could not even
// report (the event pipe is gone or the request is unreadable); build failures are reported as
// result events and return nil. The end of ctrl means the parent died: wd cancels the build.
func serveWith(ctrl io.Reader, events io.Writer, plan *os.File, wd *watchdog) error {
	cr := bufio.NewReader(ctrl)
	line, err := cr.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading the build request: %w", err)
	}
	c, err := decodeControl(line)
	if err != nil {
		return err
	}
	if c.Type != controlBuild || c.Request == nil {
		return fmt.Errorf("first control message is %q, want %q", c.Type, controlBuild)
	}
	req := *c.Request
	w := &eventWriter{w: events}
	if req.ModelFolder != "" {
		// Every other path of the request stays what it named from where the worker started.
		if cwd, err := os.Getwd(); err == nil {
			absolute(&req, cwd)
		}
		if err := enterModelFolder(req.ModelFolder); err != nil {
			return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error()}, 0)
		}
	}

	// Control: cancel on request; the end of the pipe means the parent is gone. Read from the
	// start, so that nothing below (a lock wait, a slow model conversion) can keep a worker
	// alive without a parent.
	go func() {
		for {
			line, err := cr.ReadBytes('\n')
			if err != nil {
				wd.parentGone()
				return
			}
			if c, err := decodeControl(line); err == nil && c.Type == controlCancel {
				wd.cancelBuild()
			}
		}
	}()
	if req.Backend == "tensorrt" {
		loaded, err := loadTensorRT(req, os.Getenv)
		if err != nil {
			return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error(), UsageError: true}, 0)
		}
		w.info(loaded, 0)
		w.tensorRT, w.gpu = describeTarget(req.Device)
		w.loaded(req.Device)
		if err := checkLoadedMinor(req); err != nil {
			return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error(), UsageError: true}, 0)
		}
	} else {
		// A simulated build is a TensorRT build over the stand-in TensorRT compiled into the
		// binary: the same shim, options, conversions and retries as a real one.
		lines, err := installStandIn(req)
		if err != nil {
			return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error(), UsageError: true}, 0)
		}
		w.info(lines, 0)
		w.tensorRT, w.gpu = describeTarget(req.Device)
		w.tensorRT += " (simulated)"
	}

	notes, conv, cleanup, err := precisionPath(&req)
	if err != nil {
		return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error()}, 0)
	}
	wd.onExit(cleanup)
	defer cleanup()
	w.warn(notes, 0)

	cache, warnings, err := openCache(wd.ctx, req)
	if err != nil {
		return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error()}, 0)
	}
	w.warn(warnings, 0)
	s := &server{w: w, wd: wd, plan: plan, cache: cache, req: req, resolver: progress.NewResolver(), convert: conv}
	if conv == nil {
		return w.result(s.build(), s.last)
	}
	// A converted (TensorRT 11 --fp16/--bf16) build: rebuilt once when TensorRT has no
	// low-precision kernel for a node (see buildKeepingFP32).
	if _, err := buildKeepingFP32(s, req.KeepFP32); err != nil {
		return w.result(progress.Result{Status: progress.StatusFailed, Error: err.Error()}, s.last)
	}
	return w.result(s.res, s.last)
}

// server runs the build attempts of one request: one, or two when a converted build is
// rebuilt with a node kept in float32 (it implements keepFP32Builder). All attempts write to
// the same event stream, plan file and timing cache:
//   - the stream is one build to the parent: phase IDs continue (one Resolver), and each
//     attempt's clock continues where the previous attempt's newest event was, so times never
//     go backwards; the phases an attempt left open are finished (early) before the next
//     attempt's first phase starts, so the parent's tree shows the second attempt's root
//     phases after the first's, and nothing of the first still running;
//   - the plan file is emptied before each attempt;
//   - what an attempt learned is merged into the timing cache file before the next attempt
//     starts, and the next attempt loads the merged cache: a retry re-times only what the
//     kept node changed, and a retry that fails or is cancelled loses nothing.
type server struct {
	w        *eventWriter
	wd       *watchdog
	plan     *os.File
	cache    *cacheFile
	req      Request
	resolver *progress.Resolver
	convert  converter
	attempts int
	offset   time.Duration // added to the current attempt's event times
	last     time.Duration // time of the newest event written, on the stream's clock
	res      progress.Result
}

// Convert implements keepFP32Builder: it converts the model (the simulated builder gets the
// keep list through its options instead) and says how.
func (s *server) Convert(keep []string) (string, error) {
	model, notes, err := s.convert(keep)
	if err != nil {
		return "", err
	}
	s.w.warn(notes, s.last)
	s.req.Model, s.req.KeepFP32 = model, keep
	return model, nil
}

// Build implements keepFP32Builder: it runs one attempt and returns its error when it failed.
func (s *server) Build(model string) (string, error) {
	s.req.Model = model
	s.res = s.build()
	if s.res.Status == progress.StatusFailed {
		return s.res.Error, nil
	}
	return "", nil
}

// Retry implements keepFP32Builder: the note goes out as a warning before the second attempt.
func (s *server) Retry(note string) {
	s.w.warn([]string{note}, s.last)
	_ = s.w.flush()
}

// build runs one build attempt of s.req and returns its result; the caller writes the last
// attempt's result event.
func (s *server) build() progress.Result {
	w, wd := s.w, s.wd
	if s.attempts > 0 {
		if _, err := s.plan.Seek(0, io.SeekStart); err != nil {
			return progress.Result{Status: progress.StatusFailed, Error: fmt.Sprintf("emptying the plan file for the rebuild: %v", err)}
		}
		if err := s.plan.Truncate(0); err != nil {
			return progress.Result{Status: progress.StatusFailed, Error: fmt.Sprintf("emptying the plan file for the rebuild: %v", err)}
		}
		for _, e := range s.resolver.FinishAll(s.last) {
			w.add(&e)
		}
		s.offset = s.last
	}
	s.attempts++
	opts, err := nativeOptions(s.req, s.plan)
	if err != nil {
		return progress.Result{Status: progress.StatusFailed, Error: err.Error()}
	}
	cache, warnings := s.cache.forBuild(s.wd.ctx)
	s.w.warn(warnings, s.last)
	opts.TimingCache = cache
	b, err := cgo.NewBuild(backendOf(s.req.Backend), opts)
	if err != nil {
		// An option the builder refuses before building is the user's to change: exit 2.
		var nerr *cgo.Error
		usage := errors.As(err, &nerr) && (nerr.Code == cgo.CodeInvalidArgument || nerr.Code == cgo.CodeUnsupported)
		return progress.Result{Status: progress.StatusFailed, Error: err.Error(), UsageError: usage}
	}
	defer b.Close()
	wd.setBuild(b)

	type outcome struct {
		res cgo.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// TensorRT and CUDA keep per-thread state (the current device); the whole build runs on
		// this one OS thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		res, err := b.Run()
		done <- outcome{res, err}
	}()

	// The resolver turns names into phase IDs; the parent's tree derives everything else (such
	// as whether a phase finished early) from the events, so the worker keeps no tree.
	var raw []cgo.RawEvent
	var dropped cgo.Drops
	for {
		var finished bool
		raw, finished, dropped, err = b.Drain(raw, drainWait)
		if err != nil {
			b.Cancel()
			w.fail(err)
		}
		for i := range raw {
			raw[i].Time += s.offset
			if e, ok := resolve(s.resolver, &raw[i]); ok {
				w.add(&e)
				s.last = max(s.last, e.Time)
			}
		}
		if w.flush() != nil {
			b.Cancel() // nobody is listening any more
		}
		if finished || err != nil {
			break
		}
	}
	out := <-done

	res := progress.Result{Status: progress.StatusBuilt, DroppedSteps: s.res.DroppedSteps + dropped.Steps}
	if note := dropNote(dropped); note != "" {
		w.warn([]string{note}, s.last)
	}
	res.EngineBytes = int64(out.res.PlanBytes)
	res.CacheHits, res.CacheMisses, res.CacheUsed = out.res.CacheHits, out.res.CacheMisses, out.res.TimingCacheUsed
	res.CancelSeen = out.res.CancelSeen
	var nerr *cgo.Error
	switch {
	case out.err == nil:
	case errors.As(out.err, &nerr) && nerr.Code == cgo.CodeCancelled:
		res.Status = progress.StatusCancelled
	case errors.As(out.err, &nerr) && nerr.Code == cgo.CodeCacheRejected:
		// --strict-cache: the builder refused the given cache before building.
		res.Status, res.Error = progress.StatusFailed, s.cache.refused(nerr.Message)
	default:
		res.Status = progress.StatusFailed
		res.Error = out.err.Error()
	}
	// Save what the build learned, also when it was cancelled or failed. TensorRT's merge
	// selects the device on the calling thread, as the build did.
	saved := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		warnings, err := s.cache.save(wd.ctx, b)
		w.warn(warnings, s.last)
		saved <- err
	}()
	if err := <-saved; err != nil {
		if res.Status == progress.StatusBuilt {
			res.Status, res.Error = progress.StatusFailed, err.Error()
		} else {
			w.add(&progress.Event{Type: progress.EventLog, Time: s.last, Severity: progress.SeverityError, Message: err.Error()})
		}
	}
	return res
}

func resolve(r *progress.Resolver, ev *cgo.RawEvent) (progress.Event, bool) {
	switch ev.Kind {
	case cgo.EventPhaseStart:
		return r.Start(ev.Time, ev.Name, ev.Parent, ev.HasParent, ev.Steps, ev.Thread), true
	case cgo.EventStep:
		return r.Step(ev.Time, ev.Name, ev.Step, ev.Thread)
	case cgo.EventPhaseFinish:
		return r.Finish(ev.Time, ev.Name, ev.Thread)
	case cgo.EventLog:
		sev := progress.Severity(ev.Severity)
		if sev < progress.SeverityInternalError || sev > progress.SeverityVerbose {
			sev = progress.SeverityInfo
		}
		return progress.Event{Type: progress.EventLog, Time: ev.Time, Severity: sev, Message: ev.Name}, true
	}
	return progress.Event{}, false
}

// dropNote says what the worker's event queue dropped because the events were not read fast
// enough, or "" when it dropped nothing.
func dropNote(d cgo.Drops) string {
	if d.Total() == 0 {
		return ""
	}
	return "the builder reported faster than its progress was read, so the worker dropped " + d.String() +
		"; the phase tree is complete (to keep every line, read the output faster, e.g. --progress json to a file)"
}

// backendOf is the backend of the request's: the TensorRT shim over the loaded TensorRT, or
// over the stand-in (a simulated build).
func backendOf(name string) cgo.Backend {
	if name == "tensorrt" {
		return cgo.BackendTensorRT
	}
	return cgo.BackendSim
}

// eventWriter batches encoded events into one write per drained batch.
type eventWriter struct {
	w   io.Writer
	buf []byte
	err error
	// tensorRT and gpu describe the loaded TensorRT and the device, for the result event.
	tensorRT, gpu string
}

func (w *eventWriter) add(e *progress.Event) { w.buf = progress.AppendJSON(w.buf, e) }

// warn adds a warning log event for each message.
func (w *eventWriter) warn(messages []string, at time.Duration) {
	for _, m := range messages {
		w.add(&progress.Event{Type: progress.EventLog, Time: at, Severity: progress.SeverityWarning, Message: m})
	}
}

// info adds an info log event for each message.
func (w *eventWriter) info(messages []string, at time.Duration) {
	for _, m := range messages {
		w.add(&progress.Event{Type: progress.EventLog, Time: at, Severity: progress.SeverityInfo, Message: m})
	}
}

// loaded says what this worker loaded for a build on device, as its build key names it (the
// TensorRT, its ONNX parser, the GPU: probe.LoadedTarget), in a build event: the parent keys
// the build by it and starts no probe. Nothing is said when it cannot be told (no such GPU):
// the build says why.
func (w *eventWriter) loaded(device int) {
	t, err := probe.LoadedTarget(device)
	if err != nil {
		return
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return
	}
	w.add(&progress.Event{Type: progress.EventBuild, Info: &progress.BuildInfo{Backend: t.Backend, TensorRT: t.TensorRT, GPU: t.GPU, Target: raw}})
}

func (w *eventWriter) fail(err error) {
	w.add(&progress.Event{Type: progress.EventLog, Severity: progress.SeverityError, Message: err.Error()})
}

func (w *eventWriter) flush() error {
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

func (w *eventWriter) result(res progress.Result, at time.Duration) error {
	if res.TensorRT == "" && res.GPU == "" {
		res.TensorRT, res.GPU = w.tensorRT, w.gpu
	}
	w.add(&progress.Event{Type: progress.EventResult, Time: at, Result: &res})
	if err := w.flush(); err != nil {
		return fmt.Errorf("writing events to the parent: %w", err)
	}
	return nil
}
