package tui

import (
	"slices"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// feed plays the session's part for the live view's tests: it applies every batch, notice
// and result to one progress.State, as the session does, and hands the view what the tty
// renderer hands it: the log lines and a snapshot.
type feed struct {
	box *inbox
	st  *progress.State
	now func() time.Time
}

func newFeed(now func() time.Time) *feed {
	st := progress.NewState(testInfo, epoch)
	st.Hinter = trt.Hint
	st.FailedNode = trt.FailedNode
	return &feed{box: newInbox(), st: st, now: now}
}

func (f *feed) put(batch []progress.Event) {
	b := slices.Clone(batch)
	f.st.Apply(b, f.now())
	f.box.put(b)
	f.box.snapshot(f.st.Snapshot())
}

func (f *feed) notice(n progress.Notice) {
	f.st.Notice(n, f.now())
	f.box.snapshot(f.st.Snapshot())
}

func (f *feed) end(res progress.Result) {
	res = f.st.End(res, f.now())
	f.box.end(res, f.st.Snapshot())
}

// epoch is the wall time every test build begins at.
var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testClock is a settable clock, safe for the program's goroutine and the test's.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: epoch} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to d after epoch.
func (c *testClock) Set(d time.Duration) {
	c.mu.Lock()
	c.t = epoch.Add(d)
	c.mu.Unlock()
}

func evStart(at time.Duration, id, parent int, name string, steps int) progress.Event {
	return progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: parent, Name: name, Steps: steps}
}

func evStep(at time.Duration, id, step int) progress.Event {
	return progress.Event{Type: progress.EventStep, Time: at, ID: id, Step: step}
}

func evFinish(at time.Duration, id int) progress.Event {
	return progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: id}
}

func evLog(at time.Duration, sev progress.Severity, msg string) progress.Event {
	return progress.Event{Type: progress.EventLog, Time: at, Severity: sev, Message: msg}
}

// testInfo is the build every test shows in its header.
var testInfo = progress.BuildInfo{
	Model:     "models/convnet.onnx",
	Engine:    "convnet.engine",
	Backend:   "sim",
	Precision: "fp16",
	Layers:    12,
}

// sec is shorthand for test times.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// tensorRTLike is a phase tree shaped like a TensorRT 8.7 build caught in the middle of
// tactic timing (the nesting NVIDIA's progress monitor sample shows), with two finished
// layers under "Timing graph nodes".
func tensorRTLike() []progress.Event {
	return []progress.Event{
		evStart(sec(0.1), 1, 0, "Building engine", 4),
		evStep(sec(0.4), 1, 0),
		evStart(sec(0.5), 2, 1, "Building engine from subgraph", 1),
		evStart(sec(0.6), 3, 2, "Computing profile costs", 1),
		evStart(sec(0.7), 4, 3, "Timing graph nodes", 15),
		evStart(sec(0.8), 5, 4, "Finding fastest tactic for conv1", 37),
		evStep(sec(1.5), 5, 36),
		evFinish(sec(1.6), 5),
		evStep(sec(1.6), 4, 0),
		evStart(sec(1.7), 6, 4, "Finding fastest tactic for relu1", 12),
		evStep(sec(1.8), 6, 3),
		evFinish(sec(1.9), 6), // early: 4 of 12 steps
		evStep(sec(1.9), 4, 1),
		evStart(sec(2.0), 7, 4, "Finding fastest tactic for conv2", 37),
		evStep(sec(2.5), 7, 11),
		evStart(sec(2.6), 8, 7, "Measuring tactic time", 4),
		evStep(sec(2.7), 8, 2),
	}
}

// kept plays the session's part for a renderer under test: every call is first applied to one
// progress.State, which the renderer reads, as in a build.
type kept struct {
	r   progress.Renderer
	st  *progress.State
	now func() time.Time
}

// keep wraps r; now is the session's clock (nil: time.Now).
func keep(r progress.Renderer, now func() time.Time) *kept {
	if now == nil {
		now = time.Now
	}
	return &kept{r: r, now: now}
}

func (k *kept) Begin(info progress.BuildInfo) {
	k.st = progress.NewState(info, k.now())
	k.st.Hinter = trt.Hint
	k.st.FailedNode = trt.FailedNode
	k.r.Begin(k.st)
}

func (k *kept) Handle(batch []progress.Event) {
	b := slices.Clone(batch)
	k.st.Apply(b, k.now())
	k.r.Handle(b)
}

func (k *kept) Notice(n progress.Notice) {
	k.st.Notice(n, k.now())
	k.r.Notice(n)
}

func (k *kept) Tick(now time.Time) { k.r.Tick(now) }

func (k *kept) End(res progress.Result) error { return k.r.End(k.st.End(res, k.now())) }
