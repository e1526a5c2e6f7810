package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

func readTrace(t *testing.T, name string) *trace.Trace {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// TestGoldenJSON pins the JSON report of a recorded simulated build: a change to it is a change
// of the report's contract.
func TestGoldenJSON(t *testing.T) {
	r := FromTrace(readTrace(t, "sim.trace.jsonl"))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "sim.report.golden.json", buf.Bytes())

	// Facts of that trace, checked independently of the golden file.
	if r.Result.Status != progress.StatusBuilt || r.Build.Model != "convnet.onnx" {
		t.Errorf("result %+v, build %+v", r.Result, r.Build)
	}
	if r.Cache.Misses != 32 || r.Cache.Hits != 0 || r.Result.PeakRSS == 0 {
		t.Errorf("cache %+v, peak RSS %d", r.Cache, r.Result.PeakRSS)
	}
	if len(r.Phases) != 1 || r.Phases[0].Name != "Building engine" || r.Phases[0].Done != r.Phases[0].Steps {
		t.Errorf("root phases: %+v", r.Phases)
	}
	if len(r.Logs) != 1 || r.Logs[0].Severity != "warning" {
		t.Errorf("logs: %+v", r.Logs)
	}
	names := map[string]NameTotal{}
	for _, n := range r.ByName {
		names[n.Name] = n
	}
	// 16 layers, 2 tactics each, 2 measuring steps per tactic.
	if m := names["Measuring tactic time"]; m.Count != 32 || m.Steps != 64 {
		t.Errorf("Measuring tactic time: %+v, want 32 phases and 64 steps", m)
	}
}

func TestGoldenHTML(t *testing.T) {
	r := FromTrace(readTrace(t, "sim.trace.jsonl"))
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "sim.report.golden.html", buf.Bytes())
	page := buf.String()
	for _, want := range []string{"<svg class=\"timeline\"", "<title>#1 Building engine", "Measuring tactic time", "Where the time went", "no optimized implementation"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	assertSelfContained(t, page)
}

// assertSelfContained fails when the page would fetch anything or run script.
func assertSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http:", "https:", "<script", "<link", "url(", "@import", "<img", "<iframe"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q: it must not need the network", bad)
		}
	}
}

// tree builds a phase tree from compact phase descriptions.
type ph struct {
	id, parent int
	name       string
	thread     uint64
	start, end time.Duration // end < 0: never finished
	steps      int
}

func treeOf(phases ...ph) *progress.Tree {
	tree := progress.NewTree()
	var events []progress.Event
	for _, p := range phases {
		events = append(events, progress.Event{Type: progress.EventPhaseStart, Time: p.start, ID: p.id, Parent: p.parent, Name: p.name, Steps: p.steps, Thread: p.thread})
		if p.end >= 0 {
			events = append(events, progress.Event{Type: progress.EventStep, Time: p.end, ID: p.id, Step: p.steps - 1})
			events = append(events, progress.Event{Type: progress.EventPhaseFinish, Time: p.end, ID: p.id})
		}
	}
	// Apply in time order, as a stream would arrive.
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && events[j].Time < events[j-1].Time; j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
	for i := range events {
		tree.Apply(&events[i])
	}
	return tree
}

const ms = time.Millisecond

func TestSelfTime(t *testing.T) {
	tests := []struct {
		name   string
		phases []ph
		self   map[int]Seconds
	}{
		{"no children", []ph{{1, 0, "a", 1, 0, 100 * ms, 1}}, map[int]Seconds{1: 0.1}},
		{"one child", []ph{{1, 0, "a", 1, 0, 100 * ms, 1}, {2, 1, "b", 1, 10 * ms, 40 * ms, 1}}, map[int]Seconds{1: 0.07, 2: 0.03}},
		{"overlapping children on two threads", []ph{
			{1, 0, "a", 1, 0, 100 * ms, 1},
			{2, 1, "b", 2, 10 * ms, 50 * ms, 1},
			{3, 1, "c", 3, 30 * ms, 70 * ms, 1},
		}, map[int]Seconds{1: 0.04, 2: 0.04, 3: 0.04}},
		{"disjoint children", []ph{
			{1, 0, "a", 1, 0, 100 * ms, 1},
			{2, 1, "b", 1, 0, 20 * ms, 1},
			{3, 1, "c", 1, 50 * ms, 60 * ms, 1},
		}, map[int]Seconds{1: 0.07}},
		{"open phases end at the last event", []ph{
			{1, 0, "a", 1, 0, -1, 4},
			{2, 1, "b", 1, 10 * ms, 30 * ms, 1},
		}, map[int]Seconds{1: 0.01, 2: 0.02}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromTree(treeOf(tt.phases...), progress.BuildInfo{}, progress.Result{Status: progress.StatusBuilt}, nil)
			got := map[int]*Phase{}
			var walk func([]*Phase)
			walk = func(ps []*Phase) {
				for _, p := range ps {
					got[p.ID] = p
					walk(p.Children)
				}
			}
			walk(r.Phases)
			for id, want := range tt.self {
				if got[id] == nil || got[id].Self != want {
					t.Errorf("phase %d self = %+v, want %v", id, got[id], want)
				}
			}
		})
	}
}

func TestOpenPhaseIsMarkedAborted(t *testing.T) {
	r := FromTree(treeOf(ph{1, 0, "a", 1, 0, -1, 4}, ph{2, 1, "b", 1, 10 * ms, 30 * ms, 1}), progress.BuildInfo{}, progress.Result{Status: progress.StatusCancelled}, nil)
	if p := r.Phases[0]; !p.Aborted || !p.Early || p.End != 0.03 {
		t.Errorf("open root: %+v", p)
	}
}

func TestLanes(t *testing.T) {
	// Two builder threads time layers at once under one parent; each child must sit on its
	// parent's thread row, and rows of one depth must never hold overlapping bars.
	r := FromTree(treeOf(
		ph{1, 0, "root", 1, 0, 100 * ms, 1},
		ph{2, 1, "layer A", 2, 0, 60 * ms, 1},
		ph{3, 1, "layer B", 3, 5 * ms, 90 * ms, 1},
		ph{4, 2, "measure A", 2, 1 * ms, 50 * ms, 1},
		ph{5, 3, "measure B", 3, 6 * ms, 80 * ms, 1},
		ph{6, 1, "layer C", 2, 60 * ms, 95 * ms, 1},
	), progress.BuildInfo{}, progress.Result{}, nil)
	tl := layout(r)
	row := map[int]int{}
	for _, b := range tl.bars {
		row[b.p.ID] = b.row
	}
	if row[1] != 0 || row[2] != 1 || row[3] != 2 || row[6] != 1 || row[4] != 3 || row[5] != 4 {
		t.Errorf("rows %v: want root 0, threads 2 and 3 on rows 1 and 2, their children on 3 and 4", row)
	}
	for i, a := range tl.bars {
		for _, b := range tl.bars[i+1:] {
			if a.row == b.row && a.x < b.x+b.w-0.01 && b.x < a.x+a.w-0.01 {
				t.Errorf("#%d and #%d overlap on row %d", a.p.ID, b.p.ID, a.row)
			}
		}
	}
}

// TestHugeTreeIsCapped builds a tree the size of a long TensorRT build and checks that the
// chart draws at most maxBars bars and says what it left out.
func TestHugeTreeIsCapped(t *testing.T) {
	const layers, tactics = 500, 12
	var phases []ph
	phases = append(phases, ph{1, 0, "Building engine", 1, 0, time.Hour, 1})
	id := 2
	at := time.Duration(0)
	for l := 0; l < layers; l++ {
		layer := id
		start := at
		phases = append(phases, ph{layer, 1, fmt.Sprintf("Finding fastest tactic for layer_%d", l), 2, start, 0, tactics})
		id++
		for k := 0; k < tactics; k++ {
			phases = append(phases, ph{id, layer, "Measuring tactic time", 2, at, at + 500*ms, 4})
			id++
			at += 500 * ms
		}
		phases[len(phases)-tactics-1].end = at
	}
	r := FromTree(treeOf(phases...), progress.BuildInfo{Model: "big.onnx"}, progress.Result{Status: progress.StatusBuilt}, nil)
	if r.Count != 1+layers*(tactics+1) {
		t.Fatalf("report has %d phases", r.Count)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<rect"); n > maxBars || n == 0 {
		t.Errorf("%d bars drawn, want 1..%d", n, maxBars)
	}
	if !strings.Contains(page, "not drawn") {
		t.Error("the page does not say that phases were left out of the chart")
	}
	if len(page) > 4<<20 {
		t.Errorf("the page is %d bytes", len(page))
	}
	counts := map[string]int{}
	for _, n := range r.ByName {
		counts[n.Name] = n.Count
	}
	if counts["Measuring tactic time"] != layers*tactics || counts["Finding fastest tactic for …"] != layers {
		t.Errorf("by name: %+v", r.ByName)
	}
	// The root's own time (most of the hour, outside its layers) leads, then the layers,
	// folded ones among them.
	if r.Folded == 0 || len(r.Slowest) < 2 || r.Slowest[0].ID != 1 || !strings.HasPrefix(r.Slowest[1].Path[len(r.Slowest[1].Path)-1], "Finding fastest tactic for layer_") {
		t.Errorf("folded %d, slowest %+v", r.Folded, r.Slowest)
	}
}

func TestTruncatedTrace(t *testing.T) {
	tr, err := trace.Read(strings.NewReader(`{"v":1,"type":"phase_start","t":0.1,"id":1,"parent":0,"name":"Building engine","steps":2,"thread":1}` + "\n" +
		`{"v":1,"type":"step","t":0.5,"id":1,"step":0}`))
	if err != nil {
		t.Fatal(err)
	}
	r := FromTrace(tr)
	if r.Result.Status != StatusUnknown || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "without a result") {
		t.Errorf("status %q, notes %q", r.Result.Status, r.Notes)
	}
	if p := r.Phases[0]; !p.Aborted || p.End != 0.5 || p.Done != 1 {
		t.Errorf("the open phase: %+v", p)
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path string
		want Format
		ok   bool
	}{
		{"r.json", FormatJSON, true}, {"R.JSON", FormatJSON, true}, {"a/b.html", FormatHTML, true},
		{"x.htm", FormatHTML, true}, {"x.txt", "", false}, {"json", "", false}, {"x.", "", false},
	}
	for _, tt := range tests {
		got, err := FormatOf(tt.path)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("FormatOf(%q) = %q, %v", tt.path, got, err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	r := FromTrace(readTrace(t, "sim.trace.jsonl"))
	dir := t.TempDir()
	for _, name := range []string{"r.json", "r.html"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			t.Fatalf("%s: %d bytes, %v", name, len(data), err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "r.txt"), r); err == nil || !strings.Contains(err.Error(), ".json or .html") {
		t.Errorf("an unknown extension: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "r.json"), r); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left in the folder: %v", entries)
	}
}

func TestFitLabel(t *testing.T) {
	tests := []struct {
		name string
		w    float64
		want string
	}{
		{"Building engine", 200, "Building engine"},
		{"Building engine", 60, "Buildin…"},
		{"Building engine", 20, ""},
		{"Finding fastest tactic for stem/conv1", 300, "Finding fastest tactic for stem/conv1"},
		{"Finding fastest tactic for stem/conv1", 100, "stem/conv1"},
		{"Finding fastest tactic for stage2/block1/downsample/conv", 100, "stage2/block1…"},
		{"Measuring tactic time", 100, "Measuring tac…"},
		{"a for ", 40, "a f…"},
		// A name that says what it is for names no layer: cut at its end, not shortened to "optimization".
		{"Preparing graph for optimization", 100, "Preparing gra…"},
	}
	for _, tt := range tests {
		if got := fitLabel(&Phase{Name: tt.name}, tt.w); got != tt.want {
			t.Errorf("fitLabel(%q, %v) = %q, want %q", tt.name, tt.w, got, tt.want)
		}
	}
	if got := fitLabel(&Phase{Name: "Building engine", Generation: 2}, 300); got != "Building engine (generation 2)" {
		t.Errorf("a second root phase: %q", got)
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		span  float64
		first string
		last  string
	}{
		{8, "0s", "8s"},
		{0.073, "0ms", "70ms"},
		{0.0005, "0µs", "500µs"},
		{600, "0s", "10m00s"},
	}
	for _, tt := range tests {
		ts := ticks(tt.span, chartWidth/tt.span)
		if len(ts) < 4 || len(ts) > 12 || ts[0].label != tt.first || ts[len(ts)-1].label != tt.last {
			t.Errorf("ticks(%g): %+v", tt.span, ts)
		}
	}
}

func FuzzReadTrace(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "sim.trace.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"v":1,"type":"phase_start","t":0,"id":1,"parent":1,"name":"self","steps":-4}` + "\n" + `{"v":1,"type":"phase_finish","t":0,"id":1}`))
	f.Add([]byte(`{"v":1,"type":"phase_start","t":5,"id":2,"parent":0,"name":"late"}` + "\n" + `{"v":1,"type":"phase_finish","t":1,"id":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		r := FromTrace(tr)
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		if err := WriteHTML(&buf, r); err != nil {
			t.Fatal(err)
		}
		// Text from the trace may say anything, "http:" included, but never add a tag.
		page := strings.ToLower(buf.String())
		for _, tag := range []string{"<script", "<link", "<img", "<iframe", "<object"} {
			if strings.Contains(page, tag) {
				t.Fatalf("the page contains %q", tag)
			}
		}
	})
}

// TestRecorderMatchesTrace feeds a recorded trace through a Recorder, as a build with --report
// does, and checks that the report equals the one made from the trace file.
func TestRecorderMatchesTrace(t *testing.T) {
	tr := readTrace(t, "sim.trace.jsonl")
	want := FromTrace(readTrace(t, "sim.trace.jsonl"))
	rec := NewRecorder()
	st := progress.NewState(tr.Info, time.Time{})
	rec.Begin(st)
	for i := 0; i < len(tr.Events); i += 7 {
		batch := tr.Events[i:min(i+7, len(tr.Events))]
		st.Apply(batch, time.Time{})
		rec.Handle(batch)
	}
	if err := rec.End(st.End(*tr.Result, time.Time{})); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := WriteJSON(&a, rec.Report()); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, want); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the recorder's report differs from the trace's:\n%s", a.String())
	}
}

// TestRecorderRoundsAsTheTrace feeds a Recorder events at nanosecond times, half-microsecond
// ties included, and a trace of the same events through the JSON-lines codec: the two reports
// must be equal byte for byte, as --report and `trtbuild report` of its trace must.
func TestRecorderRoundsAsTheTrace(t *testing.T) {
	var events []progress.Event
	at := func(i int) time.Duration { return time.Duration(1000*i*i+500*(i%2)+i%7) * time.Nanosecond }
	events = append(events, progress.Event{Type: progress.EventPhaseStart, Time: at(1), ID: 1, Name: "root", Steps: 3, Thread: 1})
	for i := 2; i < 60; i++ {
		id := i
		events = append(events,
			progress.Event{Type: progress.EventPhaseStart, Time: at(i), ID: id, Parent: 1, Name: fmt.Sprintf("child %d", i%5), Steps: 2, Thread: uint64(2 + i%3)},
			progress.Event{Type: progress.EventStep, Time: at(i) + 1500*time.Nanosecond, ID: id, Step: 0},
			progress.Event{Type: progress.EventPhaseFinish, Time: at(i) + 2500*time.Nanosecond + time.Duration(i), ID: id, Early: true})
	}
	events = append(events, progress.Event{Type: progress.EventPhaseFinish, Time: at(61), ID: 1, Early: true})
	info := progress.BuildInfo{Model: "m.onnx", Engine: "m.engine", Backend: "sim"}
	res := progress.Result{Status: progress.StatusBuilt, Duration: at(62) + 500, PeakRSS: 1 << 20}

	rec := NewRecorder()
	st := progress.NewState(info, time.Time{})
	rec.Begin(st)
	batch := append([]progress.Event(nil), events...)
	st.Apply(batch, time.Time{})
	rec.Handle(batch)
	rec.End(st.End(res, time.Time{})) //nolint:errcheck

	line := progress.AppendJSON(nil, &progress.Event{Type: progress.EventBuild, Info: &info})
	for i := range events {
		line = progress.AppendJSON(line, &events[i])
	}
	line = progress.AppendJSON(line, &progress.Event{Type: progress.EventResult, Time: res.Duration, Result: &res})
	tr, err := trace.Read(bytes.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := WriteJSON(&a, rec.Report()); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, FromTrace(tr)); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the recorder's report differs from the trace's:\n%s\n---\n%s", a.String(), b.String())
	}
}

// TestRecorderReadsTheSessionTree applies a phase to the session's state that the recorder is
// never handed: a recorder that kept a tree of its own would leave it out of the report.
func TestRecorderReadsTheSessionTree(t *testing.T) {
	st := progress.NewState(progress.BuildInfo{Model: "m.onnx"}, time.Time{})
	rec := NewRecorder()
	rec.Begin(st)
	seen := []progress.Event{{Type: progress.EventPhaseStart, Time: time.Millisecond, ID: 1, Name: "seen", Steps: 1}}
	st.Apply(seen, time.Time{})
	rec.Handle(seen)
	st.Apply([]progress.Event{{Type: progress.EventPhaseStart, Time: 2 * time.Millisecond, ID: 2, Parent: 1, Name: "only in the session", Steps: 1}}, time.Time{})
	rec.End(st.End(progress.Result{Status: progress.StatusBuilt}, time.Time{})) //nolint:errcheck
	r := rec.Report()
	if r.Count != 2 || len(r.Phases) != 1 || len(r.Phases[0].Children) != 1 || r.Phases[0].Children[0].Name != "only in the session" {
		t.Fatalf("the report does not show the session's tree: %d phases, %+v", r.Count, r.Phases)
	}
}

// TestPageSaysWhatHappened: a failed build without a timing cache reads "timing cache: off",
// draws the phase it failed in however short, says where it failed, counts "1 phase" without
// a plural, and shows how to build it again.
func TestPageSaysWhatHappened(t *testing.T) {
	tree := treeOf(
		ph{1, 0, "Building engine", 1, 0, time.Hour, 1},
		ph{2, 1, "Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv", 3, time.Hour - 11*time.Microsecond, time.Hour, 6},
	)
	res := progress.Result{Status: progress.StatusFailed, Error: "Could not find any implementation for node /features/features.3/block/block.0/block.0.0/Conv.",
		Where: &progress.Where{ID: 2, Path: []string{"Building engine", "Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv"}, Steps: 6}, Hint: "raise --workspace"}
	info := progress.BuildInfo{Model: "m.onnx", Command: []string{"trtbuild", "m.onnx", "--shapes", "x:1x3x224x224", "--name", "it's"}, Settings: []byte(`{"model":"m.onnx","fp16":true}`)}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, FromTree(tree, info, res, nil)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"timing cache: off",
		"Failed in: Building engine › Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv",
		"Hint: raise --workspace",
		"2 of 2 phases drawn",
		"trtbuild m.onnx --shapes x:1x3x224x224 --name &#39;it&#39;\\&#39;&#39;s&#39;",
		"&#34;fp16&#34;: true",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	one := treeOf(ph{1, 0, "Building engine", 1, 0, time.Second, 1})
	buf.Reset()
	if err := WriteHTML(&buf, FromTree(one, progress.BuildInfo{}, progress.Result{Status: progress.StatusBuilt}, nil)); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); !strings.Contains(page, "1 of 1 phase drawn") || !strings.Contains(page, "<span>phase, nested") || strings.Contains(page, "1 phases") {
		t.Errorf("a one-phase page says \"1 phases\"")
	}
}

// TestDiff compares a cold build with one served from the timing cache.
func TestDiff(t *testing.T) {
	cold := FromTree(treeOf(
		ph{1, 0, "Building engine", 1, 0, 10 * time.Second, 2},
		ph{2, 1, "Timing graph nodes", 1, time.Second, 9 * time.Second, 24},
		ph{3, 1, "Serializing", 1, 9 * time.Second, 10 * time.Second, 1},
	), progress.BuildInfo{}, progress.Result{Status: progress.StatusBuilt, Duration: 10 * time.Second, EngineBytes: 2048, CacheMisses: 24, CacheUsed: true}, nil)
	warm := FromTree(treeOf(
		ph{1, 0, "Building engine", 1, 0, 2 * time.Second, 2},
		ph{2, 1, "Timing graph nodes", 1, 500 * time.Millisecond, time.Second, 24},
		ph{3, 1, "Serializing", 1, time.Second, 2 * time.Second, 1},
	), progress.BuildInfo{}, progress.Result{Status: progress.StatusBuilt, Duration: 2 * time.Second, EngineBytes: 2048, CacheHits: 24, CacheUsed: true}, nil)
	var buf bytes.Buffer
	if err := WriteDiff(&buf, "cold.jsonl", cold, "warm.jsonl", warm); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`build time\s+10\.00 s\s+2\.00 s\s+-80%`),
		regexp.MustCompile(`engine size\s+2\.0 KiB\s+2\.0 KiB\s+same`),
		regexp.MustCompile(`timing cache\s+24 timed\s+24/24 hits`),
		regexp.MustCompile(`  Timing graph nodes\s+8\.00 s\s+500\.0 ms\s+-94%`),
		regexp.MustCompile(`  Serializing\s+1\.00 s\s+1\.00 s\s+same`),
	} {
		if !want.MatchString(got) {
			t.Errorf("the diff lacks %s:\n%s", want, got)
		}
	}
}
