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
		return line + cacheNote(res)
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

// cacheNote says what the timing cache did for a build, "" when nothing is known. TensorRT
// tells no hits: a build over it knows only the timings it added to the cache (CacheMisses)
// and whether the given cache was used.
func cacheNote(res progress.Result) string {
	switch {
	case res.CacheHits > 0:
		return fmt.Sprintf("; %d/%d timing-cache hits", res.CacheHits, res.CacheHits+res.CacheMisses)
	case res.CacheMisses == 1:
		return "; 1 new timing added to the timing cache"
	case res.CacheMisses > 0:
		return fmt.Sprintf("; %d new timings added to the timing cache", res.CacheMisses)
	case res.CacheUsed:
		return "; every timing from the timing cache"
	}
	return ""
}
