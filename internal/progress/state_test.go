package progress

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestStateSetsEarlyOnce(t *testing.T) {
	st := NewState(BuildInfo{}, t0)
	batch := []Event{
		{Type: EventPhaseStart, Time: ms(0), ID: 1, Name: "a", Steps: 2},
		{Type: EventStep, Time: ms(1), ID: 1, Step: 0},
		{Type: EventPhaseFinish, Time: ms(2), ID: 1},
		{Type: EventPhaseStart, Time: ms(3), ID: 2, Name: "b", Steps: 1},
		{Type: EventStep, Time: ms(4), ID: 2, Step: 0},
		{Type: EventPhaseFinish, Time: ms(5), ID: 2},
	}
	st.Apply(batch, t0)
	if !batch[2].Early || batch[5].Early {
		t.Fatalf("early flags %v, %v; want true, false", batch[2].Early, batch[5].Early)
	}
}

// threads is a build with three builder threads timing one layer each under "Timing graph
// nodes", as the simulated builder runs them.
func threads() []Event {
	return []Event{
		{Type: EventPhaseStart, Time: ms(0), ID: 1, Name: "Building engine", Steps: 4, Thread: 1},
		{Type: EventPhaseStart, Time: ms(1), ID: 2, Parent: 1, Name: "Timing graph nodes", Steps: 415, Thread: 1},
		{Type: EventStep, Time: ms(2), ID: 2, Step: 5},
		{Type: EventPhaseStart, Time: ms(10), ID: 3, Parent: 2, Name: "Finding fastest tactic for /features/features.2/block/Relu", Steps: 6, Thread: 2},
		{Type: EventPhaseStart, Time: ms(11), ID: 4, Parent: 2, Name: "Finding fastest tactic for /features/features.3/block/block.0/block.0.0/Conv", Steps: 6, Thread: 3},
		{Type: EventPhaseStart, Time: ms(12), ID: 5, Parent: 2, Name: "Finding fastest tactic for /features/features.3/block/block.1/Add", Steps: 6, Thread: 4},
		{Type: EventPhaseStart, Time: ms(13), ID: 6, Parent: 3, Name: "Measuring tactic time", Steps: 4, Thread: 2},
	}
}

// TestFailureFollowsTheReportingThread fails the layer of thread 3 while the other threads
// end their phases in every order: the failure is where the error says, whichever thread
// ended last.
func TestFailureFollowsTheReportingThread(t *testing.T) {
	const msg = "Error Code 10: Internal Error (Could not find any implementation for node /features/features.3/block/block.0/block.0.0/Conv.)"
	orders := [][]int{{4, 6, 3, 5}, {6, 3, 5, 4}, {5, 6, 3, 4}}
	for _, order := range orders {
		st := NewState(BuildInfo{}, t0)
		st.Hinter = func([]string) string { return "a hint" }
		st.Apply(threads(), t0)
		st.Apply([]Event{{Type: EventLog, Time: ms(20), Severity: SeverityError, Message: msg}}, t0)
		for i, id := range order {
			st.Apply([]Event{{Type: EventPhaseFinish, Time: ms(21 + i), ID: id}}, t0)
		}
		res := st.End(Result{Status: StatusFailed, Error: msg}, t0)
		if res.Where == nil || res.Where.ID != 4 {
			t.Fatalf("order %v: where %+v, want phase 4", order, res.Where)
		}
		if got := res.Where.Path[len(res.Where.Path)-1]; !strings.HasSuffix(got, "block.0.0/Conv") {
			t.Errorf("order %v: path ends in %q", order, got)
		}
		if res.Hint != "a hint" {
			t.Errorf("hint %q", res.Hint)
		}
	}
}

// TestFailureWithoutANamedPhase falls back to the deepest open phase.
func TestFailureWithoutANamedPhase(t *testing.T) {
	st := NewState(BuildInfo{}, t0)
	st.Apply(threads()[:4], t0)
	res := st.End(Result{Status: StatusFailed, Error: "out of memory"}, t0)
	if res.Where == nil || res.Where.ID != 3 {
		t.Fatalf("where %+v, want phase 3", res.Where)
	}
}

// TestBudgetNamesTheStage: a time budget that ran out while three threads time layers names
// the stage they share, not one thread's newest phase.
func TestBudgetNamesTheStage(t *testing.T) {
	st := NewState(BuildInfo{}, t0)
	st.Apply(threads(), t0)
	now := t0.Add(10 * time.Second)
	got := st.Budget(10*time.Second, now)
	if want := `in "Timing graph nodes" (6/415, running for 10.0s)`; got != want {
		t.Errorf("budget %q, want %q", got, want)
	}
	// One thread: the chain is followed down while each phase has used the window.
	single := NewState(BuildInfo{}, t0)
	single.Apply(threads()[:4], t0)
	single.Apply([]Event{{Type: EventPhaseStart, Time: 9 * time.Second, ID: 7, Parent: 3, Name: "Measuring tactic time", Steps: 4}}, t0.Add(9*time.Second))
	if got := single.Budget(10*time.Second, now); !strings.Contains(got, "features.2/block/Relu") || strings.Contains(got, "Measuring") {
		t.Errorf("single-thread budget %q: want the layer, not the phase that started 1s ago", got)
	}
	// A silence: every open phase has used the window; the generic leaf is named with its layer.
	quiet := NewState(BuildInfo{}, t0)
	quiet.Apply(threads()[:4], t0)
	quiet.Apply([]Event{{Type: EventPhaseStart, Time: ms(20), ID: 7, Parent: 3, Name: "Measuring tactic time", Steps: 4}}, t0.Add(ms(20)))
	if got, want := quiet.Budget(10*time.Second, t0.Add(20*time.Second)), `in "Measuring tactic time" of "Finding fastest tactic for /features/features.2/block/Relu" (0/4, running for 20.0s)`; got != want {
		t.Errorf("stall budget %q, want %q", got, want)
	}
	if got := NewState(BuildInfo{}, t0).Budget(time.Second, now); got != "before any phase started" {
		t.Errorf("empty budget %q", got)
	}
}

// TestCancelStopsAtTheStageOfTheRequest: the phase named for a cancel is fixed when it is
// requested, not read from whichever phase the builder ended last.
func TestCancelStopsAtTheStageOfTheRequest(t *testing.T) {
	st := NewState(BuildInfo{}, t0)
	st.Apply(threads(), t0)
	st.Notice(Notice{Kind: NoticeCancelRequested, Message: "cancel"}, t0.Add(time.Second))
	for i, id := range []int{6, 3, 4, 5} {
		st.Apply([]Event{{Type: EventPhaseFinish, Time: ms(30 + i), ID: id}}, t0)
	}
	res := st.End(Result{Status: StatusCancelled}, t0.Add(2*time.Second))
	if res.Where == nil || res.Where.ID != 2 {
		t.Fatalf("where %+v, want phase 2", res.Where)
	}
	if !st.Stopping() || st.Cancel().Kind != NoticeCancelRequested {
		t.Errorf("cancel state %+v", st.Cancel())
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	st := NewState(BuildInfo{Model: "m"}, t0)
	events := threads()
	for i := 0; i < 10; i++ { // finished children beyond what a snapshot keeps
		id := 100 + i
		events = append(events,
			Event{Type: EventPhaseStart, Time: ms(14 + i), ID: id, Parent: 6, Name: "tactic", Steps: 1},
			Event{Type: EventPhaseFinish, Time: ms(14 + i), ID: id})
	}
	st.Apply(events, t0)
	snap := st.Snapshot()
	if got := snap.Tree.Get(6).Children; !reflect.DeepEqual(got, []int{107, 108, 109}) {
		t.Errorf("snapshot keeps children %v, want the newest three", got)
	}
	if snap.Tree.Open() != st.Tree().Open() || snap.Tree.Get(2).Open != 3 {
		t.Errorf("open counts differ")
	}
	st.Apply([]Event{{Type: EventStep, Time: ms(40), ID: 2, Step: 9}}, t0)
	if snap.Tree.Get(2).Done != 6 {
		t.Errorf("the snapshot changed with the state: done %d", snap.Tree.Get(2).Done)
	}
}

// layerBuild returns a build of n layers on threads builder threads, each layer timing
// tactics tactics, as the simulated builder reports it.
func layerBuild(n, threads, tactics int) []Event {
	evs := []Event{
		{Type: EventPhaseStart, ID: 1, Name: "Building engine", Steps: 1, Thread: 1},
		{Type: EventPhaseStart, ID: 2, Parent: 1, Name: "Timing graph nodes", Steps: n, Thread: 1},
	}
	id, at := 3, time.Duration(0)
	for l := 0; l < n; l += threads {
		var layers []int
		for k := 0; k < threads && l+k < n; k++ {
			evs = append(evs, Event{Type: EventPhaseStart, Time: at, ID: id, Parent: 2, Name: "Finding fastest tactic for /features/layer_" + strconv.Itoa(l+k) + "/Conv", Steps: tactics, Thread: uint64(2 + k)})
			layers = append(layers, id)
			id++
		}
		for tac := 0; tac < tactics; tac++ {
			for _, layer := range layers {
				at += time.Microsecond
				evs = append(evs, Event{Type: EventPhaseStart, Time: at, ID: id, Parent: layer, Name: "Measuring tactic time", Steps: 1},
					Event{Type: EventStep, Time: at, ID: id, Step: 0}, Event{Type: EventPhaseFinish, Time: at, ID: id},
					Event{Type: EventStep, Time: at, ID: layer, Step: tac})
				id++
			}
		}
		for _, layer := range layers {
			evs = append(evs, Event{Type: EventPhaseFinish, Time: at, ID: layer})
		}
		evs = append(evs, Event{Type: EventStep, Time: at, ID: 2, Step: min(l+threads, n) - 1})
	}
	return append(evs, Event{Type: EventPhaseFinish, Time: at, ID: 2}, Event{Type: EventPhaseFinish, Time: at, ID: 1})
}

// TestFoldingBoundsTheTree: however many layers a build has, the tree keeps a bounded number
// of phases, and counts every phase it folded away.
func TestFoldingBoundsTheTree(t *testing.T) {
	for _, n := range []int{100, 10000} {
		evs := layerBuild(n, 4, 6)
		st := NewState(BuildInfo{}, t0)
		for i := 0; i < len(evs); i += 256 {
			st.Apply(evs[i:min(i+256, len(evs))], t0)
		}
		tr := st.Tree()
		f := tr.Folded()
		total := 2 + n*7
		folded := 0
		if f != nil {
			folded = f.Count
		}
		if tr.Len()+folded != total {
			t.Errorf("%d layers: %d kept + %d folded phases, want %d in all", n, tr.Len(), folded, total)
		}
		if limit := 2 + 3*FoldKeep*7; tr.Len() > limit {
			t.Errorf("%d layers: the tree keeps %d phases, want at most %d", n, tr.Len(), limit)
		}
		if n == 10000 {
			if f == nil || len(f.Slowest) != FoldSlowest || len(f.Kinds) != 2 {
				t.Fatalf("folded %+v", f)
			}
			kinds := map[string]int{}
			for _, k := range f.Kinds {
				kinds[k.Kind] = k.Count
			}
			if kinds["Measuring tactic time"] == 0 || kinds["Finding fastest tactic for …"] == 0 {
				t.Errorf("kinds %v", kinds)
			}
		}
	}
}

// TestSecondAttempt: a worker that rebuilds a failed build sends the second attempt's phases
// after the first's (the first's closed early, IDs and clock continuing). The second attempt's
// failure is attributed to its own phase, though the first attempt's phase (with a longer
// name) is named by the first attempt's errors and by the final error's advice, and the hint
// sees only the second attempt's messages.
func TestSecondAttempt(t *testing.T) {
	const first = "/a/very/long/node/name/that/failed/first/Conv"
	const second = "/b/Conv"
	attempt := func(base, at int, node string) []Event {
		return []Event{
			{Type: EventPhaseStart, Time: ms(at), ID: base + 1, Name: "Building engine", Steps: 4, Thread: 1},
			{Type: EventPhaseStart, Time: ms(at + 1), ID: base + 2, Parent: base + 1, Name: "Timing graph nodes", Steps: 2, Thread: 1},
			{Type: EventPhaseStart, Time: ms(at + 2), ID: base + 3, Parent: base + 2, Name: "Finding fastest tactic for " + node, Steps: 6, Thread: 1},
			{Type: EventLog, Time: ms(at + 3), Severity: SeverityError, Message: "No low-precision conv kernel available. Failing node: " + node},
			// The worker ends what the builder left open, newest first.
			{Type: EventPhaseFinish, Time: ms(at + 4), ID: base + 3},
			{Type: EventPhaseFinish, Time: ms(at + 4), ID: base + 2},
			{Type: EventPhaseFinish, Time: ms(at + 4), ID: base + 1},
		}
	}
	var seen [][]string
	st := NewState(BuildInfo{}, t0)
	st.Hinter = func(m []string) string { seen = append(seen, m); return "h" }
	st.Apply(attempt(0, 0, first), t0)
	st.Apply([]Event{{Type: EventLog, Time: ms(4), Severity: SeverityWarning, Message: "rebuilding once"}}, t0)
	second2 := attempt(3, 10, second)
	st.Apply(second2[:3], t0)
	if p := st.Stage(0, t0); p == nil || p.ID != 6 {
		t.Fatalf("stage during the second attempt %+v, want phase 6", p)
	}
	if roots := st.Tree().Roots(); !reflect.DeepEqual(roots, []int{1, 4}) {
		t.Fatalf("roots %v, want [1 4]", roots)
	}
	if p := st.Tree().Get(4); !p.Rebuild || p.Label() != "Building engine (rebuild)" {
		t.Errorf("the second attempt's root: rebuild %v, label %q", p.Rebuild, p.Label())
	}
	st.Apply(second2[3:], t0)
	res := st.End(Result{Status: StatusFailed, Error: "Failing node: " + second + " (rebuilt once with " + first + " kept in float32)"}, t0)
	if res.Where == nil || res.Where.ID != 6 {
		t.Fatalf("where %+v, want phase 6 (the second attempt's)", res.Where)
	}
	if len(seen) != 1 {
		t.Fatalf("hinter called %d times", len(seen))
	}
	for _, m := range seen[0] {
		if strings.Contains(m, "Failing node: "+first) {
			t.Errorf("hint saw the first attempt's message %q", m)
		}
	}

	// One attempt whose root phases follow each other normally is one attempt.
	st = NewState(BuildInfo{}, t0)
	st.Apply([]Event{
		{Type: EventPhaseStart, Time: ms(0), ID: 1, Name: "Finding fastest tactic for " + first, Steps: 1},
		{Type: EventStep, Time: ms(1), ID: 1, Step: 0},
		{Type: EventPhaseFinish, Time: ms(2), ID: 1},
		{Type: EventLog, Time: ms(3), Severity: SeverityError, Message: "error in " + first},
		{Type: EventPhaseStart, Time: ms(4), ID: 2, Name: "Building engine", Steps: 1},
		{Type: EventPhaseFinish, Time: ms(5), ID: 2},
	}, t0)
	res = st.End(Result{Status: StatusFailed, Error: "failed"}, t0)
	if res.Where == nil || res.Where.ID != 1 {
		t.Fatalf("single attempt: where %+v, want phase 1", res.Where)
	}
}

// TestEndRecordsWhatBuiltTheEngine: the TensorRT version and GPU the worker reports with its
// result reach the build info, which reports read; a result without them keeps what was known.
func TestEndRecordsWhatBuiltTheEngine(t *testing.T) {
	st := NewState(BuildInfo{Model: "m.onnx", Backend: "tensorrt"}, t0)
	st.End(Result{Status: StatusBuilt, TensorRT: "10.16.0.72", GPU: "NVIDIA H200, compute capability 9.0"}, t0)
	if got := st.Info(); got.TensorRT != "10.16.0.72" || got.GPU != "NVIDIA H200, compute capability 9.0" {
		t.Errorf("Info() = %+v, want the worker's TensorRT and GPU", got)
	}
	st = NewState(BuildInfo{Model: "m.onnx", Backend: "sim", TensorRT: "kept"}, t0)
	st.End(Result{Status: StatusBuilt}, t0)
	if got := st.Info(); got.TensorRT != "kept" || got.GPU != "" {
		t.Errorf("Info() = %+v, want the info unchanged", got)
	}
}
