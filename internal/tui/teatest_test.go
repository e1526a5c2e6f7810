package tui

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// TestTeatestWholeFrames drives the live view's Bubble Tea model through teatest at a fixed
// 100x30 terminal, with a fixed clock: the running tree, the cancelling state after a notice
// (each waited for in the output), and the end summary. What the program's complete output
// leaves on a 100x30 terminal, scrollback included (vt), is compared with
// testdata/TestTeatestWholeFrames.golden (go test -update rewrites it): the summary alone, every
// frame of the live view erased. The output must also give the terminal back as it found it.
// The bytes themselves are not compared: how many times the renderer redraws a frame, and
// whether its first frame comes before or after the initial window size, depend on
// scheduling, not on the view (the frames themselves have goldens of their own, tty_frame_*).
func TestTeatestWholeFrames(t *testing.T) {
	clock := newTestClock()
	clock.Set(sec(3))
	box := newFeed(clock.Now)
	box.put(tensorRTLike())
	m := newTTYModel(testInfo, epoch, box.box, modelOptions{
		now: clock.Now, width: 100, height: 30, tick: 5 * time.Millisecond,
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	// WaitFor consumes what it reads; keep it all for the golden.
	var all bytes.Buffer
	output := io.TeeReader(tm.Output(), &all)

	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, output, func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	wait("Timing graph nodes")
	box.notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested."})
	wait("Cancelling")
	box.end(progress.Result{Status: progress.StatusCancelled, Duration: sec(3)})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	if _, err := io.Copy(&all, tm.FinalOutput(t)); err != nil {
		t.Fatal(err)
	}
	out := all.Bytes()
	// The cursor shown again, bracketed paste and the keyboard enhancements off: the terminal
	// as the program found it.
	for _, restore := range []string{"\x1b[?25h", "\x1b[?2004l", "\x1b[<1u"} {
		if !bytes.Contains(out, []byte(restore)) {
			t.Errorf("the output never sends %q to restore the terminal", restore)
		}
	}
	// A terminal's line discipline turns each newline into CR LF (ONLCR), as it does for the
	// live view; teatest's output has not been through one.
	term := newVT(100, 30)
	if _, err := term.Write(bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/TestTeatestWholeFrames.golden", []byte(term.All()+"\n"))
}
