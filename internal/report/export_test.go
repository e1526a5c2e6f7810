package report

// Test-only API of package report: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import (
	"io"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// FromTrace makes the report of a recorded trace held in memory.
func FromTrace(t *trace.Trace) *Report {
	i := 0
	r, _ := fromEvents(func() progress.BuildInfo { return t.Info }, func() (progress.Event, error) {
		if i == len(t.Events) {
			return progress.Event{}, io.EOF
		}
		i++
		return t.Events[i-1], nil
	}, func() *progress.Result { return t.Result })
	return r
}
