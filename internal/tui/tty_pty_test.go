//go:build linux

package tui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// terminal is a pseudo-terminal for running the live view for real: the view gets the slave
// side as its input and output, the test plays the person at the master side.
type terminal struct {
	t      *testing.T
	master *os.File
	slave  *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	screen *vt
	done   chan struct{}
}

func openTerminal(t *testing.T, cols, rows int) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		t.Fatalf("sizing the pseudo-terminal: %v", err)
	}
	term := &terminal{t: t, master: master, slave: slave, screen: newVT(cols, rows), done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.screen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-term.done
	})
	return term
}

// text is what a person can read on the terminal: its history and its screen.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.screen.All()
}

// visible is the screen alone.
func (term *terminal) visible() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.screen.Screen()
}

func (term *terminal) raw() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until the terminal has shown want.
func (term *terminal) waitFor(want string) {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(term.text(), want) {
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, term.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// typeKeys sends bytes as if typed at the keyboard.
func (term *terminal) typeKeys(s string) {
	term.t.Helper()
	if _, err := term.master.WriteString(s); err != nil {
		term.t.Fatalf("typing: %v", err)
	}
}

// mode reports whether the terminal echoes and works line by line (a sane, cooked terminal).
func (term *terminal) mode() (echo, canonical bool) {
	term.t.Helper()
	tio, err := unix.IoctlGetTermios(int(term.slave.Fd()), unix.TCGETS)
	if err != nil {
		term.t.Fatalf("reading the terminal mode: %v", err)
	}
	return tio.Lflag&unix.ECHO != 0, tio.Lflag&unix.ICANON != 0
}

// requireSane fails unless the terminal is back in its normal mode with the cursor shown.
// The mode is checked at once (End must have restored it); the output may still be on its
// way through the pseudo-terminal, so the cursor is given a moment.
func (term *terminal) requireSane() {
	term.t.Helper()
	if echo, canon := term.mode(); !echo || !canon {
		term.t.Errorf("terminal left with echo %v, canonical %v", echo, canon)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := term.raw()
		hide := strings.LastIndex(out, "\x1b[?25l")
		if hide < 0 || strings.LastIndex(out, "\x1b[?25h") > hide {
			return
		}
		if time.Now().After(deadline) {
			term.t.Errorf("the cursor was left hidden: %q", out[hide:])
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRaw waits until the view has put the terminal in raw mode.
func (term *terminal) waitRaw() {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if echo, canon := term.mode(); !echo && !canon {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatal("the view never put the terminal in raw mode")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func noEnv(string) string { return "" }

// TestTTYBuildOnTerminal runs a whole build on a pseudo-terminal: the tree is drawn, a
// warning is printed above it, the summary stays, and the terminal is restored.
func TestTTYBuildOnTerminal(t *testing.T) {
	term := openTerminal(t, 90, 24)
	r := keep(NewTTY(term.slave, term.slave, TTYOptions{Controls: &countingControls{}, Getenv: noEnv}), nil)
	r.Begin(testInfo)
	term.waitRaw()
	r.Handle(tensorRTLike())
	term.waitFor("Measuring tactic time")
	term.waitFor("tactic conv2")
	r.Handle([]progress.Event{evLog(sec(2.8), progress.SeverityWarning, "layer conv2 falls back to a slower kernel")})
	r.Tick(time.Now())
	term.waitFor("warning: layer conv2 falls back to a slower kernel")
	if err := r.End(progress.Result{Status: progress.StatusBuilt, Engine: "convnet.engine", EngineBytes: 4096, Duration: sec(3)}); err != nil {
		t.Fatalf("End: %v", err)
	}
	term.waitFor("✓ Built convnet.engine (4.0 KiB) in 3.0s")
	out := term.text()
	if strings.Index(out, "falls back") > strings.Index(out, "✓ Built") {
		t.Errorf("the summary came before the warning:\n%s", out)
	}
	term.requireSane()
}

// TestTTYCtrlCOnTerminal presses Ctrl-C twice: each press reaches the session's controls as a
// key (the terminal is raw, so there is no SIGINT), the view shows the cancelling and then the
// stopping state from the session's notices, and the terminal is restored at the end.
func TestTTYCtrlCOnTerminal(t *testing.T) {
	term := openTerminal(t, 120, 30)
	ctl := &countingControls{}
	r := keep(NewTTY(term.slave, term.slave, TTYOptions{Controls: ctl, Getenv: noEnv}), nil)
	r.Begin(testInfo)
	term.waitRaw()
	r.Handle(tensorRTLike())
	term.waitFor("Measuring tactic time")

	term.typeKeys("\x03")
	waitCount(t, ctl, 1)
	r.Notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested"})
	term.waitFor("Cancelling: the builder stops at its next step;")
	term.waitFor("Ctrl-C again to stop now.")

	term.typeKeys("\x03")
	waitCount(t, ctl, 2)
	r.Notice(progress.Notice{Kind: progress.NoticeForceStop, Message: "Stopping the build worker now."})
	term.waitFor("Stopping the build worker now.")

	if err := r.End(progress.Result{Status: progress.StatusCancelled, Error: "the build worker was stopped", Duration: sec(4)}); err != nil {
		t.Fatalf("End: %v", err)
	}
	term.waitFor("Build cancelled after 4.0s")
	term.waitFor("The build worker was killed without waiting for a step boundary.")
	term.requireSane()
}

func waitCount(t *testing.T, c *countingControls, want int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.n.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("RequestCancel was called %d times, want %d", c.n.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTTYPanicOnTerminal makes the view panic in the middle of a build: the terminal is
// restored at once, the rest of the build is shown as plain text, and End reports the panic.
func TestTTYPanicOnTerminal(t *testing.T) {
	term := openTerminal(t, 80, 24)
	r := keep(NewTTY(term.slave, term.slave, TTYOptions{Controls: panicControls{}, Getenv: noEnv}), nil)
	r.Begin(testInfo)
	term.waitRaw()
	r.Handle(tensorRTLike()[:4])
	term.waitFor("Computing profile costs")
	term.typeKeys("\x03")
	// The view's program ends at once and restores the terminal; the renderer notices on
	// the session's next call (Tick comes every second) and goes on in plain text.
	deadline := time.Now().Add(10 * time.Second)
	for echo, canon := term.mode(); !echo || !canon; echo, canon = term.mode() {
		if time.Now().After(deadline) {
			t.Fatal("the terminal was not restored after the panic")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for !strings.Contains(term.text(), "the live terminal view crashed (boom)") {
		if time.Now().After(deadline) {
			t.Fatalf("the crash was not reported; the terminal shows:\n%s", term.text())
		}
		r.Tick(time.Now())
		time.Sleep(10 * time.Millisecond)
	}
	r.Handle([]progress.Event{evStart(sec(2), 50, 0, "Serializing engine", 1)})
	term.waitFor("Serializing engine")
	err := r.End(progress.Result{Status: progress.StatusBuilt, Engine: "convnet.engine", EngineBytes: 1, Duration: sec(3)})
	var ve *ViewError
	if !errors.As(err, &ve) || ve.Panic != "boom" {
		t.Fatalf("End returned %v, want the view's panic", err)
	}
	term.waitFor("Built convnet.engine")
	term.requireSane()
}

// waitScreen waits until the visible screen shows want.
func (term *terminal) waitScreen(want string) {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(term.visible(), want) {
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %q; it shows:\n%s", want, term.visible())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTTYScreenGolden runs the real program on an 80x24 pseudo-terminal with a stopped clock
// and compares what the screen shows at three moments with testdata/tty_screen_*.golden:
// while building (a warning printed above the tree), while cancelling, and after the end
// (the terminal's history and screen: the log lines and the summary, no leftover frame).
func TestTTYScreenGolden(t *testing.T) {
	term := openTerminal(t, 80, 24)
	clk := newTestClock()
	r := keep(NewTTY(term.slave, term.slave, TTYOptions{Controls: &countingControls{}, Now: clk.Now, Getenv: noEnv}), clk.Now)
	r.Begin(testInfo)
	term.waitRaw()
	clk.Set(sec(2.7))
	r.Handle(tensorRTLike())
	r.Handle([]progress.Event{evLog(sec(2.7), progress.SeverityWarning, "layer conv2 falls back to a slower kernel")})
	clk.Set(sec(3))
	term.waitScreen("3.0s elapsed")
	term.waitScreen("warning: layer conv2 falls back to a slower kernel")
	golden(t, "testdata/tty_screen_running.golden", []byte(term.visible()+"\n"))

	clk.Set(sec(4))
	r.Notice(progress.Notice{Kind: progress.NoticeCancelRequested})
	clk.Set(sec(5.5))
	term.waitScreen("cancel requested 1.5s ago")
	golden(t, "testdata/tty_screen_cancelling.golden", []byte(term.visible()+"\n"))

	if err := r.End(progress.Result{Status: progress.StatusCancelled, Duration: sec(5.6)}); err != nil {
		t.Fatalf("End: %v", err)
	}
	term.waitFor("Build cancelled after 5.6s")
	term.requireSane()
	golden(t, "testdata/tty_screen_end.golden", []byte(term.text()+"\n"))
}
