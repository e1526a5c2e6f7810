package progress_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/testtraces"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// These tests replay real TensorRT 10.16 and 11.0 progress (internal/testtraces) through the
// one state, each event applied at its own build time, as a build at real speed delivers it.

var start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// replay applies a fixture's events to a new State; at, when set, is called after each event
// with its index.
func replay(t *testing.T, name string, at func(st *progress.State, i int, e progress.Event)) (*progress.State, progress.Result) {
	t.Helper()
	tr := testtraces.Must(name)
	st := progress.NewState(tr.Info, start)
	st.Hinter = trt.Hint
	st.FailedNode = trt.FailedNode
	for i, e := range tr.Events {
		st.Apply([]progress.Event{e}, start.Add(e.Time))
		if at != nil {
			at(st, i, e)
		}
	}
	return st, st.End(*tr.Result, start.Add(tr.Result.Duration))
}

func last(path []string) string { return path[len(path)-1] }

// TestRealSpent: where the time went leads with the phases that took it, whatever their
// names: "Timing graph nodes" and the "Evaluating tactic times" of the most tactics on
// TensorRT 10.16, the one Myelin step on 11.0; never a phase that one child fills.
func TestRealSpent(t *testing.T) {
	type want struct {
		name string
		d    time.Duration
	}
	tests := []struct {
		fixture string
		first   []want
	}{
		{testtraces.TRT10161Paced, []want{{"Timing graph nodes", 28645 * time.Millisecond}, {"Evaluating tactic times", 8400 * time.Millisecond}}},
		{testtraces.TRT10161, []want{{"Timing graph nodes", 3951210 * time.Microsecond}, {"Optimizing graph", 1740030 * time.Microsecond}}},
		{testtraces.TRT10160, []want{{"Timing graph nodes", 1857360 * time.Microsecond}, {"Optimizing graph", 1740030 * time.Microsecond}}},
		{testtraces.TRT1100, []want{{"Evaluating tactic times", 4700003 * time.Microsecond}}},
		{testtraces.TRT1100Silent110, []want{{"Evaluating tactic times", 110000003 * time.Microsecond}}},
		{testtraces.TRT10161Opt5, []want{{"Timing graph nodes", 7902420 * time.Microsecond}, {"Evaluating tactic times", 7400003 * time.Microsecond}}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			st, _ := replay(t, tc.fixture, nil)
			spent := st.Tree().Spent()
			if len(spent) < len(tc.first) {
				t.Fatalf("%d phases where the time went", len(spent))
			}
			for i, w := range tc.first {
				if got := last(spent[i].Path); got != w.name || spent[i].Duration != w.d {
					t.Errorf("#%d: %q %v, want %q %v", i+1, got, spent[i].Duration, w.name, w.d)
				}
			}
			for _, s := range spent {
				switch last(s.Path) {
				case "Building engine", "Building engine from subgraph", "Computing profile costs", "Timing tactics":
					t.Errorf("%q (%v) is listed: one child, or its stages, took its time", last(s.Path), s.Duration)
				}
			}
		})
	}
}

// TestRealLeft: the time left of "Timing graph nodes", asked every 20 callbacks, holds the
// time the phase really still took in nearly every case on TensorRT 10.16's real step
// patterns, and is never given where it could not be honest: during the 11.0 Myelin step, or
// with fewer than five nodes timed.
func TestRealLeft(t *testing.T) {
	for _, name := range []string{testtraces.TRT10160, testtraces.TRT10161, testtraces.TRT10161Paced} {
		t.Run(name, func(t *testing.T) {
			tr := testtraces.Must(name)
			end := map[int]time.Duration{}
			for _, e := range tr.Events {
				if e.Type == progress.EventPhaseFinish {
					end[e.ID] = e.Time
				}
			}
			asked, in := 0, 0
			replay(t, name, func(st *progress.State, i int, e progress.Event) {
				if i%20 != 0 {
					return
				}
				l, ok := st.Left(start.Add(e.Time))
				if !ok {
					return
				}
				asked++
				if truth := end[l.Phase] - e.Time; truth >= l.Low && truth <= l.High {
					in++
				}
				if l.Low > l.High || l.Low < 0 {
					t.Fatalf("at %v: range %v–%v", e.Time, l.Low, l.High)
				}
			})
			if asked < 20 || float64(in) < 0.95*float64(asked) {
				t.Errorf("the range held the time left %d times of %d", in, asked)
			}
			t.Logf("the range held the time left %d times of %d", in, asked)
		})
	}
	for _, name := range []string{testtraces.TRT1100, testtraces.TRT1100Silent110} {
		t.Run(name, func(t *testing.T) {
			var prev time.Duration
			replay(t, name, func(st *progress.State, i int, e progress.Event) {
				// Every second of the silence before this event too.
				for at := prev; at <= e.Time; at += time.Second {
					if l, ok := st.Left(start.Add(at)); ok {
						t.Fatalf("at %v (%d nodes timed): an estimate %s", at, st.Snapshot().Pace.Nodes, l)
					}
				}
				prev = e.Time
			})
		})
	}
}

// TestRealSilent: during 11.0's Myelin step the state says how long TensorRT has been silent,
// and where it is: the open phases down to that one "Evaluating tactic times".
func TestRealSilent(t *testing.T) {
	checked := false
	replay(t, testtraces.TRT1100Silent110, func(st *progress.State, i int, e progress.Event) {
		if e.Type != progress.EventPhaseStart || e.Name != "Evaluating tactic times" || checked {
			return
		}
		checked = true
		now := start.Add(e.Time + 42*time.Second)
		if got := st.Silent(now); got != 42*time.Second {
			t.Errorf("silent %v, want 42s", got)
		}
		if got := st.Snapshot().Silent(now); got != 42*time.Second {
			t.Errorf("the snapshot: silent %v, want 42s", got)
		}
		var names []string
		for _, p := range st.Tree().Active() {
			names = append(names, p.Name)
		}
		want := "Building engine > Building engine from subgraph > Computing profile costs > Timing tactics > Timing graph nodes > Evaluating tactic times"
		if got := strings.Join(names, " > "); got != want {
			t.Errorf("active:\n%s\nwant:\n%s", got, want)
		}
	})
	if !checked {
		t.Fatal("no Myelin step")
	}
}

// TestRealGenerations: three root phases without an error between them are three engine
// generations of one build, not attempts.
func TestRealGenerations(t *testing.T) {
	st, res := replay(t, testtraces.TRT10161Opt5, nil)
	tree := st.Tree()
	var labels []string
	for _, id := range tree.Roots() {
		p := tree.Get(id)
		if p.Rebuild {
			t.Errorf("root %d is a rebuild", id)
		}
		labels = append(labels, p.Label())
	}
	want := "Building engine|Building engine (generation 2)|Building engine (generation 3)"
	if got := strings.Join(labels, "|"); got != want {
		t.Errorf("roots %s, want %s", got, want)
	}
	if res.Where != nil {
		t.Errorf("a built build has a where: %+v", res.Where)
	}
	if g := tree.Spent()[1].Generation; g != 2 {
		t.Errorf("the Myelin step's generation %d, want 2", g)
	}
}

// TestRealFailure: a build that TensorRT fails after finishing its phases names the deepest
// phase it was in and the node from TensorRT's error, never one from a phase name.
func TestRealFailure(t *testing.T) {
	_, res := replay(t, testtraces.TRT10161Failed, nil)
	w := res.Where
	if w == nil {
		t.Fatal("no where")
	}
	if got := strings.Join(w.Path[len(w.Path)-3:], " > "); got != "Timing graph nodes > Evaluating tactic times > Measuring tactic time" {
		t.Errorf("failed in %s", got)
	}
	if w.Node != "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)" {
		t.Errorf("node %q", w.Node)
	}
	if res.Hint == "" {
		t.Error("no hint")
	}
	// Without TensorRT's error texts there is no node: none is made up from phase names.
	tr := testtraces.Must(testtraces.TRT10161Failed)
	st := progress.NewState(tr.Info, start)
	st.FailedNode = trt.FailedNode
	var evs []progress.Event
	for _, e := range tr.Events {
		if e.Type != progress.EventLog {
			evs = append(evs, e)
		}
	}
	st.Apply(evs, start)
	res = st.End(progress.Result{Status: progress.StatusFailed, Error: "TensorRT could not build the engine"}, start)
	if res.Where == nil || res.Where.Node != "" {
		t.Errorf("where %+v", res.Where)
	}
}
