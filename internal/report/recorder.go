package report

import (
	"math"
	"strconv"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Recorder is a progress.Renderer that draws nothing and keeps what a report needs beside the
// session's state: the warnings and errors, trtbuild's notices and the result. The phase tree
// is the session's (read through the progress.View), not a copy. Put it beside the user's view
// with progress.Tee and call Report after the build has ended. Like every renderer it is used
// from one goroutine.
type Recorder struct {
	view progress.View
	logs []progress.Event
	res  *progress.Result
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Begin implements progress.Renderer.
func (r *Recorder) Begin(v progress.View) { r.view = v }

// Handle implements progress.Renderer: it keeps the warnings and errors. Times are rounded as
// the JSON-lines encoding rounds them (so is every time FromTree reads from the tree), so a
// report made here equals, byte for byte, the one made later from a trace of the same build.
func (r *Recorder) Handle(batch []progress.Event) {
	for i := range batch {
		e := batch[i]
		if e.Type == progress.EventLog && e.Severity <= progress.SeverityWarning && len(r.logs) <= logCount {
			e.Time = wireTime(e.Time)
			r.logs = append(r.logs, e)
		}
	}
}

// wireTime returns d as it reads back from a JSON line: written as seconds with six decimals
// (progress.AppendJSON), read back rounded to microseconds (progress.DecodeJSON).
func wireTime(d time.Duration) time.Duration {
	s, err := strconv.ParseFloat(strconv.FormatFloat(d.Seconds(), 'f', 6, 64), 64)
	if err != nil || s < 0 {
		return d
	}
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}

// Notice implements progress.Renderer: a notice (a cancel request, a budget running out) is kept as
// a warning, as the JSON stream records it.
func (r *Recorder) Notice(n progress.Notice) {
	if len(r.logs) <= logCount {
		r.logs = append(r.logs, progress.Event{Type: progress.EventLog, Time: wireTime(r.view.Tree().Last), Severity: progress.SeverityWarning, Message: n.Message})
	}
}

// Tick implements progress.Renderer.
func (r *Recorder) Tick(time.Time) {}

// End implements progress.Renderer.
func (r *Recorder) End(res progress.Result) error {
	res.Duration = wireTime(res.Duration)
	r.res = &res
	return nil
}

// Report returns the report of what was recorded, from the session's final tree. Before End it
// reports an unknown outcome; before Begin it returns nil.
func (r *Recorder) Report() *Report {
	if r.view == nil {
		return nil
	}
	res := progress.Result{Status: StatusUnknown}
	if r.res != nil {
		res = *r.res
	}
	return FromTree(r.view.Tree(), r.view.Info(), res, r.logs)
}
