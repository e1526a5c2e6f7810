package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// slowest is how many phases the summary of a build lists where the time went.
const slowest = 3

// severityLabel is how a log line is labelled above the tree.
func severityLabel(s progress.Severity) string {
	if s == progress.SeverityInternalError {
		return "internal error"
	}
	return s.String()
}

// logText formats a builder log line for printing above the tree: build time, severity,
// message. Errors stand out; info and verbose lines are quiet.
func (v *viewState) logText(l progress.LogLine) string {
	t := &v.theme
	label := severityLabel(l.Severity) + ":"
	switch {
	case l.Severity <= progress.SeverityError:
		label = t.err.Render(label)
	case l.Severity == progress.SeverityWarning:
		label = t.warn.Render(label)
	default:
		label = t.dim.Render(label)
	}
	at := progress.FormatDuration(l.At)
	return t.dim.Render(spaces(max(timeWidth-len(at), 0))+at) + " " + label + " " + clean(l.Message)
}

// wrapIndent word-wraps a line printed above the view to the terminal's width, indenting the
// lines it continues on, so that long builder messages stay readable in the history.
func (v *viewState) wrapIndent(s string, indent int) []string {
	w, _ := v.size()
	if cellWidth(s) <= w || w <= indent+10 {
		return []string{s}
	}
	lines := wrapWords(s, w-indent)
	for i := 1; i < len(lines); i++ {
		lines[i] = spaces(indent) + lines[i]
	}
	return lines
}

// wrapWords breaks s at spaces into lines of at most limit cells; a word longer than a line
// is cut. Unlike ansi.Wrap it never breaks at hyphens, which would split flags and commands
// like --max-shapes or nvidia-smi.
func wrapWords(s string, limit int) []string {
	var lines []string
	var cur strings.Builder
	curW, lineStart := 0, true
	newLine := func() {
		lines = append(lines, cur.String())
		cur.Reset()
		curW, lineStart = 0, true
	}
	for _, word := range strings.Split(s, " ") {
		ww := ansi.StringWidth(word)
		if curW > 0 && curW+1+ww > limit {
			newLine()
		}
		if ww > limit {
			if curW > 0 {
				newLine()
			}
			parts := strings.Split(ansi.Hardwrap(word, limit, false), "\n")
			for _, p := range parts[:len(parts)-1] {
				cur.WriteString(p)
				newLine()
			}
			word, ww = parts[len(parts)-1], ansi.StringWidth(parts[len(parts)-1])
		}
		if !lineStart {
			cur.WriteByte(' ')
			curW++
		}
		cur.WriteString(word)
		curW += ww
		lineStart = false
	}
	return append(lines, cur.String())
}

// summaryInput is what the final summary is drawn from: the result, with the session's
// attribution (Where) and hint, and the newest log lines, oldest first.
type summaryInput struct {
	res    progress.Result
	recent []progress.LogLine
	forced bool // the worker was killed on the second Ctrl-C or after --kill-after
}

// summary returns the lines printed when the build ends: the outcome, then for a built engine
// the slowest top-level phases, for a failure the failing phase, the last builder messages in
// a fenced block and one hint where a known pattern matches, and for a cancel where it stopped.
func (v *viewState) summary(in summaryInput) []string {
	t := &v.theme
	res := in.res
	var lines []string
	switch res.Status {
	case progress.StatusBuilt:
		lines = append(lines, t.ok.Render(t.done)+" "+t.title.Render(clean(Summary(res))))
		lines = append(lines, v.generations()...)
		lines = append(lines, v.spentPhases(res.Duration)...)
	case progress.StatusCancelled, progress.StatusTimedOut:
		lines = append(lines, t.warn.Render(t.failed)+" "+t.title.Render(clean(Summary(res))))
		if res.Where != nil {
			lines = append(lines, "  Stopped in: "+WherePath(res.Where))
		}
		if res.Status == progress.StatusTimedOut && res.Error != "" {
			lines = append(lines, "  "+clean(res.Error))
		}
		if in.forced {
			lines = append(lines, "  The build worker was killed without waiting for a step boundary.")
		}
	default:
		lines = append(lines, t.err.Render(t.failed)+" "+t.title.Render(clean(Summary(res))))
		if res.Where != nil && len(res.Where.Path) > 0 {
			lines = append(lines, "  Failed in: "+WherePath(res.Where))
		}
		if res.Where != nil && res.Where.Node != "" {
			lines = append(lines, "  "+NodeLine(res.Where))
		}
		if len(in.recent) > 0 {
			lines = append(lines, t.dim.Render("  ------"))
			lines = append(lines, t.dim.Render("   > last builder messages:"))
			for _, l := range in.recent {
				lines = append(lines, "  "+v.logText(l))
			}
			lines = append(lines, t.dim.Render("  ------"))
		}
		if res.Hint != "" {
			lines = append(lines, "  "+t.accent.Render("Hint:")+" "+clean(res.Hint))
		}
	}
	return lines
}

// pathDepth is how many names WherePath shows, deepest last.
const pathDepth = 3

// spentPhases lists where the time went (progress.Tree.Spent): the longest phases that are
// no wrapper of their children, whatever their names, with their steps and their share of the
// build's time; a phase listed under one listed before it is indented beneath it: "Timing
// graph nodes · 12 steps 28.6s 88%", then its "Evaluating tactic times · 153 steps 8.4s 26%".
func (v *viewState) spentPhases(total time.Duration) []string {
	var list []progress.Spent
	for _, sp := range v.tree.Spent() {
		// Phases that took no measurable time (a build served from the timing cache) say
		// nothing.
		if len(list) == slowest || sp.Duration < 50*time.Millisecond {
			break
		}
		list = append(list, sp)
	}
	if len(list) == 0 {
		return nil
	}
	generations := len(v.tree.Roots()) > 1
	names := make([]string, len(list))
	indent := make([]int, len(list))
	nameW := 0
	for i, sp := range list {
		for _, before := range list[:i] {
			if slices.Contains(sp.IDs[:len(sp.IDs)-1], before.ID) {
				indent[i] = max(indent[i], 2+indentOf(list, indent, before.ID))
			}
		}
		names[i] = clean(sp.Label)
		if generations && sp.Generation > 0 {
			names[i] += fmt.Sprintf(" (generation %d)", sp.Generation)
		}
		if sp.Steps > 1 {
			// Tells repeated names apart, and says how much work the phase had.
			names[i] += " · " + plural(sp.Steps, "step")
		}
		nameW = max(nameW, indent[i]+cellWidth(names[i]))
	}
	nameW = min(nameW, 56)
	t := &v.theme
	lines := []string{t.dim.Render("  Where the time went:")}
	for i, sp := range list {
		name := cutMiddle(names[i], max(nameW-indent[i], 8))
		line := fmt.Sprintf("    %s%s%s  %6s", spaces(indent[i]), name, spaces(max(nameW-indent[i]-cellWidth(name), 0)), progress.FormatDuration(sp.Duration))
		if total > 0 {
			line += t.dim.Render(fmt.Sprintf("  %3d%%", min(int(sp.Duration*100/total), 100)))
		}
		lines = append(lines, line)
	}
	return lines
}

// indentOf is the indent already given to the listed phase id.
func indentOf(list []progress.Spent, indent []int, id int) int {
	for i, sp := range list {
		if sp.ID == id {
			return indent[i]
		}
	}
	return 0
}

// generations says how many times TensorRT built the engine in this build and how long each
// took, when more than once: at optimization level 5 it builds one engine generation per
// backend strategy and keeps the fastest.
func (v *viewState) generations() []string {
	var times []string
	for _, id := range v.tree.Roots() {
		p := v.tree.Get(id)
		if p == nil || p.Rebuild {
			return nil
		}
		times = append(times, progress.FormatDuration(p.Duration(v.tree.Last)))
	}
	if len(times) < 2 {
		return nil
	}
	return []string{fmt.Sprintf("  %d engine generations: %s (TensorRT tried backend strategies and kept the fastest engine)", len(times), strings.Join(times, ", "))}
}
