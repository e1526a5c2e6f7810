package tui

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/testtraces"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// These tests replay real TensorRT 10.16 and 11.0 progress (internal/testtraces) through the
// views at real speed on a fake clock: every event handed over at its own build time, the
// session's tick every second between them, the result at its time.

// lineClock records the clock's time of every line written to it.
type lineClock struct {
	now   func() time.Time
	buf   bytes.Buffer
	times []time.Time
}

func (w *lineClock) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte("\n")) {
		w.times = append(w.times, w.now())
	}
	return w.buf.Write(p)
}

// realSpeed plays a fixture through the renderer r makes, as a build at real speed delivers
// it, with the session's state in between (see kept).
func realSpeed(t *testing.T, name string, r func(now func() time.Time) progress.Renderer) {
	t.Helper()
	tr := testtraces.Must(name)
	clk := newTestClock()
	k := keep(r(clk.Now), clk.Now)
	k.Begin(tr.Info)
	var tick time.Duration
	advance := func(to time.Duration) {
		for tick+time.Second <= to {
			tick += time.Second
			clk.Set(tick)
			k.Tick(clk.Now())
		}
		clk.Set(to)
	}
	for _, e := range tr.Events {
		advance(e.Time)
		k.Handle([]progress.Event{e})
	}
	advance(tr.Result.Duration)
	if err := k.End(*tr.Result); err != nil {
		t.Fatal(err)
	}
}

// plainAtRealSpeed returns a fixture's plain log and the clock's time of each of its lines.
func plainAtRealSpeed(t *testing.T, name string) (string, []time.Time) {
	t.Helper()
	var out *lineClock
	realSpeed(t, name, func(now func() time.Time) progress.Renderer {
		out = &lineClock{now: now}
		return NewPlain(out, PlainOptions{Now: now})
	})
	return out.buf.String(), out.times
}

// TestPlainRealGolden compares the plain log of every fixture with
// testdata/plain_real_<fixture>.golden.
func TestPlainRealGolden(t *testing.T) {
	for _, name := range testtraces.Names() {
		t.Run(name, func(t *testing.T) {
			out, _ := plainAtRealSpeed(t, name)
			golden(t, filepath.Join("testdata", "plain_real_"+name+".golden"), []byte(out))
		})
	}
}

// TestPlainNeverQuiet: replayed at real speed, no fixture leaves the plain log without a line
// for 10 s or more while the build runs, from a burst of 6,400 callbacks in 29 s to a
// Myelin step of 110 s without any; and no burst floods it: thousands of short phases fold
// into counts.
func TestPlainNeverQuiet(t *testing.T) {
	for _, name := range testtraces.Names() {
		t.Run(name, func(t *testing.T) {
			out, times := plainAtRealSpeed(t, name)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			var quiet time.Duration
			at := 0
			for i := 1; i < len(times); i++ {
				if d := times[i].Sub(times[i-1]); d > quiet {
					quiet, at = d, i
				}
			}
			if quiet >= 10*time.Second {
				t.Errorf("quiet for %v before line %d:\n%s\n%s", quiet, at+1, lines[at-1], lines[at])
			}
			callbacks := 0
			for _, e := range testtraces.Must(name).Events {
				if e.Type != progress.EventLog {
					callbacks++
				}
			}
			if len(lines)*10 > callbacks+1000 {
				t.Errorf("%d lines for %d callbacks", len(lines), callbacks)
			}
			// In any second, at most 60 lines: a line per phase of the 22 of a whole TensorRT
			// 11.0 build, not one per callback.
			for i, j := 0, 0; j < len(times); j++ {
				for times[j].Sub(times[i]) >= time.Second {
					i++
				}
				if j-i+1 > 60 {
					t.Fatalf("%d lines within a second, up to line %d: %s", j-i+1, j+1, lines[j])
				}
			}
			t.Logf("%d lines, longest quiet stretch %v", len(lines), quiet)
		})
	}
}

// TestPlainRealTimingWindow: during the 29 s of "Timing graph nodes" at 5 ms a callback, the
// lines name the timing phases they are in.
func TestPlainRealTimingWindow(t *testing.T) {
	out, _ := plainAtRealSpeed(t, testtraces.TRT10161Paced)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Timing graph nodes") && strings.Contains(l, "› Evaluating tactic times") {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d status lines name the timing phases:\n%s", n, out)
	}
}

// fixtureMoments are the build times a fixture's frames are drawn at: halfway through the
// phase where most time went, the first moment of the deepest nesting, and the time a cancel
// is requested: in the middle of the longest silence of the builder, or, where none lasts 2 s,
// halfway through that phase.
func fixtureMoments(t *testing.T, name string) (moments []time.Duration, cancelAt time.Duration) {
	t.Helper()
	tr := testtraces.Must(name)
	st := progress.NewState(tr.Info, epoch)
	depth, deepest := 0, time.Duration(0)
	var gap, gapAt, prev time.Duration
	for i, e := range tr.Events {
		if e.Type == progress.EventLog {
			continue
		}
		if i > 0 && e.Time-prev > gap {
			gap, gapAt = e.Time-prev, prev
		}
		prev = e.Time
		st.Apply([]progress.Event{e}, epoch.Add(e.Time))
		if d := len(st.Tree().Active()); d > depth {
			depth, deepest = d, e.Time
		}
	}
	st.End(*tr.Result, epoch.Add(tr.Result.Duration))
	sp := st.Tree().Spent()[0]
	mid := sp.Start + sp.Duration/2
	if gap < 2*time.Second {
		return []time.Duration{mid, deepest}, mid
	}
	return []time.Duration{mid, deepest}, gapAt + gap/2
}

// ttyFrames draws a fixture's live view at width×height: the frames at its moments, then a
// cancel in its longest silence, then the summary of the build as it ended.
func ttyFrames(t *testing.T, name string, width, height int) string {
	t.Helper()
	tr := testtraces.Must(name)
	moments, cancelAt := fixtureMoments(t, name)
	var b strings.Builder
	frame := func(upto time.Duration, notice *progress.Notice, what string) {
		clk := newTestClock()
		in := newFeed(clk.Now)
		in.st = progress.NewState(tr.Info, epoch)
		in.st.Hinter, in.st.FailedNode = trt.Hint, trt.FailedNode
		m := newTTYModel(tr.Info, epoch, in.box, modelOptions{now: clk.Now, width: width, height: height})
		m.Update(frameMsg{})
		m.Update(frameMsg{})
		for _, e := range tr.Events {
			if e.Time > upto {
				break
			}
			clk.Set(e.Time)
			in.put([]progress.Event{e})
		}
		clk.Set(upto)
		if notice != nil {
			in.notice(*notice)
			clk.Set(upto + 12*time.Second)
		}
		m.step(clk.Now())
		if what == "summary" {
			clk.Set(tr.Result.Duration)
			in.end(*tr.Result)
			m.step(clk.Now())
			fmt.Fprintf(&b, "--- the summary, at %s\n%s\n", progress.FormatDuration(tr.Result.Duration), strings.Join(stripAll(m.printQ), "\n"))
			return
		}
		m.Update(frameMsg{})
		m.View()
		fmt.Fprintf(&b, "--- %s, at %s\n%s\n", what, progress.FormatDuration(clk.Now().Sub(epoch)), ansi.Strip(m.frameText))
	}
	frame(moments[0], nil, "halfway through the phase where most time went")
	frame(moments[1], nil, "the deepest nesting")
	if tr.Result.Status == progress.StatusBuilt && cancelAt < tr.Result.Duration {
		frame(cancelAt, &progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested."}, "12 s after a cancel in the longest silence")
	}
	frame(tr.Result.Duration, nil, "summary")
	return b.String()
}

// TestTTYRealGolden compares the live view of every fixture at 80 and 160 columns with
// testdata/tty_real_<fixture>_<width>.golden.
func TestTTYRealGolden(t *testing.T) {
	for _, name := range testtraces.Names() {
		for _, size := range [][2]int{{80, 24}, {160, 40}} {
			t.Run(fmt.Sprintf("%s/%d", name, size[0]), func(t *testing.T) {
				got := ttyFrames(t, name, size[0], size[1])
				for _, l := range strings.Split(got, "\n") {
					if ansi.StringWidth(l) > size[0] {
						t.Errorf("line wider than %d: %q", size[0], l)
					}
				}
				golden(t, filepath.Join("testdata", fmt.Sprintf("tty_real_%s_%d.golden", name, size[0])), []byte(got))
			})
		}
	}
}

// TestNoLayerFromPhaseNames: no view of a real TensorRT 10.16 or 11.0 build names a layer
// that TensorRT did not: no "tactic" abbreviation (which stands for a layer phase), no layer
// made of a phase name's "for …".
func TestNoLayerFromPhaseNames(t *testing.T) {
	for _, name := range testtraces.Names() {
		out, _ := plainAtRealSpeed(t, name)
		all := out + ttyFrames(t, name, 80, 24) + ttyFrames(t, name, 160, 40)
		for _, bad := range []string{"tactic Evaluating", "tactic Measuring", "Preparing graph for …", "tactic optimization"} {
			if strings.Contains(all, bad) {
				t.Errorf("%s: %q in the views", name, bad)
			}
		}
		for _, l := range strings.Split(all, "\n") {
			if strings.Contains(l, "node") && strings.Contains(l, "Failed on node") && !strings.Contains(l, "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)") {
				t.Errorf("%s: a node not from TensorRT's error: %s", name, l)
			}
		}
	}
}
