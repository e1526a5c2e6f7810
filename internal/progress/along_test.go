package progress

import (
	"testing"
	"time"
)

// TestAlong: how far along a build is, for each shape of tree a build has.
func TestAlong(t *testing.T) {
	start := func(id, parent int, steps int) Event {
		return Event{Type: EventPhaseStart, ID: id, Parent: parent, Name: "p", Steps: steps}
	}
	step := func(id, n int) Event { return Event{Type: EventStep, ID: id, Step: n} }
	finish := func(id int) Event { return Event{Type: EventPhaseFinish, ID: id} }
	for _, tc := range []struct {
		name        string
		events      []Event
		built       bool
		done, total float64
		ok          bool
	}{
		{"no phase yet", nil, false, 0, 0, false},
		{"the root's first step", []Event{start(1, 0, 4)}, false, 0, 4, true},
		{"one step done", []Event{start(1, 0, 4), step(1, 0)}, false, 1, 4, true},
		{"half of an open child's steps count as half a step", []Event{start(1, 0, 4), step(1, 0), start(2, 1, 10), step(2, 4)}, false, 1.5, 4, true},
		{"a finished child counts nothing until its parent steps", []Event{start(1, 0, 4), start(2, 1, 10), step(2, 9), finish(2)}, false, 0, 4, true},
		{"ended early (TensorRT's root at 5 of 6) stays there", []Event{start(1, 0, 6), step(1, 4), finish(1)}, false, 5, 6, true},
		{"ended early, but built", []Event{start(1, 0, 6), step(1, 4), finish(1)}, true, 6, 6, true},
		{"a second root adds its steps after the first's", []Event{start(1, 0, 6), step(1, 4), finish(1), start(2, 0, 6), step(2, 0)}, false, 7, 12, true},
	} {
		tree := NewTree()
		for i := range tc.events {
			e := tc.events[i]
			e.Time = time.Duration(i) * time.Millisecond
			tree.Apply(&e)
		}
		done, total, ok := Along(tree, tc.built)
		if done != tc.done || total != tc.total || ok != tc.ok {
			t.Errorf("%s: %g of %g (%v), want %g of %g (%v)", tc.name, done, total, ok, tc.done, tc.total, tc.ok)
		}
	}
}
