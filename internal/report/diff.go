package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Stage is one stage of a build and how long it took: a phase of a chain of single phases
// ("Building engine"), or the phases of one kind (progress.Kind) of a level summed, with how
// many there were. Depth is its level below the first stage.
type Stage struct {
	Name     string
	Duration Seconds
	Count    int
	Depth    int
}

// maxStageDepth bounds how deep Stages follows the time.
const maxStageDepth = 8

// Stages returns where the build's time went, level by level from the root: each level's
// phases summed by kind, in the order they started, then the level inside the kind that took
// the most time, as long as its phases have phases inside (TensorRT 10.16 and 11 nest the
// node timing 4 levels below the root: "Building engine" > "Building engine from subgraph" >
// "Computing profile costs" > "Timing tactics" > "Timing graph nodes").
func (r *Report) Stages() []Stage {
	var out []Stage
	level := r.Phases
	for depth := 0; len(level) > 0 && depth < maxStageDepth; depth++ {
		index := map[string]int{}
		inside := map[string][]*Phase{}
		first := len(out)
		for _, p := range level {
			name := p.Name
			if len(level) > 1 {
				name = progress.Kind(p.Name)
			}
			i, ok := index[name]
			if !ok {
				i = len(out)
				index[name] = i
				out = append(out, Stage{Name: name, Depth: depth})
			}
			out[i].Duration = round6(out[i].Duration + p.Duration)
			out[i].Count++
			inside[name] = append(inside[name], p.Children...)
		}
		next := -1
		for i := first; i < len(out); i++ {
			if len(inside[out[i].Name]) > 0 && (next < 0 || out[i].Duration > out[next].Duration) {
				next = i
			}
		}
		if next < 0 || mayHaveFolded(level, out[next].Name, len(level) > 1) {
			break
		}
		level = inside[out[next].Name]
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
		type key struct {
			name  string
			depth int
		}
		inB := map[key]Stage{}
		for _, s := range sb {
			inB[key{s.Name, s.Depth}] = s
		}
		indent := func(s Stage) string { return strings.Repeat("  ", s.Depth+1) }
		seen := map[key]bool{}
		for _, s := range sa {
			seen[key{s.Name, s.Depth}] = true
			if o, ok := inB[key{s.Name, s.Depth}]; ok {
				row(indent(s)+stageName(s, o.Count), stageTime(s), stageTime(o), change(float64(s.Duration), float64(o.Duration)))
			} else {
				row(indent(s)+stageName(s, 0), stageTime(s), "–", "")
			}
		}
		for _, s := range sb {
			if !seen[key{s.Name, s.Depth}] {
				row(indent(s)+stageName(s, 0), "–", stageTime(s), "")
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
		return "used, nothing timed"
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

// mayHaveFolded reports whether a phase of kind name in level has so many children that the
// tree may have folded some (progress.FoldKeep): their sums would be partial, so Stages goes no
// deeper. byKind: level's names are compared by kind.
func mayHaveFolded(level []*Phase, name string, byKind bool) bool {
	for _, p := range level {
		n := p.Name
		if byKind {
			n = progress.Kind(p.Name)
		}
		if n == name && len(p.Children) >= progress.FoldKeep {
			return true
		}
	}
	return false
}
