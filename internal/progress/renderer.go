package progress

import "time"

// Renderer draws one build. The session calls Begin once, then Handle, Notice and Tick from a
// single goroutine in any order, then End once. Implementations need not be safe for
// concurrent use by several goroutines.
type Renderer interface {
	// Begin starts the display for a build.
	Begin(info BuildInfo)
	// Handle takes the next batch of events, in order. The slice is reused after the call.
	Handle(batch []Event)
	// Notice reports something the user or trtbuild did to the build (cancel, forced stop, a
	// time budget running out).
	Notice(n Notice)
	// Tick lets clock-driven output (heartbeats, elapsed time) advance during silence. The
	// session calls it about once a second.
	Tick(now time.Time)
	// End shows how the build ended and releases the terminal. It returns once the output is
	// complete.
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
// raw mode, so it must pass it on). Both methods are safe to call from any goroutine.
type Controls interface {
	// RequestCancel asks the builder to stop at its next step boundary; a second call stops
	// the worker at once.
	RequestCancel()
}
