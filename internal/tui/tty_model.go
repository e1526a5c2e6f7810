package tui

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// frameInterval is the view's own clock: every tick applies what arrived and redraws, so the
// frame rate is at most 10 a second however fast events come, and the spinner and elapsed
// times move during minutes of builder silence.
const frameInterval = 100 * time.Millisecond

// maxSpareEvents is the largest event buffer kept between frames; a bigger one left by a
// burst is dropped so that memory goes back to normal.
const maxSpareEvents = 4096

// frameMsg is the view's clock tick.
type frameMsg struct{}

// wakeMsg asks for a frame now, without moving the clock's schedule: the result is in.
type wakeMsg struct{}

// printedMsg says that everything queued for printing above the view has been printed.
type printedMsg struct{}

// modelOptions configures a ttyModel.
type modelOptions struct {
	color, verbose, taskbar bool
	controls                progress.Controls
	now                     func() time.Time
	// width and height, when positive, fix the size and make the model ignore resizes.
	width, height int
	// tick is the frame interval; zero means the model never schedules its own frames
	// (tests send frameMsg themselves).
	tick time.Duration
	// ready reports whether the renderer has written to the terminal yet; nil means it has.
	// Bubble Tea's renderer sizes its idea of the view on its first flush, and a line
	// printed above the view before that lands at the wrong place, over lines already on
	// the screen.
	ready func() bool
}

// ttyModel is the Bubble Tea model of the live view. All of its state is owned by the
// program's goroutine; other goroutines reach it only through the inbox.
type ttyModel struct {
	viewState
	opts modelOptions
	in   *inbox

	clock time.Time        // wall time of the current frame
	spare []progress.Event // the other half of the inbox's double buffer
	// snap is the newest snapshot of the session's state; viewState's tree is its tree.
	snap *progress.Snapshot

	printQ   []string // lines waiting to be printed above the view
	printing bool     // a print is in flight
	// readyTicks counts frame ticks that found the renderer's first output written; lines
	// are printed above the view only from the second on (see modelOptions.ready).
	readyTicks int

	result     *progress.Result
	summarised bool // the summary is queued: quit once it is printed
	quitting   bool
	failure    *ViewError

	frameText string
	dirty     bool
}

func newTTYModel(info progress.BuildInfo, begin time.Time, in *inbox, opts modelOptions) *ttyModel {
	if opts.now == nil {
		opts.now = time.Now
	}
	m := &ttyModel{
		viewState: viewState{
			theme:        newTheme(opts.color),
			info:         info,
			tree:         progress.NewTree(), // empty until the first snapshot
			width:        opts.width,
			height:       opts.height,
			verbose:      opts.verbose,
			begin:        begin,
			lastProgress: begin,
		},
		opts:  opts,
		in:    in,
		clock: begin,
		dirty: true,
	}
	if in != nil && in.pending() {
		// Something arrived before the program started: the first frame draws it, rather than
		// whichever of "waiting for the builder" and it the first tick happens to reach first.
		m.step(opts.now())
	}
	return m
}

// Init starts the frame clock.
func (m *ttyModel) Init() tea.Cmd { return m.tick() }

func (m *ttyModel) tick() tea.Cmd {
	if m.opts.tick <= 0 || m.quitting {
		return nil
	}
	return tea.Tick(m.frameEvery(), func(time.Time) tea.Msg { return frameMsg{} })
}

// quietFrames is how many frame intervals apart frames are drawn while the builder is silent.
const quietFrames = 4

// frameEvery is the time to the next frame: the frame interval, or quietFrames of them while
// the builder has reported nothing for silenceAfter, when only the clocks and the spinner
// move: a silent build of many minutes then costs a quarter of the redraws.
func (m *ttyModel) frameEvery() time.Duration {
	if m.result == nil && len(m.printQ) == 0 && m.clock.Sub(m.lastProgress) >= silenceAfter {
		return quietFrames * m.opts.tick
	}
	return m.opts.tick
}

// Update handles the frame clock, keys, resizes and print acknowledgements. A panic in it
// ends the program cleanly (the terminal is restored) and is reported by End.
func (m *ttyModel) Update(msg tea.Msg) (model tea.Model, cmd tea.Cmd) {
	if m.failure != nil {
		return m, tea.Quit
	}
	defer func() {
		if r := recover(); r != nil {
			m.fail(r)
			model, cmd = m, tea.Quit
		}
	}()
	var next tea.Cmd
	switch msg := msg.(type) {
	case frameMsg:
		if m.quitting {
			return m, nil
		}
		if m.readyTicks < 2 && (m.opts.ready == nil || m.opts.ready()) {
			m.readyTicks++
		}
		m.step(m.opts.now())
		next = m.tick()
	case wakeMsg:
		if m.quitting {
			return m, nil
		}
		m.step(m.opts.now())
	case printedMsg:
		m.printing = false
	case tea.WindowSizeMsg:
		if m.opts.width <= 0 {
			m.width = msg.Width
		}
		if m.opts.height <= 0 {
			m.height = msg.Height
		}
		m.tallest = 0 // the renderer redraws everything at a new size anyway
		m.dirty = true
	case tea.KeyPressMsg:
		// Ctrl-C arrives as a key in raw mode. The session decides what a press means
		// (cancel, then force-stop) and answers with a progress.Notice, which is what the view shows.
		if msg.String() == "ctrl+c" && m.result == nil && m.opts.controls != nil {
			m.opts.controls.RequestCancel()
		}
	}
	return m, tea.Batch(next, m.flush())
}

// View draws the current frame. It is called after every message, so it redraws only when a
// frame tick or a resize changed something, and otherwise returns the cached frame.
func (m *ttyModel) View() (v tea.View) {
	// Once the result is in, the summary printed above replaces the view: the tree (now with
	// every phase ended) is not drawn again.
	if m.quitting || m.failure != nil || m.summarised {
		return tea.NewView("")
	}
	defer func() {
		if r := recover(); r != nil {
			m.fail(r)
			v = tea.NewView("")
		}
	}()
	if m.dirty {
		m.frameText = m.frame(m.clock)
		m.dirty = false
	}
	v = tea.NewView(m.frameText)
	if m.opts.taskbar {
		switch pct := m.overall(); {
		case m.cancel.Kind != 0 || m.cancel.Forced:
			v.ProgressBar = tea.NewProgressBar(tea.ProgressBarWarning, max(pct, 0))
		case pct < 0:
			v.ProgressBar = tea.NewProgressBar(tea.ProgressBarIndeterminate, 0)
		default:
			v.ProgressBar = tea.NewProgressBar(tea.ProgressBarDefault, pct)
		}
	}
	return v
}

func (m *ttyModel) fail(r any) {
	m.failure = &ViewError{Panic: r, Stack: debug.Stack()}
	m.quitting = true
}

// step applies everything that arrived since the last frame, as of wall time now.
func (m *ttyModel) step(now time.Time) {
	m.clock = now
	m.dirty = true
	if m.in == nil {
		return
	}
	got := m.in.take(m.spare)
	for i := range got.logs {
		e := &got.logs[i]
		m.log(progress.LogLine{At: e.Time, Severity: e.Severity, Message: e.Message})
	}
	clear(got.logs) // drop references to messages
	m.spare = got.logs[:0]
	if cap(m.spare) > maxSpareEvents {
		m.spare = nil
	}
	if got.skipped > 0 && m.verbose {
		m.printQ = append(m.printQ, m.theme.dim.Render(fmt.Sprintf(
			"       … %d info lines skipped to keep up; --progress plain or json keeps every line", got.skipped)))
	}
	if got.snap != nil {
		m.take(got.snap)
	}
	if got.result != nil && m.result == nil {
		m.finish(*got.result)
	}
}

// take makes s the state the view draws.
func (m *ttyModel) take(s *progress.Snapshot) {
	m.snap = s
	m.tree = s.Tree
	m.lastProgress = s.LastProgress
	m.skew, m.skewKnown = s.Skew, s.SkewKnown
	m.cancel = s.Cancel
	m.pace = s.Pace
}

// log queues a builder log line for printing: warnings and errors always, info and verbose
// lines with --verbose.
func (m *ttyModel) log(l progress.LogLine) {
	if l.Severity <= progress.SeverityWarning || m.verbose {
		m.printQ = append(m.printQ, m.wrapIndent(m.logText(l), timeWidth+1)...)
	}
}

// finish queues the summary; the program quits once it is printed.
func (m *ttyModel) finish(res progress.Result) {
	m.result = &res
	var recent []progress.LogLine
	if m.snap != nil {
		recent = m.snap.Recent
	}
	for _, line := range m.summary(summaryInput{
		res:    res,
		recent: recent,
		forced: m.cancel.Forced,
	}) {
		m.printQ = append(m.printQ, m.wrapIndent(line, 4)...)
	}
	m.summarised = true
}

// flush returns the command that prints the queued lines above the view, or quits when the
// build has ended and everything is printed. The lines go out in one sequence, so they keep
// their order, in chunks that fit between the top of the screen and the view: a taller
// insertion would push part of the view into the terminal's history.
func (m *ttyModel) flush() tea.Cmd {
	if m.printing || m.quitting || m.readyTicks < 2 {
		return nil
	}
	if len(m.printQ) == 0 {
		if m.summarised {
			m.quitting = true
			return tea.Quit
		}
		return nil
	}
	w, h := m.size()
	room := h - 1 - strings.Count(m.frameText, "\n") - 1
	var cmds []tea.Cmd
	for _, chunk := range chunkLines(m.printQ, w, room) {
		cmds = append(cmds, tea.Println(chunk))
	}
	cmds = append(cmds, func() tea.Msg { return printedMsg{} })
	clear(m.printQ)
	m.printQ = m.printQ[:0]
	m.printing = true
	return tea.Sequence(cmds...)
}

// chunkLines joins lines into chunks of at most room terminal rows each (at least one line a
// chunk), counting a line wider than width as the rows it wraps to, the way the renderer
// counts when it makes room above the view.
func chunkLines(lines []string, width, room int) []string {
	width, room = max(width, 1), max(room, 1)
	var chunks []string
	start, rows := 0, 0
	for i, line := range lines {
		n := 1 + cellWidth(line)/width
		if i > start && rows+n > room {
			chunks = append(chunks, strings.Join(lines[start:i], "\n"))
			start, rows = i, 0
		}
		rows += n
	}
	if start < len(lines) {
		chunks = append(chunks, strings.Join(lines[start:], "\n"))
	}
	return chunks
}
