package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// scene is a view state to draw: events arriving at their own build times (so the worker's
// start-up delay is zero), notices, and the wall time of the frame.
type scene struct {
	events  []progress.Event
	notices []timedNotice
	at      time.Duration
	width   int
	height  int
	color   bool
}

// model returns a model that has taken in the scene and drawn one frame.
func (s scene) model(t testing.TB) *ttyModel {
	t.Helper()
	clk := newTestClock()
	in := newFeed(clk.Now)
	m := newTTYModel(testInfo, epoch, in.box, modelOptions{color: s.color, now: clk.Now, width: s.width, height: s.height})
	m.Update(frameMsg{}) // two frames: the renderer has drawn, lines may be printed above
	m.Update(frameMsg{})
	for _, e := range s.events {
		clk.Set(e.Time)
		in.put([]progress.Event{e})
	}
	for _, n := range s.notices {
		clk.Set(n.at.Sub(epoch))
		in.notice(n.Notice)
	}
	clk.Set(s.at)
	m.Update(frameMsg{})
	m.View()
	if m.failure != nil {
		t.Fatalf("the view panicked: %v\n%s", m.failure.Panic, m.failure.Stack)
	}
	return m
}

// frame draws the scene without colour codes.
func (s scene) frame(t testing.TB) string {
	t.Helper()
	return ansi.Strip(s.model(t).frameText)
}

// timedNotice is a notice the session announces at wall time at.
type timedNotice struct {
	progress.Notice
	at time.Time
}

func notice(kind progress.NoticeKind, at time.Duration, msg string) timedNotice {
	return timedNotice{Notice: progress.Notice{Kind: kind, Message: msg}, at: epoch.Add(at)}
}

// chain is n phases, each nested in the one before.
func chain(n int) []progress.Event {
	var evs []progress.Event
	for i := 1; i <= n; i++ {
		evs = append(evs, evStart(sec(0.1*float64(i)), i, i-1, fmt.Sprintf("level %d", i-1), i+1))
	}
	return append(evs, evStep(sec(1), n, 0))
}

// parallel is one parent with n running children, as parallel builder threads make.
func parallel(n int) []progress.Event {
	evs := []progress.Event{evStart(0, 1, 0, "Building engine", 2)}
	for i := 0; i < n; i++ {
		evs = append(evs, evStart(sec(0.1+0.01*float64(i)), 10+i, 1, fmt.Sprintf("Finding fastest tactic for node_%02d", i), 8))
	}
	return evs
}

// hostileNames are names a builder may well report: long, wide, combined, emoji, and one
// with escape sequences that must not reach the terminal.
func hostileNames() []progress.Event {
	return []progress.Event{
		evStart(0, 1, 0, "Building engine", 3),
		evStart(sec(0.1), 2, 1, "Finding fastest tactic for /model/backbone/stage4/block3/attention/qkv_projection/MatMul_with_a_very_long_suffix", 12),
		evStart(sec(0.2), 3, 1, "最適な戦術を探索しています：畳み込み層〔エンコーダ第三段〕の計算", 9),
		evStart(sec(0.3), 4, 1, "Café déjà vu 🚀 résumé naïve coöperate 👩‍👩‍👧‍👦 family tactic timing", 5),
		evStart(sec(0.4), 5, 1, "evil \x1b[2J\x1b[31mred\x1b[0m\nname\tend", 2),
		evStep(sec(0.5), 3, 4),
	}
}

// reusedNames has equally named phases: one finished and one running under the same parent
// (TensorRT reuses a name once the phase is done), and two running at once under different
// parents.
func reusedNames() []progress.Event {
	return []progress.Event{
		evStart(0, 1, 0, "Building engine", 2),
		evStart(sec(0.1), 2, 1, "Timing graph nodes", 4),
		evStart(sec(0.2), 3, 2, "Measuring tactic time", 4),
		evStep(sec(0.3), 3, 3),
		evFinish(sec(0.4), 3),
		evStart(sec(0.5), 4, 2, "Measuring tactic time", 4),
		evStart(sec(0.5), 5, 1, "Timing graph nodes", 6),
		evStart(sec(0.6), 6, 5, "Measuring tactic time", 4),
		evStep(sec(0.7), 6, 1),
	}
}

// timedLayers is a timing phase of 40 layers that has timed six of unequal length and is
// timing the seventh: enough for an estimate of the time left.
func timedLayers() []progress.Event {
	evs := []progress.Event{
		evStart(0, 1, 0, "Building engine", 4),
		evStart(sec(0.1), 2, 1, "Timing graph nodes", 40),
	}
	at := sec(0.1)
	for i, d := range []float64{20, 40, 25, 60, 30, 45} {
		id := 10 + i
		evs = append(evs, evStart(at, id, 2, fmt.Sprintf("Finding fastest tactic for /blocks/block.%d/Conv", i), 6))
		at += sec(d)
		evs = append(evs, evStep(at, id, 5), evFinish(at, id), evStep(at, 2, i))
	}
	return append(evs, evStart(at, 20, 2, "Finding fastest tactic for /blocks/block.6/Conv", 6), evStep(at+sec(5), 20, 1))
}

// hardSwish is the node timing of a MobileNet export at 80 columns: a reformatting layer and
// the layer it feeds, whose names end alike, and layers of a long common prefix.
func hardSwish() []progress.Event {
	const layer = "/features/features.0/features.0.2/HardSwish"
	return []progress.Event{
		evStart(0, 1, 0, "Building engine", 4),
		evStart(sec(0.1), 2, 1, "Building engine from subgraph", 1),
		evStart(sec(0.1), 3, 2, "Computing profile costs", 1),
		evStart(sec(0.2), 4, 3, "Timing graph nodes", 141),
		evStart(sec(0.3), 5, 4, "Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to "+layer, 3),
		evStep(sec(0.4), 5, 2),
		evFinish(sec(0.4), 5),
		evStart(sec(0.5), 6, 4, "Finding fastest tactic for "+layer, 8),
		evStep(sec(0.6), 6, 7),
		evFinish(sec(0.6), 6),
		evStart(sec(0.7), 7, 4, "Finding fastest tactic for /features/features.1/block/block.0/block.0.0/Conv + /features/features.1/block/block.0/block.0.2/Relu", 8),
		evStart(sec(0.7), 8, 4, "Finding fastest tactic for Reformatting CopyNode for Output Tensor 0 to /features/features.1/block/block.1/fc1/Conv", 8),
		evStart(sec(0.8), 9, 7, "Measuring tactic time", 4),
		evStep(sec(0.9), 9, 1),
	}
}

var scenes = map[string]scene{
	"time_left":      {events: timedLayers(), at: sec(227)},
	"names_at_80":    {events: hardSwish(), at: sec(1), width: 80},
	"waiting":        {at: sec(0.3)},
	"tensorrt":       {events: tensorRTLike(), at: sec(3)},
	"silence":        {events: tensorRTLike(), at: sec(2.7) + 102*time.Second},
	"deep":           {events: chain(9), at: sec(2)},
	"hostile_names":  {events: hostileNames(), at: sec(1), width: 60},
	"reused_names":   {events: reusedNames(), at: sec(1)},
	"narrow":         {events: tensorRTLike(), at: sec(3), width: 40},
	"wide":           {events: tensorRTLike(), at: sec(3), width: 200},
	"early_at_60":    {events: tensorRTLike(), at: sec(3), width: 60},
	"days_long":      {events: tensorRTLike(), at: 150 * time.Hour},
	"short_terminal": {events: parallel(30), at: sec(1), height: 12},
	"all_finished": {events: append(tensorRTLike()[:6],
		evFinish(sec(1), 5), evFinish(sec(1), 4), evFinish(sec(1), 3), evFinish(sec(1), 2), evFinish(sec(1), 1)), at: sec(1.5)},
	"cancel_requested": {events: tensorRTLike(), at: sec(15),
		notices: []timedNotice{notice(progress.NoticeCancelRequested, sec(3), "Cancel requested")}},
	"timeout": {events: tensorRTLike(), at: sec(15),
		notices: []timedNotice{notice(progress.NoticeTimeout, sec(3), "Build exceeded --timeout 10s in phase \"Measuring tactic time\" (running for 0.4s); cancelling")}},
	"force_stop": {events: tensorRTLike(), at: sec(16),
		notices: []timedNotice{notice(progress.NoticeCancelRequested, sec(3), "Cancel requested"), notice(progress.NoticeForceStop, sec(15), "Stopping the build worker now.")}},
}

// TestFrameGolden compares whole frames at fixed sizes with testdata/tty_frame_*.golden.
func TestFrameGolden(t *testing.T) {
	for name, s := range scenes {
		t.Run(name, func(t *testing.T) {
			if s.width == 0 {
				s.width = 80
			}
			if s.height == 0 {
				s.height = 24
			}
			golden(t, filepath.Join("testdata", "tty_frame_"+name+".golden"), []byte(s.frame(t)+"\n"))
		})
	}
}

// TestFrameColourGolden keeps the styling of one frame, escapes made visible.
func TestFrameColourGolden(t *testing.T) {
	s := scenes["tensorrt"]
	s.width, s.height, s.color = 80, 24, true
	got := strings.ReplaceAll(s.model(t).View().Content, "\x1b", `\e`)
	golden(t, filepath.Join("testdata", "tty_frame_colour.golden"), []byte(got+"\n"))
}

// TestFrameFits draws every scene at many sizes: no line may be wider than the terminal (or
// than the content cap), the frame never takes more than two thirds of the height (at least
// six lines), no control character other than newline and escape gets through, and the
// running leaf phase stays visible whenever there is room for a row.
func TestFrameFits(t *testing.T) {
	for name, s := range scenes {
		for _, w := range []int{12, 20, 33, 40, 47, 59, 64, 79, 80, 99, 100, 131, 250} {
			for _, h := range []int{4, 8, 12, 24, 60} {
				s.width, s.height = w, h
				got := s.frame(t)
				lines := strings.Split(got, "\n")
				limit := h * 2 / 3
				if limit < 6 {
					limit = min(6, h-1)
				}
				if len(lines) > limit {
					t.Errorf("%s at %dx%d: %d lines, want at most %d:\n%s", name, w, h, len(lines), limit, got)
				}
				for _, l := range lines {
					if cw := ansi.StringWidth(l); cw > min(w, maxContentWidth) {
						t.Errorf("%s at %dx%d: line is %d cells wide:\n%q", name, w, h, cw, l)
					}
					for _, r := range l {
						if r < 0x20 || r == 0x7f {
							t.Errorf("%s at %dx%d: control character %q in %q", name, w, h, r, l)
						}
					}
				}
			}
		}
	}
}

// TestTreeShape checks the rules of what gets a row, independently of layout.
func TestTreeShape(t *testing.T) {
	tests := []struct {
		name   string
		scene  scene
		want   []string // substrings that must appear, in this order
		absent []string
	}{
		{
			name:  "finished children collapse into the parent and the last few stay",
			scene: scene{events: tensorRTLike(), at: sec(3)},
			want: []string{
				"Building engine ", "Building engine from subgraph", "Computing profile costs", "Timing graph nodes",
				"✓ tactic conv1", "37/37", "0.8s",
				"✓ tactic relu1", "4/12",
				"tactic conv2", "12/37", "Measuring tactic time", "3/4",
			},
		},
		{
			name: "only the last three finished children stay",
			scene: scene{at: sec(10), events: func() []progress.Event {
				evs := []progress.Event{evStart(0, 1, 0, "root", 10)}
				for i := 0; i < 6; i++ {
					evs = append(evs, evStart(sec(float64(i)), 10+i, 1, fmt.Sprintf("child %d", i), 1), evStep(sec(float64(i)+0.5), 10+i, 0), evFinish(sec(float64(i)+0.5), 10+i))
				}
				return append(evs, evStart(sec(7), 20, 1, "child running", 3))
			}()},
			want:   []string{"root", "✓ child 3", "✓ child 4", "✓ child 5", "child running"},
			absent: []string{"child 0", "child 1", "child 2"},
		},
		{
			name:   "an open sibling older than the finished ones keeps its place",
			scene:  scene{at: sec(5), events: []progress.Event{evStart(0, 1, 0, "root", 1), evStart(sec(0.1), 2, 1, "slow child", 2), evStart(sec(0.2), 3, 1, "quick child", 1), evFinish(sec(0.3), 3)}},
			want:   []string{"root", "slow child", "✓ quick child"},
			absent: []string{"waiting"},
		},
		{
			name:   "deep trees are cut at the visible depth and summarised",
			scene:  scene{events: chain(11), at: sec(2)},
			want:   []string{"level 0", "level 7", "⋯ 3 phases deeper: level 10 1/12"},
			absent: []string{"level 8 ", "level 9 "},
		},
		{
			name:  "reused names are separate rows",
			scene: scene{events: reusedNames(), at: sec(1)},
			want: []string{
				"Timing graph nodes", "✓ Measuring tactic time", "4/4", "Measuring tactic time", "0/4",
				"Timing graph nodes", "Measuring tactic time", "2/4",
			},
		},
		{
			name:  "a short terminal says how many running phases it left out",
			scene: scene{events: parallel(30), at: sec(1), height: 12},
			want:  []string{"Building engine", "node_00", "more running phases not shown"},
		},
		{
			name:   "nothing has started",
			scene:  scene{at: sec(0.2)},
			want:   []string{"waiting for the builder to report a phase", "0.2s elapsed", "ctrl+c cancel"},
			absent: []string{"no progress"},
		},
		{
			name:  "silence is reported from the view's own clock",
			scene: scene{events: tensorRTLike(), at: sec(2.7) + 102*time.Second},
			want:  []string{"Measuring tactic time", "1m42s", "no progress reported for 1m42s"},
		},
		{
			name:   "a short silence is not mentioned",
			scene:  scene{events: tensorRTLike(), at: sec(2.7) + 4*time.Second},
			absent: []string{"no progress"},
		},
		{
			name:   "the first notice shows the cancelling state with its age",
			scene:  scene{events: tensorRTLike(), at: sec(15), notices: []timedNotice{notice(progress.NoticeCancelRequested, sec(3), "")}},
			want:   []string{"Cancelling: the builder stops at its next step; 12.0s since its last.", "to stop now.", "cancel requested 12.0s ago", "ctrl+c stop now"},
			absent: []string{"ctrl+c cancel"},
		},
		{
			name:  "a timeout says why it is cancelling",
			scene: scene{events: tensorRTLike(), at: sec(15), width: 120, notices: []timedNotice{notice(progress.NoticeTimeout, sec(3), "Build exceeded --timeout 10s; cancelling")}},
			want:  []string{"Build exceeded --timeout 10s; cancelling: the builder stops at its next step; 12.0s since its last.", "Ctrl-C again to stop", "cancel requested 12.0s ago"},
		},
		{
			name: "a forced stop replaces the cancelling state",
			scene: scene{events: tensorRTLike(), at: sec(16), notices: []timedNotice{
				notice(progress.NoticeCancelRequested, sec(3), ""), notice(progress.NoticeForceStop, sec(15), "Stopping the build worker now."),
			}},
			want:   []string{"Stopping the build worker now.", "stopping 1.0s"},
			absent: []string{"Press Ctrl-C again", "ctrl+c"},
		},
		{
			name:   "escape sequences in names never reach the terminal",
			scene:  scene{events: hostileNames(), at: sec(1), width: 100},
			want:   []string{`evil \x1b[2J\x1b[31mred\x1b[0m name end`},
			absent: []string{"\x1b[2J"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.scene.width == 0 {
				tc.scene.width = 80
			}
			if tc.scene.height == 0 {
				tc.scene.height = 24
			}
			got := tc.scene.frame(t)
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("%q should not appear in:\n%s", a, got)
				}
			}
		})
	}
}

// TestNamesAt80Columns: at 80 columns every row of the MobileNet timing fits, says what the
// layer is (the end of its name), and no two rows of different phases look alike, the
// reformatting layer and the layer it feeds included.
func TestNamesAt80Columns(t *testing.T) {
	frame := scenes["names_at_80"].frame(t)
	seen := map[string]bool{}
	rows := 0
	for _, l := range strings.Split(frame, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("%d cells, more than 80: %q", w, l)
		}
		if !strings.Contains(l, "tactic ") || strings.Contains(l, "Measuring") {
			continue
		}
		rows++
		name := strings.TrimSpace(strings.SplitN(strings.TrimLeft(l, " ✓•⠋"), "  ", 2)[0])
		if seen[name] {
			t.Errorf("two rows read %q in:\n%s", name, frame)
		}
		seen[name] = true
		if strings.Contains(l, "Finding fastest") {
			t.Errorf("the phase kind is not abbreviated: %q", l)
		}
	}
	if rows != 4 {
		t.Fatalf("%d layer rows, want 4, in:\n%s", rows, frame)
	}
	for _, want := range []string{"tactic reformat …", "HardSwish", "block.0.2/Relu", "fc1/Conv"} {
		if !strings.Contains(frame, want) {
			t.Errorf("%q missing at 80 columns:\n%s", want, frame)
		}
	}
}

// TestFitName checks how a label is fitted: whole when it fits, the kind kept and the layer
// cut in the middle when not, and the whole label cut when the kind would take most of the room.
func TestFitName(t *testing.T) {
	tests := []struct {
		name string
		n    int
		want string
	}{
		{"Finding fastest tactic for conv1", 40, "tactic conv1"},
		{"Timing graph nodes", 40, "Timing graph nodes"},
		{"Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv", 30, "tactic /feat….0/block.0.0/Conv"},
		{"Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to /a/b/c/d/e/HardSwish", 30, "tactic reformat …d/e/HardSwish"}, // the whole kind would leave too little,
		{"Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to /a/b/c/d/e/HardSwish", 40, "tactic reformat in 0 → /a/b…/e/HardSwish"},
		{"Measuring tactic time and more words than fit", 20, "Measur…ords than fit"},
	}
	for _, tc := range tests {
		got := fitName(progress.ShortLabel(tc.name), tc.n)
		if got != tc.want || ansi.StringWidth(got) > tc.n {
			t.Errorf("fitName(%q, %d) = %q (%d cells), want %q", tc.name, tc.n, got, ansi.StringWidth(got), tc.want)
		}
	}
}

// TestTimeLeftInTheFooter: the footer shows the estimate once enough layers are timed, and
// drops it where it is not honest: too few layers, a silence no layer explains, a cancel.
func TestTimeLeftInTheFooter(t *testing.T) {
	const want = "about 15–25 min of layer timing left"
	evs := timedLayers()
	tests := []struct {
		name  string
		scene scene
		shown bool
	}{
		{"after six layers", scene{events: evs, at: sec(227)}, true},
		{"at 60 columns", scene{events: evs, at: sec(227), width: 60}, true},
		{"after four layers", scene{events: evs[:2+4*4], at: sec(150)}, false},
		{"silent longer than any layer", scene{events: evs, at: sec(227 + 60)}, false},
		{"cancelling", scene{events: evs, at: sec(228), notices: []timedNotice{notice(progress.NoticeCancelRequested, sec(227), "Cancel requested")}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := tc.scene.frame(t)
			lines := strings.Split(frame, "\n")
			footer := lines[len(lines)-1]
			if got := strings.Contains(footer, want); got != tc.shown {
				t.Errorf("estimate shown %v, want %v, in:\n%s", got, tc.shown, frame)
			}
			if strings.Contains(frame, "timing left") != tc.shown {
				t.Errorf("estimate shown in another form:\n%s", frame)
			}
		})
	}
}

// TestTruncateByCells checks that names are cut by display cells: a name of wide characters
// is cut on a character boundary, and the columns after it stay aligned.
func TestTruncateByCells(t *testing.T) {
	s := scene{events: hostileNames(), at: sec(1), width: 60, height: 24}
	lines := strings.Split(s.frame(t), "\n")
	var countCols []int
	for _, l := range lines {
		if !strings.Contains(l, "/") || !strings.HasSuffix(l, "s") {
			continue
		}
		// The step count ends where the time column begins, at the same cell on every row.
		fields := strings.Fields(l)
		count := fields[len(fields)-2]
		i := strings.LastIndex(l, count)
		countCols = append(countCols, ansi.StringWidth(l[:i])+ansi.StringWidth(count))
		if strings.Contains(l, "最適") && !strings.Contains(l, "…") {
			t.Errorf("the wide name should be cut: %q", l)
		}
		if strings.ContainsRune(l, '\uFFFD') {
			t.Errorf("a character was split: %q", l)
		}
	}
	if len(countCols) < 5 {
		t.Fatalf("expected 5 phase rows, found %d in:\n%s", len(countCols), strings.Join(lines, "\n"))
	}
	for _, c := range countCols[1:] {
		if c != countCols[0] {
			t.Errorf("step counts end at cells %v, want one column", countCols)
			break
		}
	}
}

// TestShortenPair checks how the header fits the two paths: unchanged when they fit, else cut
// at the start (the file names at the end say the most) to fit the room exactly.
func TestShortenPair(t *testing.T) {
	tests := []struct {
		a, b string
		room int
	}{
		{"m.onnx", "m.engine", 40},
		{"a/very/long/path/to/the/model.onnx", "m.engine", 30},
		{"m.onnx", "out/a/very/long/path/to/the/model.engine", 30},
		{"aaaaaaaaaaaaaaaaaaaa.onnx", "bbbbbbbbbbbbbbbbbbbb.engine", 20},
		{"模型/非常に長いパス/モデル.onnx", "エンジン.engine", 16},
	}
	for _, tc := range tests {
		a, b := shortenPair(tc.a, tc.b, tc.room)
		wa, wb := ansi.StringWidth(a), ansi.StringWidth(b)
		fits := ansi.StringWidth(tc.a)+ansi.StringWidth(tc.b) <= tc.room
		switch {
		case fits && (a != tc.a || b != tc.b):
			t.Errorf("shortenPair(%q, %q, %d) = %q, %q: changed paths that fit", tc.a, tc.b, tc.room, a, b)
		case !fits && wa+wb > tc.room:
			t.Errorf("shortenPair(%q, %q, %d) = %q, %q: %d cells, too wide", tc.a, tc.b, tc.room, a, b, wa+wb)
		case !fits && wa+wb < tc.room-1:
			t.Errorf("shortenPair(%q, %q, %d) = %q, %q: %d cells, cut more than needed", tc.a, tc.b, tc.room, a, b, wa+wb)
		}
		if !strings.HasSuffix(tc.a, strings.TrimPrefix(a, "…")) || !strings.HasSuffix(tc.b, strings.TrimPrefix(b, "…")) {
			t.Errorf("shortenPair(%q, %q, %d) = %q, %q: must keep the ends", tc.a, tc.b, tc.room, a, b)
		}
	}
}

// TestCutShortByCancel: a phase the builder ends early after a cancel request is drawn as
// cancelled, not as done; one that ended early before it is done, its count saying how far it
// got (TensorRT ends phases early as a matter of course), and one that ran no step at all (a
// timing-cache hit) says so quietly.
func TestCutShortByCancel(t *testing.T) {
	m, in, clk := newTestModel(modelOptions{width: 100})
	evs := tensorRTLike()
	clk.Set(sec(2.7))
	in.put(append(evs, evStart(sec(2.7), 20, 4, "Finding fastest tactic for cached", 5), evFinish(sec(2.7), 20),
		evStart(sec(2.7), 21, 4, "Finding fastest tactic for conv3", 10))) // still open: finished siblings show
	clk.Set(sec(2.8))
	in.notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "Cancel requested."})
	clk.Set(sec(3))
	in.put([]progress.Event{evFinish(sec(2.9), 8), evFinish(sec(2.9), 7)})
	m.step(clk.Now())
	frame := ansi.Strip(m.frame(clk.Now()))
	for _, want := range []string{"✓ tactic relu1", "4/12", "✓ tactic cached", "no steps", "✗ tactic conv2", "cancelled"} {
		if !strings.Contains(frame, want) {
			t.Errorf("%q missing in:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "✓ tactic conv2") {
		t.Errorf("the phase cut short by the cancel is drawn as done:\n%s", frame)
	}
}

// TestLongLayerNamesKeepTheirTail: at 80 columns the rows of layers whose names share a long
// prefix stay apart: the end of each name is shown.
func TestLongLayerNamesKeepTheirTail(t *testing.T) {
	const prefix = "Finding fastest tactic for /features/features.3/block/block.0/"
	s := scene{at: sec(1), width: 80, events: []progress.Event{
		evStart(0, 1, 0, "Timing graph nodes", 415),
		evStart(sec(0.1), 2, 1, prefix+"block.0.0/Conv", 6),
		evStart(sec(0.2), 3, 1, prefix+"block.0.1/BatchNormalization", 6),
		evStart(sec(0.3), 4, 1, prefix+"block.0.2/Relu", 6),
	}}
	frame := s.frame(t)
	for _, tail := range []string{"block.0.0/Conv", "0.1/BatchNormalization", "block.0.2/Relu"} {
		if !strings.Contains(frame, tail) {
			t.Errorf("%q missing at 80 columns:\n%s", tail, frame)
		}
	}
	if got := cutMiddle("abcdefghijklmnopqrstuvwxyz", 13); got != "abcd…stuvwxyz" || ansi.StringWidth(got) != 13 {
		t.Errorf("cutMiddle = %q (%d cells)", got, ansi.StringWidth(got))
	}
}
