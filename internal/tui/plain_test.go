package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// scriptedBuild is a small build with every situation a renderer must show: nesting to depth
// 5, parallel equally named phases, a reused name, an early finish, a hostile name, logs, and
// phases left open at the end.
func scriptedBuild() []progress.Event {
	ev := []progress.Event{
		{Type: progress.EventPhaseStart, Time: ms(0), ID: 1, Name: "Building engine", Steps: 4},
		{Type: progress.EventStep, Time: ms(100), ID: 1, Step: 0},
		{Type: progress.EventPhaseStart, Time: ms(120), ID: 2, Parent: 1, Name: "Building engine from subgraph", Steps: 1},
		{Type: progress.EventPhaseStart, Time: ms(130), ID: 3, Parent: 2, Name: "Computing profile costs", Steps: 1},
		{Type: progress.EventPhaseStart, Time: ms(140), ID: 4, Parent: 3, Name: "Timing graph nodes", Steps: 40},
		{Type: progress.EventPhaseStart, Time: ms(150), ID: 5, Parent: 4, Name: "Finding fastest tactic for stem/conv1", Steps: 3, Thread: 2},
		{Type: progress.EventPhaseStart, Time: ms(150), ID: 6, Parent: 4, Name: "Finding fastest tactic for \x1b[2Jevil\nname", Steps: 3, Thread: 3},
		{Type: progress.EventPhaseStart, Time: ms(160), ID: 7, Parent: 5, Name: "Measuring tactic time", Steps: 4, Thread: 2},
		{Type: progress.EventLog, Time: ms(170), Severity: progress.SeverityWarning, Message: "layer stem/conv1 uses a slower fallback"},
		{Type: progress.EventPhaseFinish, Time: ms(200), ID: 7},
		{Type: progress.EventPhaseFinish, Time: ms(210), ID: 5},
		{Type: progress.EventPhaseFinish, Time: ms(220), ID: 6},
	}
	for i := 0; i < 40; i++ {
		ev = append(ev, progress.Event{Type: progress.EventStep, Time: ms(300 + 10*i), ID: 4, Step: i})
	}
	ev = append(ev,
		progress.Event{Type: progress.EventPhaseFinish, Time: ms(700), ID: 4},
		progress.Event{Type: progress.EventPhaseStart, Time: ms(710), ID: 8, Parent: 3, Name: "Timing graph nodes", Steps: 10},
		progress.Event{Type: progress.EventStep, Time: ms(720), ID: 8, Step: 2},
		progress.Event{Type: progress.EventPhaseFinish, Time: ms(730), ID: 8},
		progress.Event{Type: progress.EventLog, Time: ms(740), Severity: progress.SeverityError, Message: "Error Code 10: Internal Error (Could not find any implementation for node head/fc.)"},
	)
	return ev
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestPlainGolden(t *testing.T) {
	tests := []struct {
		name    string
		verbose bool
		result  progress.Result
	}{
		{"failed", false, progress.Result{Status: progress.StatusFailed, Error: "Could not find any implementation for node head/fc", Duration: ms(800)}},
		{"cancelled_verbose", true, progress.Result{Status: progress.StatusCancelled, Duration: ms(800)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			var out bytes.Buffer
			p := keep(NewPlain(&out, PlainOptions{Verbose: tt.verbose, Now: clock.now}), clock.now)
			p.Begin(progress.BuildInfo{Model: "m.onnx", Engine: "m.engine", Backend: "sim", Precision: "fp16"})
			events := scriptedBuild()
			p.Handle(events[:12])
			p.Notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested."})
			p.Handle(events[12:])
			if err := p.End(tt.result); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "plain_"+tt.name+".golden"), out.Bytes())
			if bytes.IndexByte(out.Bytes(), 0x1b) >= 0 {
				t.Error("plain output contains an ESC byte")
			}
		})
	}
}

// TestPlainThrottlesProgress: progress lines come every 5% of a phase's steps, a second apart
// at least, and every 5 seconds when it moves slowly; never one per step of a fast phase.
func TestPlainThrottlesProgress(t *testing.T) {
	tests := []struct {
		name     string
		step     time.Duration
		min, max int
	}{
		{"1000 steps in 100s", 100 * time.Millisecond, 19, 21},       // every 5%
		{"1000 steps in 1s", time.Millisecond, 1, 1},                 // the one a second after the start
		{"1000 steps in an hour", 3600 * time.Millisecond, 500, 500}, // every 5 seconds: each other step
		{"50 steps in 10 minutes", 12 * time.Second, 49, 50},         // each step is over 5 s
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := keep(NewPlain(&out, PlainOptions{}), nil)
			p.Begin(progress.BuildInfo{})
			steps := 1000
			if strings.HasPrefix(tc.name, "50") {
				steps = 50
			}
			ev := []progress.Event{{Type: progress.EventPhaseStart, ID: 1, Name: "Timing graph nodes", Steps: steps}}
			for i := 0; i < steps; i++ {
				ev = append(ev, progress.Event{Type: progress.EventStep, Time: time.Duration(i+1) * tc.step, ID: 1, Step: i})
			}
			p.Handle(ev)
			lines := strings.Count(out.String(), "Timing graph nodes ") - 1 // less the start line
			if lines < tc.min || lines > tc.max {
				t.Errorf("%d progress lines, want %d to %d:\n%s", lines, tc.min, tc.max, out.String())
			}
		})
	}
}

// TestPlainStatusInSilence: while the builder reports nothing, a status line says where it is
// and for how long it has been silent whenever the log has been quiet for 7 s, so no quiet
// stretch reaches 10 s with the session's tick once a second.
func TestPlainStatusInSilence(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	p := keep(NewPlain(&out, PlainOptions{Now: clock.now}), clock.now)
	p.Begin(progress.BuildInfo{})
	p.Handle([]progress.Event{{Type: progress.EventPhaseStart, ID: 7, Name: "Timing graph nodes", Steps: 3}})
	var beats []string
	for s := 1; s <= 30; s++ {
		clock.t = clock.t.Add(time.Second)
		before := out.Len()
		p.Tick(clock.t)
		if out.Len() > before {
			beats = append(beats, strings.TrimSpace(out.String()[before:]))
		}
	}
	want := []string{
		"#7 7.0s Timing graph nodes 0/3; no progress reported for 7.0s",
		"#7 14.0s Timing graph nodes 0/3; no progress reported for 14.0s",
		"#7 21.0s Timing graph nodes 0/3; no progress reported for 21.0s",
		"#7 28.0s Timing graph nodes 0/3; no progress reported for 28.0s",
	}
	if strings.Join(beats, "\n") != strings.Join(want, "\n") {
		t.Errorf("status lines:\n%s\nwant:\n%s", strings.Join(beats, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlainStatusBeforeTheFirstPhase: a builder that has reported no phase yet (TensorRT
// loading, the parser reading the model) is waited for, and said so.
func TestPlainStatusBeforeTheFirstPhase(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	p := keep(NewPlain(&out, PlainOptions{Now: clock.now}), clock.now)
	p.Begin(progress.BuildInfo{Backend: "tensorrt"})
	clock.t = clock.t.Add(7 * time.Second)
	p.Tick(clock.t)
	if want := "   7.0s waiting for the builder's first phase; no progress reported for 7.0s\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("got:\n%s\nwant the last line:\n%s", &out, want)
	}
}

func TestJSONRendererLinesParse(t *testing.T) {
	var out bytes.Buffer
	j := keep(progress.NewJSONLines(&out, nil), nil)
	j.Begin(progress.BuildInfo{Model: "m.onnx", Engine: "m.engine", Backend: "sim"})
	j.Handle(scriptedBuild())
	j.Notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested."})
	if err := j.End(progress.Result{Status: progress.StatusCancelled, Duration: ms(900)}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(scriptedBuild())+3 {
		t.Errorf("%d lines, want %d", len(lines), len(scriptedBuild())+3)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
		}
	}
	if !strings.Contains(lines[0], `"type":"build"`) || !strings.Contains(lines[len(lines)-1], `"type":"result"`) {
		t.Errorf("stream must open with build and close with result:\n%s", out.String())
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, os.ErrClosed
}

func TestRenderersReportWriteErrors(t *testing.T) {
	for name, r := range map[string]*kept{
		"plain": keep(NewPlain(&failingWriter{}, PlainOptions{}), nil),
		"json":  keep(progress.NewJSONLines(&failingWriter{}, nil), nil),
	} {
		r.Begin(progress.BuildInfo{})
		r.Handle(scriptedBuild())
		if err := r.End(progress.Result{Status: progress.StatusBuilt}); err == nil {
			t.Errorf("%s: End returned nil after every write failed", name)
		}
	}
}

func TestSelectMode(t *testing.T) {
	tests := []struct {
		flag, env string
		tty       bool
		term      string
		want      Mode
		warn, err bool
	}{
		{"auto", "", true, "xterm-256color", ModeTTY, false, false},
		{"auto", "", false, "xterm", ModePlain, false, false},
		{"auto", "", true, "dumb", ModePlain, false, false},
		{"auto", "json", true, "xterm", ModeJSON, false, false},
		{"plain", "json", true, "xterm", ModePlain, false, false}, // env applies only to auto
		{"tty", "", false, "xterm", ModePlain, true, false},
		{"tty", "", true, "dumb", ModePlain, true, false},
		{"QUIET", "", true, "xterm", ModeQuiet, false, false},
		{"fancy", "", true, "xterm", "", false, true},
		{"auto", "fancy", true, "xterm", "", false, true},
	}
	for _, tt := range tests {
		got, warn, err := SelectMode(tt.flag, tt.env, tt.tty, tt.term)
		if (err != nil) != tt.err || got != tt.want || (warn != "") != tt.warn {
			t.Errorf("SelectMode(%q, %q, %v, %q) = %q, %q, %v; want %q, warning %v, error %v",
				tt.flag, tt.env, tt.tty, tt.term, got, warn, err, tt.want, tt.warn, tt.err)
		}
	}
}

func TestFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.0s", 1500 * time.Millisecond: "1.5s", 102 * time.Second: "1m42s", 2*time.Hour + 3*time.Minute: "2h03m", -time.Second: "0.0s",
	} {
		if got := progress.FormatDuration(d); got != want {
			t.Errorf("progress.FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB"} {
		if got := progress.FormatBytes(n); got != want {
			t.Errorf("progress.FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Check(t, path, got)
}

func TestPlainColor(t *testing.T) {
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		p := keep(NewPlain(&out, PlainOptions{Color: color}), nil)
		p.Begin(progress.BuildInfo{})
		p.Handle([]progress.Event{evStart(0, 1, 0, "a", 1), evStep(1, 1, 0), evFinish(2, 1), evLog(3, progress.SeverityWarning, "w")})
		if err := p.End(progress.Result{Status: progress.StatusBuilt}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if has := strings.Contains(got, "\x1b["); has != color {
			t.Errorf("color %v: escape sequences %v:\n%q", color, has, got)
		}
		if color && !strings.Contains(got, "\x1b[32mDONE\x1b[0m") {
			t.Errorf("DONE is not green:\n%q", got)
		}
	}
}

// TestSummaryOfACachedBuild: a build served from the timing cache says so on its last line.
func TestSummaryOfACachedBuild(t *testing.T) {
	got := Summary(progress.Result{Status: progress.StatusBuilt, Engine: "m.engine", EngineBytes: 2048, Duration: sec(0.1), CacheHits: 24})
	if want := "Built m.engine (2.0 KiB) in 0.1s; 24/24 timing-cache hits"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got := Summary(progress.Result{Status: progress.StatusBuilt, Engine: "m.engine", Duration: sec(1)}); strings.Contains(got, "timing") {
		t.Errorf("a build without the cache mentions it: %q", got)
	}
	// TensorRT tells no hits: what a build over it knows is said, and no "0/N hits".
	for _, tt := range []struct {
		res  progress.Result
		want string
	}{
		{progress.Result{CacheMisses: 27}, "; 27 new timings added to the timing cache"},
		{progress.Result{CacheMisses: 1, CacheUsed: true}, "; 1 new timing added to the timing cache"},
		{progress.Result{CacheUsed: true}, "; every timing from the timing cache"},
	} {
		tt.res.Status, tt.res.Engine, tt.res.Duration = progress.StatusBuilt, "m.engine", sec(1)
		if got := Summary(tt.res); !strings.HasSuffix(got, tt.want) {
			t.Errorf("Summary(%+v) = %q, want it to end %q", tt.res, got, tt.want)
		}
	}
}

// TestPlainReadsTheSessionTree: the phases the build leaves open are read from the session's
// state at the end, including one whose start the plain renderer was never handed: a plain
// renderer with a tree of its own would not know it.
func TestPlainReadsTheSessionTree(t *testing.T) {
	var out bytes.Buffer
	p := keep(NewPlain(&out, PlainOptions{}), nil)
	p.Begin(progress.BuildInfo{})
	p.Handle([]progress.Event{evStart(0, 1, 0, "seen", 2)})
	p.st.Apply([]progress.Event{evStart(sec(0.5), 2, 1, "only in the session", 3)}, time.Now())
	if err := p.End(progress.Result{Status: progress.StatusCancelled, Duration: sec(1)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "#2 0.5s only in the session CANCELLED") {
		t.Errorf("the phase only the session saw is missing:\n%s", &out)
	}
}

// TestPlainStatusTimeLeft: a status line during the timing phase says how long the timing
// still runs, as long as the silence is one a layer explains, and then no more.
func TestPlainStatusTimeLeft(t *testing.T) {
	clock := &fakeClock{t: epoch}
	var out bytes.Buffer
	p := keep(NewPlain(&out, PlainOptions{Now: clock.now}), clock.now)
	p.Begin(progress.BuildInfo{})
	var last time.Duration
	for _, e := range timedLayers() {
		clock.t, last = epoch.Add(e.Time), e.Time
		p.Handle([]progress.Event{e})
	}
	var beats []string
	for s := 1; s <= 75; s++ {
		clock.t = epoch.Add(last + time.Duration(s)*time.Second)
		before := out.Len()
		p.Tick(clock.t)
		if out.Len() > before {
			beats = append(beats, strings.TrimSpace(out.String()[before:]))
		}
	}
	const layer = "#20 %s Finding fastest tactic for /blocks/block.6/Conv 2/6; no progress reported for %s"
	const left = "; about 15–25 min of layer timing left"
	want := []string{
		fmt.Sprintf(layer, "3m52s", "7.0s") + left,
		fmt.Sprintf(layer, "3m59s", "14.0s") + left,
		fmt.Sprintf(layer, "4m06s", "21.0s") + left,
		fmt.Sprintf(layer, "4m13s", "28.0s") + left,
		fmt.Sprintf(layer, "4m20s", "35.0s") + left,
		fmt.Sprintf(layer, "4m27s", "42.0s") + left,
		fmt.Sprintf(layer, "4m34s", "49.0s") + left,
		fmt.Sprintf(layer, "4m41s", "56.0s"), // the layer has run longer than any before it: no estimate
		fmt.Sprintf(layer, "4m48s", "1m03s"),
		fmt.Sprintf(layer, "4m55s", "1m10s"),
	}
	if strings.Join(beats, "\n") != strings.Join(want, "\n") {
		t.Errorf("status lines:\n%s\nwant:\n%s", strings.Join(beats, "\n"), strings.Join(want, "\n"))
	}
}
