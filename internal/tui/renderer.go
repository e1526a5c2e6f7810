// Package tui renders a build's event stream for people: the live terminal view (tty),
// line-oriented text for logs (plain), or nothing (quiet); JSON lines for machines are
// progress.JSONLines, which needs no terminal library. The
// renderers only draw: they read the session's progress.State through progress.View (the live
// view through snapshots taken on the session's goroutine) and keep no phase tree.
package tui

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/progress"
)

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

// Quiet draws nothing (--progress quiet); errors still reach stderr through the command.
type Quiet = progress.Discard
