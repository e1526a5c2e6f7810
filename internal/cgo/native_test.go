package cgo

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

const (
	phaseRoot     = "Building engine"
	phaseSubgraph = "Building engine from subgraph"
	phaseProfile  = "Computing profile costs"
	phaseNodes    = "Timing graph nodes"
	phaseFind     = "Finding fastest tactic for "
	phaseMeasure  = "Measuring tactic time"

	planMagic  = "TRTBUILD-SIMULATED-PLAN 1\n"
	cacheMagic = "TRTBUILD-SIM-TIMING-CACHE 1\n"
	cacheWarn  = "timing cache is not a simulated-builder cache; starting from an empty cache"
)

// options returns sim build options writing to a fresh plan file, for a small model file.
func options(t testing.TB, sim *SimOptions) Options {
	t.Helper()
	dir := testDir(t)
	model := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(model, []byte("simulated builds only check that the model can be read"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := os.Create(filepath.Join(dir, "model.plan"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plan.Close() })
	return Options{
		ModelPath:     model,
		PlanFile:      plan,
		LogSeverity:   SeverityVerbose,
		OptLevel:      -1,
		MaxAuxStreams: -1,
		Sim:           sim,
	}
}

// outcome is everything one build produced.
type outcome struct {
	res      Result
	err      error
	events   []RawEvent
	dropped  Drops
	plan     []byte
	cache    []byte
	returned int64 // CLOCK_MONOTONIC when Run returned
}

// build runs one build the way the worker does: Run on a goroutine locked to its thread, Drain
// on this one until done. on, if not nil, sees every event as it is drained.
func build(t testing.TB, o Options, on func(b *Build, ev RawEvent)) outcome {
	t.Helper()
	return buildWith(t, o, defaultBatchEvents, defaultBatchText, on)
}

func buildWith(t testing.TB, o Options, nEvents, nText int, on func(b *Build, ev RawEvent)) outcome {
	t.Helper()
	b, err := newBuild(BackendSim, o, nEvents, nText)
	if err != nil {
		t.Fatalf("NewBuild: %v", err)
	}
	defer b.Close()
	var out outcome
	ran := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		out.res, out.err = b.Run()
		out.returned = monotonic(t)
		close(ran)
	}()
	var batch []RawEvent
	deadline := time.Now().Add(60 * time.Second)
	for {
		var done bool
		batch, done, out.dropped, err = b.Drain(batch, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("Drain: %v", err)
		}
		for _, ev := range batch {
			out.events = append(out.events, ev)
			if on != nil {
				on(b, ev)
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			b.Cancel()
			t.Fatalf("the build did not finish in 60s")
		}
	}
	<-ran
	if out.cache, err = ownCache(t, b); err != nil {
		t.Fatalf("TimingCache: %v", err)
	}
	if o.PlanFile != nil {
		if out.plan, err = os.ReadFile(o.PlanFile.Name()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// tree is what checkEvents learned about a well-formed event stream.
type tree struct {
	maxDepth      int
	starts        map[string]int   // phase starts by name
	steps         map[string][]int // steps of the phases by name, in order (for unique names)
	finds         []string         // the layers of "Finding fastest tactic for" phases
	measures      int              // "Measuring tactic time" phases
	fullMeasures  int              // of which reported every step
	early         map[string]int   // phases that finished before all of their steps, by name
	measureTIDs   map[uint64]bool  // threads that measured tactics
	maxMeasuring  int              // "Measuring tactic time" phases active at once
	logs          map[int][]string // log lines by severity
	rootThread    uint64
	findNoSteps   int // "Finding fastest tactic" phases that reported no step
	startEvents   map[string]RawEvent
	measureStarts []RawEvent
}

type activePhase struct {
	name   string
	thread uint64
	steps  int
	last   int
	depth  int
	parent *activePhase
	start  RawEvent
}

// checkEvents checks that events form a well-formed forest of phases: every step and finish
// names an active phase (on its own thread, or on exactly one other), steps stay in range and
// increase, no phase finishes before its children, times never decrease, and everything that
// started has finished at the end.
func checkEvents(t testing.TB, events []RawEvent) tree {
	t.Helper()
	tr := tree{
		starts:      map[string]int{},
		steps:       map[string][]int{},
		early:       map[string]int{},
		measureTIDs: map[uint64]bool{},
		logs:        map[int][]string{},
		startEvents: map[string]RawEvent{},
	}
	active := map[string][]*activePhase{}
	measuring := 0
	find := func(name string, thread uint64) (*activePhase, error) {
		list := active[name]
		for _, p := range list {
			if p.thread == thread {
				return p, nil
			}
		}
		switch len(list) {
		case 0:
			return nil, fmt.Errorf("no active phase %q", name)
		case 1:
			return list[0], nil
		}
		return nil, fmt.Errorf("phase %q is active on %d other threads", name, len(list))
	}
	var last time.Duration
	for i, ev := range events {
		where := fmt.Sprintf("event %d (%v %q on thread %d)", i, ev.Kind, ev.Name, ev.Thread)
		if ev.Time < last {
			t.Fatalf("%s: time %v is before the previous event's %v", where, ev.Time, last)
		}
		last = ev.Time
		if ev.Thread == 0 {
			t.Fatalf("%s: thread 0", where)
		}
		switch ev.Kind {
		case EventPhaseStart:
			if ev.Steps < 1 {
				t.Fatalf("%s: %d steps", where, ev.Steps)
			}
			for _, p := range active[ev.Name] {
				if p.thread == ev.Thread {
					t.Fatalf("%s: already active on this thread", where)
				}
			}
			p := &activePhase{name: ev.Name, thread: ev.Thread, steps: ev.Steps, last: -1, depth: 1, start: ev}
			if ev.HasParent {
				parent, err := find(ev.Parent, ev.Thread)
				if err != nil {
					t.Fatalf("%s: parent: %v", where, err)
				}
				p.parent = parent
				p.depth = parent.depth + 1
			} else if tr.rootThread == 0 {
				tr.rootThread = ev.Thread
			}
			active[ev.Name] = append(active[ev.Name], p)
			tr.maxDepth = max(tr.maxDepth, p.depth)
			tr.starts[ev.Name]++
			if _, ok := tr.startEvents[ev.Name]; !ok {
				tr.startEvents[ev.Name] = ev
			}
			if layer, ok := strings.CutPrefix(ev.Name, phaseFind); ok {
				tr.finds = append(tr.finds, layer)
			}
			if ev.Name == phaseMeasure {
				tr.measures++
				tr.measureTIDs[ev.Thread] = true
				tr.measureStarts = append(tr.measureStarts, ev)
				measuring++
				tr.maxMeasuring = max(tr.maxMeasuring, measuring)
			}
		case EventStep:
			p, err := find(ev.Name, ev.Thread)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if ev.Step < 0 || ev.Step >= p.steps {
				t.Fatalf("%s: step %d outside [0, %d)", where, ev.Step, p.steps)
			}
			if ev.Step <= p.last {
				t.Fatalf("%s: step %d after step %d", where, ev.Step, p.last)
			}
			p.last = ev.Step
			tr.steps[ev.Name] = append(tr.steps[ev.Name], ev.Step)
		case EventPhaseFinish:
			p, err := find(ev.Name, ev.Thread)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			for _, list := range active {
				for _, c := range list {
					if c.parent == p {
						t.Fatalf("%s: finishes while its child %q on thread %d is active", where, c.name, c.thread)
					}
				}
			}
			active[ev.Name] = slices.DeleteFunc(active[ev.Name], func(q *activePhase) bool { return q == p })
			if p.last+1 < p.steps {
				tr.early[ev.Name]++
			}
			if strings.HasPrefix(ev.Name, phaseFind) && p.last < 0 {
				tr.findNoSteps++
			}
			if ev.Name == phaseMeasure {
				measuring--
				if p.last == p.steps-1 {
					tr.fullMeasures++
				}
			}
		case EventLog:
			if ev.Severity < SeverityInternalError || ev.Severity > SeverityVerbose {
				t.Fatalf("%s: severity %d", where, ev.Severity)
			}
			tr.logs[ev.Severity] = append(tr.logs[ev.Severity], ev.Name)
		default:
			t.Fatalf("%s: unknown kind", where)
		}
	}
	for name, list := range active {
		if len(list) > 0 {
			t.Fatalf("phase %q never finished (%d instances)", name, len(list))
		}
	}
	return tr
}

func asError(t testing.TB, err error, code Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("error code %v (%q), want %v", e.Code, e.Message, code)
	}
	return e
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestBackends(t *testing.T) {
	if !Available(BackendSim) {
		t.Fatal("the simulated builder is not available")
	}
	if Available(Backend(99)) {
		t.Fatal("backend 99 is available")
	}
	for b, want := range map[Backend]string{BackendSim: "sim", BackendTensorRT: "tensorrt", 7: "backend(7)"} {
		if got := b.String(); got != want {
			t.Errorf("Backend(%d).String() = %q, want %q", int32(b), got, want)
		}
	}
	v, err := Version(BackendSim, 0)
	if err != nil {
		t.Fatalf("Version(sim): %v", err)
	}
	if v != (VersionInfo{Backend: "sim"}) {
		t.Fatalf("Version(sim) = %+v", v)
	}
	_, err = Version(Backend(99), 0)
	asError(t, err, CodeInvalidArgument)
	_, err = Version(BackendSim, 1<<40)
	asError(t, err, CodeInvalidArgument)
	_, err = NewBuild(Backend(99), options(t, nil))
	asError(t, err, CodeInvalidArgument)

	// The TensorRT backend is in every binary; before the worker has installed TensorRT's
	// libraries (this test process never does), it says so.
	if !Available(BackendTensorRT) {
		t.Fatal("the TensorRT backend is not compiled in")
	}
	const hint = "the TensorRT libraries are not loaded in this process (the worker loads them before a build; see trtbuild version)"
	_, err = Version(BackendTensorRT, 0)
	if e := asError(t, err, CodeUnavailable); e.Message != hint {
		t.Fatalf("Version(tensorrt) message %q", e.Message)
	}
	_, err = NewBuild(BackendTensorRT, options(t, nil))
	if e := asError(t, err, CodeUnavailable); e.Error() != hint {
		t.Fatalf("NewBuild(tensorrt) message %q", e.Error())
	}
}

func TestCodeStrings(t *testing.T) {
	tests := []struct {
		c    Code
		want string
	}{
		{CodeOK, "ok"}, {CodeCancelled, "cancelled"}, {CodeBuildFailed, "build failed"},
		{CodeState, "out of order"}, {Code(42), "code(42)"}, {Code(-1), "code(-1)"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Code(%d).String() = %q, want %q", int32(tt.c), got, tt.want)
		}
	}
	if got := (&Error{Code: CodeIO}).Error(); got != "i/o error" {
		t.Errorf("empty message: %q", got)
	}
	if got := (&Error{Code: CodeIO, Message: "disk full"}).Error(); got != "disk full" {
		t.Errorf("message: %q", got)
	}
	for k, want := range map[EventKind]string{EventPhaseStart: "start", EventStep: "step", EventPhaseFinish: "finish", EventLog: "log", 9: "kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q, want %q", int32(k), got, want)
		}
	}
}

func TestSuccessfulBuild(t *testing.T) {
	layers := []string{"conv1", "relu1", "pool/1", "fc 6", "Ωmega_ü", "tab\tand\\slash"}
	const tactics, iterations = 3, 2
	o := options(t, &SimOptions{Threads: 3, Tactics: tactics, Iterations: iterations, Step: time.Millisecond, Layers: layers, Seed: 1})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	tr := checkEvents(t, out.events)

	if tr.maxDepth != 6 {
		t.Errorf("deepest phase at depth %d, want 6", tr.maxDepth)
	}
	wantStarts := map[string]int{phaseRoot: 1, phaseSubgraph: 1, phaseProfile: 1, phaseNodes: 1, phaseMeasure: len(layers) * tactics}
	for _, l := range layers {
		wantStarts[phaseFind+l] = 1
	}
	if fmt.Sprint(tr.starts) != fmt.Sprint(wantStarts) {
		t.Errorf("phase starts:\n got %v\nwant %v", tr.starts, wantStarts)
	}
	if got := slices.Sorted(slices.Values(tr.finds)); !slices.Equal(got, slices.Sorted(slices.Values(layers))) {
		t.Errorf("layers timed: %q", got)
	}
	wantParents := map[string]string{phaseSubgraph: phaseRoot, phaseProfile: phaseSubgraph, phaseNodes: phaseProfile, phaseFind + "conv1": phaseNodes, phaseMeasure: phaseFind}
	for name, parent := range wantParents {
		ev := tr.startEvents[name]
		if !ev.HasParent || !strings.HasPrefix(ev.Parent, parent) {
			t.Errorf("parent of %q is %q (has %v), want %q", name, ev.Parent, ev.HasParent, parent)
		}
	}
	if ev := tr.startEvents[phaseRoot]; ev.HasParent || ev.Steps != 4 || ev.Thread != 1 {
		t.Errorf("root start %+v", ev)
	}
	if got := tr.steps[phaseRoot]; !slices.Equal(got, seq(4)) {
		t.Errorf("root steps %v", got)
	}
	if got := tr.steps[phaseNodes]; !slices.Equal(got, seq(len(layers))) {
		t.Errorf("%s steps %v, want 0..%d in order", phaseNodes, got, len(layers)-1)
	}
	if len(tr.early) != 0 {
		t.Errorf("phases finished early: %v", tr.early)
	}
	if tr.fullMeasures != len(layers)*tactics {
		t.Errorf("%d complete measurements, want %d", tr.fullMeasures, len(layers)*tactics)
	}
	if len(tr.measureTIDs) < 2 || tr.measureTIDs[1] {
		t.Errorf("tactics measured on threads %v: want several builder threads, not the run thread", tr.measureTIDs)
	}
	if len(tr.logs[SeverityInfo]) == 0 || len(tr.logs[SeverityWarning]) != 1 || len(tr.logs[SeverityVerbose]) == 0 {
		t.Errorf("logs by severity: %v", tr.logs)
	}

	if !bytes.HasPrefix(out.plan, []byte(planMagic)) {
		t.Fatalf("plan starts %q", out.plan[:min(len(out.plan), 40)])
	}
	if out.res.PlanBytes != uint64(len(out.plan)) {
		t.Errorf("PlanBytes %d, file has %d", out.res.PlanBytes, len(out.plan))
	}
	for i, l := range layers {
		esc := strings.NewReplacer(`\`, `\\`, "\t", `\t`).Replace(l)
		if !bytes.Contains(out.plan, []byte(fmt.Sprintf("layer %d\t%s\ttactic ", i, esc))) {
			t.Errorf("plan has no line for layer %q:\n%s", l, out.plan)
		}
	}
	if out.res.TimingCacheUsed || out.res.CacheHits != 0 || out.res.CacheMisses != uint64(len(layers)*tactics) || out.res.CancelSeen != 0 {
		t.Errorf("result %+v", out.res)
	}
	if !bytes.HasPrefix(out.cache, []byte(cacheMagic)) || bytes.Count(out.cache, []byte("\n")) != 1+len(layers)*tactics {
		t.Errorf("timing cache:\n%s", out.cache)
	}
	if out.dropped.Total() != 0 {
		t.Errorf("dropped %v", out.dropped)
	}
}

// traceLines renders events one per line, without times, for golden files.
func traceLines(events []RawEvent) string {
	sev := []string{"INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE"}
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "T%d %-6s ", ev.Thread, ev.Kind)
		switch ev.Kind {
		case EventPhaseStart:
			parent := "-"
			if ev.HasParent {
				parent = ev.Parent
			}
			fmt.Fprintf(&b, "%q steps=%d parent=%q", ev.Name, ev.Steps, parent)
		case EventStep:
			fmt.Fprintf(&b, "%q %d", ev.Name, ev.Step)
		case EventPhaseFinish:
			fmt.Fprintf(&b, "%q", ev.Name)
		case EventLog:
			fmt.Fprintf(&b, "%s %q", sev[ev.Severity], ev.Name)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// testdata is absolute because some tests change directory.
var testdata = func() string {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return dir
}()

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join(testdata, name), got)
}

// TestGoldenBuild pins the whole stream of a single-threaded build, which is deterministic,
// and the plan and cache it writes; a second build from that cache pins the cached path.
func TestGoldenBuild(t *testing.T) {
	sim := &SimOptions{Threads: 1, Tactics: 2, Iterations: 2, Step: 100 * time.Microsecond, Layers: []string{"conv1", "relu1", "fc"}, Seed: 42}
	o := options(t, sim)
	// A relative model path keeps the plan (which names the model) the same on every run.
	t.Chdir(filepath.Dir(o.ModelPath))
	o.ModelPath = filepath.Base(o.ModelPath)
	o.Precision = PrecisionFP16
	o.Flags = FlagNoTF32 | FlagRefit
	o.WorkspaceBytes = 1 << 30
	o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "data_0", Min: []int64{1, 3, 224, 224}, Opt: []int64{8, 3, 224, 224}, Max: []int64{32, 3, 224, 224}}}}}
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	golden(t, "build.trace", []byte(traceLines(out.events)))
	golden(t, "build.plan", out.plan)
	golden(t, "build.cache", out.cache)

	o2 := options(t, sim)
	o2.ModelPath = o.ModelPath
	o2.LogSeverity = SeverityInfo
	o2.TimingCache = cbufOf(t, out.cache)
	out2 := build(t, o2, nil)
	if out2.err != nil {
		t.Fatalf("Run from cache: %v", out2.err)
	}
	checkEvents(t, out2.events)
	golden(t, "build_cached.trace", []byte(traceLines(out2.events)))
	golden(t, "build_cached.plan", out2.plan)
}

func TestCancelManyThreads(t *testing.T) {
	const layers = 64
	// HoldAfter keeps the builder from timing every layer before a busy machine runs the
	// cancel; 40 tactics are 160 measuring steps, so the 60th step always comes first.
	o := options(t, &SimOptions{Threads: 16, NbLayers: layers, Tactics: 6, Iterations: 4, Step: 2 * time.Millisecond, HoldAfter: 40})
	cancelAt := make(chan int64, 1)
	measureSteps := 0
	out := build(t, o, func(b *Build, ev RawEvent) {
		if ev.Kind == EventStep && ev.Name == phaseMeasure {
			measureSteps++
			if measureSteps == 60 {
				go func() { // from another goroutine, as the signal handler does
					cancelAt <- monotonic(t)
					b.Cancel()
				}()
			}
		}
	})
	e := asError(t, out.err, CodeCancelled)
	if e.Message != "build cancelled" {
		t.Errorf("message %q", e.Message)
	}
	tr := checkEvents(t, out.events)
	at := <-cancelAt
	if out.res.CancelSeen < at || out.res.CancelSeen > out.returned {
		t.Errorf("CancelSeen %d outside [cancel %d, return %d]", out.res.CancelSeen, at, out.returned)
	}
	if tr.maxMeasuring < 4 {
		t.Errorf("at most %d tactics were measured at once with 16 threads", tr.maxMeasuring)
	}
	if n := len(tr.steps[phaseNodes]); n >= layers {
		t.Errorf("all %d layers were timed although the build was cancelled", n)
	}
	if tr.early[phaseRoot] != 1 || tr.early[phaseNodes] != 1 {
		t.Errorf("cancelled phases did not finish early: %v", tr.early)
	}
	if out.res.PlanBytes != 0 || len(out.plan) != 0 {
		t.Errorf("cancelled build wrote %d bytes of plan (PlanBytes %d)", len(out.plan), out.res.PlanBytes)
	}
}

func TestFailPhase(t *testing.T) {
	tests := []struct {
		phase   string
		message string
	}{
		{phaseFind + "*", "Error Code 10: Internal Error (Could not find any implementation for node layer_"},
		{phaseFind + "layer_3", "Error Code 10: Internal Error (Could not find any implementation for node layer_3.)"},
		{phaseMeasure, "Error Code 10: Internal Error (Could not find any implementation for node layer_"},
		{phaseProfile, "Error Code 2: Internal Error (Assertion failed: Computing profile costs could not complete.)"},
		{phaseRoot, "Error Code 2: Internal Error (Assertion failed: Building engine could not complete.)"},
		{"Timing*", "Error Code 2: Internal Error (Assertion failed: Timing graph nodes could not complete.)"},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			o := options(t, &SimOptions{Threads: 4, NbLayers: 8, Tactics: 2, Iterations: 2, Step: time.Millisecond, FailPhase: tt.phase})
			out := build(t, o, nil)
			e := asError(t, out.err, CodeBuildFailed)
			if !strings.HasPrefix(e.Message, tt.message) {
				t.Errorf("message %q, want prefix %q", e.Message, tt.message)
			}
			tr := checkEvents(t, out.events)
			if !slices.Contains(tr.logs[SeverityError], e.Message) {
				t.Errorf("no ERROR log %q; errors: %q", e.Message, tr.logs[SeverityError])
			}
			if len(out.plan) != 0 || out.res.PlanBytes != 0 {
				t.Errorf("failed build wrote a plan")
			}
		})
	}
}

func TestEarlyPhase(t *testing.T) {
	const layers, tactics, iterations = 6, 4, 4
	tests := []struct {
		phase string
		check func(t *testing.T, tr tree, plan []byte)
	}{
		{phaseNodes, func(t *testing.T, tr tree, plan []byte) {
			if got := tr.steps[phaseNodes]; !slices.Equal(got, seq(layers/2)) {
				t.Errorf("%s steps %v, want %v", phaseNodes, got, seq(layers/2))
			}
			if len(tr.finds) != layers/2 {
				t.Errorf("%d layers timed, want %d", len(tr.finds), layers/2)
			}
			if n := bytes.Count(plan, []byte("\tnot timed\n")); n != layers-layers/2 {
				t.Errorf("%d untimed layers in the plan, want %d:\n%s", n, layers-layers/2, plan)
			}
		}},
		{phaseMeasure, func(t *testing.T, tr tree, plan []byte) {
			if tr.early[phaseMeasure] != layers*tactics || tr.fullMeasures != 0 {
				t.Errorf("%d early and %d full measurements, want %d and 0", tr.early[phaseMeasure], tr.fullMeasures, layers*tactics)
			}
			if n := len(tr.steps[phaseMeasure]); n != layers*tactics*iterations/2 {
				t.Errorf("%d measuring steps, want %d", n, layers*tactics*iterations/2)
			}
		}},
		{phaseRoot, func(t *testing.T, tr tree, plan []byte) {
			if got := tr.steps[phaseRoot]; !slices.Equal(got, seq(2)) {
				t.Errorf("root steps %v, want [0 1]", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			o := options(t, &SimOptions{Threads: 2, NbLayers: layers, Tactics: tactics, Iterations: iterations, Step: 500 * time.Microsecond, EarlyPhase: tt.phase})
			out := build(t, o, nil)
			if out.err != nil {
				t.Fatalf("Run: %v", out.err)
			}
			tr := checkEvents(t, out.events)
			if tr.early[tt.phase] == 0 {
				t.Errorf("%q never finished early: %v", tt.phase, tr.early)
			}
			for name := range tr.early {
				if name != tt.phase {
					t.Errorf("%q finished early too", name)
				}
			}
			if uint64(len(out.plan)) != out.res.PlanBytes || !bytes.HasPrefix(out.plan, []byte(planMagic)) {
				t.Errorf("plan of %d bytes, PlanBytes %d", len(out.plan), out.res.PlanBytes)
			}
			tt.check(t, tr, out.plan)
		})
	}
}

func TestSilentStretch(t *testing.T) {
	const silent = 300 * time.Millisecond
	o := options(t, &SimOptions{Threads: 2, NbLayers: 2, Tactics: 1, Iterations: 1, Step: time.Millisecond, Silent: silent})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	i := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseStart && ev.Name == phaseNodes })
	if i < 0 || i+1 >= len(out.events) {
		t.Fatalf("no event after %q", phaseNodes)
	}
	gap := out.events[i+1].Time - out.events[i].Time
	if gap < silent {
		t.Errorf("silence of %v after %q, want about %v", gap, phaseNodes, silent)
	}
}

func TestLongStepDelaysCancel(t *testing.T) {
	const long = 400 * time.Millisecond
	o := options(t, &SimOptions{Threads: 1, NbLayers: 4, Tactics: 2, Iterations: 2, Step: time.Millisecond, LongStep: long})
	cancelAt := make(chan int64, 1)
	out := build(t, o, func(b *Build, ev RawEvent) {
		if ev.Kind == EventPhaseStart && ev.Name == phaseMeasure && len(cancelAt) == 0 {
			cancelAt <- monotonic(t)
			b.Cancel()
		}
	})
	asError(t, out.err, CodeCancelled)
	tr := checkEvents(t, out.events)
	first := tr.measureStarts[0]
	i := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventStep && ev.Name == phaseMeasure })
	if i < 0 {
		t.Fatal("no measuring step")
	}
	if d := out.events[i].Time - first.Time; d < long {
		t.Errorf("first measuring step took %v, want at least %v", d, long)
	}
	// The cancel arrived during the long step and was seen only at its end.
	if wait := time.Duration(out.res.CancelSeen - <-cancelAt); wait < long/2 {
		t.Errorf("cancel seen %v after the request, want about %v", wait, long)
	}
	if tr.measures != 1 {
		t.Errorf("%d tactics measured after the cancel, want 1", tr.measures)
	}
}

func TestIgnoreCancel(t *testing.T) {
	// HoldAfter: the builder waits for the cancel after one tactic, so that it cannot finish
	// before the cancel on a busy machine; IgnoreCancel then builds on.
	o := options(t, &SimOptions{Threads: 2, NbLayers: 4, Tactics: 2, Iterations: 2, Step: time.Millisecond, IgnoreCancel: true, HoldAfter: 1})
	cancelled := false
	out := build(t, o, func(b *Build, ev RawEvent) {
		if !cancelled && ev.Kind == EventStep && ev.Name == phaseMeasure {
			cancelled = true
			b.Cancel()
			b.Cancel() // as often as one likes
		}
	})
	if out.err != nil {
		t.Fatalf("Run: %v, want the build to ignore the cancel", out.err)
	}
	tr := checkEvents(t, out.events)
	if out.res.CancelSeen == 0 {
		t.Error("CancelSeen is 0 although the builder saw the cancel")
	}
	if len(tr.early) != 0 || tr.fullMeasures != 4*2 {
		t.Errorf("early %v, %d full measurements", tr.early, tr.fullMeasures)
	}
	if out.res.PlanBytes == 0 || uint64(len(out.plan)) != out.res.PlanBytes {
		t.Errorf("plan %d bytes, PlanBytes %d", len(out.plan), out.res.PlanBytes)
	}
}

func TestLogSeverity(t *testing.T) {
	for sev := SeverityInternalError; sev <= SeverityVerbose; sev++ {
		o := options(t, &SimOptions{Threads: 2, NbLayers: 3, Tactics: 2, Iterations: 1, Step: 100 * time.Microsecond, FailPhase: phaseFind + "layer_2"})
		o.LogSeverity = sev
		out := build(t, o, nil)
		asError(t, out.err, CodeBuildFailed)
		tr := checkEvents(t, out.events)
		for s, lines := range tr.logs {
			if s > sev {
				t.Errorf("LogSeverity %d let through %d lines of severity %d", sev, len(lines), s)
			}
		}
		if sev >= SeverityError && len(tr.logs[SeverityError]) != 1 {
			t.Errorf("LogSeverity %d: %d errors logged, want 1", sev, len(tr.logs[SeverityError]))
		}
		if sev >= SeverityInfo && len(tr.logs[SeverityInfo]) == 0 {
			t.Errorf("LogSeverity %d: no INFO lines", sev)
		}
	}
}

func TestInvalidOptions(t *testing.T) {
	readOnly := func(t *testing.T, o *Options) {
		f, err := os.Open(o.PlanFile.Name())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		o.PlanFile = f
	}
	tests := []struct {
		name   string
		change func(t *testing.T, o *Options)
		want   string
	}{
		{"no model", func(t *testing.T, o *Options) { o.ModelPath = "" }, "no model path given"},
		{"NUL in model path", func(t *testing.T, o *Options) { o.ModelPath = "a\x00b" }, "contains a NUL byte"},
		{"no plan file", func(t *testing.T, o *Options) { o.PlanFile = nil }, "plan file descriptor -1 is not open"},
		{"read-only plan", readOnly, "open it for writing"},
		{"plan not empty", func(t *testing.T, o *Options) {
			if _, err := o.PlanFile.WriteString("old engine"); err != nil {
				t.Fatal(err)
			}
		}, "already holds 10 bytes"},
		{"closed plan file", func(t *testing.T, o *Options) { o.PlanFile.Close() }, "model.plan is closed: pass an open, empty, writable file"},
		{"plan fd not open", func(t *testing.T, o *Options) {
			o.PlanFile = os.NewFile(math.MaxInt32, "never opened")
		}, "plan file descriptor 2147483647 is not open"},
		{"log severity", func(t *testing.T, o *Options) { o.LogSeverity = 5 }, "log severity 5 is out of range"},
		{"negative device", func(t *testing.T, o *Options) { o.Device = -1 }, "--device -1 is negative: CUDA devices are numbered from 0"},
		{"too many profiles", func(t *testing.T, o *Options) { o.Profiles = make([]shapes.Profile, 1025) }, "at most 1024"},
		{"opt level", func(t *testing.T, o *Options) { o.OptLevel = 6 }, "--opt-level 6 is out of range: use 0 to 5"},
		{"aux streams", func(t *testing.T, o *Options) { o.MaxAuxStreams = -2 }, "--max-aux-streams -2 is negative: use 0 or more"},
		{"hardware compat", func(t *testing.T, o *Options) { o.HardwareCompat = 3 }, "hardware compatibility level 3"},
		{"precision bits", func(t *testing.T, o *Options) { o.Precision = 1 << 9 }, "unknown precision bits 0x200"},
		{"flag bits", func(t *testing.T, o *Options) { o.Flags = 1 << 20 }, "unknown builder flag bits 0x100000"},
		{"lean runtime", func(t *testing.T, o *Options) { o.Flags = FlagExcludeLeanRuntime }, "only applies to version-compatible engines: add --version-compatible"},
		{"miss without cache", func(t *testing.T, o *Options) { o.Flags = FlagDisableTimingCache | FlagErrorOnTimingCacheMiss }, "needs a timing cache"},
		{"rank mismatch", func(t *testing.T, o *Options) {
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: []int64{1}, Opt: []int64{1, 2}, Max: []int64{1}}}}}
		}, "ranks 1, 2 and 1"},
		{"rank too high", func(t *testing.T, o *Options) {
			d := make([]int64, 9)
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: d, Opt: d, Max: d}}}}
		}, "rank 9"},
		{"min above opt", func(t *testing.T, o *Options) {
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: []int64{1, 8}, Opt: []int64{1, 4}, Max: []int64{1, 16}}}}}
		}, "profile 0, input x: min [1,8], opt [1,4], max [1,16] must satisfy 0 <= min <= opt <= max"},
		{"no input name", func(t *testing.T, o *Options) {
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Min: []int64{1}, Opt: []int64{1}, Max: []int64{1}}}}}
		}, "no input name"},
		{"empty plugin", func(t *testing.T, o *Options) { o.PluginPaths = []string{""} }, "plugin path 0 is empty"},
		{"threads", func(t *testing.T, o *Options) { o.Sim.Threads = 257 }, "sim threads 257 is out of range: use 1 to 256"},
		{"threads overflow", func(t *testing.T, o *Options) { o.Sim.Threads = 1 << 40 }, "sim threads 1099511627776 is out of range"},
		{"tactics", func(t *testing.T, o *Options) { o.Sim.Tactics = -1 }, "sim tactics -1"},
		{"iterations", func(t *testing.T, o *Options) { o.Sim.Iterations = 10001 }, "sim iterations 10001"},
		{"step", func(t *testing.T, o *Options) { o.Sim.Step = -time.Second }, "must not be negative"},
		{"layers", func(t *testing.T, o *Options) { o.Sim.NbLayers = -3 }, "sim layer count -3"},
		{"NUL in layer", func(t *testing.T, o *Options) { o.Sim.Layers = []string{"a\x00"} }, "layer name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t, &SimOptions{})
			tt.change(t, &o)
			b, err := NewBuild(BackendSim, o)
			if err == nil {
				b.Close()
				t.Fatal("NewBuild accepted the options")
			}
			e := asError(t, err, CodeInvalidArgument)
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("message %q, want it to contain %q", e.Message, tt.want)
			}
			if strings.Contains(e.Message, "\n") {
				t.Errorf("message has several lines: %q", e.Message)
			}
		})
	}
}

func TestModelUnreadable(t *testing.T) {
	o := options(t, &SimOptions{NbLayers: 1, Step: time.Microsecond})
	o.ModelPath = filepath.Join(testDir(t), "missing.onnx")
	out := build(t, o, nil)
	e := asError(t, out.err, CodeIO)
	if want := "cannot read model " + o.ModelPath + ": " + noSuchFileText; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	checkEvents(t, out.events)
}

func TestLifecycle(t *testing.T) {
	o := options(t, &SimOptions{Threads: 1, NbLayers: 1, Tactics: 1, Iterations: 1, Step: time.Microsecond})
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ownCache(t, b)
	asError(t, err, CodeState)
	if _, err := b.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, err = b.Run()
	asError(t, err, CodeState)
	var events []RawEvent
	for done := false; !done; {
		var batch []RawEvent
		batch, done, _, err = b.Drain(make([]RawEvent, 0, 1), 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, batch...)
	}
	checkEvents(t, events)
	// After done, Drain keeps saying so at once: with an hour to wait, it returns done, which
	// it could not if it waited for its timeout (the test would give up after a minute).
	drained := make(chan error, 1)
	go func() {
		evs, done, _, err := b.Drain(nil, time.Hour)
		if err == nil && (!done || len(evs) != 0) {
			err = fmt.Errorf("%d events, done %v", len(evs), done)
		}
		drained <- err
	}()
	select {
	case err := <-drained:
		if err != nil {
			t.Errorf("Drain after done: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Drain after done waited for its timeout (an hour) instead of saying done")
	}
	if c, err := ownCache(t, b); err != nil || !bytes.HasPrefix(c, []byte(cacheMagic)) {
		t.Errorf("TimingCache: %q, %v", c, err)
	}
	b.Close()
	b.Close()
	b.Cancel()
	_, _, _, err = b.Drain(nil, 0)
	asError(t, err, CodeState)
	_, err = b.Run()
	asError(t, err, CodeState)
	_, err = ownCache(t, b)
	asError(t, err, CodeState)
}

func TestDrainReusesDst(t *testing.T) {
	o := options(t, &SimOptions{Threads: 1, NbLayers: 2, Tactics: 1, Iterations: 1, Step: time.Microsecond})
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Run(); err != nil {
		t.Fatal(err)
	}
	dst := make([]RawEvent, 3, 1000)
	got, _, _, err := b.Drain(dst, time.Second)
	if err != nil || len(got) == 0 {
		t.Fatalf("Drain: %d events, %v", len(got), err)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("Drain did not append to dst[:0]")
	}
	if got[0].Kind != EventLog || got[0].Thread != 1 {
		t.Errorf("first event %+v", got[0])
	}
}

func TestConcurrentDrainRefused(t *testing.T) {
	o := options(t, &SimOptions{Threads: 1, NbLayers: 1, Tactics: 1, Iterations: 1, Step: time.Microsecond})
	b, err := NewBuild(BackendSim, o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Nothing runs, so this Drain waits, for as long as the test may take, while the second one
	// is tried; then the build runs, and its first events end the first Drain.
	first := make(chan error, 1)
	go func() {
		_, _, _, err := b.Drain(nil, time.Minute)
		first <- err
	}()
	for !b.draining.Load() {
		select {
		case err := <-first:
			t.Fatalf("the first Drain returned before the second was tried: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	_, _, _, err = b.Drain(nil, 0)
	asError(t, err, CodeState)
	if _, err := b.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first Drain: %v", err)
	}
}

// TestSmallBatches drains through a batch of three events, so that the queue hands one swap
// out over many calls, and checks that nothing is lost or reordered.
func TestSmallBatches(t *testing.T) {
	o := options(t, &SimOptions{Threads: 4, NbLayers: 8, Tactics: 3, Iterations: 2, Step: 200 * time.Microsecond})
	out := buildWith(t, o, 3, defaultBatchText, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	tr := checkEvents(t, out.events)
	if tr.fullMeasures != 8*3 || len(tr.steps[phaseNodes]) != 8 {
		t.Errorf("%d measurements, %d layers", tr.fullMeasures, len(tr.steps[phaseNodes]))
	}
}

// TestTextTruncation checks both cuts: names longer than TRTB_NAME_MAX in the queue, and
// events whose text does not fit an empty batch in drain. Neither may split a UTF-8 sequence.
func TestTextTruncation(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	t.Run("queue", func(t *testing.T) {
		o := options(t, &SimOptions{Threads: 1, Layers: []string{long}, Tactics: 1, Iterations: 1, Step: time.Microsecond})
		out := build(t, o, nil)
		if out.err != nil {
			t.Fatalf("Run: %v", out.err)
		}
		tr := checkEvents(t, out.events)
		if len(tr.finds) != 1 {
			t.Fatalf("%d layers", len(tr.finds))
		}
		name := phaseFind + tr.finds[0]
		if len(name) != 4095 || !utf8.ValidString(name) || !strings.HasPrefix(phaseFind+long, name) {
			t.Errorf("phase name cut to %d bytes (valid UTF-8: %v)", len(name), utf8.ValidString(name))
		}
	})
	t.Run("drain", func(t *testing.T) {
		const textCap = 16
		layer := "aéééééééééé"
		o := options(t, &SimOptions{Threads: 1, Layers: []string{layer}, Tactics: 2, Iterations: 1, Step: time.Microsecond})
		out := buildWith(t, o, 64, textCap, nil)
		if out.err != nil {
			t.Fatalf("Run: %v", out.err)
		}
		full := []string{phaseRoot, phaseSubgraph, phaseProfile, phaseNodes, phaseFind + layer, phaseMeasure}
		sawCut := false
		for _, ev := range out.events {
			if len(ev.Name)+len(ev.Parent) > textCap || !utf8.ValidString(ev.Name) || !utf8.ValidString(ev.Parent) {
				t.Fatalf("event text %q + %q does not fit %d bytes of valid UTF-8", ev.Name, ev.Parent, textCap)
			}
			if ev.Kind == EventLog && strings.HasPrefix(ev.Name, "aé") {
				sawCut = sawCut || len(ev.Name) == 15 // 'a' and 7 of 'é'; the 8th would need byte 17
				continue
			}
			if ev.Kind != EventLog && !slices.ContainsFunc(full, func(f string) bool { return strings.HasPrefix(f, ev.Name) }) {
				t.Errorf("%v %q is not a prefix of a phase name", ev.Kind, ev.Name)
			}
		}
		if !sawCut {
			t.Error("no log line was cut on a UTF-8 boundary")
		}
	})
}

// FuzzTimingCache feeds arbitrary bytes to a build as its timing cache. The build must never
// fail because of it; a rejected cache must be reported; and the cache it saves must be in
// canonical form: fed back, it is accepted, answers every tactic and comes back unchanged.
func FuzzTimingCache(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("garbage"))
	f.Add([]byte(cacheMagic))
	f.Add([]byte(strings.TrimSuffix(cacheMagic, "\n")))
	f.Add([]byte(cacheMagic + "a\t0\t5000\nb\\tc\t1\t7000\n"))
	f.Add([]byte(cacheMagic + "a\t0\t5000\r\n\nzz\t99\t1\n"))
	f.Add([]byte(cacheMagic + "a\t0\t0\n"))
	f.Add([]byte(cacheMagic + "a\t-1\t5\n"))
	f.Add([]byte(cacheMagic + "a\\x\t0\t5\n"))
	f.Add([]byte(cacheMagic + "a\t0\t18446744073709551616\n"))
	layers := []string{"a", "b\tc"}
	run := func(t *testing.T, cache []byte) (outcome, tree) {
		o := options(t, &SimOptions{Threads: 1, Layers: layers, Tactics: 2, Iterations: 1, Step: time.Microsecond})
		o.LogSeverity = SeverityWarning
		o.TimingCache = cbufOf(t, cache)
		out := build(t, o, nil)
		if out.err != nil {
			t.Fatalf("Run with cache %q: %v", cache, out.err)
		}
		return out, checkEvents(t, out.events)
	}
	f.Fuzz(func(t *testing.T, cache []byte) {
		out, tr := run(t, cache)
		warned := slices.Contains(tr.logs[SeverityWarning], cacheWarn)
		if len(cache) > 0 && out.res.TimingCacheUsed == warned {
			t.Fatalf("cache used %v, warned %v", out.res.TimingCacheUsed, warned)
		}
		if out.res.CacheHits+out.res.CacheMisses != 4 {
			t.Fatalf("%d hits + %d misses, want 4 tactics", out.res.CacheHits, out.res.CacheMisses)
		}
		if !bytes.HasPrefix(out.cache, []byte(cacheMagic)) {
			t.Fatalf("saved cache %q", out.cache)
		}
		again, tr2 := run(t, out.cache)
		if !again.res.TimingCacheUsed || again.res.CacheHits != 4 || again.res.CacheMisses != 0 || tr2.measures != 0 {
			t.Fatalf("saved cache %q not fully used: %+v, %d measured", out.cache, again.res, tr2.measures)
		}
		if !bytes.Equal(again.cache, out.cache) {
			t.Fatalf("cache changed on a second pass:\n%q\n%q", out.cache, again.cache)
		}
	})
}

var planLayer = regexp.MustCompile(`(?m)^layer \d+\t.*\ttactic (\d+)\t(\d+) ns\t`)

func TestTimingCache(t *testing.T) {
	const layers, tactics, iterations = 6, 3, 2
	sim := func() *SimOptions {
		return &SimOptions{Threads: 3, NbLayers: layers, Tactics: tactics, Iterations: iterations, Step: 300 * time.Microsecond, Seed: 9}
	}
	first := build(t, options(t, sim()), nil)
	if first.err != nil {
		t.Fatalf("first build: %v", first.err)
	}
	if first.res.TimingCacheUsed || first.res.CacheHits != 0 || first.res.CacheMisses != layers*tactics {
		t.Fatalf("first build result %+v", first.res)
	}
	lines := strings.Split(strings.TrimSuffix(string(first.cache), "\n"), "\n")
	if lines[0]+"\n" != cacheMagic || len(lines) != 1+layers*tactics || !slices.IsSorted(lines[1:]) {
		t.Fatalf("first cache:\n%s", first.cache)
	}
	choices := planLayer.FindAllStringSubmatch(string(first.plan), -1)
	if len(choices) != layers {
		t.Fatalf("plan:\n%s", first.plan)
	}

	withCache := func(t *testing.T, cache []byte, flags uint32) (outcome, tree) {
		o := options(t, sim())
		o.TimingCache = cbufOf(t, cache)
		o.Flags = flags
		out := build(t, o, nil)
		return out, checkEvents(t, out.events)
	}

	t.Run("reuse", func(t *testing.T) {
		out, tr := withCache(t, first.cache, 0)
		if out.err != nil {
			t.Fatal(out.err)
		}
		if !out.res.TimingCacheUsed || out.res.CacheHits != layers*tactics || out.res.CacheMisses != 0 {
			t.Errorf("result %+v", out.res)
		}
		if tr.measures != 0 || len(tr.finds) != layers || tr.findNoSteps != layers {
			t.Errorf("%d measured, %d layers, %d without steps", tr.measures, len(tr.finds), tr.findNoSteps)
		}
		if got := planLayer.FindAllStringSubmatch(string(out.plan), -1); fmt.Sprint(got) != fmt.Sprint(choices) {
			t.Errorf("tactics chosen from the cache differ:\n%v\n%v", got, choices)
		}
		if !bytes.Equal(out.cache, first.cache) {
			t.Errorf("cache changed although nothing was measured:\n%s", out.cache)
		}
	})
	t.Run("partial", func(t *testing.T) {
		var kept []string
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "layer_0\t") {
				kept = append(kept, l)
			}
		}
		partial := cacheMagic + strings.Join(kept, "\n") + "\n"
		out, tr := withCache(t, []byte(partial), 0)
		if out.err != nil {
			t.Fatal(out.err)
		}
		if !out.res.TimingCacheUsed || out.res.CacheHits != (layers-1)*tactics || out.res.CacheMisses != tactics || tr.measures != tactics {
			t.Errorf("result %+v, %d measured", out.res, tr.measures)
		}
		if !bytes.Equal(out.cache, first.cache) {
			t.Errorf("cache after relearning layer_0:\n%s", out.cache)
		}
	})
	for name, garbage := range map[string]string{
		"garbage":  "\x00\x01not a cache at all",
		"bad line": cacheMagic + "layer_0\tx\t5\n",
		"engine":   "ftrt\x00\x00\x00\x01",
	} {
		t.Run(name, func(t *testing.T) {
			out, tr := withCache(t, []byte(garbage), 0)
			if out.err != nil {
				t.Fatal(out.err)
			}
			if out.res.TimingCacheUsed || !slices.Contains(tr.logs[SeverityWarning], cacheWarn) {
				t.Errorf("used %v; warnings %q", out.res.TimingCacheUsed, tr.logs[SeverityWarning])
			}
			if !bytes.Equal(out.cache, first.cache) {
				t.Errorf("cache is not what was learned:\n%s", out.cache)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		// The builder holds after 5 tactics until the cancel comes, so that on a busy machine
		// it cannot measure everything before the drain sees the 5th finish.
		o := options(t, sim())
		o.Sim.HoldAfter = 5
		measured := 0
		out := build(t, o, func(b *Build, ev RawEvent) {
			if ev.Kind == EventPhaseFinish && ev.Name == phaseMeasure {
				if measured++; measured == 5 {
					b.Cancel()
				}
			}
		})
		asError(t, out.err, CodeCancelled)
		tr := checkEvents(t, out.events)
		saved := strings.Split(strings.TrimSuffix(string(out.cache), "\n"), "\n")
		if saved[0]+"\n" != cacheMagic || len(saved)-1 != tr.fullMeasures || tr.fullMeasures < 5 || tr.fullMeasures == layers*tactics {
			t.Fatalf("%d entries saved after %d complete measurements:\n%s", len(saved)-1, tr.fullMeasures, out.cache)
		}
		for _, l := range saved[1:] {
			if !slices.Contains(lines, l) {
				t.Errorf("saved entry %q is not what a full build measures", l)
			}
		}
	})
	t.Run("disabled", func(t *testing.T) {
		out, tr := withCache(t, first.cache, FlagDisableTimingCache)
		if out.err != nil {
			t.Fatal(out.err)
		}
		if out.res.TimingCacheUsed || out.res.CacheHits != 0 || out.res.CacheMisses != 0 || out.cache != nil || tr.measures != layers*tactics {
			t.Errorf("result %+v, cache %q, %d measured", out.res, out.cache, tr.measures)
		}
	})
	t.Run("error on miss", func(t *testing.T) {
		partial := cacheMagic + strings.Join(lines[2:], "\n") + "\n"
		out, _ := withCache(t, []byte(partial), FlagErrorOnTimingCacheMiss)
		e := asError(t, out.err, CodeBuildFailed)
		if !strings.Contains(e.Message, "Timing cache miss for node layer_0") {
			t.Errorf("message %q", e.Message)
		}
		out, _ = withCache(t, first.cache, FlagErrorOnTimingCacheMiss)
		if out.err != nil {
			t.Errorf("full cache: %v", out.err)
		}
	})
}

// TestOneBuilderThreadByDefault: with Threads left 0, as TensorRT's IBuilder::setMaxThreads
// defaults to 1, every callback comes from the thread that called Run, and phases nest
// strictly: each finish closes the phase started last.
func TestOneBuilderThreadByDefault(t *testing.T) {
	o := options(t, &SimOptions{NbLayers: 5, Tactics: 2, Iterations: 2, Step: time.Microsecond})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	var open []string
	for _, ev := range out.events {
		if ev.Thread != 1 {
			t.Fatalf("%v %q came from thread %d, want 1", ev.Kind, ev.Name, ev.Thread)
		}
		switch ev.Kind {
		case EventPhaseStart:
			if len(open) > 0 && ev.Parent != open[len(open)-1] {
				t.Errorf("%q starts inside %q, but %q is the innermost open phase", ev.Name, ev.Parent, open[len(open)-1])
			}
			open = append(open, ev.Name)
		case EventPhaseFinish:
			if len(open) == 0 || open[len(open)-1] != ev.Name {
				t.Fatalf("%q finishes while %v are open", ev.Name, open)
			}
			open = open[:len(open)-1]
		case EventStep:
			if len(open) == 0 || open[len(open)-1] != ev.Name {
				t.Errorf("a step of %q while %v are open", ev.Name, open)
			}
		}
	}
	if len(open) != 0 {
		t.Errorf("never finished: %v", open)
	}
}

// findPhases returns the layer names of the "Finding fastest tactic" phases, in order.
func findPhases(events []RawEvent) []string {
	var names []string
	for _, ev := range events {
		if ev.Kind == EventPhaseStart && strings.HasPrefix(ev.Name, phaseFind) {
			names = append(names, strings.TrimPrefix(ev.Name, phaseFind))
		}
	}
	return names
}

// TestOptimizedGraph: given op types, the simulation times TensorRT's optimized graph, not the
// ONNX nodes one by one.
func TestOptimizedGraph(t *testing.T) {
	layers := []string{"/in/Identity", "/conv/Conv", "/bn/BatchNormalization", "/relu/Relu", "/c/Constant", "/shape/Shape",
		"/fc/Gemm", "/add/Add", "/sm/Softmax", "/conv2/Conv", "/relu2/Relu", "/relu3/Relu"}
	ops := []string{"Identity", "Conv", "BatchNormalization", "Relu", "Constant", "Shape", "Gemm", "Add", "Softmax", "Conv", "Relu", "Relu"}
	want := []string{
		"Reformatting CopyNode for Input Tensor 0 to /conv/Conv + /bn/BatchNormalization + /relu/Relu",
		"/conv/Conv + /bn/BatchNormalization + /relu/Relu",
		"/fc/Gemm + /add/Add",
		"/sm/Softmax",
		"/conv2/Conv + /relu2/Relu",
		"/relu3/Relu",
	}
	for _, fp16 := range []bool{false, true} {
		o := options(t, &SimOptions{Layers: layers, LayerOps: ops, Tactics: 1, Iterations: 1, Step: time.Microsecond})
		w := want
		if fp16 {
			o.Precision = PrecisionFP16
			w = append(slices.Clone(want), "Reformatting CopyNode for Output Tensor 0 to /relu3/Relu")
		}
		out := build(t, o, nil)
		if out.err != nil {
			t.Fatalf("Run: %v", out.err)
		}
		checkEvents(t, out.events)
		if got := findPhases(out.events); !slices.Equal(got, w) {
			t.Errorf("fp16 %v: timed layers\n%q\nwant\n%q", fp16, got, w)
		}
	}
	o := options(t, &SimOptions{Layers: layers, LayerOps: ops[:3]})
	if b, err := NewBuild(BackendSim, o); err == nil {
		b.Close()
		t.Error("NewBuild accepted 3 op types for 12 layers")
	} else {
		asError(t, err, CodeInvalidArgument)
	}
}

// TestTimingCacheKeysAreSignatures: timings belong to a layer's signature (its ops, its place,
// the input shapes, the precision), not to its name. Two models whose auto-generated names
// collide but whose inputs differ share nothing; the same layers under other names share all.
func TestTimingCacheKeysAreSignatures(t *testing.T) {
	names := []string{"Conv_0", "Relu_1", "Gemm_2"}
	ops := []string{"Conv", "Relu", "Gemm"}
	run := func(names []string, shapes string, cache []byte) outcome {
		o := options(t, &SimOptions{Layers: names, LayerOps: ops, ShapeKey: shapes, Tactics: 2, Iterations: 1, Step: time.Microsecond})
		o.TimingCache = cbufOf(t, cache)
		out := build(t, o, nil)
		if out.err != nil {
			t.Fatalf("Run: %v", out.err)
		}
		return out
	}
	a := run(names, "images=1x3x224x224", nil)
	if a.res.CacheHits != 0 || a.res.CacheMisses == 0 || len(a.cache) == 0 {
		t.Fatalf("first build: %d hits, %d misses, %d cache bytes", a.res.CacheHits, a.res.CacheMisses, len(a.cache))
	}
	if bytes.Contains(a.cache, []byte("Conv_0")) {
		t.Errorf("the cache is keyed by node name:\n%s", a.cache)
	}
	other := run(names, "images=1x3x64x64", a.cache)
	if other.res.CacheHits != 0 || other.res.CacheMisses != a.res.CacheMisses {
		t.Errorf("same names, other input shapes: %d hits, %d misses; want 0 hits", other.res.CacheHits, other.res.CacheMisses)
	}
	renamed := run([]string{"/stem/conv", "/stem/relu", "/head/fc"}, "images=1x3x224x224", a.cache)
	if renamed.res.CacheMisses != 0 || renamed.res.CacheHits != a.res.CacheMisses {
		t.Errorf("same layers, other names: %d hits, %d misses; want all hits", renamed.res.CacheHits, renamed.res.CacheMisses)
	}
}

// TestSilencesAroundTiming: silences before the first phase (graph optimization) and after
// timing (engine generation) are reported as nothing at all.
func TestSilencesAroundTiming(t *testing.T) {
	const pre, post = 200 * time.Millisecond, 300 * time.Millisecond
	o := options(t, &SimOptions{NbLayers: 2, Tactics: 1, Iterations: 1, Step: time.Microsecond, PreSilent: pre, PostSilent: post})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	root := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseStart && ev.Name == phaseRoot })
	if root < 1 {
		t.Fatalf("%q is not preceded by log lines", phaseRoot)
	}
	if gap := out.events[root].Time - out.events[root-1].Time; gap < pre {
		t.Errorf("%v of silence before the first phase, want at least %v", gap, pre)
	}
	step := func(n int) int {
		return slices.IndexFunc(out.events, func(ev RawEvent) bool {
			return ev.Kind == EventStep && ev.Name == phaseRoot && ev.Step == n
		})
	}
	s1, s2 := step(1), step(2)
	if s1 < 0 || s2 < 0 {
		t.Fatal("missing steps of the root phase")
	}
	if gap := out.events[s1+1].Time - out.events[s1].Time; gap < post {
		t.Errorf("%v of silence after timing, want at least %v", gap, post)
	}
	if i := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseFinish && ev.Name == phaseNodes }); i < 0 || i > s1 {
		t.Errorf("the silence after timing does not come after %q finished", phaseNodes)
	}
}

// TestSkipFinishOnStop: TensorRT does not promise phaseFinish after a cancel or a failure; in
// this mode the simulation sends none once the build is stopping.
func TestSkipFinishOnStop(t *testing.T) {
	for _, skip := range []bool{false, true} {
		o := options(t, &SimOptions{NbLayers: 3, Tactics: 2, Iterations: 2, Step: time.Microsecond,
			FailPhase: phaseFind + "layer_1", SkipFinishOnStop: skip})
		out := build(t, o, nil)
		asError(t, out.err, CodeBuildFailed)
		fail := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventLog && ev.Severity == SeverityError })
		if fail < 0 {
			t.Fatal("no ERROR line for the failure")
		}
		var finishes int
		for _, ev := range out.events[fail:] {
			if ev.Kind == EventPhaseFinish {
				finishes++
			}
		}
		if skip && finishes != 0 {
			t.Errorf("skip mode: %d phase finishes after the failure, want none", finishes)
		}
		if !skip && finishes < 5 { // the failing layer, nodes, profile, subgraph, root
			t.Errorf("default mode: %d phase finishes after the failure, want every open phase finished", finishes)
		}
	}
}

// TestFP16FailureInjection: the TensorRT 11.2 FP16 failure "No low-precision conv kernel
// available ... Failing node: X", unless X (by name or op type) is kept in float32.
func TestFP16FailureInjection(t *testing.T) {
	layers := []string{"/conv/Conv", "/relu/Relu", "node_223_Conv"}
	ops := []string{"Conv", "Relu", "Conv"}
	for _, tt := range []struct {
		keep []string
		fail bool
	}{{nil, true}, {[]string{"/conv/Conv"}, true}, {[]string{"node_223_Conv"}, false}, {[]string{"Conv"}, false}} {
		o := options(t, &SimOptions{Layers: layers, LayerOps: ops, Tactics: 1, Iterations: 1, Step: time.Microsecond,
			FP16FailNode: "node_223_Conv", KeepFP32: tt.keep})
		out := build(t, o, nil)
		if !tt.fail {
			if out.err != nil {
				t.Errorf("keep %q: %v", tt.keep, out.err)
			}
			continue
		}
		e := asError(t, out.err, CodeBuildFailed)
		if !strings.HasPrefix(e.Message, "No low-precision conv kernel available") ||
			!strings.Contains(e.Message, "Failing node: node_223_Conv; ") ||
			!strings.Contains(e.Message, "Could not find any implementation for node node_223_Conv") {
			t.Errorf("keep %q: message %q", tt.keep, e.Message)
		}
		if !slices.ContainsFunc(out.events, func(ev RawEvent) bool {
			return ev.Kind == EventLog && ev.Severity == SeverityError &&
				strings.HasPrefix(ev.Name, "No low-precision conv kernel available") && strings.HasSuffix(ev.Name, "Failing node: node_223_Conv")
		}) {
			t.Errorf("keep %q: no ERROR line naming the failing node", tt.keep)
		}
	}
}

// TestPhasePatterns: '*' in a fail pattern stands for any run of characters, so a fused
// layer can be named by any of its nodes.
func TestPhasePatterns(t *testing.T) {
	layers := []string{"/a/Conv", "/a/Relu", "/b/Conv", "/b/Relu"}
	ops := []string{"Conv", "Relu", "Conv", "Relu"}
	for _, tt := range []struct {
		pattern string
		fails   bool
	}{
		{phaseFind + "/b/Conv + /b/Relu", true},
		{phaseFind + "*/b/Relu*", true},
		{phaseFind + "/b/Conv", false},
		{phaseFind + "/b*", true},
		{"*/c/*", false},
		{"Timing*nodes", true},
	} {
		o := options(t, &SimOptions{Layers: layers, LayerOps: ops, Tactics: 1, Iterations: 1, Step: time.Microsecond, FailPhase: tt.pattern})
		out := build(t, o, nil)
		if failed := out.err != nil; failed != tt.fails {
			t.Errorf("pattern %q: failed %v (%v), want %v", tt.pattern, failed, out.err, tt.fails)
		}
	}
}
