package tui

import (
	"os"
	"sync"
)

// Console is the terminal or Windows console trtbuild's output goes to, as trtbuild found it
// at its start: whether the live view can be drawn on it, and the modes to put back when
// trtbuild is done.
//
// On Linux and macOS the live view needs stdout to be a terminal (mintty's and Cygwin's pipes
// count), and the terminal's raw mode is Bubble Tea's to set and restore: EnableVT and Restore
// do nothing.
//
// On Windows the live view needs stdout to be a console on which ENABLE_VIRTUAL_TERMINAL_
// PROCESSING can be switched on (Windows 10 1511 and later; Windows Terminal, conhost).
// Without it (an older console, or stdout redirected to a file, a pipe or NUL) the view is
// plain text; so are mintty's and Cygwin's pipes, which are not consoles even though
// go-isatty's IsCygwinTerminal says yes: their other end cannot be put in raw mode. OpenConsole
// saves the console modes of stdout and stdin before anything changes them; EnableVT switches
// virtual-terminal processing on for the live view, and Restore puts both modes back as they
// were, which also undoes the raw input mode Bubble Tea sets should it not get to undo it
// itself. Restore is the one place for it and is called on every way out: the end of the
// view, the end of main, a panic that unwinds main (Run), and the exit on a signal.
//
// A nil *Console is no terminal. Its methods are safe for concurrent use.
type Console struct {
	out, in *os.File
	vt      bool // the live view can be drawn on out

	mu    sync.Mutex
	saved consoleModes // per OS: what Restore puts back
}

// OpenConsole records the state of the console (or terminal) of out and in.
func OpenConsole(out, in *os.File) *Console {
	c := &Console{out: out, in: in}
	c.vt = c.open()
	return c
}

// Terminal reports whether the live view can be drawn on the console's output.
func (c *Console) Terminal() bool { return c != nil && c.vt }

// EnableVT prepares the output for the live view's escape sequences (on Windows: switches on
// virtual-terminal processing). It does nothing when Terminal is false.
func (c *Console) EnableVT() error {
	if !c.Terminal() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enableVT()
}

// Restore puts the console's modes back as OpenConsole found them. It may be called any
// number of times.
func (c *Console) Restore() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restore()
}

// Run calls f and restores the console when f returns or panics (the panic goes on after).
func (c *Console) Run(f func() int) int {
	defer c.Restore()
	return f()
}
