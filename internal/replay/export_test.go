package replay

// Test-only API of package replay: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import (
	"context"
	"io"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// Play is PlayReader for a trace held in memory.
func Play(ctx context.Context, t *trace.Trace, r progress.Renderer, o Options) error {
	i := 0
	next := func() (progress.Event, error) {
		if i == len(t.Events) {
			return progress.Event{}, io.EOF
		}
		i++
		return t.Events[i-1], nil
	}
	return play(ctx, t.Info, next, func() *progress.Result { return t.Result }, r, o)
}
