package progress

import (
	"fmt"
	"math"
	"time"
)

// Limits of the time-left estimate.
const (
	// MinTimedLayers is how many nodes (layers) the timing phase must have completed before an
	// estimate is given, and how many tactics its child phase in progress before its own pace
	// counts: fewer say too little about the pace.
	MinTimedLayers = 5
	// paceWindow is how many of the newest stretches with a search the pace is taken from:
	// recent nodes say more about the next ones, and memory stays bounded for any node count.
	paceWindow = 256
	// lowSpread and highSpread are how many standard deviations of the sum of the nodes left
	// the range spans below and above its mean. Node times are heavy-tailed (the last nodes of
	// a network are often trivial while a few in its middle take most of the time), so the low
	// end goes further.
	lowSpread, highSpread = 3, 2
)

// Left is how long the timing phase still runs, as a range on the builder's clock.
type Left struct {
	Phase     int // the timing phase
	Low, High time.Duration
}

// String says the range coarsely, as a person would: "under a minute of layer timing left",
// "about 3–5 min of layer timing left", "about 40 min–2 h of layer timing left". Minutes are
// whole up to 10 and in fives beyond, hours whole; the low end is rounded down and the high
// end up, so the range only widens.
func (l Left) String() string { return l.span() + " of layer timing left" }

func (l Left) span() string {
	lo, hi := max(l.Low, 0), max(l.High, l.Low, 0)
	if hi < time.Minute {
		return "under a minute"
	}
	step := time.Minute
	if hi > 10*time.Minute {
		step = 5 * time.Minute
	}
	loM, hiM := lo.Truncate(step), ceilTo(hi, step)
	if hiM <= time.Hour {
		return between(int(loM/time.Minute), int(hiM/time.Minute), "min")
	}
	hiH := int(ceilTo(hi, time.Hour) / time.Hour)
	if lo < time.Hour {
		if loM = lo.Truncate(10 * time.Minute); loM == 0 {
			return fmt.Sprintf("under %d h", hiH)
		}
		return fmt.Sprintf("about %d min–%d h", int(loM/time.Minute), hiH)
	}
	return between(int(lo/time.Hour), hiH, "h")
}

// between says "about lo–hi unit", "about lo unit" when they meet, "under hi unit" from 0.
func between(lo, hi int, unit string) string {
	switch {
	case lo <= 0:
		return fmt.Sprintf("under %d %s", hi, unit)
	case lo >= hi:
		return fmt.Sprintf("about %d %s", hi, unit)
	}
	return fmt.Sprintf("about %d–%d %s", lo, hi, unit)
}

func ceilTo(d, step time.Duration) time.Duration {
	if t := d.Truncate(step); t < d {
		return t + step
	}
	return d
}

// pacer follows the open timing phase (TimingPhase) through its steps, one per node: how long
// each stretch between two of its steps took, how many nodes it completed, and whether any
// child phase searched tactics in it (a child reported a step). A stretch in which no child
// phase started is one stretch with the one before: TensorRT 10 reports steps back to back
// (1 and 2, 3 and 4) after the "Evaluating tactic times" that served them both, and builder
// threads finish nodes at one instant. A stretch without a search is a node served by the
// timing cache, or one with nothing to time. State feeds it; Pace is what it derives.
type pacer struct {
	phase int // the timing phase followed; 0 when none started
	// at is the time of its newest step (its start before the first) and done its steps
	// then; childStarted and childStepped say whether a child phase started or reported a
	// step since.
	at                         time.Duration
	done                       int
	childStarted, childStepped bool
	hits                       int // nodes in stretches without a search
	nodes                      int // nodes completed
	// window holds the newest paceWindow stretches; next is where the next one goes once it is
	// full.
	window []paceStretch
	next   int
	// last is the newest stretch, which the next step may extend (see above); lastAt its
	// index in window (-1: there is none).
	last   paceStretch
	lastAt int
	// slowest is the longest stretch.
	slowest time.Duration
	dirty   bool
	pace    Pace
}

// paceStretch is the time between two steps of the timing phase and the nodes it completed.
type paceStretch struct {
	start, end time.Duration
	nodes      int
	searched   bool
}

// started notes a phase start: a new timing phase is followed from scratch, and a child of the
// followed one starts a new stretch.
func (c *pacer) started(p *Phase) {
	switch {
	case p.Name == TimingPhase:
		*c = pacer{phase: p.ID, at: p.Start, lastAt: -1, dirty: true}
	case c.phase != 0 && p.Parent == c.phase:
		c.childStarted = true
	}
}

// stepped notes a step of phase p at build time at: a node of the followed timing phase, or a
// tactic of one of its children.
func (c *pacer) stepped(p *Phase, at time.Duration) {
	if c.phase == 0 {
		return
	}
	if p.Parent == c.phase {
		c.childStepped = true
		return
	}
	if p.ID != c.phase || p.Done <= c.done {
		return
	}
	nodes := p.Done - c.done
	c.nodes += nodes
	if !c.childStarted && c.lastAt >= 0 {
		// Back to back with the step before: that stretch completed these nodes too.
		c.last.nodes += nodes
		c.last.end = at
		c.window[c.lastAt] = c.last
	} else {
		c.last = paceStretch{start: c.at, end: at, nodes: nodes, searched: c.childStepped}
		if len(c.window) < paceWindow {
			c.lastAt = len(c.window)
			c.window = append(c.window, c.last)
		} else {
			c.lastAt = c.next
			c.window[c.next] = c.last
			c.next = (c.next + 1) % paceWindow
		}
	}
	if !c.last.searched {
		c.hits += nodes
	}
	c.slowest = max(c.slowest, c.last.end-c.last.start)
	c.at, c.done, c.childStarted, c.childStepped, c.dirty = at, p.Done, false, false, true
}

// get returns the pace, derived again when a node finished since the last call.
func (c *pacer) get() Pace {
	if !c.dirty {
		return c.pace
	}
	c.dirty = false
	p := Pace{Phase: c.phase, Nodes: c.nodes, Slowest: c.slowest}
	if c.nodes > 0 {
		p.HitRate = float64(c.hits) / float64(c.nodes)
	}
	// The mean and spread of the time per node, a stretch's nodes each taking an equal share.
	var n, sum, sq float64
	for _, s := range c.window {
		per := float64(s.end-s.start) / float64(s.nodes)
		n += float64(s.nodes)
		sum += per * float64(s.nodes)
		sq += per * per * float64(s.nodes)
	}
	if n > 0 {
		mean := sum / n
		p.Mean = time.Duration(math.Round(mean))
		p.Spread = time.Duration(math.Round(math.Sqrt(max(sq/n-mean*mean, 0))))
	}
	c.pace = p
	return p
}

// Pace is how fast the timing phase has timed its nodes so far: the one stage of a TensorRT
// build whose remaining time the events let a view estimate. Its steps are nodes (layers of the
// optimized graph), but nodes are far from equal in time (one with 153 candidate tactics takes
// seconds, one served by the timing cache a moment), so the estimate is a range: the nodes left
// at the mean time per node so far, give or take twice the spread of a sum of that many nodes,
// plus what the node in progress still needs at the pace of its own tactics.
type Pace struct {
	// Phase is the timing phase; 0 when none started.
	Phase int
	// Nodes is how many nodes (steps) the phase completed; HitRate the share of them that
	// needed no search (no child phase reported a step: served by the timing cache, or
	// nothing to time).
	Nodes   int
	HitRate float64
	// Mean and Spread are the mean and the standard deviation of the time per node, over the
	// newest nodes; Slowest is the longest time between two steps of the phase.
	Mean, Spread, Slowest time.Duration
}

// Left estimates how long the timing phase still runs at build time at, from the phase as tree
// holds it. It says nothing (false) where an estimate would not be honest: no timing phase
// open, fewer than MinTimedLayers nodes completed, no node left, a builder silent for longer
// than any stretch between two steps so far (a Myelin node is one step that can take minutes),
// or a child phase running longer than that whose own pace is not known (the pace so far does
// not explain it).
//
// When one child phase is open and has completed MinTimedLayers of its steps (an "Evaluating
// tactic times" of 153 tactics, say), what it still needs at its own pace is added to both
// ends, and the node it serves counts as one of those left only at the high end.
func (p Pace) Left(tree *Tree, at time.Duration) (Left, bool) {
	ph := tree.Get(p.Phase)
	if p.Phase == 0 || ph == nil || ph.Finished || p.Nodes < MinTimedLayers {
		return Left{}, false
	}
	n := ph.Steps - ph.Done
	if n <= 0 || at-tree.LastProgress > p.Slowest {
		return Left{}, false
	}
	var child *Phase
	for i, open := len(ph.Children)-1, ph.Open; i >= 0 && open > 0; i-- {
		if c := tree.Get(ph.Children[i]); c != nil && !c.Finished {
			open--
			child = c
			if ph.Open == 1 && c.Done >= MinTimedLayers && c.Done < c.Steps {
				break // its own pace says what it still needs, however long it runs
			}
			if c.Duration(at) > p.Slowest {
				return Left{}, false
			}
			child = nil
		}
	}
	var extra time.Duration
	inProgress := 0
	if child != nil {
		extra = time.Duration(math.Round(float64(child.Duration(at)) / float64(child.Done) * float64(child.Steps-child.Done)))
		inProgress = 1
	}
	sum := func(nodes int, spreads float64) time.Duration {
		d := float64(nodes)*float64(p.Mean) + spreads*math.Sqrt(float64(nodes))*float64(p.Spread)
		return extra + time.Duration(math.Round(max(d, 0)))
	}
	return Left{Phase: p.Phase, Low: sum(n-inProgress, -lowSpread), High: sum(n, highSpread)}, true
}
