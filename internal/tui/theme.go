package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// ColorFromEnv decides whether text output may use colour. NO_COLOR with any non-empty value
// turns colour off and wins over everything else (https://no-color.org); CLICOLOR_FORCE with
// a value other than "0" turns it on even when the output is not a terminal; CLICOLOR=0 turns
// it off; otherwise colour follows isTTY (https://bixense.com/clicolors).
func ColorFromEnv(getenv func(string) string, isTTY bool) bool {
	if getenv("NO_COLOR") != "" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	if getenv("CLICOLOR") == "0" {
		return false
	}
	return isTTY
}

// TaskbarFromEnv reports whether the terminal is known to show OSC 9;4 progress in its tab or
// taskbar (Windows Terminal, ConEmu, WezTerm, Ghostty, iTerm2). Other terminals are left
// alone on purpose: some of them show any OSC 9 as a desktop notification. Inside tmux or
// screen the sequence would be swallowed, so they count as unsupported.
func TaskbarFromEnv(getenv func(string) string) bool {
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") {
		return false
	}
	if getenv("WT_SESSION") != "" || getenv("ConEmuANSI") == "ON" {
		return true
	}
	switch getenv("TERM_PROGRAM") {
	case "WezTerm", "ghostty", "iTerm.app":
		return true
	}
	return false
}

// theme holds the styles and glyphs of the live view. Colours are the terminal's own 16, so
// the view follows the user's palette on light and dark backgrounds alike. Without colour the
// view still uses bold and faint (NO_COLOR allows them) and switches to bar glyphs that can be
// told apart without colour.
type theme struct {
	color bool

	title, dim, accent, ok, warn, err, barFull, barEmpty, key lipgloss.Style

	spinner            []string
	done, failed, open string
	hidden             string
	barFullGlyph       string
	barEmptyGlyph      string
}

func newTheme(color bool) theme {
	base := lipgloss.NewStyle()
	t := theme{
		color:   color,
		title:   base.Bold(true),
		dim:     base.Faint(true),
		accent:  base,
		ok:      base,
		warn:    base.Bold(true),
		err:     base.Bold(true),
		barFull: base,
		// Without colour the empty part of a bar uses a lighter glyph instead.
		barEmpty:      base.Faint(true),
		key:           base.Bold(true),
		spinner:       []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"},
		done:          "✓",
		failed:        "✗",
		open:          "•",
		hidden:        "⋯",
		barFullGlyph:  "█",
		barEmptyGlyph: "░",
	}
	if color {
		t.accent = base.Foreground(lipgloss.Cyan)
		t.ok = base.Foreground(lipgloss.Green)
		t.warn = base.Foreground(lipgloss.Yellow)
		t.err = base.Foreground(lipgloss.Red).Bold(true)
		t.barFull = base.Foreground(lipgloss.Cyan)
		t.barEmpty = base.Foreground(lipgloss.BrightBlack)
		t.barFullGlyph, t.barEmptyGlyph = "━", "━"
	}
	return t
}
