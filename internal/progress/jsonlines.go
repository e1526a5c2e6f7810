package progress

import (
	"io"
	"time"
)

// JSONLines writes the event stream as JSON lines (schema v1, docs/events.md): a build line, every
// phase, step and log event as the worker reported it, notices as log lines, and a result line.
// Each batch is written with one Write, unbuffered between batches. The first write error (for
// example a closed pipe) is kept and returned by End; later output is dropped.
type JSONLines struct {
	w     io.Writer
	buf   []byte
	now   func() time.Time
	start time.Time
	last  time.Duration
	err   error
}

// NewJSONLines returns a JSON-lines renderer writing to w (--progress json, a build's trace,
// the service's build logs).
func NewJSONLines(w io.Writer, now func() time.Time) *JSONLines {
	if now == nil {
		now = time.Now
	}
	return &JSONLines{w: w, now: now}
}

// Begin writes the build line.
func (j *JSONLines) Begin(v View) {
	info := v.Info()
	j.start = j.now()
	j.write(Event{Type: EventBuild, Info: &info})
}

// Handle writes the batch.
func (j *JSONLines) Handle(batch []Event) {
	j.buf = j.buf[:0]
	for i := range batch {
		if batch[i].Time > j.last {
			j.last = batch[i].Time
		}
		j.buf = AppendJSON(j.buf, &batch[i])
	}
	j.flush()
}

// Notice writes a trtbuild log line.
func (j *JSONLines) Notice(n Notice) {
	sev := SeverityWarning
	j.write(Event{Type: EventLog, Time: j.last, Severity: sev, Message: n.Message})
}

// Tick does nothing: machines do not need heartbeats.
func (j *JSONLines) Tick(time.Time) {}

// End writes the result line.
func (j *JSONLines) End(res Result) error {
	at := res.Duration
	if at < j.last {
		at = j.last
	}
	j.write(Event{Type: EventResult, Time: at, Result: &res})
	return j.err
}

func (j *JSONLines) write(e Event) {
	j.buf = AppendJSON(j.buf[:0], &e)
	j.flush()
}

func (j *JSONLines) flush() {
	if j.err != nil || len(j.buf) == 0 {
		return
	}
	if _, err := j.w.Write(j.buf); err != nil {
		j.err = err
	}
}
