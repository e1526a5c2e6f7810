package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Stage is one stage of a build and how long it took: a phase of the chain of single phases
// that wraps a TensorRT build ("Building engine", "Timing graph nodes"), or, below it, the
// phases of one kind (progress.Kind) summed, with how many there were.
type Stage struct {
	Name     string
	Duration Seconds
	Count    int
}

// Stages returns the build's stages in the order they started.
func (r *Report) Stages() []Stage {
	var out []Stage
	level := r.Phases
	for len(level) == 1 && len(level[0].Children) > 0 {
		out = append(out, Stage{Name: level[0].Name, Duration: level[0].Duration, Count: 1})
		level = level[0].Children
	}
	index := map[string]int{}
	for _, p := range level {
		name := progress.Kind(p.Name)
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, Stage{Name: name})
		}
		out[i].Duration = round6(out[i].Duration + p.Duration)
		out[i].Count++
	}
	return out
}

// WriteDiff compares two builds as a table: outcome, build time, engine size, timing cache,
// worker memory, then the time of each stage, with the change from a to b.
func WriteDiff(w io.Writer, nameA string, a *Report, nameB string, b *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, va, vb, change string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", label, va, vb, change)
	}
	row("", "A: "+nameA, "B: "+nameB, "change")
	row("status", string(a.Result.Status), string(b.Result.Status), "")
	row("build time", seconds(a.Result.Duration), seconds(b.Result.Duration), change(float64(a.Result.Duration), float64(b.Result.Duration)))
	row("engine size", sizeOrNone(a.Result.EngineBytes), sizeOrNone(b.Result.EngineBytes), change(float64(a.Result.EngineBytes), float64(b.Result.EngineBytes)))
	row("timing cache", cacheText(a.Cache), cacheText(b.Cache), "")
	row("worker peak memory", sizeOrNone(a.Result.PeakRSS), sizeOrNone(b.Result.PeakRSS), change(float64(a.Result.PeakRSS), float64(b.Result.PeakRSS)))
	row("phases", fmt.Sprint(a.Count), fmt.Sprint(b.Count), "")
	sa, sb := a.Stages(), b.Stages()
	if len(sa)+len(sb) > 0 {
		row("stages:", "", "", "")
		inB := map[string]Stage{}
		for _, s := range sb {
			inB[s.Name] = s
		}
		seen := map[string]bool{}
		for _, s := range sa {
			seen[s.Name] = true
			if o, ok := inB[s.Name]; ok {
				row("  "+stageName(s, o.Count), stageTime(s), stageTime(o), change(float64(s.Duration), float64(o.Duration)))
			} else {
				row("  "+stageName(s, 0), stageTime(s), "–", "")
			}
		}
		for _, s := range sb {
			if !seen[s.Name] {
				row("  "+stageName(s, 0), "–", stageTime(s), "")
			}
		}
	}
	return tw.Flush()
}

func change(a, b float64) string {
	if a == b {
		return "same"
	}
	if a == 0 {
		return ""
	}
	pct := (b - a) / a * 100
	s := fmt.Sprintf("%+.0f%%", pct)
	if strings.TrimLeft(s, "+-") == "0%" {
		return "same"
	}
	return s
}

func sizeOrNone(n int64) string {
	if n <= 0 {
		return "–"
	}
	return progress.FormatBytes(n)
}

// cacheText says what the timing cache did: hits where the builder told them, else (TensorRT
// tells none) the timings the build added, or that every timing came from the cache.
func cacheText(c Cache) string {
	switch {
	case c.Hits > 0:
		return fmt.Sprintf("%d/%d hits", c.Hits, c.Hits+c.Misses)
	case c.Misses > 0:
		return fmt.Sprintf("%d timed", c.Misses)
	case c.Used:
		return "all cached"
	}
	return "off"
}

// stageName names a stage; one of several phases says they are summed.
func stageName(s Stage, other int) string {
	if max(s.Count, other) > 1 {
		return s.Name + " (summed)"
	}
	return s.Name
}

func stageTime(s Stage) string {
	if s.Count > 1 {
		return fmt.Sprintf("%s ×%d", seconds(s.Duration), s.Count)
	}
	return seconds(s.Duration)
}
