// Package builder drives one build from the parent's side: it creates the temporary engine file,
// starts the worker, feeds every event to the renderer, turns signals and keys into the cancel
// ladder (first: cancel at the next step boundary; second: stop the worker now), enforces time
// budgets, and commits the engine only when the build succeeded.
package builder

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// Config describes one session: a build's, or the replay of a recorded one (Drive). Its
// Frontend is the one a build was started with (the renderer, notices, signals, tick, when the
// budget began, the cancel message); the session does not use Cached and Diagnostics.
type Config struct {
	Frontend
	// Worker says how to start the worker; its Plan is set by Run.
	Worker worker.StartOptions
	// Engine is the output path. It is replaced only after a successful build.
	Engine string
	// Output, when not nil, is the engine's pending file, created by the caller (which may
	// read it back after the commit); nil means Run creates it for Engine.
	Output *outpath.Pending
	// Commit, when not nil, puts Output in place after a successful build instead of
	// Output.CloseAtomicallyReplace (the caller hashes the engine first, and puts its manifest
	// in place with it); res is the build's result so far.
	Commit func(res *progress.Result) error
	Info   progress.BuildInfo
	// Timeout ends the build after this long, StallTimeout after this long without a progress
	// event; KillAfter is how long a budget's cancel may take before the worker is killed.
	// Zero disables each (KillAfter zero means 30s).
	Timeout, StallTimeout, KillAfter time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Stop, when closed, asks for a cancel as a first signal does (Handle.Cancel, or Drive's
	// caller's context).
	Stop <-chan struct{}
	// Kill, when closed, stops the worker at once (Handle.Stop): the top of the ladder.
	Kill <-chan struct{}
	// Loaded, when not nil, receives what the worker says it loaded (its build event), from
	// the session's goroutine.
	Loaded func(progress.BuildInfo)
}

// cancelMessage is shown on the first Ctrl-C or SIGTERM.
const cancelMessage = "Cancel requested: the builder stops at its next step boundary (this can take a while). Press Ctrl-C again to stop now."

// Source is where a session's events come from: the build worker, or a recorded trace being
// replayed (internal/replay). The session reads the batches from one goroutine.
type Source interface {
	// Events delivers batches of events in order, one of them holding the result event,
	// and is closed when the source has nothing more.
	Events() <-chan []progress.Event
	// Cancel asks the source to stop at its next step boundary; Kill stops it now.
	Cancel() error
	Kill() error
	// Wait returns once the source has ended, after Events was closed.
	Wait() error
}

// recycler is a Source that refills the batches it delivered once the session is done with them.
type recycler interface{ Recycle(batch []progress.Event) }

// workerSource is the build worker as a Source.
type workerSource struct{ *worker.Process }

// Wait implements Source.
func (w workerSource) Wait() error {
	_, err := w.Process.Wait()
	return err
}

type session struct {
	cfg    Config
	src    Source
	proc   *worker.Process // nil when the events come from another source
	render progress.Renderer
	// state is the one keeper of the build's state: every event, notice and the result are
	// applied to it once, before the renderer sees them, and the renderer reads it.
	state    *progress.State
	controls chan struct{}

	start        time.Time
	lastProgress time.Time
	cancelledBy  exitcode.Code // Interrupted, Terminated or TimedOut once a cancel was sent
	cancelAt     time.Time
	forced       bool
	budget       string // why a budget ended the build
}

// RequestCancel implements progress.Controls: the first call cancels, the second stops the worker.
func (s *session) RequestCancel() {
	select {
	case s.controls <- struct{}{}:
	default:
	}
}

// runSession performs the build and returns its result. The error is nil only for a built engine; it
// carries the exit code (see internal/exitcode) and is marked reported when the renderer has
// already shown it.
func runSession(cfg Config) (progress.Result, error) {
	// The engine is written to an unnamed file in the engine's own folder (or, for a device
	// such as /dev/null, copied to it on success); see internal/outpath.
	pending := cfg.Output
	if pending == nil {
		var err error
		if pending, err = outpath.CreatePath(cfg.Engine); err != nil {
			return progress.Result{}, exitcode.Usagef("cannot write the engine %s: %v", pathtext.Q(cfg.Engine), unwrapPath(err)).Hintf("choose a writable path with -o")
		}
	}
	defer pending.Cleanup() //nolint:errcheck // a no-op once the file was committed

	cfg.Worker.Plan = pending.File
	proc, err := worker.Start(cfg.Worker)
	if err != nil {
		return progress.Result{}, err
	}
	s := newSession(cfg, workerSource{proc})
	s.proc = proc
	return s.run(func(res *progress.Result) {
		res.Engine = cfg.Engine
		if res.Status == progress.StatusBuilt {
			commit := func(*progress.Result) error { return pending.CloseAtomicallyReplace() }
			if cfg.Commit != nil {
				commit = cfg.Commit
			}
			if err := commit(res); err != nil {
				res.Status, res.Error = progress.StatusFailed, fmt.Sprintf("writing the engine: %v", err)
			}
		}
		if res.Status != progress.StatusBuilt {
			res.Engine, res.EngineBytes = "", 0
		}
	})
}

// Drive runs the session loop on the events of src instead of a build worker: the same one
// state, renderer calls, ticks, signals and cancel ladder as a build (cfg.Worker and
// cfg.Engine are not used, and no file is written). trtbuild replay plays traces through it.
func Drive(src Source, cfg Config) (progress.Result, error) {
	return newSession(cfg, src).run(nil)
}

func newSession(cfg Config, src Source) *session {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.KillAfter <= 0 {
		cfg.KillAfter = 30 * time.Second
	}
	if cfg.CancelMessage == "" {
		cfg.CancelMessage = cancelMessage
	}
	return &session{cfg: cfg, src: src, controls: make(chan struct{}, 1)}
}

// run drives the build to its end: commit, when not nil, settles the result before it is
// shown (the build commits its engine there).
func (s *session) run(commit func(res *progress.Result)) (progress.Result, error) {
	s.render = s.cfg.NewRenderer(s)
	s.start = s.cfg.Now()
	s.lastProgress = s.start
	s.state = progress.NewState(s.cfg.Info, s.start)
	s.state.Hinter = trt.Hint
	s.state.FailedNode = trt.FailedNode
	s.render.Begin(s.state)

	final, stateErr := s.loop()
	res := s.outcome(final, stateErr)
	if commit != nil {
		commit(&res)
	}
	res = s.state.End(res, s.cfg.Now())
	if err := s.render.End(res); err != nil && !exitcode.IsClosedPipe(err) {
		// The output went away (a closed pipe) or the view failed; the build outcome stands.
		if res.Status == progress.StatusBuilt {
			// Exit status 0 (the engine is there), with the problem said on stderr.
			return res, &exitcode.Error{Code: exitcode.OK, Err: fmt.Errorf("the engine was built, but showing progress failed: %w", err)}
		}
	}
	return res, s.exitError(res)
}

// loop feeds the renderer until the event stream ends and returns the worker's result event.
func (s *session) loop() (*progress.Result, error) {
	ticker := time.NewTicker(s.cfg.Tick)
	defer ticker.Stop()
	// The budget timer fires when the earliest budget could run out. Progress only moves the
	// stall deadline later, so the timer is not reset per event: when it fires early it is
	// armed again for the new deadline.
	budget := time.NewTimer(time.Hour)
	budget.Stop()
	defer budget.Stop()
	armBudget := func() {
		if d, ok := s.untilBudget(s.cfg.Now()); ok {
			budget.Reset(d)
		}
	}
	armBudget()
	var final *progress.Result
	events := s.src.Events()
	stop, kill := s.cfg.Stop, s.cfg.Kill
	var killTimer, graceTimer <-chan time.Time
	for events != nil {
		select {
		case batch, ok := <-events:
			if !ok {
				events = nil
				break
			}
			now := s.cfg.Now() // one clock reading per batch: a batch arrives at once
			kept, res := s.apply(batch, now)
			if res != nil {
				final = res
			}
			if len(kept) > 0 {
				s.render.Handle(kept)
			}
			// Renderers keep no batch past Handle (see progress.Renderer), so it can be refilled.
			if r, ok := s.src.(recycler); ok {
				r.Recycle(batch)
			}
		case sig := <-s.cfg.Signals:
			if exitcode.StopsAtOnce(sig) {
				s.quit()
				break
			}
			s.escalate(exitcode.ForSignal(sig), s.cfg.CancelMessage)
			if d := exitcode.Grace(sig); d > 0 && graceTimer == nil && !s.forced {
				// The OS ends trtbuild soon after this signal (a closed console on Windows):
				// stop the worker in time for the temporary files to be removed.
				graceTimer = time.After(d)
			}
		case <-s.controls:
			s.escalate(exitcode.Interrupted, s.cfg.CancelMessage)
		case <-stop:
			// A cancel from the program (Handle.Cancel, Run's context): the worker is killed
			// if it has not stopped within KillAfter, as after a budget; a person's Ctrl-C
			// leaves the next rung to the person.
			stop = nil
			s.escalate(exitcode.Interrupted, s.cfg.CancelMessage)
			if killTimer == nil && !s.forced {
				killTimer = time.After(s.cfg.KillAfter)
			}
		case <-kill:
			kill = nil
			s.forceStop(exitcode.Interrupted, "Stopping the build worker now.")
		case <-ticker.C:
			s.render.Tick(s.cfg.Now()) // the session's clock: a replay's is the recording's
		case <-budget.C:
			if s.cancelledBy != 0 {
				break // already cancelling: the ladder takes it from here
			}
			if why := s.overBudget(s.cfg.Now()); why != "" {
				s.budget = why
				s.escalate(exitcode.TimedOut, upperFirst(why)+"; cancelling")
				killTimer = time.After(s.cfg.KillAfter)
			} else {
				armBudget()
			}
		case <-graceTimer:
			graceTimer = nil
			if !s.forced {
				s.forced = true
				_ = s.src.Kill()
				s.notice(progress.NoticeForceStop, "The builder did not stop in the time the system gives before it ends trtbuild; stopped the worker.")
			}
		case <-killTimer:
			killTimer = nil
			if !s.forced {
				s.forced = true
				_ = s.src.Kill()
				s.notice(progress.NoticeForceStop, fmt.Sprintf("The builder did not stop within --kill-after %s; stopped the worker.", s.cfg.KillAfter))
			}
		}
	}
	return final, s.src.Wait()
}

// escalate moves one rung up the cancel ladder.
func (s *session) escalate(code exitcode.Code, message string) {
	switch {
	case s.cancelledBy == 0:
		s.cancelledBy = code
		s.cancelAt = s.cfg.Now()
		if err := s.src.Cancel(); err != nil {
			// The worker is already gone; the event stream is ending anyway.
			_ = err
		}
		kind := progress.NoticeCancelRequested
		if code == exitcode.TimedOut {
			kind = progress.NoticeTimeout
		}
		s.notice(kind, message)
	default:
		s.forceStop(code, "Stopping the build worker now.")
	}
}

// forceStop stops the worker now (the top of the ladder), once; code is why, when nothing
// cancelled the build before.
func (s *session) forceStop(code exitcode.Code, message string) {
	if s.cancelledBy == 0 {
		s.cancelledBy = code
		s.cancelAt = s.cfg.Now()
	}
	if !s.forced {
		s.forced = true
		_ = s.src.Kill()
		s.notice(progress.NoticeForceStop, message)
	}
}

// quit answers SIGQUIT (Ctrl-\\): the top of the ladder at once, the worker stopped now.
func (s *session) quit() {
	s.forceStop(exitcode.Quit, "Quit (SIGQUIT): stopping the build worker now.")
}

// apply applies a batch to the state and returns the events a renderer is to see (all but the
// result) and the result, if the batch held one.
func (s *session) apply(batch []progress.Event, now time.Time) ([]progress.Event, *progress.Result) {
	batch = s.takeLoaded(batch)
	res := s.state.Apply(batch, now)
	kept := batch[:0]
	for i := range batch {
		switch batch[i].Type {
		case progress.EventResult:
			continue
		case progress.EventLog:
		default:
			s.lastProgress = now
		}
		kept = append(kept, batch[i])
	}
	return kept, res
}

// takeLoaded takes the worker's build event, which says what it loaded (BuildInfo.Target), out
// of batch, handing it to Config.Loaded: it is for the build's key, not for the views, whose
// build line is the parent's.
func (s *session) takeLoaded(batch []progress.Event) []progress.Event {
	kept := batch[:0]
	for i := range batch {
		if batch[i].Type == progress.EventBuild {
			if s.cfg.Loaded != nil && batch[i].Info != nil {
				s.cfg.Loaded(*batch[i].Info)
			}
			continue
		}
		kept = append(kept, batch[i])
	}
	return kept
}

func (s *session) notice(kind progress.NoticeKind, message string) {
	s.state.Notice(progress.Notice{Kind: kind, Message: message}, s.cfg.Now())
	s.render.Notice(progress.Notice{Kind: kind, Message: message})
	if s.cfg.Notices != nil {
		fmt.Fprintln(s.cfg.Notices, message)
	}
}

// untilBudget returns how long from now the earliest time budget could run out, and false
// when no budget is set.
func (s *session) untilBudget(now time.Time) (time.Duration, bool) {
	var deadlines []time.Time
	if s.cfg.Timeout > 0 {
		deadlines = append(deadlines, s.began().Add(s.cfg.Timeout))
	}
	if s.cfg.StallTimeout > 0 {
		deadlines = append(deadlines, s.lastProgress.Add(s.cfg.StallTimeout))
	}
	if len(deadlines) == 0 {
		return 0, false
	}
	first := deadlines[0]
	for _, d := range deadlines[1:] {
		if d.Before(first) {
			first = d
		}
	}
	return max(first.Sub(now), 0), true
}

// began is when the --timeout budget started.
func (s *session) began() time.Time {
	if !s.cfg.Began.IsZero() && s.cfg.Began.Before(s.start) {
		return s.cfg.Began
	}
	return s.start
}

// overBudget says which time budget, if any, the build has exceeded, naming the stage that
// used the time (see progress.State.Budget).
func (s *session) overBudget(now time.Time) string {
	if s.cfg.Timeout > 0 && now.Sub(s.began()) >= s.cfg.Timeout {
		return fmt.Sprintf("build exceeded --timeout %s %s", s.cfg.Timeout, s.state.Budget(s.cfg.Timeout, now))
	}
	if s.cfg.StallTimeout > 0 && now.Sub(s.lastProgress) >= s.cfg.StallTimeout {
		return fmt.Sprintf("no progress for --stall-timeout %s %s", s.cfg.StallTimeout, s.state.Budget(s.cfg.StallTimeout, now))
	}
	return ""
}

// outcome combines the worker's result with what the parent saw.
func (s *session) outcome(final *progress.Result, streamErr error) progress.Result {
	var res progress.Result
	if final != nil {
		res = *final
	}
	if s.proc == nil {
		// Another source (a replay) reports its own time and memory.
		if final == nil {
			res.Status, res.Error = progress.StatusFailed, "the events ended without a result"
		}
		if s.cancelledBy != 0 && res.Status == progress.StatusBuilt {
			res.Status = progress.StatusCancelled
		}
		return res
	}
	res.Duration = s.cfg.Now().Sub(s.start)
	res.PeakRSS = peakMemory(s.proc)
	switch {
	case s.forced:
		res.Status = progress.StatusCancelled
		res.Error = "the build worker was stopped"
	case final == nil:
		res.Status = progress.StatusFailed
		res.Error = s.crashMessage(streamErr)
	case s.cancelledBy != 0 && res.Status == progress.StatusBuilt:
		// The builder finished before it saw the cancel. The user asked to stop: keep the old file.
		res.Status = progress.StatusCancelled
	}
	if s.cancelledBy == exitcode.TimedOut && res.Status == progress.StatusCancelled {
		res.Status = progress.StatusTimedOut
		res.Error = s.budget
	}
	return res
}

func (s *session) crashMessage(streamErr error) string {
	msg := "the build worker ended without a result"
	if st := s.proc.State(); st != nil {
		msg = "the build worker crashed (" + describeExit(st) + ")"
	}
	if streamErr != nil {
		msg += ": " + streamErr.Error()
	}
	if cause := crashCause(s.proc.Head()); cause != "" {
		msg += ": " + cause
	} else if tail := s.proc.Tail(); len(tail) > 0 {
		msg += "; its last output: " + strings.Join(lastN(tail, 5), " | ")
	}
	return msg
}

// crashCause finds the line in which a dying process named its cause: the Go runtime's
// "SIGABRT: abort" for a signal raised in C or C++ code, "fatal error:", "panic:", or a C++
// "terminate called" line.
func crashCause(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		for _, p := range []string{"SIG", "fatal error:", "panic:", "terminate called", "Assertion"} {
			if strings.HasPrefix(t, p) || (p == "Assertion" && strings.Contains(t, p)) {
				return t
			}
		}
	}
	return ""
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

func (s *session) exitError(res progress.Result) error {
	switch res.Status {
	case progress.StatusBuilt:
		return nil
	case progress.StatusTimedOut:
		return &exitcode.Error{Code: exitcode.TimedOut, Err: errors.New(res.Error), Reported: true}
	case progress.StatusCancelled:
		code := s.cancelledBy
		if code == 0 || code == exitcode.TimedOut {
			code = exitcode.Failed
		}
		return &exitcode.Error{Code: code, Err: errors.New("build cancelled"), Reported: true}
	default:
		if res.UsageError {
			return &exitcode.Error{Code: exitcode.Usage, Err: errors.New(res.Error), Reported: true}
		}
		return &exitcode.Error{Code: exitcode.Failed, Err: errors.New(res.Error), Reported: true}
	}
}

// upperFirst starts a message that is shown as a line of its own with a capital letter; the
// same text inside an error ("trtbuild: build exceeded …") stays lower case.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
