package tui

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// Summary is the one-line outcome every text renderer ends with.
func Summary(res progress.Result) string {
	switch res.Status {
	case progress.StatusBuilt:
		line := fmt.Sprintf("Built %s (%s) in %s", pathtext.Q(res.Engine), progress.FormatBytes(res.EngineBytes), progress.FormatDuration(res.Duration))
		if n := res.CacheHits + res.CacheMisses; n > 0 {
			line += fmt.Sprintf("; %d/%d timing-cache hits", res.CacheHits, n)
		}
		return line
	case progress.StatusCancelled:
		return fmt.Sprintf("Build cancelled after %s; no engine was written", progress.FormatDuration(res.Duration))
	case progress.StatusTimedOut:
		return fmt.Sprintf("Build timed out after %s; no engine was written", progress.FormatDuration(res.Duration))
	default:
		msg := res.Error
		if msg == "" {
			msg = "unknown error"
		}
		return fmt.Sprintf("Build failed after %s: %s", progress.FormatDuration(res.Duration), clean(msg))
	}
}
