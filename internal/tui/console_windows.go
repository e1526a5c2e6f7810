package tui

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// consoleModes are the console modes of stdout and stdin at trtbuild's start.
type consoleModes struct {
	out, in             uint32
	outConsole          bool // stdout is a console, and out is its mode
	inConsole           bool
	outHandle, inHandle windows.Handle
}

// open saves the modes and says whether virtual-terminal processing can be switched on for
// stdout: it is switched on and straight back off, so that nothing changes before the view
// starts (old consoles refuse the flag with ERROR_INVALID_PARAMETER).
func (c *Console) open() bool {
	if c.in != nil {
		h := windows.Handle(c.in.Fd())
		if err := windows.GetConsoleMode(h, &c.saved.in); err == nil {
			c.saved.inConsole, c.saved.inHandle = true, h
		}
	}
	if c.out == nil {
		return false
	}
	h := windows.Handle(c.out.Fd())
	if err := windows.GetConsoleMode(h, &c.saved.out); err != nil {
		return false // a file, a pipe (mintty's and Cygwin's too) or NUL
	}
	c.saved.outConsole, c.saved.outHandle = true, h
	if c.saved.out&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	if err := windows.SetConsoleMode(h, c.saved.out|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING); err != nil {
		return false
	}
	_ = windows.SetConsoleMode(h, c.saved.out)
	return true
}

// enableVT switches virtual-terminal processing on for stdout.
func (c *Console) enableVT() error {
	if err := windows.SetConsoleMode(c.saved.outHandle, c.saved.out|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING); err != nil {
		return fmt.Errorf("switching on the console's virtual-terminal processing: %w", err)
	}
	return nil
}

// restore sets the modes of stdout and stdin back to those open saved.
func (c *Console) restore() {
	// Nothing is left to do when it fails: the console is gone (closed) or was never one.
	if c.saved.outConsole {
		_ = windows.SetConsoleMode(c.saved.outHandle, c.saved.out)
	}
	if c.saved.inConsole {
		_ = windows.SetConsoleMode(c.saved.inHandle, c.saved.in)
	}
}

// openControllingTerminal opens the console's input for reading keys, for reading and writing
// as SetConsoleMode needs (Bubble Tea puts it in raw mode).
func openControllingTerminal() (*os.File, error) { return os.OpenFile("CONIN$", os.O_RDWR, 0) }
