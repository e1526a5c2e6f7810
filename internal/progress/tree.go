package progress

import (
	"cmp"
	"slices"
	"time"
)

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
	// Generation numbers the root phases of one name in start order, from 1 (0 for a phase
	// with a parent): TensorRT at optimization level 5 builds the whole engine up to three
	// times in one build, one "Building engine" each (see Label). Rebuild marks a root phase
	// that the worker's second build attempt started after the first failed (State sets it).
	Generation int
	Rebuild    bool
	// doneKids counts the finished children since the last noteFold.
	doneKids int
	// longest is the longest finished child; busy the time finished children covered (their
	// union, exact for children that do not overlap), busyEnd the latest end among them.
	longest, busy, busyEnd time.Duration
	// lastKind is the Kind of the newest finished child; repeats says whether two children
	// finished one after the other were of one kind (repeated work, not stages).
	lastKind string
	repeats  bool
}

// Label is the phase's name as the views show it: a root phase after the first is named with
// its generation ("Building engine (generation 2)"), or as the rebuild it is.
func (p *Phase) Label() string {
	switch {
	case p.Rebuild:
		return p.Name + " (rebuild)"
	case p.Generation > 1:
		return p.Name + " (generation " + itoa(p.Generation) + ")"
	}
	return p.Name
}

// Wrapper reports whether p's time is explained by its finished child phases, measured up to
// now for a phase still running: one child took WrapperShare of it or more ("Timing tactics"
// is mostly its "Timing graph nodes"), or its children covered StagesShare of it and were
// stages, no two of one kind one after the other ("Building engine from subgraph" is
// "Optimizing graph" and then "Computing profile costs"). Then its children, not p, say where
// the time went. A phase whose time is spread over repeated work ("Timing graph nodes" over
// its many "Evaluating tactic times") is no wrapper: it is where that time went.
func (p *Phase) Wrapper(now time.Duration) bool {
	d := float64(p.Duration(now))
	return d > 0 && (float64(p.longest) >= WrapperShare*d || !p.repeats && float64(p.busy) >= StagesShare*d)
}

// WrapperShare and StagesShare are the shares of a phase's time that make it a wrapper (see
// Phase.Wrapper): of its longest child, and of its children that are stages.
const (
	WrapperShare = 2.0 / 3
	StagesShare  = 0.9
)

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
	// pending are the children each parent folds before the next batch (noteFold), folding
	// those children, and folded what folding kept of the folded phases.
	pending map[int][]int
	folding map[int]bool
	folded  *Folded
	// batching holds folding back while State applies one batch (see beginBatch).
	batching bool
	// Last is the time of the newest event applied; LastProgress of the newest phase event.
	Last         time.Duration
	LastProgress time.Duration
	// spent are the phases where the time went, longest first (see Spent).
	spent []Spent
}

// Spent is one of the phases where a build's time went: a finished phase that is no wrapper of
// one child (see Phase.Wrapper), whatever its name. TensorRT 10's "Timing graph nodes", whose
// time is spread over many "Evaluating tactic times", is one; so is one "Evaluating tactic
// times" that took seconds; "Building engine", which one child fills, is not.
type Spent struct {
	ID int
	// Path is the names from the root down to the phase; IDs their phase IDs.
	Path []string
	IDs  []int
	// Label is the phase's label (Phase.Label); Generation that of its root phase (see
	// Phase.Generation).
	Label      string
	Generation int
	Start      time.Duration
	Duration   time.Duration
	// Self is Duration less the time its children covered.
	Self        time.Duration
	Done, Steps int
	Early       bool
	Aborted     bool
}

// SpentKeep is how many phases Tree.Spent keeps.
const SpentKeep = 16

// Spent returns where the build's time went: the longest phases that are no wrapper of one
// child (Phase.Wrapper), longest first, at most SpentKeep, folded phases included. A phase is
// counted when it finishes (or when the build ends it). The slice must not be modified.
func (t *Tree) Spent() []Spent { return t.spent }

// noteSpent keeps p among the phases where the time went when it is one and long enough.
func (t *Tree) noteSpent(p *Phase) {
	d := p.End - p.Start
	if d <= 0 || p.Wrapper(p.End) {
		return
	}
	if len(t.spent) == SpentKeep && d <= t.spent[len(t.spent)-1].Duration {
		return
	}
	sp := Spent{ID: p.ID, Label: p.Label(), Start: p.Start, Duration: d, Self: max(d-p.busy, 0),
		Done: p.Done, Steps: p.Steps, Early: p.Early, Aborted: p.Aborted}
	sp.Path, sp.IDs = t.lineage(p.ID, true)
	if root := t.phases[sp.IDs[0]]; root != nil {
		sp.Generation = root.Generation
	}
	at, _ := slices.BinarySearchFunc(t.spent, sp, func(a, b Spent) int {
		return cmp.Or(cmp.Compare(b.Duration, a.Duration), cmp.Compare(a.ID, b.ID))
	})
	t.spent = slices.Insert(t.spent, at, sp)
	if len(t.spent) > SpentKeep {
		t.spent = t.spent[:SpentKeep]
	}
}

// NewTree returns an empty tree.
func NewTree() *Tree {
	return &Tree{phases: make(map[int]*Phase), live: make(map[int]struct{}), pending: make(map[int][]int), folding: make(map[int]bool)}
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
			p.Generation = 1
			for _, id := range t.roots {
				if r := t.phases[id]; r != nil && r.Name == p.Name {
					p.Generation = max(p.Generation, r.Generation+1)
				}
			}
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
		t.noteSpent(p)
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
			t.noteFold(parent)
		}
		parent.longest = max(parent.longest, p.End-p.Start)
		kind := Kind(p.Name)
		parent.repeats = parent.repeats || kind == parent.lastKind
		parent.lastKind = kind
		if from := max(p.Start, parent.busyEnd); p.End > from {
			parent.busy += p.End - from
		}
		parent.busyEnd = max(parent.busyEnd, p.End)
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
		t.noteSpent(p)
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
	names, _ := t.lineage(id, false)
	return names
}

// lineage returns the names from the root down to the phase with the given ID and, when ids,
// their IDs, each in one allocation.
func (t *Tree) lineage(id int, ids bool) ([]string, []int) {
	p := t.phases[id]
	if p == nil {
		return nil, nil
	}
	names := make([]string, p.Depth+1)
	var idList []int
	if ids {
		idList = make([]int, p.Depth+1)
	}
	i := len(names) - 1
	for ; p != nil && i >= 0; p, i = t.phases[p.Parent], i-1 {
		names[i] = p.Name
		if ids {
			idList[i] = p.ID
		}
		if p.Parent == 0 {
			break
		}
	}
	if i > 0 { // an ancestor is gone (never in a tree that folds only settled subtrees)
		names = names[i:]
		if ids {
			idList = idList[i:]
		}
	}
	return names, idList
}

// Active returns the open phases a person would read as where the build is: from the newest
// open root down, at each level the newest open child, root first; nil when nothing is open.
// Where builder threads time layers side by side, it follows the newest of them. It costs
// time in proportion to the depth, not to the size of the tree.
func (t *Tree) Active() []*Phase {
	var path []*Phase
	for i := len(t.roots) - 1; i >= 0; i-- {
		if p := t.phases[t.roots[i]]; p != nil && !p.Finished {
			path = append(path, p)
			break
		}
	}
	for len(path) > 0 {
		p := path[len(path)-1]
		if p.Open == 0 {
			break
		}
		var next *Phase
		for i := len(p.Children) - 1; i >= 0; i-- {
			if c := t.phases[p.Children[i]]; c != nil && !c.Finished {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		path = append(path, next)
	}
	return path
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
	out := &Tree{phases: make(map[int]*Phase), open: t.open, Last: t.Last, LastProgress: t.LastProgress,
		spent: slices.Clone(t.spent)}
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
