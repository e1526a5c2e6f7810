package report

import (
	"math"
	"strconv"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Recorder is a progress.Renderer that draws nothing and keeps what a report needs: the phase tree,
// the warnings and errors, trtbuild's notices and the result. Put it beside the user's view
// with progress.Tee and call Report after the build has ended. Like every renderer it is used from
// one goroutine.
type Recorder struct {
	tree *progress.Tree
	info progress.BuildInfo
	logs []progress.Event
	res  *progress.Result
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{tree: progress.NewTree()} }

// Begin implements progress.Renderer.
func (r *Recorder) Begin(info progress.BuildInfo) { r.info = info }

// Handle implements progress.Renderer. Event times are rounded as the JSON-lines encoding rounds
// them, so a report made here equals, byte for byte, the one made later from a trace of the
// same build. The batch is not modified.
func (r *Recorder) Handle(batch []progress.Event) {
	for i := range batch {
		e := batch[i]
		e.Time = wireTime(e.Time)
		r.tree.Apply(&e)
		if e.Type == progress.EventLog && e.Severity <= progress.SeverityWarning && len(r.logs) <= logCount {
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
		r.logs = append(r.logs, progress.Event{Type: progress.EventLog, Time: r.tree.Last, Severity: progress.SeverityWarning, Message: n.Message})
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

// Report returns the report of what was recorded. Before End it reports an unknown outcome.
func (r *Recorder) Report() *Report {
	res := progress.Result{Status: StatusUnknown}
	if r.res != nil {
		res = *r.res
	}
	return FromTree(r.tree, r.info, res, r.logs)
}
