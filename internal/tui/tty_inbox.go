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

// inbox is where the session's goroutine leaves work for the view: the log lines to print
// above it, the newest snapshot of the session's state, and the result. The session's side
// puts things in under the mutex and returns at once; the program's goroutine takes
// everything out on its next frame. The view keeps no state of the build beyond the snapshot
// it last took: phase events are not queued at all, the session has applied them.
type inbox struct {
	mu      sync.Mutex
	logs    []progress.Event
	info    int // pending info and verbose lines
	skipped int // info and verbose lines dropped since the last take
	snap    *progress.Snapshot
	result  *progress.Result
	// stale says that events arrived since the last snapshot was put in.
	stale bool
}

// takeout is what the view takes from the inbox for one frame.
type takeout struct {
	logs    []progress.Event
	snap    *progress.Snapshot // nil: nothing changed
	result  *progress.Result
	skipped int
}

func newInbox() *inbox { return &inbox{} }

// put keeps the log lines of batch for printing and notes that the state changed; the caller
// may reuse batch afterwards.
func (in *inbox) put(batch []progress.Event) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i := range batch {
		e := &batch[i]
		if e.Type != progress.EventLog {
			in.stale = true
			continue
		}
		if e.Severity > progress.SeverityWarning {
			if in.info >= maxPendingInfo {
				in.skipped++
				continue
			}
			in.info++
		}
		in.logs = append(in.logs, *e)
	}
	if len(batch) > 0 {
		in.stale = true
	}
}

// isStale reports whether the state changed since the last snapshot.
func (in *inbox) isStale() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stale
}

// pending reports whether anything waits to be taken.
func (in *inbox) pending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.snap != nil || len(in.logs) > 0 || in.result != nil
}

// snapshot puts in the newest snapshot, replacing one the view has not taken yet.
func (in *inbox) snapshot(s *progress.Snapshot) {
	in.mu.Lock()
	in.snap, in.stale = s, false
	in.mu.Unlock()
}

// end puts in the final snapshot and the result.
func (in *inbox) end(res progress.Result, s *progress.Snapshot) {
	in.mu.Lock()
	in.snap, in.stale, in.result = s, false, &res
	in.mu.Unlock()
}

// take hands over everything pending. spare is an empty slice the inbox keeps for the next
// lines, so two buffers alternate and a steady stream allocates nothing.
func (in *inbox) take(spare []progress.Event) takeout {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := takeout{logs: in.logs, snap: in.snap, result: in.result, skipped: in.skipped}
	in.logs = spare[:0]
	in.snap, in.result = nil, nil
	in.skipped, in.info = 0, 0
	return out
}

// snapshotEvery is how often the session's tick hands the live view a new snapshot while
// events arrive: the view's frame interval.
const snapshotEvery = frameInterval

// TickEvery is the session tick the live view needs (see builder.Config.Tick): snapshots
// are taken on it.
func TickEvery() time.Duration { return snapshotEvery }
