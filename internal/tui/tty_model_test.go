package tui

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// countingControls counts cancel requests.
type countingControls struct{ n atomic.Int32 }

func (c *countingControls) RequestCancel() { c.n.Add(1) }

// newTestModel returns a model on a test clock, 80x24 unless opts say otherwise.
func newTestModel(opts modelOptions) (*ttyModel, *feed, *testClock) {
	clk := newTestClock()
	in := newFeed(clk.Now)
	opts.now = clk.Now
	if opts.width == 0 {
		opts.width = 80
	}
	if opts.height == 0 {
		opts.height = 24
	}
	m := newTTYModel(testInfo, epoch, in.box, opts)
	m.Update(frameMsg{}) // two frames: the renderer has drawn, lines may be printed above
	m.Update(frameMsg{})
	return m, in, clk
}

// TestPrintWaitsForTheRenderer checks that nothing is printed above the view before the
// renderer has written its first frame, and that the header is what the view prints first.
func TestPrintWaitsForTheRenderer(t *testing.T) {
	clk := newTestClock()
	in := newFeed(clk.Now)
	var drawn atomic.Bool
	m := newTTYModel(testInfo, epoch, in.box, modelOptions{now: clk.Now, width: 60, ready: drawn.Load})
	want := []string{"Building models/convnet.onnx → convnet.engine", "backend sim · fp16 · 12 layers"}
	if got := stripAll(m.headerLines()); !reflect.DeepEqual(got, want) {
		t.Fatalf("header %q, want %q", got, want)
	}
	in.put([]progress.Event{evLog(0, progress.SeverityWarning, "early warning")})
	for i := 0; i < 3; i++ {
		if _, cmd := m.Update(frameMsg{}); cmd != nil || m.printing {
			t.Fatal("printed above the view before the renderer drew anything")
		}
	}
	drawn.Store(true)
	if m.Update(frameMsg{}); m.printing {
		t.Fatal("printed in the same frame the renderer was first seen: its first flush may not be over")
	}
	if m.Update(frameMsg{}); !m.printing || len(m.printQ) != 0 {
		t.Fatalf("the warning was not printed once the renderer had drawn (printing %v, %d queued)", m.printing, len(m.printQ))
	}
}

// randomBuild is a random but well-formed event stream: phases nest, run in parallel, report
// steps out of order and beyond their count, finish early or not at all, and log.
func randomBuild(r *rand.Rand, n int) []progress.Event {
	var evs []progress.Event
	var open []int
	next := 1
	at := time.Duration(0)
	for len(evs) < n {
		at += time.Duration(r.IntN(5000)) * time.Microsecond
		switch k := r.IntN(10); {
		case k < 2 || len(open) == 0:
			parent := 0
			if len(open) > 0 && r.IntN(5) > 0 {
				parent = open[r.IntN(len(open))]
			}
			evs = append(evs, evStart(at, next, parent, fmt.Sprintf("phase %d", r.IntN(20)), 1+r.IntN(12)))
			open = append(open, next)
			next++
		case k < 8:
			evs = append(evs, evStep(at, open[r.IntN(len(open))], r.IntN(14)))
		case k < 9:
			i := r.IntN(len(open))
			evs = append(evs, evFinish(at, open[i]))
			open = append(open[:i], open[i+1:]...)
		default:
			evs = append(evs, evLog(at, progress.Severity(r.IntN(5)), fmt.Sprintf("message %d", len(evs))))
		}
	}
	return evs
}

// TestViewDrawsTheSessionTree feeds random builds to the session's state in random batches,
// taken at random frames: every phase the view draws from (the open ones and their ancestors)
// is exactly the session's. Then it applies events the view's inbox never sees: the view must
// show them, which it could not if it kept a tree of its own.
func TestViewDrawsTheSessionTree(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		evs := randomBuild(r, 3000)

		m, in, clk := newTestModel(modelOptions{})
		batch := make([]progress.Event, 0, 64)
		for i := 0; i < len(evs); {
			n := min(1+r.IntN(200), len(evs)-i)
			batch = append(batch[:0], evs[i:i+n]...)
			clk.Set(evs[i+n-1].Time)
			in.put(batch)
			for j := range batch {
				batch[j] = progress.Event{Type: progress.EventLog, Message: "reused"} // the caller reuses its slice
			}
			i += n
			if r.IntN(3) == 0 {
				m.step(clk.Now())
			}
		}
		m.step(clk.Now())

		want := in.st.Tree()
		if m.tree.Open() != want.Open() || m.tree.Last != want.Last || m.tree.LastProgress != want.LastProgress {
			t.Fatalf("seed %d: tree has %d open, last %v/%v; want %d, %v/%v", seed,
				m.tree.Open(), m.tree.Last, m.tree.LastProgress, want.Open(), want.Last, want.LastProgress)
		}
		want.Walk(func(p *progress.Phase) bool {
			if p.Finished {
				return true
			}
			got := m.tree.Get(p.ID)
			if got == nil {
				t.Fatalf("seed %d: open phase %d is not in the view", seed, p.ID)
			}
			a, b := *got, *p
			a.Children, b.Children = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d: phase %d is %+v, want %+v", seed, p.ID, a, b)
			}
			return true
		})
	}

	m, in, clk := newTestModel(modelOptions{})
	in.put(tensorRTLike())
	unseen := []progress.Event{evStart(sec(2.8), 99, 8, "only in the session", 3)}
	in.st.Apply(unseen, clk.Now()) // the session applied it; the view is told nothing but a snapshot
	in.box.snapshot(in.st.Snapshot())
	clk.Set(sec(3))
	m.Update(frameMsg{})
	if frame := ansi.Strip(m.View().Content); !strings.Contains(frame, "only in the session") {
		t.Fatalf("the view does not draw the session's tree:\n%s", frame)
	}
}

// TestBurstStaysSmall sends 100,000 events between two frames: phase events are not queued
// at all (the session applied them), info lines beyond the per-frame limit are counted instead of kept, and the buffers shrink
// back afterwards.
func TestBurstStaysSmall(t *testing.T) {
	m, in, clk := newTestModel(modelOptions{verbose: true})
	const phases = 50
	var evs []progress.Event
	for id := 1; id <= phases; id++ {
		evs = append(evs, evStart(0, id, 0, fmt.Sprintf("layer %d", id), 100000))
	}
	for i := 0; len(evs) < 100000; i++ {
		at := time.Duration(i) * time.Microsecond
		if i%10 == 9 {
			evs = append(evs, evLog(at, progress.SeverityVerbose, "tactic timed"))
			continue
		}
		evs = append(evs, evStep(at, 1+i%phases, i/phases))
	}
	for i := 0; i < len(evs); i += 1000 {
		in.put(evs[i:min(i+1000, len(evs))])
	}
	in.box.mu.Lock()
	pending := len(in.box.logs)
	in.box.mu.Unlock()
	if limit := maxPendingInfo; pending > limit {
		t.Fatalf("%d events pending after the burst, want at most %d", pending, limit)
	}

	clk.Set(time.Second)
	m.step(clk.Now())
	for id := 1; id <= phases; id++ {
		p := m.tree.Get(id)
		// Phase id got steps i/phases for every i ≡ id-1 (mod phases) that was not a log.
		var want int
		for i := 0; i < 100000-phases; i++ {
			if i%10 != 9 && 1+i%phases == id {
				want = i/phases + 1
			}
		}
		if p.Done != want {
			t.Errorf("phase %d: done %d, want %d", id, p.Done, want)
		}
	}
	if cap(m.spare) > maxSpareEvents {
		t.Errorf("kept a buffer of %d events after the burst", cap(m.spare))
	}
	infoLines, skipped := 0, false
	for _, l := range m.printQ {
		s := ansi.Strip(l)
		if strings.Contains(s, "tactic timed") {
			infoLines++
		}
		if strings.Contains(s, "info lines skipped to keep up") {
			skipped = true
		}
	}
	if infoLines != maxPendingInfo || !skipped {
		t.Errorf("printed %d info lines (skip notice: %v), want %d and a notice", infoLines, skipped, maxPendingInfo)
	}
}

// TestCtrlC checks the key path: every Ctrl-C goes to the session's controls, and the view
// changes only when the session answers with a notice.
func TestCtrlC(t *testing.T) {
	ctl := &countingControls{}
	m, in, clk := newTestModel(modelOptions{controls: ctl})
	in.put(tensorRTLike())
	key := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	if key.String() != "ctrl+c" {
		t.Fatalf("test key is %q", key.String())
	}
	clk.Set(sec(3))
	m.Update(frameMsg{})
	m.Update(key)
	m.Update(key)
	if got := ctl.n.Load(); got != 2 {
		t.Fatalf("RequestCancel called %d times, want 2", got)
	}
	m.Update(frameMsg{})
	if got := ansi.Strip(m.View().Content); strings.Contains(got, "Cancelling") {
		t.Fatalf("the view changed before the session's notice:\n%s", got)
	}

	in.notice(progress.Notice{Kind: progress.NoticeCancelRequested})
	clk.Set(sec(4.5))
	m.Update(frameMsg{})
	if got := ansi.Strip(m.View().Content); !strings.Contains(got, "Cancelling:") || !strings.Contains(got, "cancel requested 1.5s ago") {
		t.Fatalf("no cancelling state after the notice:\n%s", got)
	}
	// A repeated cancel notice (SIGTERM after Ctrl-C) keeps the first request's time.
	clk.Set(sec(5))
	in.notice(progress.Notice{Kind: progress.NoticeCancelRequested})
	clk.Set(sec(6))
	m.Update(frameMsg{})
	if got := ansi.Strip(m.View().Content); !strings.Contains(got, "cancel requested 3.0s ago") {
		t.Fatalf("the cancel time moved:\n%s", got)
	}
	in.notice(progress.Notice{Kind: progress.NoticeForceStop, Message: "Stopping the build worker now."})
	m.Update(frameMsg{})
	if got := ansi.Strip(m.View().Content); !strings.Contains(got, "Stopping the build worker now.") || strings.Contains(got, "Press Ctrl-C") {
		t.Fatalf("no forced state after the notice:\n%s", got)
	}

	in.end(progress.Result{Status: progress.StatusCancelled})
	m.Update(frameMsg{})
	m.Update(key)
	if got := ctl.n.Load(); got != 2 {
		t.Fatalf("a key after the result reached the controls (%d calls)", got)
	}
}

// TestResize checks that a resize reflows the view, and that a fixed size ignores resizes.
func TestResize(t *testing.T) {
	clk := newTestClock()
	in := newFeed(clk.Now)
	m := newTTYModel(testInfo, epoch, in.box, modelOptions{now: clk.Now})
	in.put(tensorRTLike())
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	clk.Set(sec(3))
	m.Update(frameMsg{})
	wide := ansi.Strip(m.View().Content)
	m.Update(tea.WindowSizeMsg{Width: 44, Height: 30})
	narrow := ansi.Strip(m.View().Content)
	if maxWidth(wide) != 100 || maxWidth(narrow) > 44 || !strings.Contains(narrow, "Measuring") {
		t.Fatalf("resize did not reflow: %d then %d cells wide:\n%s\n%s", maxWidth(wide), maxWidth(narrow), wide, narrow)
	}

	fixed, fin, fclk := newTestModel(modelOptions{width: 60, height: 20})
	fin.put(tensorRTLike())
	fclk.Set(sec(3))
	fixed.Update(tea.WindowSizeMsg{Width: 120, Height: 50})
	fixed.Update(frameMsg{})
	if w := maxWidth(ansi.Strip(fixed.View().Content)); w != 60 {
		t.Fatalf("a fixed-width view is %d cells wide after a resize, want 60", w)
	}
}

func maxWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}

// TestLogsAndSummaryPrintInOrder follows the lines printed above the view: warnings and
// errors always, info only with --verbose, in arrival order, the summary last, and the
// program quits only once all of it was printed.
func TestLogsAndSummaryPrintInOrder(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		t.Run(fmt.Sprint("verbose=", verbose), func(t *testing.T) {
			m, in, clk := newTestModel(modelOptions{verbose: verbose})
			in.put(tensorRTLike())
			in.put([]progress.Event{
				evLog(sec(2.8), progress.SeverityInfo, "info one"),
				evLog(sec(2.8), progress.SeverityWarning, "warning two"),
				evLog(sec(2.9), progress.SeverityVerbose, "verbose three"),
				evLog(sec(2.9), progress.SeverityError, "error four"),
			})
			clk.Set(sec(3))
			m.step(clk.Now())
			want := []string{"warning: warning two", "error: error four"}
			if verbose {
				want = []string{"info: info one", "warning: warning two", "verbose: verbose three", "error: error four"}
			}
			if got := stripAll(m.printQ); !sameSuffixes(got, want) {
				t.Fatalf("queued %q, want lines ending %q", got, want)
			}
			if cmd := m.flush(); cmd == nil || !m.printing || len(m.printQ) != 0 {
				t.Fatalf("flush: cmd %v, printing %v, %d lines left", cmd != nil, m.printing, len(m.printQ))
			}

			// The result arrives while that print is still in flight: nothing more goes
			// out, and the program does not quit, until the print is acknowledged.
			in.put([]progress.Event{evLog(sec(3), progress.SeverityWarning, "warning five")})
			in.end(progress.Result{Status: progress.StatusBuilt, Engine: "convnet.engine", EngineBytes: 2048, Duration: sec(3.5)})
			clk.Set(sec(3.5))
			if _, cmd := m.Update(frameMsg{}); isQuit(cmd) {
				t.Fatal("quit while a print was in flight")
			}
			got := stripAll(m.printQ)
			if len(got) < 2 || !strings.HasSuffix(got[0], "warning: warning five") || !strings.HasPrefix(got[1], "✓ Built convnet.engine (2.0 KiB) in 3.5s") {
				t.Fatalf("queued %q, want the warning, then the summary", got)
			}
			if _, cmd := m.Update(printedMsg{}); cmd == nil || isQuit(cmd) || !m.printing {
				t.Fatal("the summary was not sent after the acknowledgement")
			}
			if _, cmd := m.Update(printedMsg{}); !isQuit(cmd) {
				t.Fatal("did not quit once the summary was printed")
			}
			if v := m.View(); v.Content != "" {
				t.Fatalf("the last frame should be empty (the summary replaces it), got:\n%s", v.Content)
			}
		})
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func stripAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = ansi.Strip(l)
	}
	return out
}

func sameSuffixes(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.HasSuffix(got[i], want[i]) {
			return false
		}
	}
	return true
}

// TestChunkLines checks the chunks printed above the view.
func TestChunkLines(t *testing.T) {
	long := strings.Repeat("x", 25) // wraps to 3 rows at width 10 (counted as 1+25/10)
	tests := []struct {
		lines       []string
		width, room int
		want        []string
	}{
		{[]string{"a", "b", "c"}, 80, 10, []string{"a\nb\nc"}},
		{[]string{"a", "b", "c", "d", "e"}, 80, 2, []string{"a\nb", "c\nd", "e"}},
		{[]string{"a", long, "b"}, 10, 4, []string{"a\n" + long, "b"}},
		{[]string{long, long}, 10, 1, []string{long, long}}, // a line taller than the room still goes out
		{[]string{"a", "b"}, 0, 0, []string{"a", "b"}},
		{nil, 80, 10, nil},
	}
	for _, tc := range tests {
		if got := chunkLines(tc.lines, tc.width, tc.room); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("chunkLines(%q, %d, %d) = %q, want %q", tc.lines, tc.width, tc.room, got, tc.want)
		}
	}
}

// TestSummaryGolden compares the lines printed when a build ends with
// testdata/tty_summary_*.golden.
func TestSummaryGolden(t *testing.T) {
	layers := func() []progress.Event {
		evs := []progress.Event{evStart(0, 1, 0, "Building engine", 2), evStart(sec(0.1), 2, 1, "Timing graph nodes", 4)}
		for i, d := range []float64{0.5, 2.25, 0.75, 1.5} {
			id := 10 + i
			evs = append(evs, evStart(sec(1+float64(i)*3), id, 2, fmt.Sprintf("Finding fastest tactic for layer_%d", i), 3),
				evStep(sec(1+float64(i)*3+d), id, 2), evFinish(sec(1+float64(i)*3+d), id), evStep(sec(1+float64(i)*3+d), 2, i))
		}
		return evs
	}
	closeAll := []progress.Event{evFinish(sec(12), 2), evStep(sec(12), 1, 1), evFinish(sec(12), 1)}
	failLogs := []progress.Event{
		evLog(sec(9), progress.SeverityInfo, "[MemUsageChange] Init builder kernel library: CPU +1, GPU +0, now: CPU 100, GPU 50 (MiB)"),
		evLog(sec(9.5), progress.SeverityWarning, "Tactic Device request: 4096MB Available: 1024MB. Device memory is insufficient to use tactic."),
		evLog(sec(10), progress.SeverityError, "[virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (Requested size was 4294967296 bytes.)"),
	}
	tests := []struct {
		name    string
		events  []progress.Event
		forced  bool
		notices []progress.Notice
		res     progress.Result
	}{
		{name: "built", events: append(layers(), closeAll...),
			res: progress.Result{Status: progress.StatusBuilt, Engine: "convnet.engine", EngineBytes: 5 << 20, Duration: sec(12.5)}},
		{name: "failed", events: append(layers()[:len(layers())-2], failLogs...),
			res: progress.Result{Status: progress.StatusFailed, Error: "the builder returned no engine", Duration: sec(10.2)}},
		{name: "failed_all_finished", events: append(layers()[:len(layers())-3],
			evLog(sec(11.6), progress.SeverityError, "Error Code 10: Internal Error (Could not find any implementation for node layer_3.)"),
			evFinish(sec(11.6), 13), evFinish(sec(11.6), 2), evFinish(sec(11.6), 1)),
			res: progress.Result{Status: progress.StatusFailed, Error: "Error Code 10: Internal Error (Could not find any implementation for node layer_3.)", Duration: sec(11.7)}},
		{name: "crashed", events: layers()[:len(layers())-2],
			res: progress.Result{Status: progress.StatusFailed, Error: "the build worker crashed (signal: aborted)", Duration: sec(10.2)}},
		{name: "cancelled", events: layers()[:len(layers())-2], notices: []progress.Notice{{Kind: progress.NoticeCancelRequested}},
			res: progress.Result{Status: progress.StatusCancelled, Duration: sec(10.2)}},
		{name: "forced", events: layers()[:len(layers())-2], notices: []progress.Notice{{Kind: progress.NoticeCancelRequested}, {Kind: progress.NoticeForceStop}},
			res: progress.Result{Status: progress.StatusCancelled, Error: "the build worker was stopped", Duration: sec(10.2)}},
		{name: "timed_out", events: layers()[:len(layers())-2], notices: []progress.Notice{{Kind: progress.NoticeTimeout, Message: "Build exceeded --timeout 10s"}},
			res: progress.Result{Status: progress.StatusTimedOut, Error: "Build exceeded --timeout 10s in phase \"Finding fastest tactic for layer_3\" (running for 0.2s)", Duration: sec(10.2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, in, clk := newTestModel(modelOptions{})
			clk.Set(tc.events[len(tc.events)-1].Time) // the events arrive as they happen
			in.put(tc.events)
			for _, n := range tc.notices {
				in.notice(n)
			}
			clk.Set(tc.res.Duration) // the result arrives when the build ends
			in.end(tc.res)
			m.step(clk.Now())
			got := strings.Join(stripAll(m.printQ), "\n") + "\n"
			golden(t, filepath.Join("testdata", "tty_summary_"+tc.name+".golden"), []byte(got))
		})
	}
}

// TestPanicEndsTheProgram checks that a panic in Update or View is caught, turns into a
// ViewError and makes the program quit instead of taking the terminal down with it.
func TestPanicEndsTheProgram(t *testing.T) {
	t.Run("update", func(t *testing.T) {
		m, _, _ := newTestModel(modelOptions{controls: panicControls{}})
		got, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
		if got != m || !isQuit(cmd) || m.failure == nil || !strings.Contains(m.failure.Error(), "boom") {
			t.Fatalf("model %v, quit %v, failure %v", got, isQuit(cmd), m.failure)
		}
		if !strings.Contains(string(m.failure.Stack), "RequestCancel") {
			t.Errorf("the stack does not show where it panicked:\n%s", m.failure.Stack)
		}
	})
	t.Run("view", func(t *testing.T) {
		m, _, _ := newTestModel(modelOptions{})
		m.theme.spinner = nil // the frame divides by the number of spinner frames
		if v := m.View(); v.Content != "" || m.failure == nil {
			t.Fatalf("view %q, failure %v", v.Content, m.failure)
		}
		if _, cmd := m.Update(frameMsg{}); !isQuit(cmd) {
			t.Fatal("the next update did not quit")
		}
	})
}

type panicControls struct{}

func (panicControls) RequestCancel() { panic("boom") }

// TestTaskbarProgress checks the OSC 9;4 state the view asks for.
func TestTaskbarProgress(t *testing.T) {
	m, in, clk := newTestModel(modelOptions{taskbar: true})
	if pb := m.View().ProgressBar; pb == nil || pb.State != tea.ProgressBarIndeterminate {
		t.Fatalf("before any phase: %+v, want indeterminate", pb)
	}
	in.put(tensorRTLike())
	clk.Set(sec(3))
	m.Update(frameMsg{})
	// One of the root's 4 steps done (25%), and its open children part of the second: 2 of
	// "Timing graph nodes"' 15 nodes, and 12.75 of the open node's 37 tactics (progress.Along).
	if pb := m.View().ProgressBar; pb == nil || pb.State != tea.ProgressBarDefault || pb.Value != 28 {
		t.Fatalf("at 1/4 of the root phase and some way into its second step: %+v, want default at 28", pb)
	}
	in.notice(progress.Notice{Kind: progress.NoticeCancelRequested})
	m.Update(frameMsg{})
	if pb := m.View().ProgressBar; pb == nil || pb.State != tea.ProgressBarWarning {
		t.Fatalf("while cancelling: %+v, want warning", pb)
	}
	plain, _, _ := newTestModel(modelOptions{})
	if pb := plain.View().ProgressBar; pb != nil {
		t.Fatalf("taskbar progress without support: %+v", pb)
	}
}

// TestEnvironment checks the colour and taskbar decisions.
func TestEnvironment(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	colour := []struct {
		env  func(string) string
		tty  bool
		want bool
	}{
		{env(), true, true},
		{env(), false, false},
		{env("NO_COLOR", "1"), true, false},
		{env("NO_COLOR", "yes"), true, false},
		{env("NO_COLOR", "0"), true, false}, // any non-empty value
		{env("NO_COLOR", ""), true, true},
		{env("CLICOLOR", "0"), true, false},
		{env("CLICOLOR", "1"), false, false},
		{env("CLICOLOR_FORCE", "1"), false, true},
		{env("CLICOLOR_FORCE", "0"), false, false},
		{env("CLICOLOR_FORCE", "1", "CLICOLOR", "0"), true, true},
		{env("CLICOLOR_FORCE", "1", "NO_COLOR", "1"), true, false},
	}
	for i, tc := range colour {
		if got := ColorFromEnv(tc.env, tc.tty); got != tc.want {
			t.Errorf("colour case %d: got %v, want %v", i, got, tc.want)
		}
	}
	taskbar := []struct {
		env  func(string) string
		want bool
	}{
		{env(), false},
		{env("WT_SESSION", "abc"), true},
		{env("WT_SESSION", "abc", "TMUX", "/tmp/tmux-0/default,1,0"), false},
		{env("TERM_PROGRAM", "WezTerm"), true},
		{env("TERM_PROGRAM", "ghostty"), true},
		{env("TERM_PROGRAM", "Apple_Terminal"), false},
		{env("TERM_PROGRAM", "WezTerm", "TERM", "screen-256color"), false},
		{env("ConEmuANSI", "ON"), true},
	}
	for i, tc := range taskbar {
		if got := TaskbarFromEnv(tc.env); got != tc.want {
			t.Errorf("taskbar case %d: got %v, want %v", i, got, tc.want)
		}
	}
}

// TestFrameHeightOnlyGrows checks that the frame keeps its tallest height while phases come
// and go, with the footer on its last line, and starts over after a resize.
func TestFrameHeightOnlyGrows(t *testing.T) {
	m, in, clk := newTestModel(modelOptions{})
	in.put(parallel(8))
	clk.Set(sec(1))
	m.Update(frameMsg{})
	tall := strings.Split(ansi.Strip(m.View().Content), "\n")

	var done []progress.Event
	for i := 0; i < 7; i++ {
		done = append(done, evFinish(sec(1.5), 10+i))
	}
	in.put(done)
	clk.Set(sec(2))
	m.Update(frameMsg{})
	short := strings.Split(ansi.Strip(m.View().Content), "\n")
	if len(short) != len(tall) || !strings.Contains(short[len(short)-1], "2.0s elapsed") {
		t.Fatalf("frame went from %d to %d lines, or lost its footer:\n%s", len(tall), len(short), strings.Join(short, "\n"))
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if got := strings.Split(ansi.Strip(m.View().Content), "\n"); len(got) >= len(tall) {
		t.Fatalf("after a resize the frame kept %d lines:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestWrapWords checks how lines printed above the view are wrapped.
func TestWrapWords(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  []string
	}{
		{"short line", 20, []string{"short line"}},
		{"  9.5s warning: keep the indent", 16, []string{"  9.5s warning:", "keep the indent"}},
		{"stop other processes using it (nvidia-smi), lower --workspace", 30,
			[]string{"stop other processes using it", "(nvidia-smi), lower", "--workspace"}},
		{"a 0123456789abcdef b", 8, []string{"a", "01234567", "89abcdef", "b"}},
		{"\x1b[1mbold words\x1b[m here", 10, []string{"\x1b[1mbold words\x1b[m", "here"}},
		{"語句の折り返し 日本語", 8, []string{"語句の折", "り返し", "日本語"}},
	}
	for _, tc := range tests {
		got := wrapWords(tc.s, tc.limit)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
		for _, l := range got {
			if ansi.StringWidth(l) > tc.limit {
				t.Errorf("wrapWords(%q, %d): %q is too wide", tc.s, tc.limit, l)
			}
		}
	}
}

// TestResultDrawnOnWake: End wakes the program with a wakeMsg, and that alone queues the
// summary: the view does not wait for its next frame tick after the result arrived.
func TestResultDrawnOnWake(t *testing.T) {
	m, in, _ := newTestModel(modelOptions{})
	in.put(tensorRTLike())
	in.end(progress.Result{Status: progress.StatusBuilt, Engine: "convnet.engine", Duration: sec(3)})
	_, cmd := m.Update(wakeMsg{})
	if !m.summarised || cmd == nil {
		t.Fatalf("the wake did not draw the summary (summarised %v, command %v)", m.summarised, cmd != nil)
	}
}

// TestQuietFrames: while the builder is silent the view draws a quarter of the frames; when
// progress comes back, or something waits to be printed, every frame again.
func TestQuietFrames(t *testing.T) {
	m, in, clk := newTestModel(modelOptions{tick: frameInterval})
	in.put(tensorRTLike())
	clk.Set(sec(3))
	m.step(clk.Now())
	if got := m.frameEvery(); got != frameInterval {
		t.Errorf("frame every %v while progressing, want %v", got, frameInterval)
	}
	clk.Set(sec(3) + silenceAfter)
	m.step(clk.Now())
	if got := m.frameEvery(); got != quietFrames*frameInterval {
		t.Errorf("frame every %v during silence, want %v", got, quietFrames*frameInterval)
	}
	in.put([]progress.Event{evStep(sec(8), 4, 3)})
	clk.Set(sec(8.1))
	m.step(clk.Now())
	if got := m.frameEvery(); got != frameInterval {
		t.Errorf("frame every %v after progress came back, want %v", got, frameInterval)
	}
}
