package tui

import (
	"fmt"
	"github.com/trtbuild/trtbuild/internal/builder"
	"time"
)

// FormatDuration shows a duration the way the views do: "0.4s", "12.3s", "1m42s", "1h02m".
func FormatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Truncate(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		d = d.Truncate(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// FormatBytes shows a size in binary units: "512 B", "12.3 KiB", "1.5 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Summary is the one-line outcome every text renderer ends with.
func Summary(res builder.Result) string {
	switch res.Status {
	case builder.StatusBuilt:
		return fmt.Sprintf("Built %s (%s) in %s", res.Engine, FormatBytes(res.EngineBytes), FormatDuration(res.Duration))
	case builder.StatusCancelled:
		return fmt.Sprintf("Build cancelled after %s; no engine was written", FormatDuration(res.Duration))
	case builder.StatusTimedOut:
		return fmt.Sprintf("Build timed out after %s; no engine was written", FormatDuration(res.Duration))
	default:
		msg := res.Error
		if msg == "" {
			msg = "unknown error"
		}
		return fmt.Sprintf("Build failed after %s: %s", FormatDuration(res.Duration), msg)
	}
}
