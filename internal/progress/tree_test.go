package progress

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestTreeApply(t *testing.T) {
	tr := NewTree()
	events := []Event{
		{Type: EventPhaseStart, Time: ms(0), ID: 1, Name: "Building engine", Steps: 4},
		{Type: EventPhaseStart, Time: ms(10), ID: 2, Parent: 1, Name: "Timing graph nodes", Steps: 3},
		{Type: EventStep, Time: ms(20), ID: 2, Step: 0},
		{Type: EventStep, Time: ms(30), ID: 2, Step: 7},                                    // beyond the range: clamped
		{Type: EventStep, Time: ms(35), ID: 2, Step: 0},                                    // backwards: ignored
		{Type: EventPhaseStart, Time: ms(40), ID: 3, Parent: 42, Name: "Orphan", Steps: 0}, // unknown parent, zero steps
		{Type: EventPhaseFinish, Time: ms(50), ID: 2},
		{Type: EventPhaseStart, Time: ms(60), ID: 4, Parent: 1, Name: "Timing graph nodes", Steps: 5}, // reused name
		{Type: EventStep, Time: ms(70), ID: 4, Step: 1},
		{Type: EventPhaseFinish, Time: ms(80), ID: 4},    // early: 2 of 5
		{Type: EventStep, Time: ms(90), ID: 4, Step: 4},  // after finish: ignored
		{Type: EventStep, Time: ms(90), ID: 99, Step: 4}, // unknown: ignored
		{Type: EventPhaseFinish, Time: ms(95), ID: 99},   // unknown: ignored
	}
	var early []bool
	for i := range events {
		tr.Apply(&events[i])
		if events[i].Type == EventPhaseFinish {
			early = append(early, events[i].Early)
		}
	}
	if got, want := tr.Roots(), []int{1, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
	checks := []struct {
		id                  int
		done, steps, depth  int
		finished, wantEarly bool
	}{
		{1, 0, 4, 0, false, false},
		{2, 3, 3, 1, true, false},
		{3, 0, 1, 0, false, false},
		{4, 2, 5, 1, true, true},
	}
	for _, c := range checks {
		p := tr.Get(c.id)
		if p.Done != c.done || p.Steps != c.steps || p.Depth != c.depth || p.Finished != c.finished || p.Early != c.wantEarly {
			t.Errorf("phase %d = done %d/%d depth %d finished %v early %v; want %d/%d depth %d finished %v early %v",
				c.id, p.Done, p.Steps, p.Depth, p.Finished, p.Early, c.done, c.steps, c.depth, c.finished, c.wantEarly)
		}
	}
	// The tree does not write into the events: the session's State derives Early, once.
	if !reflect.DeepEqual(early, []bool{false, false, false}) {
		t.Errorf("Tree.Apply changed the finish events' early flags: %v, want [false false false]", early)
	}
	if got := tr.Get(1).Open; got != 0 {
		t.Errorf("root has %d open children, want 0", got)
	}
	if tr.Open() != 2 || tr.Len() != 4 {
		t.Errorf("open %d len %d, want 2 and 4", tr.Open(), tr.Len())
	}
	if d := tr.Deepest(); d == nil || d.ID != 3 {
		t.Errorf("deepest open phase %v, want the orphan root 3 (started last among depth 0)", d)
	}
	var order []int
	tr.Walk(func(p *Phase) bool { order = append(order, p.ID); return true })
	if !reflect.DeepEqual(order, []int{1, 2, 4, 3}) {
		t.Errorf("walk order %v, want [1 2 4 3]", order)
	}
	aborted := tr.Abort(ms(100))
	if len(aborted) != 2 || !tr.Get(1).Aborted || tr.Open() != 0 {
		t.Errorf("abort closed %d phases (open now %d), want 2 and 0", len(aborted), tr.Open())
	}
	if got := tr.Get(1).Duration(ms(500)); got != ms(100) {
		t.Errorf("aborted root lasted %v, want 100ms", got)
	}
	if got := tr.Path(4); !reflect.DeepEqual(got, []string{"Building engine", "Timing graph nodes"}) {
		t.Errorf("path %v", got)
	}
}

func TestTreeChildOfFinishedParentIsRoot(t *testing.T) {
	tr := NewTree()
	for _, e := range []Event{
		{Type: EventPhaseStart, ID: 1, Name: "a", Steps: 1},
		{Type: EventPhaseFinish, ID: 1},
		{Type: EventPhaseStart, ID: 2, Parent: 1, Name: "late child", Steps: 1},
		{Type: EventPhaseStart, ID: 2, Name: "duplicate id", Steps: 1},
	} {
		tr.Apply(&e)
	}
	if p := tr.Get(2); p.Parent != 0 || p.Name != "late child" {
		t.Errorf("phase 2 = %+v, want a root named late child", p)
	}
}

// TestKindAndLayer: only names of a kind known to carry a layer name one; every other name,
// "for" or not, is its own kind.
func TestKindAndLayer(t *testing.T) {
	tests := []struct{ name, kind, layer string }{
		{"Finding fastest tactic for stem/conv1", "Finding fastest tactic for …", "stem/conv1"},
		{"Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to x", "Finding fastest tactic for …", "x"},
		{"Reformatting CopyNode for Output Tensor 1 to head/fc", "Reformatting CopyNode for …", "head/fc"},
		{"Preparing graph for optimization", "Preparing graph for optimization", ""},
		{"Evaluating tactic times", "Evaluating tactic times", ""},
		{"Computing costs for conv1", "Computing costs for conv1", ""},
		{"Timing graph nodes", "Timing graph nodes", ""},
	}
	for _, tc := range tests {
		if got := Kind(tc.name); got != tc.kind {
			t.Errorf("Kind(%q) = %q, want %q", tc.name, got, tc.kind)
		}
		if got := Layer(tc.name); got != tc.layer {
			t.Errorf("Layer(%q) = %q, want %q", tc.name, got, tc.layer)
		}
	}
}

// TestWrapperAndSpent: a phase one child fills, or whose stages fill it, is a wrapper and not
// among where the time went; a phase spread over repeated children is, and so are they.
func TestWrapperAndSpent(t *testing.T) {
	s := time.Second
	tr := NewTree()
	evs := []Event{
		{Type: EventPhaseStart, Time: 0, ID: 1, Name: "Building engine", Steps: 6},
		{Type: EventPhaseStart, Time: 0, ID: 2, Parent: 1, Name: "Building engine from subgraph", Steps: 1},
		{Type: EventPhaseStart, Time: 0, ID: 3, Parent: 2, Name: "Optimizing graph", Steps: 1},
		{Type: EventPhaseFinish, Time: 4 * s, ID: 3},
		{Type: EventPhaseStart, Time: 4 * s, ID: 4, Parent: 2, Name: "Timing graph nodes", Steps: 3},
		{Type: EventPhaseStart, Time: 4 * s, ID: 5, Parent: 4, Name: "Evaluating tactic times", Steps: 9},
		{Type: EventPhaseFinish, Time: 7 * s, ID: 5},
		{Type: EventPhaseStart, Time: 7 * s, ID: 6, Parent: 4, Name: "Evaluating tactic times", Steps: 9},
		{Type: EventPhaseFinish, Time: 10 * s, ID: 6},
		{Type: EventPhaseFinish, Time: 10 * s, ID: 4},
		{Type: EventPhaseFinish, Time: 10 * s, ID: 2}, // Optimizing graph 40 %, timing 60 %: stages
		{Type: EventPhaseFinish, Time: 11 * s, ID: 1}, // 10 of its 11 s are one child's
	}
	for i := range evs {
		tr.Apply(&evs[i])
	}
	for id, wrapper := range map[int]bool{1: true, 2: true, 3: false, 4: false, 5: false} {
		if got := tr.Get(id).Wrapper(tr.Last); got != wrapper {
			t.Errorf("phase %d: wrapper %v, want %v", id, got, wrapper)
		}
	}
	var got []string
	for _, sp := range tr.Spent() {
		got = append(got, fmt.Sprintf("%d %v", sp.ID, sp.Duration))
	}
	if want := "4 6s|3 4s|5 3s|6 3s"; strings.Join(got, "|") != want {
		t.Errorf("spent %s, want %s", strings.Join(got, "|"), want)
	}
	if sp := tr.Spent()[0]; sp.Self != 0 || !reflect.DeepEqual(sp.IDs, []int{1, 2, 4}) || sp.Generation != 1 {
		t.Errorf("spent[0] %+v", sp)
	}
}

// TestGenerations: root phases of one name are numbered, and named by their number after the
// first; a root phase of another name starts its own count.
func TestGenerations(t *testing.T) {
	tr := NewTree()
	for i, name := range []string{"Converting", "Building engine", "Building engine", "Building engine"} {
		tr.Apply(&Event{Type: EventPhaseStart, Time: ms(10 * i), ID: i + 1, Name: name, Steps: 1})
		tr.Apply(&Event{Type: EventPhaseFinish, Time: ms(10*i + 5), ID: i + 1})
	}
	var got []string
	for _, id := range tr.Roots() {
		got = append(got, tr.Get(id).Label())
	}
	if want := "Converting|Building engine|Building engine (generation 2)|Building engine (generation 3)"; strings.Join(got, "|") != want {
		t.Errorf("labels %s, want %s", strings.Join(got, "|"), want)
	}
}
