package progress

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// FoldKeep is how many finished children of a phase a Tree keeps in full. When a phase has
// twice as many, the older ones, each with its whole (finished) subtree, are folded into the
// tree's Folded totals: a build of 100,000 layers keeps a few hundred phases, not millions,
// and the parent's memory stays bounded whatever the layer count. Open phases and the newest
// finished children, which is what the views draw, are never folded.
const FoldKeep = 64

// FoldSlowest is how many of the longest folded phases Folded keeps by name and path.
const FoldSlowest = 16

// Folded is what a Tree keeps of the phases it folded: how many, totals per kind of phase,
// and the longest of them.
type Folded struct {
	Count int
	// Kinds totals the folded phases by Kind of their name, in the order first seen.
	Kinds []KindTotal
	// Slowest are the longest folded phases, longest first, at most FoldSlowest.
	Slowest []FoldedPhase
	index   map[string]int
}

// KindTotal sums the folded phases of one kind.
type KindTotal struct {
	Kind             string
	Count            int
	Total, Self, Max time.Duration
	Steps            int // steps completed, summed
	Early            int // how many ended before all their steps were reported
}

// FoldedPhase is one of the longest folded phases.
type FoldedPhase struct {
	ID       int
	Path     []string // names from the root down to the phase
	Start    time.Duration
	Duration time.Duration
	Self     time.Duration // Duration less the time covered by its children
	Done     int
	Steps    int
}

// Kind is what phases of this name have in common: for a name that names a layer (see Layer)
// the name up to its first " for " ("Finding fastest tactic for conv1" is of kind "Finding
// fastest tactic for …"); any other name is its own kind ("Preparing graph for optimization",
// "Evaluating tactic times").
func Kind(name string) string {
	if Layer(name) == "" {
		return name
	}
	if i := strings.Index(name, " for "); i >= 0 {
		return name[:i+len(" for ")] + "…"
	}
	return name
}

// Folded returns what the tree folded so far; nil if nothing.
func (t *Tree) Folded() *Folded { return t.folded }

// noteFold notes, as p's child finishes, the finished children of p to fold: all but the
// newest FoldKeep whose subtrees are finished, and not noted before. They are chosen here, at
// this event, so that what a tree folds follows from the events alone, however they were
// batched: a report made from a trace is the report of the live build.
func (t *Tree) noteFold(p *Phase) {
	kept := 0
	for i := len(p.Children) - 1; i >= 0; i-- {
		id := p.Children[i]
		c := t.phases[id]
		if t.folding[id] || !t.settled(c) {
			continue
		}
		if kept < FoldKeep {
			kept++
			continue
		}
		t.pending[p.ID] = append(t.pending[p.ID], id)
		t.folding[id] = true
	}
	p.doneKids = kept
}

// FoldPending folds now what the tree noted to fold before its next batch: a report of a
// finished build calls it, so that what it reads does not depend on where the last batch began.
func (t *Tree) FoldPending() {
	if len(t.pending) > 0 {
		t.foldPending()
	}
}

// foldPending folds the children noted by noteFold; it runs before the next batch is applied,
// so that every renderer has seen the events of the phases it folds.
func (t *Tree) foldPending() {
	for parent, ids := range t.pending {
		p := t.phases[parent]
		if p == nil {
			// Folded already, with its parent: so were these.
			for _, id := range ids {
				delete(t.folding, id)
			}
			continue
		}
		gone := make(map[int]bool, len(ids))
		for _, id := range ids {
			if q := t.phases[id]; q != nil {
				t.fold(q)
			}
			gone[id] = true
			delete(t.folding, id)
		}
		p.Children = slices.DeleteFunc(p.Children, func(id int) bool { return gone[id] })
	}
	clear(t.pending)
}

// settled reports whether q and everything under it has finished.
func (t *Tree) settled(q *Phase) bool {
	if !q.Finished || q.Open > 0 {
		return false
	}
	for _, id := range q.Children {
		if !t.settled(t.phases[id]) {
			return false
		}
	}
	return true
}

// fold adds q and its subtree to the totals and forgets them.
func (t *Tree) fold(q *Phase) {
	if t.folded == nil {
		t.folded = &Folded{index: make(map[string]int)}
	}
	f := t.folded
	spans := make([][2]time.Duration, 0, len(q.Children))
	for _, id := range q.Children {
		c := t.phases[id]
		spans = append(spans, [2]time.Duration{max(c.Start, q.Start), min(c.End, q.End)})
	}
	d := q.End - q.Start
	self := d - Covered(spans)
	kind := Kind(q.Name)
	i, ok := f.index[kind]
	if !ok {
		i = len(f.Kinds)
		f.index[kind] = i
		f.Kinds = append(f.Kinds, KindTotal{Kind: kind})
	}
	k := &f.Kinds[i]
	k.Count++
	k.Total += d
	k.Self += self
	k.Max = max(k.Max, d)
	k.Steps += q.Done
	if q.Early {
		k.Early++
	}
	f.Count++
	if len(f.Slowest) < FoldSlowest || d > f.Slowest[len(f.Slowest)-1].Duration {
		fp := FoldedPhase{ID: q.ID, Path: t.Path(q.ID), Start: q.Start, Duration: d, Self: self, Done: q.Done, Steps: q.Steps}
		at, _ := slices.BinarySearchFunc(f.Slowest, fp, func(a, b FoldedPhase) int {
			return cmp.Or(cmp.Compare(b.Duration, a.Duration), cmp.Compare(a.ID, b.ID))
		})
		f.Slowest = slices.Insert(f.Slowest, at, fp)
		if len(f.Slowest) > FoldSlowest {
			f.Slowest = f.Slowest[:FoldSlowest]
		}
	}
	for _, id := range q.Children {
		t.fold(t.phases[id])
	}
	q.Children = nil
	delete(t.phases, q.ID)
}

// Covered returns the length of the union of the intervals [start, end); empty or reversed
// intervals count nothing. It sorts spans in place.
func Covered(spans [][2]time.Duration) time.Duration {
	slices.SortFunc(spans, func(a, b [2]time.Duration) int { return cmp.Compare(a[0], b[0]) })
	var total, start, end time.Duration
	started := false
	for _, s := range spans {
		if s[1] <= s[0] {
			continue
		}
		switch {
		case !started:
			start, end, started = s[0], s[1], true
		case s[0] > end:
			total += end - start
			start, end = s[0], s[1]
		case s[1] > end:
			end = s[1]
		}
	}
	if started {
		total += end - start
	}
	return total
}
