package tui

import (
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// maxPendingInfo bounds the info and verbose log lines waiting for one frame. A builder at
// --verbose can log thousands of lines a second; beyond this many per frame the rest are
// counted and reported as skipped instead of piling up in memory. Warnings and errors are
// always kept.
const maxPendingInfo = 2000

// inbox is where the session's goroutine leaves work for the view. Handle, progress.Notice and End put
// things in under the mutex and return at once; the program's goroutine takes everything out
// on its next frame. Step events of one phase that arrive between two frames are merged into
// one, so a burst of 100,000 steps costs a map lookup each and a handful of entries.
type inbox struct {
	now   func() time.Time
	begin time.Time

	mu      sync.Mutex
	events  []progress.Event
	steps   map[int]int // phase ID → index in events of its pending step event
	info    int         // pending info and verbose lines
	skipped int         // info and verbose lines dropped since the last take
	// skippedAt is the newest build time among them: they still move the build clock.
	skippedAt time.Duration
	notices   []timedNotice
	result    *progress.Result
	// skew is the smallest delay seen between an event's build time and its arrival;
	// lastProgress the arrival of the newest phase event.
	skew         time.Duration
	skewKnown    bool
	lastProgress time.Time
}

// timedNotice is a notice with the wall time it arrived.
type timedNotice struct {
	progress.Notice
	at time.Time
}

// takeout is what the view takes from the inbox for one frame.
type takeout struct {
	events       []progress.Event
	notices      []timedNotice
	result       *progress.Result
	skipped      int
	skippedAt    time.Duration
	skew         time.Duration
	skewKnown    bool
	lastProgress time.Time
}

func newInbox(begin time.Time, now func() time.Time) *inbox {
	return &inbox{now: now, begin: begin, steps: make(map[int]int), lastProgress: begin}
}

// put copies batch in; the caller may reuse it afterwards.
func (in *inbox) put(batch []progress.Event) {
	at := in.now()
	in.mu.Lock()
	defer in.mu.Unlock()
	for i := range batch {
		e := &batch[i]
		switch e.Type {
		case progress.EventStep:
			if j, ok := in.steps[e.ID]; ok {
				p := &in.events[j]
				p.Step = max(p.Step, e.Step)
				p.Time = max(p.Time, e.Time)
				in.progress(e, at)
				continue
			}
			in.steps[e.ID] = len(in.events)
			in.progress(e, at)
		case progress.EventPhaseStart, progress.EventPhaseFinish:
			// A later step of a finished phase must not count before its finish.
			delete(in.steps, e.ID)
			in.progress(e, at)
		case progress.EventLog:
			if e.Severity > progress.SeverityWarning {
				if in.info >= maxPendingInfo {
					in.skipped++
					in.skippedAt = max(in.skippedAt, e.Time)
					continue
				}
				in.info++
			}
		case progress.EventResult:
			// The session passes the result to End; a stray one is not a display event.
			continue
		}
		in.events = append(in.events, *e)
	}
}

// progress notes a phase event that arrived at wall time at.
func (in *inbox) progress(e *progress.Event, at time.Time) {
	in.lastProgress = at
	if s := at.Sub(in.begin) - e.Time; !in.skewKnown || s < in.skew {
		in.skew, in.skewKnown = s, true
	}
}

func (in *inbox) notice(n progress.Notice) {
	at := in.now()
	in.mu.Lock()
	in.notices = append(in.notices, timedNotice{Notice: n, at: at})
	in.mu.Unlock()
}

func (in *inbox) end(res progress.Result) {
	in.mu.Lock()
	in.result = &res
	in.mu.Unlock()
}

// take hands over everything pending. spare is an empty slice the inbox keeps for the next
// batch, so two buffers alternate and a steady stream allocates nothing.
func (in *inbox) take(spare []progress.Event) takeout {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := takeout{
		events:       in.events,
		notices:      in.notices,
		result:       in.result,
		skipped:      in.skipped,
		skippedAt:    in.skippedAt,
		skew:         in.skew,
		skewKnown:    in.skewKnown,
		lastProgress: in.lastProgress,
	}
	in.events = spare[:0]
	in.notices = nil
	in.result = nil
	in.skipped, in.skippedAt, in.info = 0, 0, 0
	clear(in.steps)
	return out
}
