package progress

import "time"

// Phase is one node of the phase tree.
type Phase struct {
	ID     int
	Parent int // 0 for a root phase, or when the reported parent was not active
	Name   string
	Depth  int // 0 for a root phase
	Thread uint64
	Steps  int // as reported at the start; at least 1
	Done   int // steps completed, within [0, Steps]
	Start  time.Duration
	End    time.Duration // valid when Finished
	// Finished is set when the phase ended; Early when that happened before all steps were
	// reported (TensorRT does this on errors, internal shortcuts and cancellation); Aborted when
	// the build ended while the phase was still open.
	Finished bool
	Early    bool
	Aborted  bool
	Children []int // in start order; children folded away (see FoldKeep) are left out
	// Open is the number of children that have started and not finished.
	Open int
	// doneKids counts the finished children since the last fold.
	doneKids int
}

// Duration returns how long the phase ran, measured up to now for a phase still running.
func (p *Phase) Duration(now time.Duration) time.Duration {
	if p.Finished {
		return p.End - p.Start
	}
	if now < p.Start {
		return 0
	}
	return now - p.Start
}

// Tree is the phase tree built from an event stream; a build's one tree is kept by its State,
// and every renderer reads that one. Events with an unknown phase ID are ignored; a phase whose
// parent is unknown becomes a root. Old finished phases are folded into totals (see FoldKeep).
// A Tree is not safe for concurrent use.
type Tree struct {
	phases map[int]*Phase
	roots  []int
	open   int
	live   map[int]struct{} // the phases not finished
	// pending are parents with enough finished children to fold some; folded is what
	// folding kept of them.
	pending map[int]struct{}
	folded  *Folded
	// batching holds folding back while State applies one batch (see beginBatch).
	batching bool
	// Last is the time of the newest event applied; LastProgress of the newest phase event.
	Last         time.Duration
	LastProgress time.Duration
}

// NewTree returns an empty tree.
func NewTree() *Tree {
	return &Tree{phases: make(map[int]*Phase), live: make(map[int]struct{}), pending: make(map[int]struct{})}
}

// Apply updates the tree with e and returns the phase it touched, or nil. It does not change
// e: whether a finished phase ended early is the phase's Early (State.Apply copies it into the
// event, once, for every renderer).
//
// Before it applies e it folds the old finished children of phases that have many (see
// FoldKeep): the phases of events applied before e stay until then, so a renderer handed a
// batch finds every phase of it in the tree.
func (t *Tree) Apply(e *Event) *Phase {
	if len(t.pending) > 0 && !t.batching {
		t.foldPending()
	}
	if e.Time > t.Last {
		t.Last = e.Time
	}
	switch e.Type {
	case EventPhaseStart:
		if _, dup := t.phases[e.ID]; dup || e.ID <= 0 {
			return nil
		}
		steps := e.Steps
		if steps < 1 {
			steps = 1
		}
		p := &Phase{ID: e.ID, Name: e.Name, Steps: steps, Start: e.Time, Thread: e.Thread}
		if parent, ok := t.phases[e.Parent]; ok && e.Parent != e.ID && !parent.Finished {
			p.Parent = parent.ID
			p.Depth = parent.Depth + 1
			parent.Children = append(parent.Children, p.ID)
			parent.Open++
		} else {
			t.roots = append(t.roots, p.ID)
		}
		t.phases[p.ID] = p
		t.live[p.ID] = struct{}{}
		t.open++
		t.progress(e.Time)
		return p
	case EventStep:
		p, ok := t.phases[e.ID]
		if !ok || p.Finished {
			return nil
		}
		// Steps are documented as the index of the completed step, in [0, Steps); some builds
		// have been seen reporting Steps itself. Clamp, and never move backwards.
		done := e.Step + 1
		if done > p.Steps {
			done = p.Steps
		}
		if done > p.Done {
			p.Done = done
		}
		t.progress(e.Time)
		return p
	case EventPhaseFinish:
		p, ok := t.phases[e.ID]
		if !ok || p.Finished {
			return nil
		}
		t.finish(p, e.Time)
		p.Early = p.Done < p.Steps
		t.progress(e.Time)
		return p
	}
	return nil
}

func (t *Tree) progress(at time.Duration) {
	if at > t.LastProgress {
		t.LastProgress = at
	}
}

func (t *Tree) finish(p *Phase, at time.Duration) {
	p.Finished = true
	p.End = at
	if p.End < p.Start {
		p.End = p.Start
	}
	t.open--
	delete(t.live, p.ID)
	if parent, ok := t.phases[p.Parent]; ok && p.Parent != 0 {
		parent.Open--
		parent.doneKids++
		if parent.doneKids > 2*FoldKeep {
			t.pending[parent.ID] = struct{}{}
		}
	}
}

// Abort ends every open phase at time at, deepest first, marking them Aborted, and returns
// them deepest first. Called when the build ends: TensorRT does not promise a phaseFinish for
// every phase.
func (t *Tree) Abort(at time.Duration) []*Phase {
	var open []*Phase
	t.Walk(func(p *Phase) bool {
		if !p.Finished {
			open = append(open, p)
		}
		return true
	})
	for i, j := 0, len(open)-1; i < j; i, j = i+1, j-1 {
		open[i], open[j] = open[j], open[i]
	}
	for _, p := range open {
		t.finish(p, at)
		p.Aborted = true
		p.Early = p.Done < p.Steps
	}
	return open
}

// Get returns the phase with the given ID, or nil.
func (t *Tree) Get(id int) *Phase { return t.phases[id] }

// Roots returns the IDs of root phases in start order. The slice must not be modified.
func (t *Tree) Roots() []int { return t.roots }

// Len returns the number of phases the tree holds (those folded away are counted in Folded);
// Open the number still running.
func (t *Tree) Len() int  { return len(t.phases) }
func (t *Tree) Open() int { return t.open }

// Walk visits phases depth-first in display order (each phase before its children, siblings in
// start order) until fn returns false.
func (t *Tree) Walk(fn func(p *Phase) bool) {
	var visit func(ids []int) bool
	visit = func(ids []int) bool {
		for _, id := range ids {
			p := t.phases[id]
			if !fn(p) {
				return false
			}
			if !visit(p.Children) {
				return false
			}
		}
		return true
	}
	visit(t.roots)
}

// Path returns the names from the root down to the phase with the given ID.
func (t *Tree) Path(id int) []string {
	var names []string
	for p := t.phases[id]; p != nil; p = t.phases[p.Parent] {
		names = append([]string{p.Name}, names...)
		if p.Parent == 0 {
			break
		}
	}
	return names
}

// Deepest returns the most recently started open phase at the greatest depth: the phase a
// person would call "what it is doing now". It returns nil when nothing is open.
func (t *Tree) Deepest() *Phase {
	var best *Phase
	t.Walk(func(p *Phase) bool {
		if !p.Finished && (best == nil || p.Depth > best.Depth || (p.Depth == best.Depth && p.Start >= best.Start)) {
			best = p
		}
		return true
	})
	return best
}

// TopLevel returns the phases a summary compares and the phase they belong to (nil for the
// roots): the roots, or, while there is a single phase at a level, that phase's children
// ("Building engine" wraps everything in TensorRT, and a single chain leads to the stages).
func (t *Tree) TopLevel() ([]int, *Phase) {
	ids := t.roots
	var parent *Phase
	for len(ids) == 1 {
		p := t.phases[ids[0]]
		if len(p.Children) == 0 {
			break
		}
		ids, parent = p.Children, p
	}
	return ids, parent
}

// prune returns a copy of the tree that keeps every open phase with its ancestors, the newest
// keepDone children of each of them (and of the roots), the top level (TopLevel) and the
// phases in extra with their ancestors. Children lists hold only kept phases, in start order;
// Open counts stay exact, since every open phase is kept. It costs time in proportion to what
// it keeps, not to the size of the tree.
func (t *Tree) prune(keepDone int, extra []int) *Tree {
	out := &Tree{phases: make(map[int]*Phase), open: t.open, Last: t.Last, LastProgress: t.LastProgress}
	var keep func(id int)
	keep = func(id int) {
		p := t.phases[id]
		if p == nil {
			return
		}
		if _, ok := out.phases[id]; ok {
			return
		}
		c := *p
		c.Children = nil
		out.phases[id] = &c
		if p.Parent != 0 {
			keep(p.Parent)
		}
	}
	newest := func(ids []int) {
		for _, id := range ids[max(len(ids)-keepDone, 0):] {
			keep(id)
		}
	}
	for id := range t.live {
		keep(id)
	}
	spine := make([]int, 0, len(out.phases))
	for id := range out.phases {
		spine = append(spine, id)
	}
	for _, id := range spine {
		newest(t.phases[id].Children)
	}
	newest(t.roots)
	top, parent := t.TopLevel()
	if parent != nil {
		keep(parent.ID)
	}
	for _, id := range top {
		keep(id)
	}
	for _, id := range extra {
		keep(id)
	}
	for _, id := range t.roots {
		if _, ok := out.phases[id]; ok {
			out.roots = append(out.roots, id)
		}
	}
	for id, c := range out.phases {
		for _, child := range t.phases[id].Children {
			if _, ok := out.phases[child]; ok {
				c.Children = append(c.Children, child)
			}
		}
	}
	return out
}

// beginBatch holds folding back until endBatch: the phases of every event of a batch stay in
// the tree until the renderers have been handed the batch.
func (t *Tree) beginBatch() {
	if len(t.pending) > 0 {
		t.foldPending()
	}
	t.batching = true
}

func (t *Tree) endBatch() { t.batching = false }
