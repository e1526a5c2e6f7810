package tui

import (
	"io"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// JSON writes the event stream as JSON lines (schema v1, docs/events.md): a build line, every
// phase, step and log event as the worker reported it, notices as log lines, and a result line.
// Each batch is written with one Write, unbuffered between batches. The first write error (for
// example a closed pipe) is kept and returned by End; later output is dropped.
type JSON struct {
	w     io.Writer
	buf   []byte
	now   func() time.Time
	start time.Time
	last  time.Duration
	err   error
}

// NewJSON returns a JSON-lines renderer writing to w.
func NewJSON(w io.Writer, now func() time.Time) *JSON {
	if now == nil {
		now = time.Now
	}
	return &JSON{w: w, now: now}
}

// Begin writes the build line.
func (j *JSON) Begin(v progress.View) {
	info := v.Info()
	j.start = j.now()
	j.write(progress.Event{Type: progress.EventBuild, Info: &info})
}

// Handle writes the batch.
func (j *JSON) Handle(batch []progress.Event) {
	j.buf = j.buf[:0]
	for i := range batch {
		if batch[i].Time > j.last {
			j.last = batch[i].Time
		}
		j.buf = progress.AppendJSON(j.buf, &batch[i])
	}
	j.flush()
}

// Notice writes a trtbuild log line.
func (j *JSON) Notice(n progress.Notice) {
	sev := progress.SeverityWarning
	j.write(progress.Event{Type: progress.EventLog, Time: j.last, Severity: sev, Message: n.Message})
}

// Tick does nothing: machines do not need heartbeats.
func (j *JSON) Tick(time.Time) {}

// End writes the result line.
func (j *JSON) End(res progress.Result) error {
	at := res.Duration
	if at < j.last {
		at = j.last
	}
	j.write(progress.Event{Type: progress.EventResult, Time: at, Result: &res})
	return j.err
}

func (j *JSON) write(e progress.Event) {
	j.buf = progress.AppendJSON(j.buf[:0], &e)
	j.flush()
}

func (j *JSON) flush() {
	if j.err != nil || len(j.buf) == 0 {
		return
	}
	if _, err := j.w.Write(j.buf); err != nil {
		j.err = err
	}
}

// Quiet draws nothing (--progress quiet); errors still reach stderr through the command.
type Quiet = progress.Discard
