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
	// Verbose prints every phase; otherwise phase starts are printed down to depth 3 and phase
	// ends down to depth 4 (one line per timed layer), and deeper phases only count.
	Verbose bool
	// HeartbeatAfter is the silence after which a heartbeat line is printed, and then every
	// HeartbeatEvery. Zero values mean 10s and 30s.
	HeartbeatAfter, HeartbeatEvery time.Duration
	// Now is the clock for heartbeats; nil means time.Now.
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
	plainStartDepth  = 3
	plainFinishDepth = 4
	// A progress line is printed when a phase has advanced by 1/plainProgressParts of its
	// steps since the last line, or plainProgressEvery has passed and it advanced at all.
	plainProgressParts = 20
	plainProgressEvery = 5 * time.Second
)

// Plain writes line-oriented progress for logs and pipes: no escape sequences at all, every
// phase line prefixed with its stable "#N", a line when a phase starts and ends (with its
// duration), progress lines only on meaningful change, and a heartbeat during long silence so a
// log never looks hung. Times are build times taken from the events, so a replayed trace prints
// the same lines as the original build.
//
// It keeps no phase tree: it reads the session's (progress.View) and remembers only which
// phases it printed a start line for and how far their progress lines got.
type Plain struct {
	w       *bufio.Writer
	out     io.Writer
	opts    PlainOptions
	view    progress.View
	printed map[int]*plainState
	started time.Time // wall clock at Begin
	// lastWall is the wall time of the last progress event; lastBeat of the last heartbeat.
	lastWall, lastBeat time.Time
	err                error
}

type plainState struct {
	done    int
	printed time.Duration
}

// NewPlain returns a plain renderer writing to w.
func NewPlain(w io.Writer, opts PlainOptions) *Plain {
	if opts.HeartbeatAfter <= 0 {
		opts.HeartbeatAfter = 10 * time.Second
	}
	if opts.HeartbeatEvery <= 0 {
		opts.HeartbeatEvery = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Plain{w: bufio.NewWriter(w), out: w, opts: opts, printed: make(map[int]*plainState)}
}

// Begin prints what is being built.
func (p *Plain) Begin(v progress.View) {
	p.view = v
	info := v.Info()
	p.started = p.opts.Now()
	p.lastWall = p.started
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
			if ph != nil && ph.Start == e.Time && ph.Name == e.Name && (p.opts.Verbose || ph.Depth <= plainStartDepth) {
				p.printed[ph.ID] = &plainState{printed: e.Time}
				p.printf("#%d %s %s (%s)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), plural(ph.Steps, "step"))
			}
		case progress.EventStep:
			if ph != nil {
				p.progress(ph, min(e.Step+1, ph.Steps), e.Time)
			}
		case progress.EventPhaseFinish:
			if ph != nil && ph.Finished && ph.End == max(e.Time, ph.Start) && !ph.Aborted {
				delete(p.printed, ph.ID)
				switch {
				case !p.opts.Verbose && ph.Depth > plainFinishDepth:
				case e.Early && p.view.Stopping():
					p.printf("#%d %s %s %s after %s (%d/%d)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), p.paint(sgrYellow, "CANCELLED"), progress.FormatDuration(ph.Duration(e.Time)), ph.Done, ph.Steps)
				default:
					p.printf("#%d %s %s %s %s%s\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), p.paint(sgrGreen, "DONE"), progress.FormatDuration(ph.Duration(e.Time)), early(ph))
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
		if e.Type == progress.EventPhaseStart || e.Type == progress.EventStep || e.Type == progress.EventPhaseFinish {
			p.lastWall = p.opts.Now()
		}
	}
	p.flush()
}

// progress prints a progress line for ph, which has done steps as of build time at, when it
// moved enough since the last one.
func (p *Plain) progress(ph *progress.Phase, done int, at time.Duration) {
	st, ok := p.printed[ph.ID]
	if !ok || done <= st.done {
		return
	}
	if (done-st.done)*plainProgressParts < ph.Steps && at-st.printed < plainProgressEvery && done != ph.Steps {
		return
	}
	st.done, st.printed = done, at
	p.printf("#%d %s %s %d/%d\n", ph.ID, progress.FormatDuration(at), clean(ph.Name), done, ph.Steps)
}

// Notice prints the control event as a line of the log.
func (p *Plain) Notice(n progress.Notice) {
	p.printf("   %s %s\n", progress.FormatDuration(p.view.Tree().Last), clean(n.Message))
	p.flush()
}

// Tick prints a heartbeat when progress has been silent for a while.
func (p *Plain) Tick(now time.Time) {
	silent := now.Sub(p.lastWall)
	if silent < p.opts.HeartbeatAfter || now.Sub(p.lastBeat) < p.opts.HeartbeatEvery {
		return
	}
	p.lastBeat = now
	what := "the builder"
	prefix := "  "
	if d := p.view.Tree().Deepest(); d != nil {
		what = clean(d.Name)
		prefix = fmt.Sprintf("#%d", d.ID)
	}
	left := ""
	if l, ok := p.view.Left(now); ok {
		left = "; " + l.String()
	}
	p.printf("%s %s %s: still running, no progress reported for %s%s\n", prefix, progress.FormatDuration(now.Sub(p.started)), what, progress.FormatDuration(silent.Truncate(time.Second)), left)
	p.flush()
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
		if p.opts.Verbose || ph.Depth <= plainFinishDepth {
			p.printf("#%d %s %s %s after %s (%d/%d)\n", ph.ID, progress.FormatDuration(at), clean(ph.Name), word, progress.FormatDuration(ph.Duration(at)), ph.Done, ph.Steps)
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

// outcomeLines says where a build that did not succeed ended, and for a failure the hint:
// "Failed in: Building engine › … › Finding fastest tactic for /features/…/Conv (step 0/6,
// after 0.2s)".
func outcomeLines(res progress.Result) []string {
	var lines []string
	if w := res.Where; w != nil {
		label := "Stopped in: "
		if res.Status == progress.StatusFailed {
			label = "Failed in: "
		}
		lines = append(lines, label+WherePath(w))
	}
	if res.Hint != "" {
		lines = append(lines, "Hint: "+res.Hint)
	}
	return lines
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

func early(ph *progress.Phase) string {
	if ph.Early && ph.Done == 0 {
		// The builder reported no step (a layer served from the timing cache).
		return " (no steps run)"
	}
	if ph.Early {
		return fmt.Sprintf(" (finished early at %d/%d)", ph.Done, ph.Steps)
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
