package cgo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// The tests of the C boundary (trtb.h) through NewBuild, Run, Drain, Cancel and
// WriteTimingCache. Their builds are simulated builds (BackendSim): the TensorRT shim over the
// stand-in TensorRT compiled into the binary (trtfake/), which reads the ONNX model itself. This
// test process plays TensorRT 11's stand-in (its first simulated build installs it, and a
// process plays one major); what needs another process, TensorRT 10's stand-in or a process
// that has installed none, runs in a child of the test binary.

// Phases of the stand-in's progress tree (trtfake/trtfake.hpp), which are TensorRT's. The tests
// find their way by these names and assert the shape of the tree: nesting, counts, early
// finishes, never TensorRT's exact step counts.
const (
	phaseRoot      = "Building engine"
	phaseSubgraph  = "Building engine from subgraph"
	phaseProfile   = "Computing profile costs"
	phaseTactics   = "Timing tactics"
	phaseNodes     = "Timing graph nodes"
	phaseReformats = "Timing tensor reformats"
	phaseEvaluate  = "Evaluating tactic times"
	phaseMeasure   = "Measuring tactic time"

	planMagic  = "TRTBUILD-SIMULATED-PLAN 1\n"
	cacheMagic = "TRTFAKE-TIMING-CACHE 1\n"
	// noImplementation starts the error TensorRT reports for a node it cannot time.
	noImplementation = "Error Code 10: Internal Error (Could not find any implementation for node "
)

// options returns simulated build options for the bundled convnet.onnx (a residual CNN of 24
// nodes), writing to a fresh plan file.
func options(t testing.TB, sim *SimOptions) Options {
	t.Helper()
	return optionsFor(t, testmodels.Bundled(t, "convnet.onnx"), sim)
}

// optionsFor is options for the model at path.
func optionsFor(t testing.TB, model string, sim *SimOptions) Options {
	t.Helper()
	plan, err := os.Create(filepath.Join(testDir(t), "model.plan"))
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

// quick is a quick simulated build's settings: two tactics an evaluation (so that the timing
// cache keeps every evaluation: TensorRT caches none of a single tactic), one measuring step
// of a microsecond.
func quick() *SimOptions {
	return &SimOptions{Tactics: 2, Iterations: 1, Step: time.Microsecond}
}

// writeModel writes a model of graph g (its inputs and outputs set) as name in a fresh folder
// and returns its path.
func writeModel(t testing.TB, name string, g *onnxpb.GraphProto) string {
	t.Helper()
	b, err := testmodels.Marshal(testmodels.Model(g))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testDir(t), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// convReluModel is a model of one convolution and a ReLU, which TensorRT fuses into one timed
// layer, "conv + relu".
func convReluModel(t testing.TB) string {
	t.Helper()
	w := make([]float32, 4*3*3*3)
	for i := range w {
		w[i] = float32(i%7) / 7
	}
	return writeModel(t, "model.onnx", &onnxpb.GraphProto{
		Name:        "conv_relu",
		Initializer: []*onnxpb.TensorProto{testmodels.Floats("conv.weight", []int64{4, 3, 3, 3}, w)},
		Node: []*onnxpb.NodeProto{
			testmodels.Node("conv", "Conv", []string{"x", "conv.weight"}, []string{"c"}, testmodels.AttrInts("kernel_shape", 3, 3)),
			testmodels.Node("relu", "Relu", []string{"c"}, []string{"y"}),
		},
		Input:  []*onnxpb.ValueInfoProto{testmodels.Value("x", testmodels.F32, 1, 3, 8, 8)},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 1, 4, 6, 6)},
	})
}

// reluModel is a model of one ReLU node named node: one timed layer of that name.
func reluModel(t testing.TB, node string) string {
	t.Helper()
	return writeModel(t, "relu.onnx", &onnxpb.GraphProto{
		Name:   "relu",
		Node:   []*onnxpb.NodeProto{testmodels.Node(node, "Relu", []string{"x"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{testmodels.Value("x", testmodels.F32, 1, 8)},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 1, 8)},
	})
}

// outcome is everything one build produced.
type outcome struct {
	res      Result
	err      error
	events   []RawEvent
	dropped  Drops
	plan     []byte
	cache    []byte // the build's own timing cache (ownCache)
	returned int64  // CLOCK_MONOTONIC when Run returned
}

// build runs one build the way the worker does: Run on a goroutine locked to its thread, Drain
// on this one until done. on, if not nil, sees every event as it is drained. It waits for the
// build to end however long it takes: a hung build is the test binary's timeout.
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
	maxDepth      int                        // of the deepest phase; a root is at depth 1
	roots         []RawEvent                 // the starts of root phases
	starts        map[string]int             // phase starts by name
	steps         map[string][]int           // the steps reported, by phase name, in order
	parents       map[string]map[string]bool // the parents each phase name started under
	finished      []finishedPhase            // in the order they finished
	early         map[string]int             // phases that finished before their last step, by name
	measures      int                        // "Measuring tactic time" phases
	fullMeasures  int                        // of which reported every step
	nodeMeasures  int                        // of which timed a graph node (under "Timing graph nodes"): what a timing cache spares
	nodeThreads   map[uint64]bool            // threads that measured tactics of graph nodes
	maxMeasuring  int                        // "Measuring tactic time" phases active at once
	logs          map[int][]string           // log lines by severity
	threads       map[uint64]bool            // threads that reported anything
	startEvents   map[string]RawEvent        // the first start of each name
	measureStarts []RawEvent
}

// finishedPhase is one phase that ran: its name, its steps and the last step it reported
// (-1: none).
type finishedPhase struct {
	name        string
	steps, last int
}

type activePhase struct {
	name   string
	thread uint64
	steps  int
	last   int
	depth  int
	parent *activePhase
}

// under reports whether p or one of its ancestors is named name.
func (p *activePhase) under(name string) bool {
	for ; p != nil; p = p.parent {
		if p.name == name {
			return true
		}
	}
	return false
}

// checkEvents checks that events form a well-formed forest of phases: every step and finish
// names an active phase (on its own thread, or on exactly one other), steps stay in range and
// never go back (TensorRT repeats a step now and then), no phase finishes before its children,
// times never decrease, and everything that started has finished at the end.
func checkEvents(t testing.TB, events []RawEvent) tree {
	t.Helper()
	tr := tree{
		starts:      map[string]int{},
		steps:       map[string][]int{},
		parents:     map[string]map[string]bool{},
		early:       map[string]int{},
		nodeThreads: map[uint64]bool{},
		logs:        map[int][]string{},
		threads:     map[uint64]bool{},
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
		tr.threads[ev.Thread] = true
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
			p := &activePhase{name: ev.Name, thread: ev.Thread, steps: ev.Steps, last: -1, depth: 1}
			if ev.HasParent {
				parent, err := find(ev.Parent, ev.Thread)
				if err != nil {
					t.Fatalf("%s: parent: %v", where, err)
				}
				p.parent = parent
				p.depth = parent.depth + 1
				if tr.parents[ev.Name] == nil {
					tr.parents[ev.Name] = map[string]bool{}
				}
				tr.parents[ev.Name][ev.Parent] = true
			} else {
				tr.roots = append(tr.roots, ev)
			}
			active[ev.Name] = append(active[ev.Name], p)
			tr.maxDepth = max(tr.maxDepth, p.depth)
			tr.starts[ev.Name]++
			if _, ok := tr.startEvents[ev.Name]; !ok {
				tr.startEvents[ev.Name] = ev
			}
			if ev.Name == phaseMeasure {
				tr.measures++
				if p.under(phaseNodes) {
					tr.nodeMeasures++
					tr.nodeThreads[ev.Thread] = true
				}
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
			if ev.Step < p.last {
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
			tr.finished = append(tr.finished, finishedPhase{name: p.name, steps: p.steps, last: p.last})
			if p.last+1 < p.steps {
				tr.early[ev.Name]++
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

// planLayer matches a plan's line of one timed layer: its name, the tactic chosen and its time.
var planLayer = regexp.MustCompile(`(?m)^layer \d+\t(.*)\ttactic (0x[0-9a-f]+)\t(\d+) ns$`)

// planLayers returns the names of the timed layers of a plan, in its order.
func planLayers(plan []byte) []string {
	var names []string
	for _, m := range planLayer.FindAllSubmatch(plan, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// cacheEntries parses a stand-in timing cache (trtfake/timing_cache.cpp): its three header
// lines, then "key\ttactic\tnanoseconds" lines, into key -> "tactic\tnanoseconds".
func cacheEntries(t testing.TB, cache []byte) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(cache), "\n"), "\n")
	if len(lines) < 3 || lines[0]+"\n" != cacheMagic || !strings.HasPrefix(lines[1], "tensorrt ") || !strings.HasPrefix(lines[2], "device ") {
		t.Fatalf("not a stand-in timing cache: %q", cache)
	}
	out := map[string]string{}
	for _, l := range lines[3:] {
		key, value, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("timing cache line %q", l)
		}
		out[key] = value
	}
	return out
}

// TestBackends: both backends are compiled in and named; the simulated one describes itself
// without a device; unknown backends and devices are refused.
func TestBackends(t *testing.T) {
	if !Available(BackendSim) {
		t.Fatal("the simulated builder is not available")
	}
	if Available(Backend(99)) {
		t.Fatal("backend 99 is available")
	}
	if !Available(BackendTensorRT) {
		t.Fatal("the TensorRT backend is not compiled in")
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
}

// nativeChildEnv makes the test binary run nativeChild (TestMain): a process that has
// installed no TensorRT yet.
const nativeChildEnv = "TRTBUILD_NATIVE_CHILD"

func init() { childHelpers[nativeChildEnv] = nativeChild }

// codeMessage is an error as a child reports it; Code 0: none.
type codeMessage struct {
	Code    Code
	Message string
}

func codeMessageOf(err error) codeMessage {
	var e *Error
	if errors.As(err, &e) {
		return codeMessage{e.Code, e.Message}
	}
	if err != nil {
		return codeMessage{CodeInternal, err.Error()}
	}
	return codeMessage{}
}

// freshProcess is what nativeChild saw, in order.
type freshProcess struct {
	Setup             string      // why the child could not do its part
	Version, NewBuild codeMessage // of the TensorRT backend before any TensorRT is installed
	Sim10             codeMessage // a simulated build of TensorRT 10: installs its stand-in
	Loaded            VersionInfo // the TensorRT backend then
	Sim11             codeMessage // a simulated build of the other major then
	Ran               codeMessage // Run of the build of TensorRT 10
	Plan              string
}

// nativeChild runs in a fresh process: the TensorRT backend before anything is installed, a
// simulated build of TensorRT 10 (which installs its stand-in as the process's TensorRT), and
// one of TensorRT 11 after it. It writes a freshProcess as JSON.
func nativeChild() int {
	var out freshProcess
	say := func() int {
		if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	dir := os.Getenv(nativeChildEnv)
	model := filepath.Join(dir, "convnet.onnx")
	o := func(major int) (Options, error) {
		plan, err := os.CreateTemp(dir, "*.plan")
		if err != nil {
			return Options{}, err
		}
		return Options{ModelPath: model, PlanFile: plan, LogSeverity: SeverityWarning, OptLevel: -1, MaxAuxStreams: -1,
			Sim: &SimOptions{TensorRT: major, Tactics: 2, Iterations: 1, Step: time.Microsecond}}, nil
	}
	_, err := Version(BackendTensorRT, 0)
	out.Version = codeMessageOf(err)
	o10, err := o(10)
	if err != nil {
		out.Setup = err.Error()
		return say()
	}
	defer o10.PlanFile.Close()
	b, err := NewBuild(BackendTensorRT, o10)
	if err == nil {
		b.Close()
	}
	out.NewBuild = codeMessageOf(err)

	b, err = NewBuild(BackendSim, o10)
	out.Sim10 = codeMessageOf(err)
	if err != nil {
		return say()
	}
	defer b.Close()
	if out.Loaded, err = Version(BackendTensorRT, 0); err != nil {
		out.Setup = "Version after the stand-in was installed: " + err.Error()
		return say()
	}
	o11, err := o(11)
	if err != nil {
		out.Setup = err.Error()
		return say()
	}
	defer o11.PlanFile.Close()
	if b11, err := NewBuild(BackendSim, o11); err == nil {
		b11.Close()
	} else {
		out.Sim11 = codeMessageOf(err)
	}
	// Nobody drains: a small build's events fit the queue.
	runtime.LockOSThread()
	_, err = b.Run()
	out.Ran = codeMessageOf(err)
	plan, err := os.ReadFile(o10.PlanFile.Name())
	if err != nil {
		out.Setup = err.Error()
	}
	out.Plan = string(plan)
	return say()
}

// TestOneTensorRTPerProcess: in a fresh process the TensorRT backend says that no TensorRT is
// loaded; the first simulated build installs the stand-in of its major (10 here) as the
// process's TensorRT, which the TensorRT backend then describes, and builds a plan of that
// TensorRT; a simulated build of the other major is refused as out of order.
func TestOneTensorRTPerProcess(t *testing.T) {
	dir := testDir(t)
	data, err := os.ReadFile(testmodels.Bundled(t, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "convnet.onnx"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), nativeChildEnv+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	var got freshProcess
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("child said %q: %v\n%s", stdout, err, stderr.String())
	}
	if got.Setup != "" {
		t.Fatalf("child: %s", got.Setup)
	}
	const hint = "the TensorRT libraries are not loaded in this process (the worker loads them before a build; see trtbuild version)"
	for what, cm := range map[string]codeMessage{"Version": got.Version, "NewBuild": got.NewBuild} {
		if cm != (codeMessage{CodeUnavailable, hint}) {
			t.Errorf("%s(tensorrt) before any TensorRT was installed: %+v, want %v %q", what, cm, CodeUnavailable, hint)
		}
	}
	if got.Sim10.Code != CodeOK {
		t.Fatalf("NewBuild(sim, TensorRT 10): %+v", got.Sim10)
	}
	c10, ok := CompiledFor(10)
	if !ok {
		t.Fatal("no shim of TensorRT 10 compiled in")
	}
	if got.Loaded.Loaded != c10.TensorRT || got.Loaded.DeviceName != "TensorRT stand-in GPU" {
		t.Errorf("the TensorRT backend after a simulated build of TensorRT 10: %+v, want the stand-in of %d", got.Loaded, c10.TensorRT)
	}
	if got.Sim11.Code != CodeState || !strings.Contains(got.Sim11.Message, "plays TensorRT 10's stand-in already") {
		t.Errorf("a simulated build of TensorRT 11 after one of 10: %+v, want CodeState", got.Sim11)
	}
	want := fmt.Sprintf("\ntensorrt %d.%d.%d.%d\n", c10.TensorRT/10000, c10.TensorRT/100%100, c10.TensorRT%100, c10.Build)
	if got.Ran.Code != CodeOK || !strings.HasPrefix(got.Plan, planMagic) || !strings.Contains(got.Plan, want) {
		t.Errorf("the build of TensorRT 10: %+v, plan:\n%s", got.Ran, got.Plan)
	}
}

// TestOtherMajorRefusedInProcess: this process plays TensorRT 11's stand-in (installed by its
// first simulated build, here at the latest), so a simulated build of TensorRT 10 is out of
// order, and a major the stand-in does not play is an invalid argument.
func TestOtherMajorRefusedInProcess(t *testing.T) {
	b, err := NewBuild(BackendSim, options(t, nil))
	if err != nil {
		t.Fatalf("NewBuild of the default major: %v", err)
	}
	b.Close()
	_, err = NewBuild(BackendSim, options(t, &SimOptions{TensorRT: 10}))
	if e := asError(t, err, CodeState); !strings.Contains(e.Message, "plays TensorRT 11's stand-in already") {
		t.Errorf("message %q", e.Message)
	}
	_, err = NewBuild(BackendSim, options(t, &SimOptions{TensorRT: 12}))
	if e := asError(t, err, CodeInvalidArgument); e.Message != "the stand-in TensorRT plays TensorRT 10 and 11, not 12" {
		t.Errorf("message %q", e.Message)
	}
}

// TestCodeStrings: codes, errors and event kinds name themselves.
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

// TestSuccessfulBuild: a build with several builder threads crosses the boundary whole: one
// root on the thread that ran the build, the tree nested as TensorRT nests it, every tactic
// measured to its last step, graph nodes timed on builder threads of the stand-in's own, log
// lines, a plan naming each timed layer, the timings it added to a cache it was not given, and
// nothing dropped.
func TestSuccessfulBuild(t *testing.T) {
	o := options(t, &SimOptions{Threads: 3, Tactics: 3, Iterations: 2, Step: 100 * time.Microsecond, Seed: 1})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	tr := checkEvents(t, out.events)

	if len(tr.roots) != 1 || tr.roots[0].Steps != 6 || tr.roots[0].Thread != 1 {
		t.Errorf("roots %+v, want one of 6 steps on thread 1", tr.roots)
	}
	if got := tr.steps[phaseRoot]; !slices.Equal(got, seq(5)) {
		t.Errorf("root steps %v, want 0..4 (it finishes early, as TensorRT's)", got)
	}
	if tr.maxDepth < 7 {
		t.Errorf("deepest phase at depth %d, want 7 or more", tr.maxDepth)
	}
	for _, pc := range [][2]string{
		{phaseSubgraph, phaseRoot}, {phaseProfile, phaseSubgraph}, {phaseTactics, phaseProfile},
		{phaseNodes, phaseTactics}, {phaseEvaluate, phaseNodes}, {phaseMeasure, phaseEvaluate},
	} {
		if !tr.parents[pc[0]][pc[1]] {
			t.Errorf("%q never started under %q (parents %v)", pc[0], pc[1], tr.parents[pc[0]])
		}
	}
	if tr.nodeMeasures == 0 || tr.early[phaseMeasure] != 0 || tr.fullMeasures != tr.measures {
		t.Errorf("%d measurements (%d of graph nodes), %d complete, %d early", tr.measures, tr.nodeMeasures, tr.fullMeasures, tr.early[phaseMeasure])
	}
	if len(tr.nodeThreads) < 2 || tr.nodeThreads[1] {
		t.Errorf("graph nodes timed on threads %v: want several builder threads, not the run thread", tr.nodeThreads)
	}
	if len(tr.logs[SeverityInfo]) == 0 || len(tr.logs[SeverityError]) != 0 {
		t.Errorf("logs by severity: %v", tr.logs)
	}

	if !bytes.HasPrefix(out.plan, []byte(planMagic)) {
		t.Fatalf("plan starts %q", out.plan[:min(len(out.plan), 40)])
	}
	if out.res.PlanBytes != uint64(len(out.plan)) {
		t.Errorf("PlanBytes %d, file has %d", out.res.PlanBytes, len(out.plan))
	}
	layers := planLayers(out.plan)
	if len(layers) == 0 || !bytes.Contains(out.plan, []byte(fmt.Sprintf("\ntimed_nodes %d\n", len(layers)))) ||
		!bytes.Contains(out.plan, []byte("\nmodel convnet.onnx\n")) {
		t.Errorf("plan of %d timed layers:\n%s", len(layers), out.plan)
	}
	if out.res.TimingCacheUsed || out.res.CacheHits != 0 || out.res.CacheMisses == 0 || out.res.CancelSeen != 0 {
		t.Errorf("result %+v", out.res)
	}
	if n := len(cacheEntries(t, out.cache)); uint64(n) != out.res.CacheMisses {
		t.Errorf("the build's timing cache holds %d entries, %d reported added", n, out.res.CacheMisses)
	}
	if out.dropped.Total() != 0 {
		t.Errorf("dropped %v", out.dropped)
	}
}

// traceLines renders events one per line, without times, for golden files. The seconds an
// engine generation took are not pinned.
func traceLines(events []RawEvent) string {
	sev := []string{"INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE"}
	seconds := regexp.MustCompile(`in [0-9.]+ seconds`)
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
			fmt.Fprintf(&b, "%s %q", sev[ev.Severity], seconds.ReplaceAllString(ev.Name, "in S seconds"))
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

// TestGoldenBuild pins the whole stream of a build on the run thread alone, which is
// deterministic, and the plan and timing cache it writes; a second build from that cache pins
// the cached path (no graph node measured again).
func TestGoldenBuild(t *testing.T) {
	sim := &SimOptions{Tactics: 2, Iterations: 2, Step: 100 * time.Microsecond, Seed: 42}
	o := optionsFor(t, convReluModel(t), sim)
	// A relative model path keeps what names the model (a log line) the same on every run.
	t.Chdir(filepath.Dir(o.ModelPath))
	o.ModelPath = filepath.Base(o.ModelPath)
	o.Flags = FlagNoTF32 | FlagRefit
	o.WorkspaceBytes = 1 << 30
	o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: []int64{1, 3, 8, 8}, Opt: []int64{1, 3, 8, 8}, Max: []int64{1, 3, 8, 8}}}}}
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	golden(t, "build.trace", []byte(traceLines(out.events)))
	golden(t, "build.plan", out.plan)
	golden(t, "build.cache", out.cache)

	o2 := optionsFor(t, o.ModelPath, sim)
	o2.LogSeverity = SeverityInfo
	o2.TimingCache = cbufOf(t, out.cache)
	out2 := build(t, o2, nil)
	if out2.err != nil {
		t.Fatalf("Run from cache: %v", out2.err)
	}
	if tr := checkEvents(t, out2.events); tr.nodeMeasures != 0 {
		t.Errorf("%d tactics of graph nodes measured again with every one in the cache", tr.nodeMeasures)
	}
	golden(t, "build_cached.trace", []byte(traceLines(out2.events)))
	golden(t, "build_cached.plan", out2.plan)
}

// TestCancelManyThreads: a cancel from another goroutine while 16 builder threads measure
// tactics stops the build: it is seen at a step after it was asked for and before Run returned,
// the graph nodes' timing finishes early, nothing after it starts, and no plan is written.
func TestCancelManyThreads(t *testing.T) {
	// HoldAfter keeps the builder from timing every node before a busy machine runs the cancel:
	// after 40 tactics (well over 60 measuring steps) it waits for the cancel.
	o := options(t, &SimOptions{Threads: 16, Tactics: 6, Iterations: 4, Step: 2 * time.Millisecond, HoldAfter: 40})
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
	if tr.maxMeasuring < 4 || len(tr.nodeThreads) < 4 {
		t.Errorf("at most %d tactics were measured at once, on %d threads, with 16 threads", tr.maxMeasuring, len(tr.nodeThreads))
	}
	if tr.starts[phaseNodes] != 1 || tr.early[phaseNodes] != 1 || tr.starts[phaseReformats] != 0 {
		t.Errorf("%q started %d times, %d early; %q started %d times: want the one timing of the nodes cut short",
			phaseNodes, tr.starts[phaseNodes], tr.early[phaseNodes], phaseReformats, tr.starts[phaseReformats])
	}
	if out.res.PlanBytes != 0 || len(out.plan) != 0 {
		t.Errorf("cancelled build wrote %d bytes of plan (PlanBytes %d)", len(out.plan), out.res.PlanBytes)
	}
}

// serialLayers builds model on the run thread alone and returns the layers its plan times, in
// the order of the optimized graph (the order FailAt counts in).
func serialLayers(t *testing.T, model string) []string {
	t.Helper()
	out := build(t, optionsFor(t, model, quick()), nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	layers := planLayers(out.plan)
	if len(layers) < 2 {
		t.Fatalf("plan of %d layers:\n%s", len(layers), out.plan)
	}
	return layers
}

// ptr returns a pointer to a copy of v (SimOptions.FailAt and AbortAt).
func ptr[T any](v T) *T { return &v }

// TestFailPhase: a build made to fail fails as TensorRT does, with the error TensorRT reports
// for it (the node it could not time, or an assertion outside node timing), in the status and
// as an ERROR log line, and writes no plan; a failure picked by place (FailAt) names that node.
func TestFailPhase(t *testing.T) {
	model := testmodels.Bundled(t, "convnet.onnx")
	layers := serialLayers(t, model)
	tests := []struct {
		name    string
		sim     SimOptions
		message string
	}{
		{"node evaluation", SimOptions{FailPhase: phaseEvaluate}, noImplementation},
		{"measurement", SimOptions{FailPhase: phaseMeasure}, noImplementation},
		{"first node", SimOptions{FailAt: ptr(0.0)}, noImplementation + layers[0] + ".)"},
		{"last node", SimOptions{FailAt: ptr(1.0)}, noImplementation + layers[len(layers)-1] + ".)"},
		{"profile costs", SimOptions{FailPhase: phaseProfile}, "Error Code 2: Internal Error (Assertion failed: Computing profile costs could not complete.)"},
		{"root", SimOptions{FailPhase: phaseRoot}, "Error Code 2: Internal Error (Assertion failed: Building engine could not complete.)"},
		{"glob", SimOptions{FailPhase: "Timing*"}, "Error Code 2: Internal Error (Assertion failed: Timing tactics could not complete.)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := tt.sim
			sim.Threads, sim.Tactics, sim.Iterations, sim.Step = 4, 2, 2, 10*time.Microsecond
			out := build(t, optionsFor(t, model, &sim), nil)
			e := asError(t, out.err, CodeBuildFailed)
			if !strings.HasPrefix(e.Message, "TensorRT could not build the engine: ") || !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q, want TensorRT's error %q", e.Message, tt.message)
			}
			tr := checkEvents(t, out.events)
			if !slices.ContainsFunc(tr.logs[SeverityError], func(l string) bool { return strings.Contains(l, tt.message) }) {
				t.Errorf("no ERROR log line with %q; errors: %q", tt.message, tr.logs[SeverityError])
			}
			if len(out.plan) != 0 || out.res.PlanBytes != 0 {
				t.Errorf("failed build wrote a plan")
			}
		})
	}
}

// TestEarlyPhase: phases set to finish early report only the first half of their steps and
// finish before their last; no other phase finishes early more often than in a build without
// the setting, and the build still writes its plan of every layer.
func TestEarlyPhase(t *testing.T) {
	const tactics, iterations = 2, 4
	sim := func(early string) *SimOptions {
		return &SimOptions{Tactics: tactics, Iterations: iterations, Step: 10 * time.Microsecond, EarlyPhase: early}
	}
	base := build(t, options(t, sim("")), nil)
	if base.err != nil {
		t.Fatalf("Run: %v", base.err)
	}
	baseTree := checkEvents(t, base.events)
	tests := []struct {
		phase string
		check func(t *testing.T, tr tree)
	}{
		{phaseNodes, func(t *testing.T, tr tree) {
			if tr.nodeMeasures != baseTree.nodeMeasures {
				t.Errorf("%d tactics of graph nodes measured, %d without the setting: it only cuts the reports", tr.nodeMeasures, baseTree.nodeMeasures)
			}
		}},
		{phaseMeasure, func(t *testing.T, tr tree) {
			if tr.early[phaseMeasure] != tr.measures || tr.fullMeasures != 0 || tr.measures != baseTree.measures {
				t.Errorf("%d early and %d full of %d measurements (%d without the setting), want all early", tr.early[phaseMeasure], tr.fullMeasures, tr.measures, baseTree.measures)
			}
			want := 0
			for _, p := range tr.finished {
				if p.name == phaseMeasure {
					want += max(1, p.steps/2)
				}
			}
			if n := len(tr.steps[phaseMeasure]); n != want {
				t.Errorf("%d measuring steps, want %d: half of each", n, want)
			}
		}},
		{phaseRoot, func(t *testing.T, tr tree) {
			if got := tr.steps[phaseRoot]; !slices.Equal(got, seq(3)) {
				t.Errorf("root steps %v, want [0 1 2]", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			out := build(t, options(t, sim(tt.phase)), nil)
			if out.err != nil {
				t.Fatalf("Run: %v", out.err)
			}
			tr := checkEvents(t, out.events)
			if tr.starts[tt.phase] == 0 || tr.early[tt.phase] != tr.starts[tt.phase] {
				t.Errorf("%q started %d times, finished early %d times; want every one early", tt.phase, tr.starts[tt.phase], tr.early[tt.phase])
			}
			for _, p := range tr.finished {
				if p.name == tt.phase && p.last >= max(1, p.steps/2) {
					t.Errorf("%q of %d steps reported step %d, past the first half", p.name, p.steps, p.last)
				}
			}
			for name, n := range tr.early {
				if name != tt.phase && n != baseTree.early[name] {
					t.Errorf("%q finished early %d times, %d without the setting", name, n, baseTree.early[name])
				}
			}
			if uint64(len(out.plan)) != out.res.PlanBytes || !slices.Equal(planLayers(out.plan), planLayers(base.plan)) {
				t.Errorf("plan of %d bytes, PlanBytes %d, layers %q, want %q", len(out.plan), out.res.PlanBytes, planLayers(out.plan), planLayers(base.plan))
			}
			tt.check(t, tr)
		})
	}
}

// TestSilentStretch: the builder may report nothing for a long while (here at the start of the
// graph nodes' timing); the events around the silence are kept in order.
func TestSilentStretch(t *testing.T) {
	const silent = 300 * time.Millisecond
	o := options(t, &SimOptions{Threads: 2, Tactics: 1, Iterations: 1, Step: time.Microsecond, Silent: silent})
	out := build(t, o, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	i := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseStart && ev.Name == phaseNodes })
	if i < 0 || i+1 >= len(out.events) {
		t.Fatalf("no event after %q", phaseNodes)
	}
	if gap := out.events[i+1].Time - out.events[i].Time; gap < silent {
		t.Errorf("silence of %v after %q, want at least %v", gap, phaseNodes, silent)
	}
}

// TestLongStepDelaysCancel: a cancel that comes during one long step is seen only when that
// step completes, and nothing more is measured after it.
func TestLongStepDelaysCancel(t *testing.T) {
	const long = 400 * time.Millisecond
	o := options(t, &SimOptions{Tactics: 2, Iterations: 2, Step: time.Millisecond, LongStep: long})
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
		t.Errorf("%d tactics measured, want the 1 the cancel came in", tr.measures)
	}
}

// TestIgnoreCancel: a builder that does not honour the cancel (stepComplete's false) still
// says it saw it, and builds on to a plan.
func TestIgnoreCancel(t *testing.T) {
	// The cancel comes as the root phase starts; the silence before the graph nodes' timing
	// keeps the builder from finishing before it arrives on a busy machine.
	o := options(t, &SimOptions{Tactics: 2, Iterations: 2, Step: 10 * time.Microsecond, IgnoreCancel: true, Silent: 300 * time.Millisecond})
	cancelled := false
	out := build(t, o, func(b *Build, ev RawEvent) {
		if !cancelled && ev.Kind == EventPhaseStart && !ev.HasParent {
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
	if tr.fullMeasures != tr.measures || tr.nodeMeasures == 0 || tr.starts[phaseNodes] != 2 {
		t.Errorf("%d of %d measurements complete, %d of graph nodes, %d timings of the nodes: want the whole build", tr.fullMeasures, tr.measures, tr.nodeMeasures, tr.starts[phaseNodes])
	}
	if out.res.PlanBytes == 0 || uint64(len(out.plan)) != out.res.PlanBytes {
		t.Errorf("plan %d bytes, PlanBytes %d", len(out.plan), out.res.PlanBytes)
	}
}

// TestLogSeverity: Options.LogSeverity forwards log lines up to its severity and no others;
// the error of a failed build is an ERROR line.
func TestLogSeverity(t *testing.T) {
	for sev := SeverityInternalError; sev <= SeverityVerbose; sev++ {
		t.Run(fmt.Sprint(sev), func(t *testing.T) {
			o := options(t, &SimOptions{Tactics: 1, Iterations: 1, Step: time.Microsecond, FailAt: ptr(0.5)})
			o.LogSeverity = sev
			out := build(t, o, nil)
			asError(t, out.err, CodeBuildFailed)
			tr := checkEvents(t, out.events)
			for s, lines := range tr.logs {
				if s > sev {
					t.Errorf("LogSeverity %d let through %d lines of severity %d", sev, len(lines), s)
				}
			}
			if errs := tr.logs[SeverityError]; sev >= SeverityError && (len(errs) != 1 || !strings.Contains(errs[0], noImplementation)) {
				t.Errorf("LogSeverity %d: errors logged %q, want TensorRT's one", sev, errs)
			}
			if sev >= SeverityInfo && len(tr.logs[SeverityInfo]) == 0 {
				t.Errorf("LogSeverity %d: no INFO lines", sev)
			}
			if sev >= SeverityVerbose && len(tr.logs[SeverityVerbose]) == 0 {
				t.Errorf("LogSeverity %d: no VERBOSE lines", sev)
			}
		})
	}
}

// TestInvalidOptions: NewBuild refuses each malformed option, and each setting of the stand-in
// it cannot take, with CodeInvalidArgument and one line that says which.
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
		{"threads", func(t *testing.T, o *Options) { o.Sim.Threads = 257 }, `trtfake setting threads: bad value "257"`},
		{"threads overflow", func(t *testing.T, o *Options) { o.Sim.Threads = 1 << 40 }, `trtfake setting threads: bad value "1099511627776"`},
		{"negative threads", func(t *testing.T, o *Options) { o.Sim.Threads = -1 }, `trtfake setting threads: bad value "-1"`},
		{"tactics", func(t *testing.T, o *Options) { o.Sim.Tactics = -1 }, `trtfake setting tactics: bad value "-1"`},
		{"iterations", func(t *testing.T, o *Options) { o.Sim.Iterations = 10001 }, `trtfake setting iterations: bad value "10001"`},
		{"step", func(t *testing.T, o *Options) { o.Sim.Step = -time.Second }, `trtfake setting step: bad value "-1000000000ns"`},
		{"hold after", func(t *testing.T, o *Options) { o.Sim.HoldAfter = -1 }, `trtfake setting hold-after: bad value "-1"`},
		{"fail at", func(t *testing.T, o *Options) { o.Sim.FailAt = ptr(1.5) }, `trtfake setting fail-at: bad value "1.5"`},
		{"regime", func(t *testing.T, o *Options) { o.Sim.Regime = "rnn" }, `trtfake setting regime: bad value "rnn"`},
		{"TensorRT major", func(t *testing.T, o *Options) { o.Sim.TensorRT = 9 }, "the stand-in TensorRT plays TensorRT 10 and 11, not 9"},
		{"NUL in a phase", func(t *testing.T, o *Options) { o.Sim.FailPhase = "a\x00" }, "stand-in settings"},
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

// TestModelUnreadable: a model that is not there fails Run with CodeIO and the system's reason,
// after a well-formed (empty) stream.
func TestModelUnreadable(t *testing.T) {
	o := options(t, quick())
	o.ModelPath = filepath.Join(testDir(t), "missing.onnx")
	out := build(t, o, nil)
	e := asError(t, out.err, CodeIO)
	if want := "cannot read model " + o.ModelPath + ": " + noSuchFileText; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	checkEvents(t, out.events)
}

// TestLifecycle: each method refuses to be called out of order (the cache before Run, Run
// twice, anything but Cancel and Close after Close), and Drain keeps saying done at once once
// the build is over.
func TestLifecycle(t *testing.T) {
	b, err := NewBuild(BackendSim, options(t, quick()))
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
	// After done, Drain says so at once however long it may wait: were it to wait for its
	// timeout, this test would hang (for an hour, past the test binary's timeout).
	evs, done, _, err := b.Drain(nil, time.Hour)
	if err != nil || !done || len(evs) != 0 {
		t.Errorf("Drain after done: %d events, done %v, %v", len(evs), done, err)
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

// TestDrainReusesDst: Drain appends to dst[:0], so a caller's buffer is reused; the first
// event comes from the thread that ran the build.
func TestDrainReusesDst(t *testing.T) {
	b, err := NewBuild(BackendSim, options(t, quick()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Run(); err != nil {
		t.Fatal(err)
	}
	dst := make([]RawEvent, 3, defaultBatchEvents) // room for the largest batch
	got, _, _, err := b.Drain(dst, time.Second)
	if err != nil || len(got) == 0 {
		t.Fatalf("Drain: %d events, %v", len(got), err)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("Drain did not append to dst[:0]")
	}
	if got[0].Thread != 1 {
		t.Errorf("first event %+v, want it from thread 1", got[0])
	}
}

// TestConcurrentDrainRefused: a second Drain while one waits is refused with CodeState, and
// the waiting one is ended by the build's first events.
func TestConcurrentDrainRefused(t *testing.T) {
	b, err := NewBuild(BackendSim, options(t, quick()))
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

// eventCounts counts the progress events of a stream by kind and phase name: what does not
// depend on how builder threads interleave.
func eventCounts(events []RawEvent) map[string]int {
	n := map[string]int{}
	for _, ev := range events {
		if ev.Kind != EventLog {
			n[ev.Kind.String()+" "+ev.Name]++
		}
	}
	return n
}

// TestSmallBatches drains through a batch of three events, so that the queue hands one swap
// out over many calls, and checks that nothing is lost or reordered: the stream is well formed
// and holds the events of a build drained in large batches.
func TestSmallBatches(t *testing.T) {
	sim := func() *SimOptions {
		return &SimOptions{Threads: 4, Tactics: 3, Iterations: 2, Step: 20 * time.Microsecond}
	}
	out := buildWith(t, options(t, sim()), 3, defaultBatchText, nil)
	if out.err != nil {
		t.Fatalf("Run: %v", out.err)
	}
	checkEvents(t, out.events)
	whole := build(t, options(t, sim()), nil)
	if whole.err != nil {
		t.Fatalf("Run: %v", whole.err)
	}
	if got, want := eventCounts(out.events), eventCounts(whole.events); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events drained 3 at a time:\n%v\nin large batches:\n%v", got, want)
	}
	if out.dropped.Total() != 0 {
		t.Errorf("dropped %v", out.dropped)
	}
}

// TestTextTruncation checks both cuts: texts longer than TRTB_NAME_MAX in the queue, and
// events whose text does not fit an empty batch in drain. Neither may split a UTF-8 sequence.
// The long text is TensorRT's error for a node whose name is 6000 bytes of 'é'.
func TestTextTruncation(t *testing.T) {
	long := strings.Repeat("é", 3000)
	model := reluModel(t, long)
	sim := func() *SimOptions {
		return &SimOptions{Tactics: 1, Iterations: 1, Step: time.Microsecond, FailAt: ptr(0.0)}
	}
	full := noImplementation + long + ".)"
	// errorLine finds the ERROR line of the failure.
	errorLine := func(t *testing.T, events []RawEvent) string {
		t.Helper()
		i := slices.IndexFunc(events, func(ev RawEvent) bool {
			return ev.Kind == EventLog && ev.Severity == SeverityError && strings.Contains(ev.Name, "Error Code")
		})
		if i < 0 {
			t.Fatal("no ERROR line of the failure")
		}
		return events[i].Name
	}
	var line string
	t.Run("queue", func(t *testing.T) {
		out := build(t, optionsFor(t, model, sim()), nil)
		e := asError(t, out.err, CodeBuildFailed)
		checkEvents(t, out.events)
		line = errorLine(t, out.events)
		if len(line) > 4096 || len(line) < 4093 || !utf8.ValidString(line) || !strings.Contains(line, noImplementation+"éé") || !strings.Contains(full, line[strings.Index(line, noImplementation):]) {
			t.Errorf("ERROR line cut to %d bytes (valid UTF-8: %v): %.120q", len(line), utf8.ValidString(line), line)
		}
		// The status is cut too, to TRTB_MESSAGE_MAX.
		if len(e.Message) > 2047 || len(e.Message) < 2044 || !utf8.ValidString(e.Message) {
			t.Errorf("status message of %d bytes (valid UTF-8: %v)", len(e.Message), utf8.ValidString(e.Message))
		}
	})
	t.Run("drain", func(t *testing.T) {
		if line == "" {
			t.Skip("the queue's cut was not found")
		}
		// A batch of text capacity that ends inside the first 'é' of the ERROR line.
		textCap := strings.Index(line, "é") + 1
		out := buildWith(t, optionsFor(t, model, sim()), 64, textCap, nil)
		asError(t, out.err, CodeBuildFailed)
		sawCut := false
		for _, ev := range out.events {
			if len(ev.Name)+len(ev.Parent) > textCap || !utf8.ValidString(ev.Name) || !utf8.ValidString(ev.Parent) {
				t.Fatalf("event text %q + %q does not fit %d bytes of valid UTF-8", ev.Name, ev.Parent, textCap)
			}
			if ev.Kind == EventLog && ev.Severity == SeverityError && strings.HasPrefix(line, ev.Name) {
				sawCut = sawCut || len(ev.Name) == textCap-1 // the 'é' whose first byte fits is dropped whole
			}
		}
		if !sawCut {
			t.Error("the ERROR line was not cut on a UTF-8 boundary")
		}
	})
}

// FuzzTimingCache feeds arbitrary bytes to a build as its timing cache. The build must never
// fail because of it; a cache it does not use is reported with a warning; and the cache it
// saves is canonical: fed back, it is used, spares every graph node's timing and comes back
// unchanged.
func FuzzTimingCache(f *testing.F) {
	header := cacheMagic + "tensorrt 11.1\ndevice sm_90\n"
	f.Add([]byte(""))
	f.Add([]byte("garbage"))
	f.Add([]byte(cacheMagic))
	f.Add([]byte(strings.TrimSuffix(cacheMagic, "\n")))
	f.Add([]byte(header))
	f.Add([]byte(header + "0123456789abcdef0123456789abcdef\t00000000000000aa\t5000\n"))
	f.Add([]byte(header + "0123456789abcdef0123456789abcdef\t00000000000000aa\t5000\r\n\nzz\t99\t1\n"))
	f.Add([]byte(header + "0123456789abcdef0123456789abcdef\tx\t5\n"))
	f.Add([]byte(header + "0123456789abcdef0123456789abcdef\t1\t18446744073709551616\n"))
	f.Add([]byte(strings.Replace(header, "tensorrt 11.1", "tensorrt 9.0", 1)))
	f.Add([]byte(strings.Replace(header, "sm_90", "sm_80", 1)))
	model := reluModel(f, "act")
	run := func(t *testing.T, cache []byte) (outcome, tree) {
		o := optionsFor(t, model, quick())
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
		if len(cache) > 0 && !out.res.TimingCacheUsed && len(tr.logs[SeverityWarning]) == 0 {
			t.Fatalf("cache %q not used, and no warning says so", cache)
		}
		if out.res.CacheHits != 0 {
			t.Fatalf("%d cache hits: TensorRT tells none", out.res.CacheHits)
		}
		if !bytes.HasPrefix(out.cache, []byte(cacheMagic)) {
			t.Fatalf("saved cache %q", out.cache)
		}
		again, tr2 := run(t, out.cache)
		if !again.res.TimingCacheUsed || again.res.CacheMisses != 0 || tr2.nodeMeasures != 0 {
			t.Fatalf("saved cache %q not fully used: %+v, %d tactics of graph nodes measured", out.cache, again.res, tr2.nodeMeasures)
		}
		if !bytes.Equal(again.cache, out.cache) {
			t.Fatalf("cache changed on a second pass:\n%q\n%q", out.cache, again.cache)
		}
	})
}

// TestTimingCache: a build saves what it timed; a build given that cache times no graph node
// again and chooses the same tactics; one given part of it times only the rest (fewer
// CacheMisses); a cache it cannot use is reported and replaced by what it learns; a cancelled
// or failed build saves what it timed before it stopped; and a build without a timing cache
// neither reads nor saves one.
func TestTimingCache(t *testing.T) {
	sim := func() *SimOptions {
		return &SimOptions{Threads: 3, Tactics: 3, Iterations: 2, Step: 10 * time.Microsecond, Seed: 9}
	}
	first := build(t, options(t, sim()), nil)
	if first.err != nil {
		t.Fatalf("first build: %v", first.err)
	}
	firstTree := checkEvents(t, first.events)
	if first.res.TimingCacheUsed || first.res.CacheHits != 0 || first.res.CacheMisses == 0 {
		t.Fatalf("first build result %+v", first.res)
	}
	entries := cacheEntries(t, first.cache)
	if uint64(len(entries)) != first.res.CacheMisses {
		t.Fatalf("first cache of %d entries, %d timings added:\n%s", len(entries), first.res.CacheMisses, first.cache)
	}
	lines := strings.SplitAfter(string(first.cache), "\n")
	header, body := lines[:3], lines[3:len(lines)-1]
	if !slices.IsSorted(body) {
		t.Errorf("cache entries are not sorted:\n%s", first.cache)
	}
	choices := planChoices(first.plan)

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
		if !out.res.TimingCacheUsed || out.res.CacheHits != 0 || out.res.CacheMisses != 0 || tr.nodeMeasures != 0 {
			t.Errorf("result %+v, %d tactics of graph nodes measured", out.res, tr.nodeMeasures)
		}
		if got := planChoices(out.plan); !slices.Equal(got, choices) {
			t.Errorf("tactics chosen from the cache differ:\n%q\n%q", got, choices)
		}
		if !bytes.Equal(out.cache, first.cache) {
			t.Errorf("cache changed although nothing was timed:\n%s", out.cache)
		}
	})
	t.Run("partial", func(t *testing.T) {
		kept := len(body) / 2
		partial := strings.Join(header, "") + strings.Join(body[:kept], "")
		out, tr := withCache(t, []byte(partial), 0)
		if out.err != nil {
			t.Fatal(out.err)
		}
		if !out.res.TimingCacheUsed || out.res.CacheMisses != uint64(len(body)-kept) || tr.nodeMeasures == 0 || tr.nodeMeasures >= firstTree.nodeMeasures {
			t.Errorf("result %+v, %d tactics of graph nodes measured (%d without a cache); want the %d missing timed", out.res, tr.nodeMeasures, firstTree.nodeMeasures, len(body)-kept)
		}
		if !bytes.Equal(out.cache, first.cache) {
			t.Errorf("cache after relearning the missing half:\n%s", out.cache)
		}
	})
	for name, bad := range map[string]string{
		"garbage":           "\x00\x01not a cache at all",
		"bad line":          strings.Join(header, "") + "layer_0\tx\t5\n",
		"engine":            "ftrt\x00\x00\x00\x01",
		"another TensorRT":  strings.Replace(string(first.cache), "\ntensorrt ", "\ntensorrt 9.", 1),
		"another generator": strings.Replace(string(first.cache), cacheMagic, "TRTBUILD-SIM-TIMING-CACHE 1\n", 1),
	} {
		t.Run(name, func(t *testing.T) {
			out, tr := withCache(t, []byte(bad), 0)
			if out.err != nil {
				t.Fatal(out.err)
			}
			if out.res.TimingCacheUsed || len(tr.logs[SeverityWarning]) == 0 || out.res.CacheMisses != first.res.CacheMisses {
				t.Errorf("result %+v; warnings %q", out.res, tr.logs[SeverityWarning])
			}
			if !bytes.Equal(out.cache, first.cache) {
				t.Errorf("cache is not what was learned:\n%s", out.cache)
			}
		})
	}
	t.Run("another device", func(t *testing.T) {
		other := []byte(strings.Replace(string(first.cache), "\ndevice sm_90\n", "\ndevice sm_80\n", 1))
		out, tr := withCache(t, other, 0)
		if out.err != nil || !out.res.TimingCacheUsed || out.res.CacheMisses != 0 ||
			!slices.ContainsFunc(tr.logs[SeverityWarning], func(l string) bool { return strings.Contains(l, "another device") }) {
			t.Errorf("a cache of another device: %v, %+v, warnings %q; want it used with a warning", out.err, out.res, tr.logs[SeverityWarning])
		}
		b, err := NewBuild(BackendSim, func() Options {
			o := options(t, sim())
			o.TimingCache, o.Flags = cbufOf(t, other), FlagStrictTimingCache
			return o
		}())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		_, err = b.Run()
		asError(t, err, CodeCacheRejected)
	})
	t.Run("cancelled", func(t *testing.T) {
		// On the run thread alone, the cancel comes once the first evaluation of a node has
		// finished (its timing is in the cache then); the builder holds after 5 tactics, in the
		// second evaluation, until the cancel comes, so that on a busy machine it cannot time
		// everything before.
		o := options(t, sim())
		o.Sim.Threads, o.Sim.HoldAfter = 0, 5
		steps := map[uint64]int{}
		cancelled := false
		out := build(t, o, func(b *Build, ev RawEvent) {
			if ev.Name != phaseEvaluate {
				return
			}
			switch ev.Kind {
			case EventStep:
				steps[ev.Thread] = ev.Step
			case EventPhaseFinish:
				if !cancelled && steps[ev.Thread] == o.Sim.Tactics-1 {
					cancelled = true
					b.Cancel()
				}
			}
		})
		asError(t, out.err, CodeCancelled)
		checkEvents(t, out.events)
		saved := cacheEntries(t, out.cache)
		if len(saved) == 0 || len(saved) >= len(entries) || uint64(len(saved)) != out.res.CacheMisses {
			t.Fatalf("%d entries saved, %d timings added, of the %d of a whole build:\n%s", len(saved), out.res.CacheMisses, len(entries), out.cache)
		}
		for k, v := range saved {
			if entries[k] != v {
				t.Errorf("saved entry %s = %s is not what a whole build times (%q)", k, v, entries[k])
			}
		}
	})
	t.Run("failed", func(t *testing.T) {
		o := options(t, sim())
		o.Sim.FailAt = ptr(1.0)
		out := build(t, o, nil)
		asError(t, out.err, CodeBuildFailed)
		saved := cacheEntries(t, out.cache)
		if len(saved) == 0 || len(saved) >= len(entries) || uint64(len(saved)) != out.res.CacheMisses {
			t.Fatalf("%d entries saved, %d timings added, of the %d of a whole build", len(saved), out.res.CacheMisses, len(entries))
		}
		for k, v := range saved {
			if entries[k] != v {
				t.Errorf("saved entry %s = %s is not what a whole build times (%q)", k, v, entries[k])
			}
		}
	})
	t.Run("disabled", func(t *testing.T) {
		out, tr := withCache(t, first.cache, FlagDisableTimingCache)
		if out.err != nil {
			t.Fatal(out.err)
		}
		// Without a cache, not even the build's own: the second timing pass measures again.
		if out.res.TimingCacheUsed || out.res.CacheHits != 0 || out.res.CacheMisses != 0 || out.cache != nil || tr.nodeMeasures <= firstTree.nodeMeasures {
			t.Errorf("result %+v, cache %q, %d tactics of graph nodes measured, %d with a cache of its own", out.res, out.cache, tr.nodeMeasures, firstTree.nodeMeasures)
		}
	})
}

// planChoices returns the timed layers of a plan with the tactic chosen for each and its
// time, sorted (builder threads finish layers in any order).
func planChoices(plan []byte) []string {
	var out []string
	for _, m := range planLayer.FindAllSubmatch(plan, -1) {
		out = append(out, string(bytes.Join(m[1:], []byte("\t"))))
	}
	slices.Sort(out)
	return out
}

// TestOneBuilderThreadByDefault: with Threads left 0, as TensorRT's IBuilder::setMaxThreads
// defaults to 1, every callback comes from the thread that called Run, and phases nest
// strictly: each starts inside the innermost open phase, each finish closes the phase started
// last, and each step is of an open phase.
func TestOneBuilderThreadByDefault(t *testing.T) {
	out := build(t, options(t, quick()), nil)
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
			if !slices.Contains(open, ev.Name) {
				t.Errorf("a step of %q while %v are open", ev.Name, open)
			}
		}
	}
	if len(open) != 0 {
		t.Errorf("never finished: %v", open)
	}
}

// TestTimingCacheKeysAreSignatures: timings belong to what a layer computes, its input shapes
// among it: the same model built for other shapes (another profile's opt batch) shares no
// timing with the first build's cache; built for the same shapes, it shares all.
func TestTimingCacheKeysAreSignatures(t *testing.T) {
	model := testmodels.Bundled(t, "dynamic_batch.onnx")
	run := func(batch int64, cache []byte) outcome {
		o := optionsFor(t, model, quick())
		o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "images",
			Min: []int64{1, 3, 64, 64}, Opt: []int64{batch, 3, 64, 64}, Max: []int64{16, 3, 64, 64}}}}}
		o.TimingCache = cbufOf(t, cache)
		out := build(t, o, nil)
		if out.err != nil {
			t.Fatalf("Run: %v", out.err)
		}
		return out
	}
	a := run(1, nil)
	if a.res.CacheMisses == 0 || len(a.cache) == 0 {
		t.Fatalf("first build: %d timings added, %d cache bytes", a.res.CacheMisses, len(a.cache))
	}
	if bytes.Contains(a.cache, []byte("features/conv")) {
		t.Errorf("the cache names a layer:\n%s", a.cache)
	}
	if other := run(8, a.cache); !other.res.TimingCacheUsed || other.res.CacheMisses != a.res.CacheMisses {
		t.Errorf("other input shapes: %d timings added, %d the first time; want all timed again", other.res.CacheMisses, a.res.CacheMisses)
	}
	if same := run(1, a.cache); !same.res.TimingCacheUsed || same.res.CacheMisses != 0 {
		t.Errorf("the same shapes: %d timings added; want none", same.res.CacheMisses)
	}
}

// TestSilencesAroundTiming: silences before the first phase (graph optimization) and while the
// engine is generated after timing are reported as nothing at all.
func TestSilencesAroundTiming(t *testing.T) {
	const pre, post = 200 * time.Millisecond, 300 * time.Millisecond
	o := options(t, &SimOptions{Tactics: 1, Iterations: 1, Step: time.Microsecond, PreSilent: pre, PostSilent: post})
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
	// The engine is generated after the profile costs are computed, before the subgraph's step.
	generated := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventStep && ev.Name == phaseSubgraph })
	costs := slices.IndexFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseFinish && ev.Name == phaseProfile })
	if generated < 1 || costs < 0 || costs > generated {
		t.Fatalf("%q finished at event %d, %q stepped at %d", phaseProfile, costs, phaseSubgraph, generated)
	}
	if gap := out.events[generated].Time - out.events[generated-1].Time; gap < post {
		t.Errorf("%v of silence after timing, want at least %v", gap, post)
	}
}

// TestSkipFinishOnStop: TensorRT does not promise phaseFinish after a cancel or a failure; in
// this mode the stand-in sends none once the build is stopping, and the stream ends with the
// phases open; by default every open phase finishes.
func TestSkipFinishOnStop(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprint("skip ", skip), func(t *testing.T) {
			o := options(t, &SimOptions{Tactics: 2, Iterations: 2, Step: time.Microsecond, FailAt: ptr(0.5), SkipFinishOnStop: skip})
			out := build(t, o, nil)
			e := asError(t, out.err, CodeBuildFailed)
			if !strings.Contains(e.Message, noImplementation) {
				t.Errorf("message %q", e.Message)
			}
			lastStep := -1
			for i, ev := range out.events {
				if ev.Kind == EventStep {
					lastStep = i
				}
			}
			var open []string
			finishes := 0
			for i, ev := range out.events {
				switch ev.Kind {
				case EventPhaseStart:
					open = append(open, ev.Name)
				case EventPhaseFinish:
					open = open[:len(open)-1]
					if i > lastStep {
						finishes++
					}
				}
			}
			if !skip {
				checkEvents(t, out.events)
				if finishes < 5 { // at least the evaluation, the nodes, the tactics, the costs, the subgraph, the root
					t.Errorf("%d phase finishes after the failure, want every open phase finished", finishes)
				}
				return
			}
			if finishes != 0 || len(open) < 5 {
				t.Errorf("%d phase finishes after the failure, %d phases left open (%q); want none finished", finishes, len(open), open)
			}
		})
	}
}

// TestFP16FailureInjection: TensorRT 11.2's failure of a 16-bit convolution it has no kernel
// for ("No low-precision conv kernel available ... Failing node: X"), unless X is kept in
// float32 by its name or its op type: the settings reach the stand-in, the list of KeepFP32
// whole.
func TestFP16FailureInjection(t *testing.T) {
	model := testmodels.Bundled(t, "fp16.onnx")
	for _, tt := range []struct {
		keep []string
		fail bool
	}{{nil, true}, {[]string{"relu"}, true}, {[]string{"relu", "conv"}, false}, {[]string{"Conv"}, false}} {
		t.Run(fmt.Sprint(tt.keep), func(t *testing.T) {
			o := optionsFor(t, model, &SimOptions{Tactics: 1, Iterations: 1, Step: time.Microsecond, FP16FailNode: "conv", KeepFP32: tt.keep})
			out := build(t, o, nil)
			if !tt.fail {
				if out.err != nil {
					t.Errorf("keep %q: %v", tt.keep, out.err)
				}
				return
			}
			e := asError(t, out.err, CodeBuildFailed)
			if !strings.Contains(e.Message, "No low-precision conv kernel available") ||
				!strings.Contains(e.Message, "Failing node: conv; ") ||
				!strings.Contains(e.Message, noImplementation+"conv") {
				t.Errorf("keep %q: message %q", tt.keep, e.Message)
			}
			if !slices.ContainsFunc(out.events, func(ev RawEvent) bool {
				return ev.Kind == EventLog && ev.Severity == SeverityError &&
					strings.HasPrefix(ev.Name, "No low-precision conv kernel available") && strings.HasSuffix(ev.Name, "Failing node: conv")
			}) {
				t.Errorf("keep %q: no ERROR line naming the failing node", tt.keep)
			}
		})
	}
}

// TestPhasePatterns: a phase pattern matches whole phase names, '*' standing for any run of
// characters.
func TestPhasePatterns(t *testing.T) {
	model := convReluModel(t)
	for _, tt := range []struct {
		pattern string
		fails   bool
	}{
		{phaseNodes, true},
		{"Timing*nodes", true},
		{"*graph*", true},
		{"Timing graph", false},
		{"*conv*", false},
		{"Measuring*", true},
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			out := build(t, optionsFor(t, model, &SimOptions{Tactics: 2, Iterations: 1, Step: time.Microsecond, FailPhase: tt.pattern}), nil)
			if failed := out.err != nil; failed != tt.fails {
				t.Errorf("pattern %q: failed %v (%v), want %v", tt.pattern, failed, out.err, tt.fails)
			}
		})
	}
}

// TestShimChecksShapesAgainstTheNetwork: the shim checks every given shape against the inputs
// TensorRT parsed before it makes a profile, so a build driven through the C ABI alone (no
// parent's preflight) is refused with one line naming the input and what to give instead.
func TestShimChecksShapesAgainstTheNetwork(t *testing.T) {
	model := testmodels.Bundled(t, "dynamic_batch.onnx") // images: batch x 3 x 64 x 64
	for _, tt := range []struct {
		name  string
		input shapes.Input
		want  string
	}{
		{"no such input", shapes.Input{Name: "pixels", Min: []int64{1, 3, 64, 64}, Opt: []int64{1, 3, 64, 64}, Max: []int64{1, 3, 64, 64}},
			"the model has no input named pixels; its inputs are: images"},
		{"another rank", shapes.Input{Name: "images", Min: []int64{1, 3, 64}, Opt: []int64{1, 3, 64}, Max: []int64{1, 3, 64}},
			"input images has rank 4 (?x3x64x64), but its shape has rank 3"},
		{"a fixed dimension given otherwise", shapes.Input{Name: "images", Min: []int64{1, 4, 64, 64}, Opt: []int64{1, 4, 64, 64}, Max: []int64{1, 4, 64, 64}},
			"input images is ?x3x64x64: dimension 1 is fixed at 3 and cannot be given as 4..4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := optionsFor(t, model, quick())
			o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{tt.input}}}
			out := build(t, o, nil)
			var nerr *Error
			if !errors.As(out.err, &nerr) || nerr.Code != CodeInvalidArgument || !strings.Contains(nerr.Message, tt.want) {
				t.Fatalf("Run: %v; want CodeInvalidArgument saying %q", out.err, tt.want)
			}
			if slices.ContainsFunc(out.events, func(ev RawEvent) bool { return ev.Kind == EventPhaseStart }) {
				t.Error("the build started although its shapes were refused")
			}
		})
	}
}

// TestTensorRTRefusals: when TensorRT refuses to make an object (null, an error logged) the
// build fails with one line naming what could not be made and TensorRT's error; a shape, a
// profile or a --max-aux-streams it refuses fails it as an invalid argument; a timing cache
// TensorRT will not serialize is not saved, with a warning, and the engine still is.
func TestTensorRTRefusals(t *testing.T) {
	for _, tt := range []struct {
		refuse  string
		dynamic bool // the dynamic_batch model with a profile (convnet's shapes are fixed)
		code    Code
		message string
	}{
		{"createInferBuilder", false, CodeUnavailable, "TensorRT could not create a builder: "},
		{"createNvOnnxParser", false, CodeUnavailable, "TensorRT could not create an ONNX parser"},
		{"IBuilder::createNetworkV2", false, CodeBuildFailed, "TensorRT could not create a network: "},
		{"IBuilder::createBuilderConfig", false, CodeBuildFailed, "TensorRT could not create a builder config: "},
		{"IBuilder::createOptimizationProfile", true, CodeBuildFailed, "TensorRT could not create an optimization profile: "},
		{"IBuilderConfig::createTimingCache", false, CodeBuildFailed, "TensorRT could not create a timing cache: "},
		{"IBuilder::buildSerializedNetwork*", false, CodeOutOfMemory, "TensorRT ran out of memory: "},
		{"ITimingCache::serialize", false, CodeOK, ""},
		{"IOptimizationProfile::setDimensions", true, CodeInvalidArgument, "TensorRT refused the shape of input images: "},
		{"IBuilderConfig::addOptimizationProfile", true, CodeInvalidArgument, "optimization profile 0 is not valid: "},
		{"IBuilderConfig::setMaxAuxStreams", false, CodeInvalidArgument, "TensorRT refused --max-aux-streams 2: "},
	} {
		t.Run(tt.refuse, func(t *testing.T) {
			sim := quick()
			sim.Refuse = tt.refuse
			o := options(t, sim)
			o.MaxAuxStreams = 2
			if tt.dynamic {
				o = optionsFor(t, testmodels.Bundled(t, "dynamic_batch.onnx"), sim)
				o.Profiles = []shapes.Profile{{Inputs: []shapes.Input{{Name: "images",
					Min: []int64{1, 3, 64, 64}, Opt: []int64{4, 3, 64, 64}, Max: []int64{8, 3, 64, 64}}}}}
				o.MaxAuxStreams = 2
			}
			out := build(t, o, nil)
			if tt.code == CodeOK {
				if out.err != nil || out.res.PlanBytes == 0 {
					t.Fatalf("Run: %v, %d plan bytes; want the engine", out.err, out.res.PlanBytes)
				}
				tr := checkEvents(t, out.events)
				if len(out.cache) != 0 || !slices.ContainsFunc(tr.logs[SeverityWarning], func(l string) bool {
					return strings.Contains(l, "TensorRT returned an empty timing cache; it is not saved")
				}) {
					t.Errorf("cache %q, warnings %q; want none saved, and a warning saying so", out.cache, tr.logs[SeverityWarning])
				}
				return
			}
			var nerr *Error
			if !errors.As(out.err, &nerr) || nerr.Code != tt.code || !strings.Contains(nerr.Message, tt.message) ||
				!strings.Contains(nerr.Message, "the stand-in refuses it") {
				t.Fatalf("Run: %v; want code %v, %q and TensorRT's error", out.err, tt.code, tt.message)
			}
		})
	}
}
