package report

import (
	"math"
	"strconv"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// Recorder is a tui.Renderer that draws nothing and keeps what a report needs: the phase tree,
// the warnings and errors, trtbuild's notices and the result. Put it beside the user's view
// with tui.Tee and call Report after the build has ended. Like every renderer it is used from
// one goroutine.
type Recorder struct {
	tree *builder.Tree
	info builder.BuildInfo
	logs []builder.Event
	res  *builder.Result
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{tree: builder.NewTree()} }

// Begin implements tui.Renderer.
func (r *Recorder) Begin(info builder.BuildInfo) { r.info = info }

// Handle implements tui.Renderer. Event times are rounded as the JSON-lines encoding rounds
// them, so a report made here equals, byte for byte, the one made later from a trace of the
// same build. The batch is not modified.
func (r *Recorder) Handle(batch []builder.Event) {
	for i := range batch {
		e := batch[i]
		e.Time = wireTime(e.Time)
		r.tree.Apply(&e)
		if e.Type == builder.EventLog && e.Severity <= builder.SeverityWarning && len(r.logs) <= logCount {
			r.logs = append(r.logs, e)
		}
	}
}

// wireTime returns d as it reads back from a JSON line: written as seconds with six decimals
// (builder.AppendJSON), read back rounded to microseconds (builder.DecodeJSON).
func wireTime(d time.Duration) time.Duration {
	s, err := strconv.ParseFloat(strconv.FormatFloat(d.Seconds(), 'f', 6, 64), 64)
	if err != nil || s < 0 {
		return d
	}
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}

// Notice implements tui.Renderer: a notice (a cancel request, a budget running out) is kept as
// a warning, as the JSON stream records it.
func (r *Recorder) Notice(n tui.Notice) {
	if len(r.logs) <= logCount {
		r.logs = append(r.logs, builder.Event{Type: builder.EventLog, Time: r.tree.Last, Severity: builder.SeverityWarning, Message: n.Message})
	}
}

// Tick implements tui.Renderer.
func (r *Recorder) Tick(time.Time) {}

// End implements tui.Renderer.
func (r *Recorder) End(res builder.Result) error {
	res.Duration = wireTime(res.Duration)
	r.res = &res
	return nil
}

// Report returns the report of what was recorded. Before End it reports an unknown outcome.
func (r *Recorder) Report() *Report {
	res := builder.Result{Status: StatusUnknown}
	if r.res != nil {
		res = *r.res
	}
	return FromTree(r.tree, r.info, res, r.logs)
}
