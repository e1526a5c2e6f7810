package tui

import (
	"bufio"
	"fmt"
	"io"
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
type Plain struct {
	w       *bufio.Writer
	out     io.Writer
	opts    PlainOptions
	tree    *progress.Tree
	printed map[int]*plainState
	started time.Time // wall clock at Begin
	// lastWall is the wall time of the last progress event; lastBeat of the last heartbeat.
	lastWall, lastBeat time.Time
	// stopping is set once a cancel or a time budget was announced: phases the builder then
	// ends early are shown as cancelled, not as done.
	stopping bool
	err      error
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
	return &Plain{w: bufio.NewWriter(w), out: w, opts: opts, tree: progress.NewTree(), printed: make(map[int]*plainState)}
}

// Begin prints what is being built.
func (p *Plain) Begin(info progress.BuildInfo) {
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
	for i := range batch {
		e := &batch[i]
		ph := p.tree.Apply(e)
		switch e.Type {
		case progress.EventPhaseStart:
			if ph != nil && (p.opts.Verbose || ph.Depth <= plainStartDepth) {
				p.printed[ph.ID] = &plainState{printed: e.Time}
				p.printf("#%d %s %s (%s)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), plural(ph.Steps, "step"))
			}
		case progress.EventStep:
			if ph != nil {
				p.progress(ph, e.Time)
			}
		case progress.EventPhaseFinish:
			if ph != nil {
				delete(p.printed, ph.ID)
				switch {
				case !p.opts.Verbose && ph.Depth > plainFinishDepth:
				case ph.Early && p.stopping:
					p.printf("#%d %s %s CANCELED after %s (%d/%d)\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), progress.FormatDuration(ph.Duration(e.Time)), ph.Done, ph.Steps)
				default:
					p.printf("#%d %s %s DONE %s%s\n", ph.ID, progress.FormatDuration(e.Time), clean(ph.Name), progress.FormatDuration(ph.Duration(e.Time)), early(ph))
				}
			}
		case progress.EventLog:
			p.printf("   %s %s: %s\n", progress.FormatDuration(e.Time), strings.ToUpper(e.Severity.String()), clean(e.Message))
		}
		if e.Type == progress.EventPhaseStart || e.Type == progress.EventStep || e.Type == progress.EventPhaseFinish {
			p.lastWall = p.opts.Now()
		}
	}
	p.flush()
}

func (p *Plain) progress(ph *progress.Phase, at time.Duration) {
	st, ok := p.printed[ph.ID]
	if !ok || ph.Done == st.done {
		return
	}
	if (ph.Done-st.done)*plainProgressParts < ph.Steps && at-st.printed < plainProgressEvery && ph.Done != ph.Steps {
		return
	}
	st.done, st.printed = ph.Done, at
	p.printf("#%d %s %s %d/%d\n", ph.ID, progress.FormatDuration(at), clean(ph.Name), ph.Done, ph.Steps)
}

// Notice prints the control event as a line of the log.
func (p *Plain) Notice(n progress.Notice) {
	p.stopping = true
	p.printf("   %s %s\n", progress.FormatDuration(p.tree.Last), clean(n.Message))
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
	if d := p.tree.Deepest(); d != nil {
		what = clean(d.Name)
		prefix = fmt.Sprintf("#%d", d.ID)
	}
	p.printf("%s %s %s: still running, no progress reported for %s\n", prefix, progress.FormatDuration(now.Sub(p.started)), what, progress.FormatDuration(silent.Truncate(time.Second)))
	p.flush()
}

// End closes the phases the builder left open and prints the outcome.
func (p *Plain) End(res progress.Result) error {
	word := "CANCELED"
	if res.Status == progress.StatusFailed {
		word = "ERROR"
	}
	at := p.tree.Last
	for _, ph := range p.tree.Abort(at) {
		if p.opts.Verbose || ph.Depth <= plainFinishDepth {
			p.printf("#%d %s %s %s after %s (%d/%d)\n", ph.ID, progress.FormatDuration(at), clean(ph.Name), word, progress.FormatDuration(ph.Duration(at)), ph.Done, ph.Steps)
		}
	}
	p.printf("%s\n", Summary(res))
	p.flush()
	return p.err
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
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
