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
// 100x30 terminal, with a fixed clock: the running tree, the cancelling state after a notice,
// and the end summary. The program's complete output, escape sequences included, is compared
// with testdata/TestTeatestWholeFrames.golden (go test -update rewrites it).
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
	teatest.RequireEqualOutput(t, all.Bytes())
}
