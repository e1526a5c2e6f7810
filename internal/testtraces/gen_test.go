package testtraces

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// This file makes the fixtures: it reads the reconstructed sequences (testdata/*.tsv), gives
// every callback a time by the fixture's model, and writes v1 JSON lines. TestFixtures checks
// that testdata/*.jsonl are what it makes (go test -update writes them).

// row is one callback of a reconstructed sequence.
type row struct {
	seq    int
	event  string // phaseStart, stepComplete or phaseFinish
	depth  int
	name   string
	steps  int    // phaseStart: nbSteps
	parent string // phaseStart: the parent's name ("" for a root)
	step   int    // stepComplete: the step
}

func readTSV(t *testing.T, file string) []row {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			t.Fatalf("%s:%d: %d columns", file, n, len(cols))
		}
		r := row{event: cols[1], name: cols[3]}
		var errs [3]error
		r.seq, errs[0] = strconv.Atoi(cols[0])
		r.depth, errs[1] = strconv.Atoi(cols[2])
		switch r.event {
		case "phaseStart":
			steps, parent, _ := strings.Cut(cols[4], "|")
			r.steps, errs[2] = strconv.Atoi(steps)
			r.parent = parent
		case "stepComplete":
			r.step, errs[2] = strconv.Atoi(cols[4])
		case "phaseFinish":
		default:
			t.Fatalf("%s:%d: unknown event %q", file, n, r.event)
		}
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// timing is how a part's callbacks are spaced (see realisticTimes).
type timing struct {
	paced  time.Duration // every callback this long after the one before; 0: the realistic model
	scale  float64       // the realistic model's delays times this (0: 1)
	myelin time.Duration // the first "Evaluating tactic times" step under "Timing graph nodes" takes this long
}

// measureFactors make the tactics of different nodes take different times.
var measureFactors = []float64{1.0, 0.7, 1.6, 1.2, 0.5, 2.4, 0.9, 1.3}

// logLine is a log event placed at a part's start or end, or offset after a row.
type logLine struct {
	after  int           // the row's seq (-1: before the part's first row; -2: after its last)
	offset time.Duration // after the row (or the part's boundary)
	sev    progress.Severity
	msg    string
}

// part is one source sequence in a fixture (one engine generation).
type part struct {
	source string
	timing timing
	gap    time.Duration // before its first callback
	logs   []logLine
	// failAfter, when set, ends the part after the row of that seq with a failure: every open
	// phase finishes early, innermost first, then the error is logged.
	failAfter int
	failure   string
}

type fixture struct {
	name   string
	info   progress.BuildInfo
	parts  []part
	result progress.Result
	// duration is the result's time; 0: 0.65 s after the last event.
	duration time.Duration
}

const myelinRunner = "{ForeignNode[node_conv2d...ONNXTRT_castHelper_9]} (Myelin[0x80000023])"

// tensorRTError is TensorRT 10.4's error from ComfyUI-Upscaler-Tensorrt#36, verbatim.
const tensorRTError = "IBuilder::buildSerializedNetwork: Error Code 10: Internal Error (Could not find any implementation for node /model/model.6/Conv + PWN(/model/model.7/LeakyRelu).)"

func fixtures() []fixture {
	hopper := func(version string) progress.BuildInfo {
		return progress.BuildInfo{Model: "mnist.onnx", Engine: "mnist.engine", Backend: "tensorrt", Precision: "as typed in the model",
			TensorRT: version, GPU: "NVIDIA Hopper GPU, compute capability 9.0"}
	}
	b200 := progress.BuildInfo{Model: "mnist.onnx", Engine: "mnist.engine", Backend: "tensorrt", Precision: "as typed in the model",
		TensorRT: "11.0.0", GPU: "NVIDIA B200, compute capability 10.0"}
	built := progress.Result{Status: progress.StatusBuilt, Engine: "mnist.engine", EngineBytes: 13185238}
	lead := 500 * time.Millisecond
	myelinLogs := func(took string) []logLine {
		return []logLine{
			{after: 80, offset: 200 * time.Microsecond, sev: progress.SeverityVerbose, msg: "--------------- Timing Runner: " + myelinRunner},
			{after: 80, offset: 4699 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Subgraph compilation completed in 4.699 seconds."},
			{after: 80, offset: 4699*time.Millisecond + 500*time.Microsecond, sev: progress.SeverityVerbose, msg: myelinRunner + " profiling completed in " + took + " seconds."},
			{after: -2, offset: time.Millisecond, sev: progress.SeverityInfo, msg: "Engine generation completed in 4.74582 seconds."},
		}
	}
	return []fixture{
		{name: TRT10160, info: hopper("10.16.0"), result: built,
			parts: []part{{source: "trt-10.16.0-mnist.tsv", gap: lead}}},
		{name: TRT10161, info: hopper("10.16.1"), result: built,
			parts: []part{{source: "trt-10.16.1-mnist.tsv", gap: lead}}},
		{name: TRT10161Paced, info: hopper("10.16.1"), result: built, duration: 6440 * 5 * time.Millisecond,
			parts: []part{{source: "trt-10.16.1-mnist.tsv", gap: 5 * time.Millisecond, timing: timing{paced: 5 * time.Millisecond}}}},
		{name: TRT10161Failed, info: hopper("10.16.1"),
			result: progress.Result{Status: progress.StatusFailed, Error: "TensorRT could not build the engine: " + tensorRTError},
			parts:  []part{{source: "trt-10.16.1-mnist.tsv", gap: lead, failAfter: 1500, failure: tensorRTError}}},
		{name: TRT10161Opt5, info: hopper("10.16.1"), result: built, duration: 24485400 * time.Microsecond,
			parts: []part{
				{source: "trt-10.16.1-mnist.tsv", gap: lead, timing: timing{scale: 2}, logs: []logLine{
					{after: -1, offset: -2 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Building graph using backend strategy 4"},
					{after: -1, offset: -time.Millisecond, sev: progress.SeverityInfo, msg: "Global timing cache in use. Profiling results in this builder pass will be stored."},
					{after: -2, offset: time.Millisecond, sev: progress.SeverityInfo, msg: "Engine generation completed in 15.4838 seconds."},
					{after: -2, offset: 2 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Use backend strategy 4 with estimated inference time (0.3344) as the initial choice."},
				}},
				{source: "trt-11.0.0-b200-mnist.tsv", gap: 10 * time.Millisecond, timing: timing{scale: 0.1, myelin: 7400 * time.Millisecond}, logs: []logLine{
					{after: -1, offset: -3 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Building graph using backend strategy 3"},
					{after: -1, offset: -2 * time.Millisecond, sev: progress.SeverityVerbose, msg: "InternalBuildFlags::kENABLE_INTERNAL_MYELIN_TESTING is enabled, or BackendStrategy is to prefer Myelin, or weight streaming is enabled, so all operators supported by Myelin will be offloaded to Myelin."},
					{after: -2, offset: time.Millisecond, sev: progress.SeverityInfo, msg: "Engine generation completed in 7.75278 seconds."},
					{after: -2, offset: 2 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Chose this engine with backend strategy 3 since its estimated inference time (0.310688) is faster than the previous engine with estimated inference time (0.3344)."},
				}},
				{source: "trt-11.0.0-b200-mnist.tsv", gap: 10 * time.Millisecond, timing: timing{scale: 0.05, myelin: 280 * time.Millisecond}, logs: []logLine{
					{after: -1, offset: -time.Millisecond, sev: progress.SeverityVerbose, msg: "Building graph using backend strategy 2"},
					{after: -2, offset: time.Millisecond, sev: progress.SeverityInfo, msg: "Engine generation completed in 0.43392 seconds."},
					{after: -2, offset: 2 * time.Millisecond, sev: progress.SeverityVerbose, msg: "Skip backend strategy 2since its estimated inference time (0.32816) is not faster than the previous engine with estimated inference time (0.310688)."},
				}},
			}},
		{name: TRT1100, info: b200, result: built, duration: 5342550 * time.Microsecond,
			parts: []part{{source: "trt-11.0.0-b200-mnist.tsv", gap: 300 * time.Millisecond, timing: timing{scale: 0.1, myelin: 4700 * time.Millisecond},
				logs: myelinLogs("4.712")}}},
		{name: TRT1100Silent110, info: b200, result: built,
			parts: []part{{source: "trt-11.0.0-b200-mnist.tsv", gap: 300 * time.Millisecond, timing: timing{scale: 0.1, myelin: 110 * time.Second}}}},
	}
}

// gen times the rows of the parts and returns the events, build line and result included.
func (f fixture) events(t *testing.T) []progress.Event {
	t.Helper()
	evs := []progress.Event{{Type: progress.EventBuild, Info: &f.info}}
	var at time.Duration
	id := 0
	for _, p := range f.parts {
		rows := readTSV(t, p.source)
		var phases []progress.Event
		var logs []progress.Event
		type open struct {
			id   int
			name string
		}
		var stack []open
		eval, myelinDone := 0, false
		lastFinished := ""
		rowAt := map[int]time.Duration{}
		first := true
		for _, r := range rows {
			d := p.timing.delay(r, eval, &myelinDone, lastFinished)
			if first {
				d, first = p.gap, false
			}
			at += d
			rowAt[r.seq] = at
			switch r.event {
			case "phaseStart":
				if r.depth != len(stack) {
					t.Fatalf("%s seq %d: start at depth %d with %d open", p.source, r.seq, r.depth, len(stack))
				}
				parent := 0
				if r.depth > 0 {
					if stack[r.depth-1].name != r.parent {
						t.Fatalf("%s seq %d: parent %q, open %q", p.source, r.seq, r.parent, stack[r.depth-1].name)
					}
					parent = stack[r.depth-1].id
				}
				id++
				stack = append(stack, open{id, r.name})
				phases = append(phases, progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: parent, Name: r.name, Steps: r.steps, Thread: 1})
				if r.name == "Evaluating tactic times" {
					eval++
				}
			case "stepComplete", "phaseFinish":
				if r.depth >= len(stack) || stack[r.depth].name != r.name {
					t.Fatalf("%s seq %d: %s of %q at depth %d, not open", p.source, r.seq, r.event, r.name, r.depth)
				}
				ph := stack[r.depth].id
				if r.event == "stepComplete" {
					phases = append(phases, progress.Event{Type: progress.EventStep, Time: at, ID: ph, Step: r.step})
					break
				}
				if r.depth != len(stack)-1 {
					t.Fatalf("%s seq %d: %q finishes with phases open below it", p.source, r.seq, r.name)
				}
				stack = stack[:len(stack)-1]
				lastFinished = r.name
				phases = append(phases, progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: ph})
			}
			if p.failAfter != 0 && r.seq == p.failAfter {
				for i := len(stack) - 1; i >= 0; i-- {
					at += time.Millisecond
					phases = append(phases, progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: stack[i].id})
				}
				stack = nil
				at += 2 * time.Millisecond
				phases = append(phases, progress.Event{Type: progress.EventLog, Time: at, Severity: progress.SeverityError, Message: p.failure})
				break
			}
		}
		if len(stack) > 0 {
			t.Fatalf("%s: %d phases left open", p.source, len(stack))
		}
		start, end := phases[0].Time, at
		for _, l := range p.logs {
			base := end
			switch l.after {
			case -1:
				base = start
			case -2:
			default:
				var ok bool
				if base, ok = rowAt[l.after]; !ok {
					t.Fatalf("%s: no row %d for a log line", p.source, l.after)
				}
			}
			logs = append(logs, progress.Event{Type: progress.EventLog, Time: base + l.offset, Severity: l.sev, Message: l.msg})
			at = max(at, base+l.offset)
		}
		merged := append(phases, logs...)
		slices.SortStableFunc(merged, func(a, b progress.Event) int { return int(a.Time - b.Time) })
		evs = append(evs, merged...)
	}
	res := f.result
	res.Duration = f.duration
	if res.Duration == 0 {
		res.Duration = at + 650*time.Millisecond
	}
	if res.Duration < at {
		t.Fatalf("%s: the result at %v comes before the last event at %v", f.name, res.Duration, at)
	}
	return append(evs, progress.Event{Type: progress.EventResult, Time: res.Duration, Result: &res})
}

// delay is how long before the callback r comes (realisticTimes); eval is how many "Evaluating
// tactic times" have started, lastFinished the name of the newest finished phase.
func (tm timing) delay(r row, eval int, myelinDone *bool, lastFinished string) time.Duration {
	if tm.paced > 0 {
		return tm.paced
	}
	d := 30 * time.Microsecond
	if r.event == "stepComplete" {
		switch r.name {
		case "Measuring tactic time":
			d = time.Duration(1.2e6 * measureFactors[(eval-1+len(measureFactors))%len(measureFactors)])
		case "Evaluating tactic times":
			if tm.myelin > 0 && !*myelinDone && r.depth == 5 {
				*myelinDone = true
				return tm.myelin
			}
			d = 150 * time.Microsecond
		case "Cloning network graph":
			d = 2 * time.Millisecond
		case "Preparing graph for optimization":
			d = 40 * time.Millisecond
		case "Optimizing graph":
			d = 60 * time.Millisecond
		case "Computing reformatting costs":
			d = 3 * time.Millisecond
		case "Determining refit engines":
			d = 8 * time.Millisecond
		case "Building engine":
			d = time.Millisecond
			if lastFinished == "Building engine from subgraph" {
				d = 900 * time.Millisecond // engine generation, after timing
			}
		default:
			d = time.Millisecond
		}
	}
	if tm.scale > 0 {
		d = time.Duration(float64(d) * tm.scale)
	}
	return d
}

// TestFixtures makes every fixture from its sources and compares it with its JSON lines.
func TestFixtures(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			var b []byte
			for _, e := range f.events(t) {
				b = progress.AppendJSON(b, &e)
			}
			goldenfile.Check(t, filepath.Join("testdata", f.name+".jsonl"), b)
			if About(f.name) == "" {
				t.Errorf("%s says nothing about where it comes from", f.name)
			}
		})
	}
	if len(fixtures()) != len(Names()) {
		t.Errorf("%d fixtures made, %d named", len(fixtures()), len(Names()))
	}
}

// TestFixturesRead reads every fixture back as a trace: the build line, phases whose IDs are
// never reused, and a result.
func TestFixturesRead(t *testing.T) {
	for _, name := range Names() {
		tr, err := Read(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tr.Info.Backend != "tensorrt" || tr.Result == nil || len(tr.Events) == 0 {
			t.Fatalf("%s: info %+v, result %v, %d events", name, tr.Info, tr.Result, len(tr.Events))
		}
		seen := map[int]bool{}
		var last time.Duration
		for _, e := range tr.Events {
			if e.Time < last {
				t.Fatalf("%s: time goes back at %v", name, e.Time)
			}
			last = e.Time
			if e.Type == progress.EventPhaseStart {
				if seen[e.ID] {
					t.Fatalf("%s: phase ID %d reused", name, e.ID)
				}
				seen[e.ID] = true
			}
		}
	}
	if _, err := Read("no such fixture"); err == nil {
		t.Error("a missing fixture reads")
	}
}

// TestFixtureShapes pins what the views rely on in each fixture: the counts of phases and
// callbacks of the sources, and the regime of its times.
func TestFixtureShapes(t *testing.T) {
	tests := []struct {
		name              string
		phases, callbacks int
		longestStep       time.Duration // the longest time without a phase event, at least
		longestStepAtMost time.Duration
		roots             int
		status            progress.Status
	}{
		{TRT10160, 601, 3312, 0, time.Second, 1, progress.StatusBuilt},
		{TRT10161, 1164, 6439, 0, time.Second, 1, progress.StatusBuilt},
		{TRT10161Paced, 1164, 6439, 5 * time.Millisecond, 5 * time.Millisecond, 1, progress.StatusBuilt},
		{TRT10161Opt5, 1164 + 2*22, 6439 + 2*154, 7400 * time.Millisecond, 7400 * time.Millisecond, 3, progress.StatusBuilt},
		{TRT1100, 22, 154, 4700 * time.Millisecond, 4700 * time.Millisecond, 1, progress.StatusBuilt},
		{TRT1100Silent110, 22, 154, 110 * time.Second, 110 * time.Second, 1, progress.StatusBuilt},
	}
	for _, tc := range tests {
		tr := Must(tc.name)
		phases, callbacks, roots := 0, 0, 0
		var gap, prev time.Duration
		for i, e := range tr.Events {
			switch e.Type {
			case progress.EventPhaseStart:
				phases++
				if e.Parent == 0 {
					roots++
				}
			case progress.EventLog:
				continue
			}
			callbacks++
			if i > 0 {
				gap = max(gap, e.Time-prev)
			}
			prev = e.Time
		}
		if phases != tc.phases || callbacks != tc.callbacks || roots != tc.roots || tr.Result.Status != tc.status {
			t.Errorf("%s: %d phases, %d callbacks, %d roots, %s; want %d, %d, %d, %s", tc.name, phases, callbacks, roots, tr.Result.Status, tc.phases, tc.callbacks, tc.roots, tc.status)
		}
		if gap < tc.longestStep || gap > tc.longestStepAtMost {
			t.Errorf("%s: the longest time between callbacks is %v, want %v to %v", tc.name, gap, tc.longestStep, tc.longestStepAtMost)
		}
	}
}

// TestFixtureFailure: the failed fixture ends with every open phase finished early and then
// TensorRT's error naming the node.
func TestFixtureFailure(t *testing.T) {
	tr := Must(TRT10161Failed)
	n := len(tr.Events)
	last := tr.Events[n-1]
	if last.Type != progress.EventLog || last.Severity != progress.SeverityError || !strings.Contains(last.Message, "for node /model/model.6/Conv") {
		t.Fatalf("last event %+v", last)
	}
	if tr.Result.Status != progress.StatusFailed || !bytes.Contains([]byte(tr.Result.Error), []byte("Error Code 10")) {
		t.Fatalf("result %+v", tr.Result)
	}
}
