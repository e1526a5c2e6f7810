package progress

import "time"

// Renderer draws one build. The session calls Begin once, then Handle, Notice and Tick from a
// single goroutine in any order, then End once. Implementations need not be safe for
// concurrent use by several goroutines.
//
// A renderer only draws: the session keeps the build's state (one State) and applies every
// event, notice and the result to it before it calls the renderer, which reads it through the
// View given to Begin and keeps no phase tree of its own.
type Renderer interface {
	// Begin starts the display for a build; v is the session's state of it, valid until End
	// returns.
	Begin(v View)
	// Handle takes the next batch of events, in order, already applied to the View (Early is
	// set on phase_finish events). The slice is reused after the call and must not be
	// changed.
	Handle(batch []Event)
	// Notice reports something the user or trtbuild did to the build (cancel, forced stop, a
	// time budget running out).
	Notice(n Notice)
	// Tick lets clock-driven output (heartbeats, elapsed time) advance during silence. The
	// session calls it about once a second.
	Tick(now time.Time)
	// End shows how the build ended and releases the terminal. It returns once the output is
	// complete. res carries the session's attribution (Where, Hint); the View's open phases
	// have been ended.
	End(res Result) error
}

// NoticeKind says what happened.
type NoticeKind int

// Notices.
const (
	NoticeCancelRequested NoticeKind = iota + 1 // first Ctrl-C / SIGINT / SIGTERM
	NoticeForceStop                             // second signal: the worker is being killed
	NoticeTimeout                               // a time budget ran out; cancelling
)

// Notice is one user-visible control event.
type Notice struct {
	Kind    NoticeKind
	Message string
}

// Controls lets an interactive renderer act on the build (the tty view reads Ctrl-C as a key in
// raw mode, so it must pass it on). Its one method, RequestCancel, is safe to call from any
// goroutine.
type Controls interface {
	// RequestCancel asks the builder to stop at its next step boundary; a second call stops
	// the worker at once.
	RequestCancel()
}

// Discard is the renderer that shows nothing: --progress quiet's, and an engine cache hit's,
// which only --report and --trace record.
type Discard struct{}

// Begin implements Renderer.
func (Discard) Begin(View) {}

// Handle implements Renderer.
func (Discard) Handle([]Event) {}

// Notice implements Renderer.
func (Discard) Notice(Notice) {}

// Tick implements Renderer.
func (Discard) Tick(time.Time) {}

// End implements Renderer.
func (Discard) End(Result) error { return nil }
