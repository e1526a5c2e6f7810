package tui

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// TTYOptions configures the live terminal view.
type TTYOptions struct {
	// progress.Controls receives Ctrl-C presses (the terminal is in raw mode, so they arrive as keys,
	// not as SIGINT). The first call asks the build to cancel, the second stops the worker;
	// the session answers each with a progress.Notice, which is what the view shows.
	Controls progress.Controls
	// Verbose prints the builder's info and verbose log lines above the view, not only its
	// warnings and errors.
	Verbose bool
	// Color allows colour; resolve it with ColorFromEnv. Without it the view keeps bold and
	// faint text and uses bar glyphs that need no colour.
	Color bool
	// Now is the view's clock; nil means time.Now.
	Now func() time.Time
	// Width and Height fix the size of the view; 0 means ask the terminal and follow its
	// resizes.
	Width, Height int
	// Getenv reads the environment (taskbar progress support, colour depth); nil means
	// os.Getenv.
	Getenv func(string) string
	// Console is the console the view draws on: Begin switches its virtual-terminal processing
	// on (Windows) and End restores its modes. nil leaves the console as it is.
	Console *Console
}

// ViewError reports that the live view stopped because of a bug in it. The terminal was
// restored and the rest of the build was shown as plain text.
type ViewError struct {
	Panic any
	Stack []byte // the stack of the panic, for a bug report
}

// Error is one line for the user.
func (e *ViewError) Error() string {
	return fmt.Sprintf("the live terminal view crashed (%v) and progress went on as plain text; use --progress plain to avoid it, and please report this bug", e.Panic)
}

// endTimeout bounds how long End waits for the last lines to be drawn before it stops the
// view anyway (a terminal that does not read its output).
const endTimeout = 10 * time.Second

// maxFPS caps how often the terminal is written to.
const maxFPS = 15

// tty is the live terminal view: a Bubble Tea program drawn inline (no alternate screen) at
// the bottom of the terminal, with builder log lines printed above it into the terminal's
// history.
//
// Threading: the session calls Begin, Handle, Notice, Tick and End from one goroutine. Begin
// starts the program on a goroutine of its own. The program never reads the session's state:
// on the session's goroutine Handle leaves log lines in the inbox, and Handle (at most once a
// frame interval), Tick, Notice and End leave a progress.Snapshot of the state there, which
// the program takes on its next frame; End hands over the result and the final snapshot, wakes
// the program, and waits for it to draw the summary, exit and restore the terminal.
type tty struct {
	out, in *os.File
	opts    TTYOptions

	view     progress.View
	info     progress.BuildInfo
	lastSnap time.Time // wall time of the newest snapshot handed to the view
	box      *inbox
	model    *ttyModel
	prog     *tea.Program
	ownIn    *os.File // a terminal opened here for keys, closed by End
	runDone  chan struct{}
	runErr   error // valid after runDone is closed

	fallbackOnce sync.Once
	fallback     *Plain // takes over when the program ended early
	viewErr      error  // why it ended early
	started      bool
}

// NewTTY returns the live terminal view writing to out and reading keys from in (when in is
// not a terminal it reads them from the controlling terminal, and without one Ctrl-C reaches
// the session as SIGINT). The view puts the terminal in raw mode between Begin and End and
// restores it on every way out: success, failure, cancel, forced stop, a crashed worker and a
// panic in the view.
func NewTTY(out, in *os.File, opts TTYOptions) progress.Renderer {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	return &tty{out: out, in: in, opts: opts, runDone: make(chan struct{})}
}

// Begin starts the program.
func (r *tty) Begin(v progress.View) {
	r.view = v
	r.info = v.Info()
	info := r.info
	begin := v.Begin()
	r.box = newInbox()
	width, height := r.opts.Width, r.opts.Height
	r.model = newTTYModel(info, begin, r.box, modelOptions{
		color:    r.opts.Color,
		verbose:  r.opts.Verbose,
		taskbar:  TaskbarFromEnv(r.opts.Getenv),
		controls: r.opts.Controls,
		now:      r.opts.Now,
		width:    width,
		height:   height,
		tick:     frameInterval,
	})
	if w, h, err := term.GetSize(r.out.Fd()); err == nil {
		// Lay out the first frame at the right size; resizes follow as messages.
		if width <= 0 {
			r.model.width = w
		}
		if height <= 0 {
			r.model.height = h
		}
	}

	profile := colorprofile.ASCII
	if r.opts.Color {
		profile = max(colorprofile.Detect(r.out, os.Environ()), colorprofile.ANSI)
	}
	out := &watchedFile{File: r.out}
	r.model.opts.ready = out.wrote.Load
	popts := []tea.ProgramOption{
		tea.WithOutput(out),
		tea.WithInput(r.keys()),
		tea.WithoutSignalHandler(), // the session owns SIGINT and SIGTERM
		tea.WithFPS(maxFPS),
		tea.WithColorProfile(profile),
	}
	if width > 0 && height > 0 {
		popts = append(popts, tea.WithWindowSize(width, height))
	}
	if err := r.opts.Console.EnableVT(); err != nil {
		// The console takes no escape sequences after all: plain text from the start.
		r.started, r.runErr = true, err
		close(r.runDone)
		return
	}
	// The header goes out before the program starts, in the terminal's normal mode: it is
	// static, it belongs in the history above the builder's log lines, and with it the view
	// never starts at the top of a cleared screen, where tmux copies the screen into its
	// history each time the view is redrawn from there.
	for _, line := range r.model.headerLines() {
		fmt.Fprintln(r.out, line)
	}
	r.prog = tea.NewProgram(r.model, popts...)
	r.started = true
	go func() {
		defer close(r.runDone)
		_, r.runErr = r.prog.Run()
	}()
}

// watchedFile is the terminal the program writes to, noting that it has written. It keeps
// the *os.File methods (Fd above all), so Bubble Tea still sees a terminal.
type watchedFile struct {
	*os.File
	wrote atomic.Bool
}

func (f *watchedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.wrote.Store(true)
	return n, err
}

// keys returns where the program reads keys from: in when it is a terminal, else the
// controlling terminal, else nothing.
func (r *tty) keys() *os.File {
	if r.in != nil && term.IsTerminal(r.in.Fd()) {
		return r.in
	}
	f, err := openControllingTerminal()
	if err != nil || !term.IsTerminal(f.Fd()) {
		if f != nil {
			_ = f.Close()
		}
		return nil
	}
	r.ownIn = f
	return f
}

// Handle passes the batch's log lines to the program's next frame, and a snapshot of the
// session's state when the last one is a frame interval old.
func (r *tty) Handle(batch []progress.Event) {
	if r.degraded() {
		r.fallback.Handle(batch)
		return
	}
	r.box.put(batch)
	if now := r.opts.Now(); now.Sub(r.lastSnap) >= snapshotEvery {
		r.snapshot(now)
	}
}

// snapshot hands the program a copy of the session's state.
func (r *tty) snapshot(now time.Time) {
	r.lastSnap = now
	r.box.snapshot(r.view.Snapshot())
}

// Notice passes the new cancel state to the program's next frame.
func (r *tty) Notice(n progress.Notice) {
	if r.degraded() {
		r.fallback.Notice(n)
		return
	}
	r.snapshot(r.opts.Now())
}

// Tick hands the program a snapshot when events arrived since the last one; the view draws
// the clock on its own.
func (r *tty) Tick(now time.Time) {
	if r.degraded() {
		r.fallback.Tick(now)
		return
	}
	if r.box.isStale() {
		r.snapshot(now)
	}
}

// End hands over the result and returns once the summary is printed, the program has exited
// and the terminal is restored. The error is a *ViewError when the view crashed.
func (r *tty) End(res progress.Result) error {
	if !r.started {
		return nil
	}
	defer r.opts.Console.Restore() // also after a view that ended early
	if !r.degraded() {
		r.box.end(res, r.view.Snapshot())
		// Draw the summary now rather than on the next frame tick.
		go r.prog.Send(wakeMsg{})
		select {
		case <-r.runDone:
		case <-time.After(endTimeout):
			r.prog.Kill()
			<-r.runDone
		}
		if r.ownIn != nil {
			_ = r.ownIn.Close()
		}
		if r.model.summarised && r.model.failure == nil && !r.model.printing && r.runErr == nil {
			return nil
		}
		// The summary may not have made it: show the outcome as plain text.
		r.degrade(false)
	}
	return errors.Join(r.viewErr, r.fallback.End(res))
}

// degraded reports whether the program has ended before End, and then switches to plain
// output for the rest of the build, once.
func (r *tty) degraded() bool {
	select {
	case <-r.runDone:
	default:
		return false
	}
	r.degrade(true)
	return true
}

// degrade switches to plain output, once, after telling the user why the view stopped. midway
// says that the build goes on, so the plain renderer starts with its header line.
func (r *tty) degrade(midway bool) {
	r.fallbackOnce.Do(func() {
		switch {
		case r.model.failure != nil:
			r.viewErr = r.model.failure
		case r.runErr != nil:
			r.viewErr = fmt.Errorf("the live terminal view stopped: %w", r.runErr)
		}
		if r.viewErr != nil {
			fmt.Fprintf(r.out, "trtbuild: %v\n", r.viewErr)
		}
		r.fallback = NewPlain(r.out, PlainOptions{Verbose: r.opts.Verbose, Now: r.opts.Now})
		if midway {
			r.fallback.Begin(r.view)
		} else {
			r.fallback.view = r.view
		}
	})
}
