package tui

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// PlainOptions configures the plain renderer.
type PlainOptions struct {
	// Verbose prints every phase; otherwise a phase gets lines of its own down to depth 4 (a
	// phase that names a layer, TensorRT 8.7's "Finding fastest tactic for <layer>", only its
	// end: one line per timed layer), and deeper phases are counted in status lines.
	Verbose bool
	// Quiet is how long the log may stay without a line while a build runs: once nothing was
	// printed for this long, a status line says where the build is. Zero means 7s, which with
	// the session's tick once a second keeps every quiet stretch under 10 s, with room for a
	// late tick (CI systems end jobs whose log is silent for minutes).
	Quiet time.Duration
	// Now is the clock of status lines; nil means time.Now.
	Now func() time.Time
	// Color marks the outcome words (DONE, CANCELLED, ERROR, WARNING) and the final line with
	// the terminal's basic colours. Off by default: logs stay free of escape sequences unless
	// the user forces colour (CLICOLOR_FORCE, see ColorFromEnv).
	Color bool
}

// SGR colours of the plain renderer's outcome words.
const (
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrRed    = "\x1b[31m"
	sgrBold   = "\x1b[1m"
	sgrReset  = "\x1b[0m"
)

// paint wraps s in the colour sgr when colour is on.
func (p *Plain) paint(sgr, s string) string {
	if !p.opts.Color {
		return s
	}
	return sgr + s + sgrReset
}

const (
	// plainLineDepth is the deepest level whose phases get lines of their own.
	plainLineDepth = 4
	// A progress line is printed when a phase has advanced by 1/plainProgressParts of its
	// steps and plainProgressGap has passed since its last line, or plainProgressEvery has
	// passed and it advanced at all: a phase of 30 steps done in 0.2 s gets none, one of an
	// hour a line every three minutes.
	plainProgressParts = 20
	plainProgressGap   = time.Second
	plainProgressEvery = 5 * time.Second
	// plainQuiet is PlainOptions.Quiet's default.
	plainQuiet = 7 * time.Second
	// plainKinds is how many kinds of phase a status line names with their counts.
	plainKinds = 3
)

// Plain writes line-oriented progress for logs and pipes: no escape sequences at all, every
// phase line prefixed with its stable "#N", a line when a phase starts and ends (with its
// duration), progress lines only on meaningful change, and, whenever the log has been quiet for
// a while, a status line that says where the build is: the open phases down to the deepest
// (TensorRT 10 nests eight deep), their steps, how many phases below the lined ones ended
// since (thousands a second fold into counts) or how long the builder has reported nothing.
// Times of phase and log lines are build times taken from the events, so a replayed trace
// prints the same lines as the original build; status lines come from the clock.
//
// It keeps no phase tree: it reads the session's (progress.View) and remembers only which
// phases it printed a start line for, how far their progress lines got, and what it has not
// said yet (the phases that ended without a line, by kind).
type Plain struct {
	w       *bufio.Writer
	out     io.Writer
	opts    PlainOptions
	view    progress.View
	printed map[int]*plainState
	// lastLine is the clock's time of the newest line; lastStatus the build time of the
	// newest status line (or of Begin).
	lastLine   time.Time
	lastStatus time.Duration
	// unsaid counts the phases that ended without a line of their own since the last status
	// line, by kind (progress.Kind), in the order first seen.
	unsaid     map[string]int
	unsaidKind []string
	err        error
}

type plainState struct {
	done    int
	printed time.Duration
}

// NewPlain returns a plain renderer writing to w.
func NewPlain(w io.Writer, opts PlainOptions) *Plain {
	if opts.Quiet <= 0 {
		opts.Quiet = plainQuiet
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Plain{w: bufio.NewWriter(w), out: w, opts: opts, printed: make(map[int]*plainState), unsaid: make(map[string]int)}
}

// lined reports whether phase ph gets a line when it starts and when it ends: every phase when
// verbose; else the phases down to plainLineDepth, where a phase that names a layer
// (progress.Layer) gets only its end line.
func (p *Plain) lined(ph *progress.Phase) (start, end bool) {
	switch {
	case p.opts.Verbose:
		return true, true
	case ph.Depth > plainLineDepth:
		return false, false
	case ph.Depth == plainLineDepth && progress.Layer(ph.Name) != "":
		return false, true
	}
	return true, true
}

// Begin prints what is being built.
func (p *Plain) Begin(v progress.View) {
	p.view = v
	info := v.Info()
	line := fmt.Sprintf("Building %s -> %s (backend %s", pathtext.Q(info.Model), pathtext.Q(info.Engine), info.Backend)
	if info.Precision != "" {
		line += ", " + info.Precision
	}
	p.printf("%s)\n", line)
	p.flush()
}

// Handle prints the lines the batch calls for.
func (p *Plain) Handle(batch []progress.Event) {
	tree := p.view.Tree()
	for i := range batch {
		e := &batch[i]
		var ph *progress.Phase
		if e.Type == progress.EventPhaseStart || e.Type == progress.EventStep || e.Type == progress.EventPhaseFinish {
			ph = tree.Get(e.ID)
		}
		switch e.Type {
		case progress.EventPhaseStart:
			// A start the tree refused (a reused ID) names another phase than ph.
			if ph != nil && ph.Start == e.Time && ph.Name == e.Name {
				if start, _ := p.lined(ph); start {
					p.printed[ph.ID] = &plainState{printed: e.Time}
					p.printf("#%d %s %s (%s)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Label()), plural(ph.Steps, "step"))
				}
			}
		case progress.EventStep:
			if ph != nil {
				p.progress(ph, min(e.Step+1, ph.Steps), e.Time)
			}
		case progress.EventPhaseFinish:
			if ph != nil && ph.Finished && ph.End == max(e.Time, ph.Start) && !ph.Aborted {
				delete(p.printed, ph.ID)
				_, lined := p.lined(ph)
				switch {
				case !lined:
					p.untold(ph)
				case e.Early && p.view.Stopping():
					p.printf("#%d %s %s %s after %s (%d/%d)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Label()), p.paint(sgrYellow, "CANCELLED"), progress.FormatDuration(ph.Duration(e.Time)), ph.Done, ph.Steps)
				default:
					p.printf("#%d %s %s %s %s%s\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Label()), p.paint(sgrGreen, "DONE"), progress.FormatDuration(ph.Duration(e.Time)), early(ph))
				}
			}
		case progress.EventLog:
			sev := strings.ToUpper(e.Severity.String())
			switch {
			case e.Severity <= progress.SeverityError:
				sev = p.paint(sgrRed, sev)
			case e.Severity == progress.SeverityWarning:
				sev = p.paint(sgrYellow, sev)
			}
			p.printf("   %s %s: %s\n", progress.FormatDuration(e.Time), sev, clean(e.Message))
		}
	}
	p.flush()
}

// untold counts a phase that ended without a line of its own, for the next status line.
func (p *Plain) untold(ph *progress.Phase) {
	kind := progress.Kind(ph.Name)
	if _, ok := p.unsaid[kind]; !ok {
		if len(p.unsaid) >= 64 {
			kind = "other phases" // bounded, whatever the names
		}
		if _, ok := p.unsaid[kind]; !ok {
			p.unsaidKind = append(p.unsaidKind, kind)
		}
	}
	p.unsaid[kind]++
}

// progress prints a progress line for ph, which has done steps as of build time at, when it
// moved enough since the last one.
func (p *Plain) progress(ph *progress.Phase, done int, at time.Duration) {
	st, ok := p.printed[ph.ID]
	if !ok || done <= st.done {
		return
	}
	since := at - st.printed
	if since < plainProgressEvery && (since < plainProgressGap || (done-st.done)*plainProgressParts < ph.Steps) {
		return
	}
	st.done, st.printed = done, at
	p.printf("#%d %s %s %d/%d\n", ph.ID, progress.FormatDuration(at), clean(ph.Label()), done, ph.Steps)
}

// Notice prints the control event as a line of the log.
func (p *Plain) Notice(n progress.Notice) {
	p.printf("   %s %s\n", progress.FormatDuration(p.view.Tree().Last), clean(n.Message))
	p.flush()
}

// Tick prints a status line when the log has been quiet for PlainOptions.Quiet.
func (p *Plain) Tick(now time.Time) {
	if now.Sub(p.lastLine) < p.opts.Quiet {
		return
	}
	p.status(now)
	p.flush()
}

// status prints where the build is at wall time now: "#8 12.3s Timing graph nodes 5/12 ›
// Evaluating tactic times 98/153 › Measuring tactic time 1/4; 412 phases ended in the last 7.0s
// (Measuring tactic time 406, Evaluating tactic times 6)", or, while the builder reports
// nothing, "…; no progress reported for 1m30s", with the time left where the live view shows
// it, and the cancel waiting for the next step.
func (p *Plain) status(now time.Time) {
	at := p.view.BuildNow(now)
	tree := p.view.Tree()
	path := tree.Active()
	var b strings.Builder
	// The path starts at the deepest open phase with lines of its own, whose "#N" it takes.
	from := 0
	for i, ph := range path {
		if start, _ := p.lined(ph); start {
			from = i
		}
	}
	switch {
	case len(path) > 0:
		b.WriteString(fmt.Sprintf("#%d %s ", path[from].ID, progress.FormatDuration(at)))
		for i, ph := range path[from:] {
			if i > 0 {
				b.WriteString(" › ")
			}
			b.WriteString(fmt.Sprintf("%s %d/%d", clean(ph.Label()), ph.Done, ph.Steps))
		}
		if more := tree.Open() - len(path); more > 0 {
			b.WriteString(fmt.Sprintf(" (and %s running beside)", plural(more, "phase")))
		}
	case tree.Len() == 0:
		b.WriteString(fmt.Sprintf("   %s waiting for the builder's first phase", progress.FormatDuration(at)))
	default:
		b.WriteString(fmt.Sprintf("   %s no phase running", progress.FormatDuration(at)))
	}
	var notes []string
	if n := p.unsaidCount(); n > 0 {
		notes = append(notes, fmt.Sprintf("%s ended in the last %s (%s)", plural(n, "phase"), progress.FormatDuration(at-p.lastStatus), p.unsaidKinds()))
	}
	if silent := p.view.Silent(now); silent >= time.Second {
		notes = append(notes, "no progress reported for "+progress.FormatDuration(silent.Truncate(time.Second)))
	}
	c := p.view.Cancel()
	switch {
	case c.Forced:
	case c.Kind != 0:
		notes = append(notes, fmt.Sprintf("cancel requested %s ago: %s stops at its next step", progress.FormatDuration(now.Sub(c.At).Truncate(time.Second)), p.builderName()))
	default:
		if l, ok := p.view.Left(now); ok {
			notes = append(notes, l.String())
		}
	}
	if len(notes) > 0 {
		b.WriteString("; " + strings.Join(notes, "; "))
	}
	p.printf("%s\n", b.String())
	p.lastStatus = at
	clear(p.unsaid)
	p.unsaidKind = p.unsaidKind[:0]
}

// builderName is what the builder is called in a line: TensorRT, or the builder.
func (p *Plain) builderName() string {
	if p.view.Info().Backend == "tensorrt" {
		return "TensorRT"
	}
	return "the builder"
}

func (p *Plain) unsaidCount() int {
	n := 0
	for _, c := range p.unsaid {
		n += c
	}
	return n
}

// unsaidKinds names the most frequent kinds of the phases that ended without a line, with
// their counts: "Measuring tactic time 406, Evaluating tactic times 6".
func (p *Plain) unsaidKinds() string {
	kinds := slices.Clone(p.unsaidKind)
	slices.SortStableFunc(kinds, func(a, b string) int { return p.unsaid[b] - p.unsaid[a] })
	var parts []string
	for i, k := range kinds {
		if i == plainKinds {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", clean(k), p.unsaid[k]))
	}
	return strings.Join(parts, ", ")
}

// End prints the phases the builder left open and the outcome: for a failure where it
// happened and the hint, for a cancel or timeout where it stopped.
func (p *Plain) End(res progress.Result) error {
	word := p.paint(sgrYellow, "CANCELLED")
	if res.Status == progress.StatusFailed {
		word = p.paint(sgrRed, "ERROR")
	}
	tree := p.view.Tree()
	at := tree.Last
	for _, ph := range aborted(tree) {
		if _, lined := p.lined(ph); lined {
			p.printf("#%d %s %s %s after %s (%d/%d)\n", ph.ID, progress.FormatDuration(at), clean(ph.Label()), word, progress.FormatDuration(ph.Duration(at)), ph.Done, ph.Steps)
		}
	}
	switch res.Status {
	case progress.StatusBuilt:
		p.printf("%s\n", p.paint(sgrGreen+sgrBold, Summary(res)))
	case progress.StatusFailed:
		p.printf("%s\n", p.paint(sgrRed+sgrBold, Summary(res)))
	default:
		p.printf("%s\n", p.paint(sgrYellow+sgrBold, Summary(res)))
	}
	for _, line := range outcomeLines(res) {
		p.printf("  %s\n", clean(line))
	}
	p.flush()
	return p.err
}

// aborted returns the phases the build left open, which the session ended when it ended,
// deepest first.
func aborted(tree *progress.Tree) []*progress.Phase {
	var open []*progress.Phase
	tree.Walk(func(p *progress.Phase) bool {
		if p.Aborted {
			open = append(open, p)
		}
		return true
	})
	slices.Reverse(open)
	return open
}

// outcomeLines says where a build that did not succeed ended, and for a failure the node
// TensorRT's error names and the hint: "Failed in: … › Evaluating tactic times › Measuring
// tactic time (step 1/4, after 0.0s)", "Failed on node: /model/model.6/Conv + PWN(...) (as
// TensorRT's error names it)".
func outcomeLines(res progress.Result) []string {
	var lines []string
	if w := res.Where; w != nil && len(w.Path) > 0 {
		label := "Stopped in: "
		if res.Status == progress.StatusFailed {
			label = "Failed in: "
		}
		lines = append(lines, label+WherePath(w))
	}
	if w := res.Where; w != nil && w.Node != "" {
		lines = append(lines, NodeLine(w))
	}
	if res.Hint != "" {
		lines = append(lines, "Hint: "+res.Hint)
	}
	return lines
}

// NodeLine names the node a failed build's error names: "Failed on node: X (named in the
// error)".
func NodeLine(w *progress.Where) string {
	return "Failed on node: " + clean(w.Node) + " (named in the error)"
}

// WherePath names the phase of a progress.Where with its nearest ancestors and how far it got.
func WherePath(w *progress.Where) string {
	names := slices.Clone(w.Path)
	if len(names) > pathDepth {
		names = append([]string{"…"}, names[len(names)-pathDepth:]...)
	}
	for i, n := range names {
		names[i] = clean(n)
	}
	return fmt.Sprintf("%s (step %d/%d, after %s)", strings.Join(names, " › "), w.Done, w.Steps, progress.FormatDuration(time.Duration(w.Seconds*float64(time.Second))))
}

func (p *Plain) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	p.lastLine = p.opts.Now()
	if _, err := fmt.Fprintf(p.w, format, args...); err != nil {
		p.err = err
	}
}

func (p *Plain) flush() {
	if p.err == nil {
		if err := p.w.Flush(); err != nil {
			p.err = err
		}
	}
}

// early notes a phase that ended before all its steps were reported. TensorRT does so as a
// matter of course (its root phase ends at step 5 of 6, "Optimizing graph" at 29 of 33), so
// the note is neutral.
func early(ph *progress.Phase) string {
	if ph.Early && ph.Done == 0 {
		// The builder reported no step (a layer served from the timing cache).
		return " (no steps run)"
	}
	if ph.Early {
		return fmt.Sprintf(" (ended at %d/%d)", ph.Done, ph.Steps)
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// clean makes text safe for a log line: control characters (including ESC) become spaces or
// visible escapes, so builder-provided names can never move a cursor or change colours.
func clean(s string) string { return pathtext.Line(s) }
