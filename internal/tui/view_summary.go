package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// slowest is how many top-level phases the summary of a build lists.
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
		lines = append(lines, v.slowestPhases(res.Duration)...)
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
		if res.Where != nil {
			lines = append(lines, "  Failed in: "+WherePath(res.Where))
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

// slowestPhases lists the longest top-level phases with their share of the total time.
func (v *viewState) slowestPhases(total time.Duration) []string {
	top, parent := v.tree.TopLevel()
	ids := slices.Clone(top)
	if len(ids) == 0 {
		return nil
	}
	end := v.tree.Last
	slices.SortStableFunc(ids, func(a, b int) int {
		da, db := v.tree.Get(a).Duration(end), v.tree.Get(b).Duration(end)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	ids = ids[:min(len(ids), slowest)]
	// Phases that took no measurable time (a build served from the timing cache) say nothing.
	for len(ids) > 0 && v.tree.Get(ids[len(ids)-1]).Duration(end) < 50*time.Millisecond {
		ids = ids[:len(ids)-1]
	}
	if len(ids) == 0 {
		return nil
	}
	nameW := 0
	for _, id := range ids {
		nameW = max(nameW, cellWidth(clean(v.tree.Get(id).Name)))
	}
	nameW = min(nameW, 48)
	t := &v.theme
	title := "  Slowest phases:"
	switch {
	case parent != nil && len(top) > len(ids):
		title = fmt.Sprintf("  Slowest of the %d phases in %s:", len(top), clean(parent.Name))
	case parent != nil:
		title = fmt.Sprintf("  Slowest phases in %s:", clean(parent.Name))
	}
	lines := []string{t.dim.Render(title)}
	for _, id := range ids {
		p := v.tree.Get(id)
		d := p.Duration(end)
		name := cutMiddle(clean(p.Name), nameW)
		line := fmt.Sprintf("    %s%s  %6s", name, spaces(max(nameW-cellWidth(name), 0)), progress.FormatDuration(d))
		if total > 0 {
			line += t.dim.Render(fmt.Sprintf("  %3d%%", min(int(d*100/total), 100)))
		}
		lines = append(lines, line)
	}
	return lines
}
