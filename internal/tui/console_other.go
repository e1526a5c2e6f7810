//go:build !windows

package tui

import (
	"os"

	"github.com/mattn/go-isatty"
)

// consoleModes is empty: a terminal's mode is Bubble Tea's to restore.
type consoleModes struct{}

func (c *Console) open() bool {
	fd := c.out.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

func (c *Console) enableVT() error { return nil }

func (c *Console) restore() {}

// openControllingTerminal opens the process's terminal for reading keys.
func openControllingTerminal() (*os.File, error) { return os.Open("/dev/tty") }
