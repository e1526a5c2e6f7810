// Package tui renders a build's event stream for people and machines: the live terminal view
// (tty), line-oriented text for logs (plain), JSON lines (json), or nothing (quiet). Every
// renderer reads the same events and keeps the same builder.Tree.
package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// Renderer draws one build. The session calls Begin once, then Handle, Notice and Tick from a
// single goroutine in any order, then End once. Implementations need not be safe for
// concurrent use by several goroutines.
type Renderer interface {
	// Begin starts the display for a build.
	Begin(info builder.BuildInfo)
	// Handle takes the next batch of events, in order. The slice is reused after the call.
	Handle(batch []builder.Event)
	// Notice reports something the user or trtbuild did to the build (cancel, forced stop, a
	// time budget running out).
	Notice(n Notice)
	// Tick lets clock-driven output (heartbeats, elapsed time) advance during silence. The
	// session calls it about once a second.
	Tick(now time.Time)
	// End shows how the build ended and releases the terminal. It returns once the output is
	// complete.
	End(res builder.Result) error
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

// Mode is an output mode of --progress.
type Mode string

// Output modes.
const (
	ModeAuto  Mode = "auto"
	ModeTTY   Mode = "tty"
	ModePlain Mode = "plain"
	ModeJSON  Mode = "json"
	ModeQuiet Mode = "quiet"
)

// Modes lists the values --progress accepts.
var Modes = []Mode{ModeAuto, ModeTTY, ModePlain, ModeJSON, ModeQuiet}

// SelectMode resolves the --progress flag: env (TRTBUILD_PROGRESS) applies only when the flag
// is auto; auto means tty when stdout is a terminal whose TERM is not dumb, else plain. An
// explicit tty on a dumb terminal or a non-terminal falls back to plain with a warning.
func SelectMode(flag, env string, stdoutTTY bool, term string) (Mode, string, error) {
	m, err := parseMode(flag)
	if err != nil {
		return "", "", fmt.Errorf("invalid --progress %q: use one of %s", flag, modeList())
	}
	if m == ModeAuto && env != "" {
		m, err = parseMode(env)
		if err != nil {
			return "", "", fmt.Errorf("invalid TRTBUILD_PROGRESS=%q: use one of %s", env, modeList())
		}
	}
	interactive := stdoutTTY && term != "dumb"
	switch m {
	case ModeAuto:
		if interactive {
			return ModeTTY, "", nil
		}
		return ModePlain, "", nil
	case ModeTTY:
		if !interactive {
			why := "stdout is not a terminal"
			if stdoutTTY {
				why = "TERM is dumb"
			}
			return ModePlain, fmt.Sprintf("--progress tty needs a terminal (%s); using plain", why), nil
		}
	}
	return m, "", nil
}

func parseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q", s)
}

func modeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
