package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
	"golang.org/x/sys/windows"
)

// openConsoleFiles opens the process's console as CONOUT$ and CONIN$, or skips the test when
// the process has none (Wine gives a program a console only when it runs on a terminal).
func openConsoleFiles(t *testing.T) (out, in *os.File) {
	t.Helper()
	out, err := os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no console to test on (CONOUT$: %v): run the test on a terminal (under Wine: in tmux)", err)
	}
	t.Cleanup(func() { out.Close() })
	in, err = os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no console input to test on (CONIN$: %v)", err)
	}
	t.Cleanup(func() { in.Close() })
	var m uint32
	if err := windows.GetConsoleMode(windows.Handle(out.Fd()), &m); err != nil {
		t.Skipf("CONOUT$ opened but GetConsoleMode failed (%v): no real console", err)
	}
	return out, in
}

func consoleMode(t *testing.T, f *os.File) uint32 {
	t.Helper()
	var m uint32
	if err := windows.GetConsoleMode(windows.Handle(f.Fd()), &m); err != nil {
		t.Fatalf("GetConsoleMode(%s): %v", f.Name(), err)
	}
	return m
}

func setConsoleMode(t *testing.T, f *os.File, m uint32) {
	t.Helper()
	if err := windows.SetConsoleMode(windows.Handle(f.Fd()), m); err != nil {
		t.Fatalf("SetConsoleMode(%s, %#x): %v", f.Name(), m, err)
	}
}

func TestConsoleOfRedirectedOutputIsPlain(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(winetest.TempDir(t), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	null, err := os.OpenFile("NUL", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, tt := range []struct {
		name string
		out  *os.File
	}{{"pipe", w}, {"file", f}, {"NUL", null}} {
		c := OpenConsole(tt.out, nil)
		if c.Terminal() {
			t.Errorf("stdout to a %s: Terminal() = true, want plain text", tt.name)
		}
		if err := c.EnableVT(); err != nil {
			t.Errorf("EnableVT on a %s: %v, want nothing done", tt.name, err)
		}
		c.Restore()
	}
	var nilConsole *Console
	if nilConsole.Terminal() || nilConsole.EnableVT() != nil {
		t.Error("a nil Console is not a terminal and does nothing")
	}
	nilConsole.Restore()
}

func TestConsoleModesRestored(t *testing.T) {
	out, in := openConsoleFiles(t)
	origOut, origIn := consoleMode(t, out), consoleMode(t, in)
	t.Cleanup(func() {
		_ = windows.SetConsoleMode(windows.Handle(out.Fd()), origOut)
		_ = windows.SetConsoleMode(windows.Handle(in.Fd()), origIn)
	})
	// Start as an old-style console would: no virtual-terminal processing.
	startOut := origOut &^ windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING
	startIn := origIn | windows.ENABLE_LINE_INPUT | windows.ENABLE_ECHO_INPUT | windows.ENABLE_PROCESSED_INPUT
	setConsoleMode(t, out, startOut)
	setConsoleMode(t, in, startIn)

	c := OpenConsole(out, in)
	if !c.Terminal() {
		t.Skipf("this console refuses ENABLE_VIRTUAL_TERMINAL_PROCESSING (mode %#x): the view would be plain text here", startOut)
	}
	if got := consoleMode(t, out); got != startOut {
		t.Fatalf("OpenConsole left the output mode %#x, want it unchanged (%#x)", got, startOut)
	}
	if err := c.EnableVT(); err != nil {
		t.Fatal(err)
	}
	if got := consoleMode(t, out); got&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING == 0 {
		t.Fatalf("EnableVT left the output mode %#x without ENABLE_VIRTUAL_TERMINAL_PROCESSING", got)
	}

	ways := []struct {
		name string
		end  func()
	}{
		{"Restore", c.Restore},
		{"Run returning", func() { c.Run(func() int { return 1 }) }},
		{"Run panicking", func() {
			defer func() {
				if recover() == nil {
					t.Error("Run swallowed the panic")
				}
			}()
			c.Run(func() int { panic("view bug") })
		}},
	}
	for _, way := range ways {
		// What the live view does: VT output, raw VT input (Bubble Tea).
		if err := c.EnableVT(); err != nil {
			t.Fatal(err)
		}
		setConsoleMode(t, in, windows.ENABLE_VIRTUAL_TERMINAL_INPUT)
		way.end()
		if got := consoleMode(t, out); got != startOut {
			t.Errorf("%s: output mode %#x, want the original %#x", way.name, got, startOut)
		}
		if got := consoleMode(t, in); got != startIn {
			t.Errorf("%s: input mode %#x, want the original %#x", way.name, got, startIn)
		}
	}
}
