package progress

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits of what a State keeps besides the tree.
const (
	// RecentLogs is how many of the newest log lines a State keeps (a failure shows them).
	RecentLogs = 8
	// keepProblems is how many warning and error messages are kept for matching a hint.
	keepProblems = 64
)

// LogLine is one log line as a State keeps it.
type LogLine struct {
	At       time.Duration
	Severity Severity
	Message  string
}

// Cancel is what happened on the cancel ladder, with the wall times it happened at.
type Cancel struct {
	Kind NoticeKind // 0, NoticeCancelRequested or NoticeTimeout
	At   time.Time
	// AtBuild is At on the builder's clock: phases that end early after it were cut short.
	AtBuild time.Duration
	Message string
	Forced  bool
	ForceAt time.Time
	ForceBy string
}

// View is the read-only state of one build that the session keeps and hands to renderers.
// Its methods may be called only from the goroutine that calls the Renderer's methods (the
// session's), and only during those calls; what they return must not be modified. A renderer
// that draws on a goroutine of its own (the live view) takes a Snapshot there.
type View interface {
	// Info is what is being built.
	Info() BuildInfo
	// Tree is the one phase tree of the build.
	Tree() *Tree
	// Begin is the wall time the build started; LastProgress the wall time of the newest
	// phase event (Begin until there is one).
	Begin() time.Time
	LastProgress() time.Time
	// Silent is how long the builder has reported no phase event at wall time now: during
	// TensorRT's long steps (a Myelin node is one step) it is minutes, and a cancel waits for
	// the step to end.
	Silent(now time.Time) time.Duration
	// BuildNow estimates the builder's clock at wall time now, never behind the newest event.
	BuildNow(now time.Time) time.Duration
	// Cancel is the state of the cancel ladder.
	Cancel() Cancel
	// Stopping reports whether a cancel or a time budget was announced: phases the builder
	// then ends early were cut short, not finished early.
	Stopping() bool
	// Recent returns the newest log lines, oldest first.
	Recent() []LogLine
	// Left estimates how long the timing phase still runs at wall time now (see Pace.Left);
	// false when no estimate would be honest, or the build is being stopped.
	Left(now time.Time) (Left, bool)
	// Snapshot returns a copy of what a frame of a view needs, safe to hand to another
	// goroutine (see Snapshot).
	Snapshot() *Snapshot
}

// State is the one keeper of a build's state: it applies every event once to one Tree, keeps
// the clocks (start, newest event, newest progress), the cancel ladder, the newest log lines,
// and derives once what every view shows: whether a phase finished early, where a build
// failed or stopped, and the hint for a failure. The session owns it; renderers read it
// through View. A State is not safe for concurrent use.
type State struct {
	info     BuildInfo
	tree     *Tree
	begin    time.Time
	progress time.Time // wall time of the newest phase event
	// skew maps build time to wall time: BuildNow = now - begin - skew. It is the smallest
	// delay seen between an event's build time and its arrival (the worker's start-up).
	skew      time.Duration
	skewKnown bool
	cancel    Cancel
	recent    []LogLine // ring of the newest RecentLogs lines, oldest first
	problems  []string  // warning and error messages, newest last, at most keepProblems
	errors    []string  // error messages in order, at most keepProblems
	// lastEarly is the deepest phase of the latest run of early finishes (the builder ends
	// phases early when it fails or stops); a phase that finishes normally clears it.
	lastEarly int
	// stopAt is the phase the build was in when a cancel or budget was announced.
	stopAt int
	// attempt is the build time the current build attempt began: a worker that rebuilds a
	// failed build (with a node kept in float32) sends the second attempt's phases after the
	// first's, in one stream. Failure attribution and hints look only at the current attempt.
	attempt time.Duration
	rebuild bool // the next root phase starts the new attempt
	where   *Where
	// pace follows the timing phase's layers, for the time-left estimate.
	pace pacer
	// Hinter, when set, turns a failed build's error and log messages into a one-line hint.
	Hinter func(messages []string) string
	// FailedNode, when set, finds the node (a layer of the network) that a failed build's
	// error and log messages name: TensorRT names it in its error texts ("Could not find any
	// implementation for node /model/model.6/Conv + PWN(...)"), and in no phase name since
	// 10.16. The newest message that names one wins.
	FailedNode func(messages []string) string
}

// Where names the phase a build failed or stopped in.
type Where struct {
	ID   int      `json:"id"`
	Path []string `json:"path"`
	Done int      `json:"done"`
	// Steps is the phase's step count; Seconds how long it ran.
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"`
	// Node is the node (a layer of the network) a failed build's error names, as TensorRT's
	// error text gives it ("/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)"); empty when
	// no message names one. It is never taken from a phase name.
	Node string `json:"node,omitempty"`
}

// NewState returns the state of a build of info that starts at wall time begin.
func NewState(info BuildInfo, begin time.Time) *State {
	return &State{info: info, tree: NewTree(), begin: begin, progress: begin}
}

// Apply applies a batch of events that arrived at wall time now, in order, and returns the
// result event's result if the batch holds one (the result itself is not applied: the
// session decides the outcome). It sets Early on phase_finish events from the tree's step
// counts, so that every renderer and every trace sees the same value.
func (s *State) Apply(batch []Event, now time.Time) *Result {
	s.tree.beginBatch() // folds what the renderers saw in earlier batches, then holds off
	defer s.tree.endBatch()
	var res *Result
	for i := range batch {
		e := &batch[i]
		switch e.Type {
		case EventResult:
			res = e.Result
			continue
		case EventLog:
			s.log(e)
		case EventPhaseStart:
			s.noteAttempt(e)
		}
		p := s.tree.Apply(e)
		if p != nil && e.Type == EventPhaseStart {
			if s.rebuild && p.Parent == 0 {
				p.Rebuild, s.rebuild = true, false
			}
			s.pace.started(p)
		}
		if p != nil && e.Type == EventStep {
			s.pace.stepped(p, e.Time)
		}
		if e.Type == EventPhaseStart || e.Type == EventStep || e.Type == EventPhaseFinish {
			s.progress = now
			if d := now.Sub(s.begin) - e.Time; !s.skewKnown || d < s.skew {
				s.skew, s.skewKnown = d, true
			}
		}
		if p != nil && e.Type == EventPhaseFinish {
			e.Early = p.Early
			s.noteFinish(p)
		}
	}
	return res
}

// noteAttempt starts a new build attempt at e when e is a root phase that starts after an
// earlier one ended early, with an error, and nothing left open: the builder's failed attempt
// is over and the worker builds again (see the worker's buildKeepingFP32). What the failed
// attempt reported no longer explains a failure; the tree keeps its phases, before the new
// ones. A root phase after one that ended without an error is another engine generation of
// the same build (TensorRT's root phase always ends early, at step 4 of 6, and at
// optimization level 5 TensorRT builds the engine up to three times, see Phase.Generation).
func (s *State) noteAttempt(e *Event) {
	if e.Parent != 0 || s.tree.Open() != 0 || s.lastEarly == 0 || len(s.tree.Roots()) == 0 || len(s.errors) == 0 {
		return
	}
	s.attempt, s.lastEarly, s.rebuild = e.Time, 0, true
	s.problems, s.errors = s.problems[:0], s.errors[:0]
}

func (s *State) log(e *Event) {
	if len(s.recent) == RecentLogs {
		copy(s.recent, s.recent[1:])
		s.recent = s.recent[:RecentLogs-1]
	}
	s.recent = append(s.recent, LogLine{At: e.Time, Severity: e.Severity, Message: e.Message})
	if e.Severity <= SeverityWarning {
		s.problems = keepLast(s.problems, e.Message)
	}
	if e.Severity <= SeverityError {
		s.errors = keepLast(s.errors, e.Message)
	}
}

func keepLast(list []string, msg string) []string {
	if len(list) == keepProblems {
		copy(list, list[1:])
		list = list[:keepProblems-1]
	}
	return append(list, msg)
}

// noteFinish keeps track of where a build that fails or stops ended: TensorRT (and the
// simulated builder) often finish every open phase early, innermost first, before the result.
func (s *State) noteFinish(p *Phase) {
	if !p.Early {
		s.lastEarly = 0
		return
	}
	for q := s.tree.Get(s.lastEarly); q != nil; q = s.tree.Get(q.Parent) {
		if q.Parent == p.ID {
			return // p encloses the phase already kept, which is deeper
		}
		if q.Parent == 0 {
			break
		}
	}
	s.lastEarly = p.ID
}

// Notice records a step of the cancel ladder announced at wall time now. A cancel or budget
// notice also fixes the stage the build was in (see Stage).
func (s *State) Notice(n Notice, now time.Time) {
	switch n.Kind {
	case NoticeCancelRequested, NoticeTimeout:
		if s.cancel.Kind == 0 {
			s.cancel.Kind, s.cancel.At, s.cancel.Message = n.Kind, now, n.Message
			s.cancel.AtBuild = s.BuildNow(now)
			if p := s.Stage(0, now); p != nil && s.stopAt == 0 {
				s.stopAt = p.ID
			}
		}
	case NoticeForceStop:
		if !s.cancel.Forced {
			s.cancel.Forced, s.cancel.ForceAt, s.cancel.ForceBy = true, now, n.Message
		}
	}
}

// Stage returns the phase that is using the time at wall time now: following the open phases
// from the newest open root down, as long as a phase has exactly one open child, the deepest
// one that has run for at least window (the stage that used a time budget), stopping where
// the work fans out over builder threads ("Timing graph nodes" with one layer per thread).
// It returns nil when nothing is open.
func (s *State) Stage(window time.Duration, now time.Time) *Phase {
	var p *Phase
	roots := s.tree.Roots()
	for i := len(roots) - 1; i >= 0; i-- {
		if q := s.tree.Get(roots[i]); !q.Finished {
			p = q
			break
		}
	}
	if p == nil {
		return nil
	}
	at := s.BuildNow(now)
	best := p
	for p.Open == 1 {
		var child *Phase
		for i := len(p.Children) - 1; i >= 0; i-- {
			if c := s.tree.Get(p.Children[i]); !c.Finished {
				child = c
				break
			}
		}
		if child == nil || child.Duration(at) < window {
			break
		}
		p, best = child, child
	}
	return best
}

// Budget describes the stage a time budget ran out in, for its message: `in "Timing graph
// nodes" (6/415, running for 12.3s)`, or "before any phase started". window is the time the
// budget measured (the whole build for --timeout, the silence for --stall-timeout).
func (s *State) Budget(window time.Duration, now time.Time) string {
	p := s.Stage(window/2, now)
	if p == nil {
		return "before any phase started"
	}
	what := "in " + quote(p.Name)
	// A generic phase ("Measuring tactic time") is named with the layer it works for.
	if parent := s.tree.Get(p.Parent); parent != nil && p.Parent != 0 && Kind(p.Name) == p.Name && Kind(parent.Name) != parent.Name {
		what += " of " + quote(parent.Name)
	}
	return what + " (" + itoa(p.Done) + "/" + itoa(p.Steps) + ", running for " + FormatDuration(p.Duration(s.BuildNow(now))) + ")"
}

// End ends the build at wall time now with res: it derives where a failed, cancelled or
// timed-out build ended and, for a failure, the hint, ends the phases the builder left open
// at the builder's time of now (they ran until the build ended, silent or not), and returns
// res with Where and Hint set.
func (s *State) End(res Result, now time.Time) Result {
	if res.TensorRT != "" {
		s.info.TensorRT = res.TensorRT
	}
	if res.GPU != "" {
		s.info.GPU = res.GPU
	}
	if res.Status != StatusBuilt {
		var p *Phase
		switch res.Status {
		case StatusFailed:
			p = s.failing(res.Error)
		default:
			// The stage of the request, unless the builder completed it after all and
			// went on: then where it was cut short.
			if p = s.tree.Get(s.stopAt); p != nil && p.Finished && !p.Early {
				p = nil
			}
			if p == nil {
				p = s.Stage(0, now)
			}
			if p == nil {
				p = s.tree.Get(s.lastEarly)
			}
		}
		if p != nil {
			end := s.BuildNow(now) // a phase still open ran until the build ended, silent or not
			if p.Finished {
				end = p.End
			}
			s.where = &Where{ID: p.ID, Path: s.tree.Path(p.ID), Done: p.Done, Steps: p.Steps, Seconds: (end - p.Start).Seconds()}
			res.Where = s.where
		}
		if res.Status == StatusFailed && s.FailedNode != nil {
			if node := s.FailedNode(append(slices.Clone(s.errors), res.Error)); node != "" {
				if res.Where == nil {
					s.where = &Where{Path: []string{}}
					res.Where = s.where
				}
				res.Where.Node = node
			}
		}
		if res.Status == StatusFailed && s.Hinter != nil {
			res.Hint = s.Hinter(append([]string{res.Error}, s.problems...))
		}
	}
	s.tree.Abort(s.BuildNow(now))
	return res
}

// failing finds the phase a failure happened in. The builder's error message may name it: a
// phase whose whole name, or whose layer (TensorRT 8.7 and 9.x name the layer in the phase,
// "Finding fastest tactic for /features/…/Conv", see Layer), appears in the error is taken,
// the newest such phase among those of the current attempt (see noteAttempt), since the
// thread that failed is the one working on that layer, whichever thread happened to end its
// phases last. Otherwise (TensorRT 10.16 and 11.x name no layer in any phase) the deepest
// phase still open, then the deepest of the last phases that finished early.
func (s *State) failing(errMsg string) *Phase {
	msgs := append([]string{errMsg}, s.errors...)
	var best *Phase
	bestKey := 0
	s.tree.Walk(func(p *Phase) bool {
		if p.Start < s.attempt {
			return true // an earlier attempt's
		}
		for _, key := range []string{p.Name, Layer(p.Name)} {
			if len(key) < 4 || len(key) < bestKey {
				continue
			}
			for _, m := range msgs {
				if !strings.Contains(m, key) {
					continue
				}
				if best == nil || len(key) > bestKey || p.Depth > best.Depth || (p.Depth == best.Depth && p.Start >= best.Start) {
					best, bestKey = p, len(key)
				}
				break
			}
		}
		return true
	})
	if best != nil {
		return best
	}
	if p := s.tree.Deepest(); p != nil {
		return p
	}
	return s.tree.Get(s.lastEarly)
}

// Info implements View.
func (s *State) Info() BuildInfo { return s.info }

// Tree implements View.
func (s *State) Tree() *Tree { return s.tree }

// Begin implements View.
func (s *State) Begin() time.Time { return s.begin }

// LastProgress implements View.
func (s *State) LastProgress() time.Time { return s.progress }

// Silent implements View.
func (s *State) Silent(now time.Time) time.Duration { return max(now.Sub(s.progress), 0) }

// Cancel implements View.
func (s *State) Cancel() Cancel { return s.cancel }

// Stopping implements View.
func (s *State) Stopping() bool { return s.cancel.Kind != 0 || s.cancel.Forced }

// Recent implements View.
func (s *State) Recent() []LogLine { return s.recent }

// Left implements View.
func (s *State) Left(now time.Time) (Left, bool) {
	if s.Stopping() {
		return Left{}, false
	}
	return s.pace.get().Left(s.tree, s.BuildNow(now))
}

// BuildNow implements View.
func (s *State) BuildNow(now time.Time) time.Duration {
	d := now.Sub(s.begin)
	if s.skewKnown {
		d -= s.skew
	}
	return max(d, s.tree.Last)
}

// Snapshot is a copy of what one frame of a view is drawn from, made on the session's
// goroutine and then owned by whoever takes it. Its Tree is pruned: every open phase and its
// ancestors, the newest finished children of each (at most SnapshotDone), the phases a
// summary compares (the top level) and the phase the build failed or stopped in.
type Snapshot struct {
	Info         BuildInfo
	Tree         *Tree
	Begin        time.Time
	LastProgress time.Time
	Skew         time.Duration
	SkewKnown    bool
	Cancel       Cancel
	Recent       []LogLine
	Where        *Where
	// Pace is the timing phase's pace, for the time-left estimate (see Snapshot.Left).
	Pace Pace
}

// Silent is how long the builder has reported no phase event at wall time now, as
// State.Silent says.
func (s *Snapshot) Silent(now time.Time) time.Duration { return max(now.Sub(s.LastProgress), 0) }

// Left estimates how long the timing phase still runs at wall time now, as State.Left does.
func (s *Snapshot) Left(now time.Time) (Left, bool) {
	if s.Cancel.Kind != 0 || s.Cancel.Forced {
		return Left{}, false
	}
	d := now.Sub(s.Begin)
	if s.SkewKnown {
		d -= s.Skew
	}
	return s.Pace.Left(s.Tree, max(d, s.Tree.Last))
}

// SnapshotDone is how many finished children of a phase a Snapshot keeps.
const SnapshotDone = 3

// Snapshot implements View.
func (s *State) Snapshot() *Snapshot {
	keep := []int{}
	if s.where != nil {
		keep = append(keep, s.where.ID)
	}
	return &Snapshot{
		Info: s.info, Tree: s.tree.prune(SnapshotDone, keep), Begin: s.begin, LastProgress: s.progress,
		Skew: s.skew, SkewKnown: s.skewKnown, Cancel: s.cancel,
		Recent: append([]LogLine(nil), s.recent...), Where: s.where, Pace: s.pace.get(),
	}
}

func quote(s string) string { return strconv.Quote(s) }

func itoa(n int) string { return strconv.Itoa(n) }

// CutShort reports whether a finished phase was cut short by a cancel or a time budget: it
// ended early after the request.
func (c Cancel) CutShort(p *Phase) bool {
	return p.Early && (c.Kind != 0 || c.Forced) && p.End >= c.AtBuild
}
