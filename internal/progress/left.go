package progress

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Limits of the time-left estimate.
const (
	// MinTimedLayers is how many layers the timing phase must have finished before an estimate
	// is given: fewer say too little about the pace.
	MinTimedLayers = 5
	// paceWindow is how many of the newest searched layers the pace is taken from: recent
	// layers say more about the next ones, and memory stays bounded for any layer count.
	paceWindow = 256
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

// pacer follows the open timing phase (TimingPhase) and the layers it finished: how long each
// took, and which were timing-cache hits (a layer whose search finished without a step: every
// tactic came from the cache, as the views also say). State feeds it; Pace is what it derives.
type pacer struct {
	phase    int // the timing phase followed; 0 when none started
	hits     int
	hitTotal time.Duration
	measured int // layers searched for real, all of them
	// window holds the newest paceWindow layers, hits included: their start and end, and
	// whether they were hits. next is where the next one goes once the window is full.
	window []paceLayer
	next   int
	// slowest is the longest layer of the phase.
	slowest time.Duration
	dirty   bool
	pace    Pace
}

type paceLayer struct {
	start, end time.Duration
	hit        bool
}

// started notes a phase start: a new timing phase is followed from scratch.
func (c *pacer) started(p *Phase) {
	if p.Name == TimingPhase {
		*c = pacer{phase: p.ID, dirty: true}
	}
}

// finished notes a finished phase: a layer, when it is a child of the followed timing phase.
func (c *pacer) finished(p *Phase) {
	if c.phase == 0 || p.Parent != c.phase {
		return
	}
	l := paceLayer{start: p.Start, end: p.End, hit: p.Done == 0}
	d := l.end - l.start
	if l.hit {
		c.hits++
		c.hitTotal += d
	} else {
		c.measured++
	}
	c.slowest = max(c.slowest, d)
	if len(c.window) < paceWindow {
		c.window = append(c.window, l)
	} else {
		c.window[c.next] = l
		c.next = (c.next + 1) % paceWindow
	}
	c.dirty = true
}

// get returns the pace, derived again when a layer finished since the last call.
func (c *pacer) get() Pace {
	if !c.dirty {
		return c.pace
	}
	c.dirty = false
	p := Pace{Phase: c.phase, Layers: c.hits + c.measured, Slowest: c.slowest}
	if p.Layers > 0 {
		p.HitRate = float64(c.hits) / float64(p.Layers)
	}
	if c.hits > 0 {
		p.Hit = c.hitTotal / time.Duration(c.hits)
	}
	var times []time.Duration
	spans := make([][2]time.Duration, 0, len(c.window))
	var sum time.Duration
	for _, l := range c.window {
		if !l.hit {
			times = append(times, l.end-l.start)
		}
		spans = append(spans, [2]time.Duration{l.start, l.end})
		sum += l.end - l.start
	}
	if len(times) > 0 {
		slices.Sort(times)
		p.Fast = mean(times[:(len(times)+1)/2])
		p.Slow = mean(times[len(times)/2:])
	}
	p.Parallel = 1
	if covered := Covered(spans); covered > 0 && sum > covered {
		p.Parallel = float64(sum) / float64(covered)
	}
	c.pace = p
	return p
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// Pace is how fast the timing phase has timed its layers so far: the one stage of a TensorRT
// build whose remaining time the events let a view estimate. Its steps are layers, but layers
// are not equal in time (a large convolution takes minutes, an activation a moment) and
// timing-cache hits take next to nothing, so the estimate is a range: the layers left at the
// mean time of the faster half of the layers searched so far, and at the slower half's, each
// blended with the hit rate and divided by the layers timed at once.
type Pace struct {
	// Phase is the timing phase; 0 when none started.
	Phase int
	// Layers is how many layers the phase finished; HitRate the fraction of them that were
	// timing-cache hits, which took Hit on average.
	Layers  int
	HitRate float64
	Hit     time.Duration
	// Fast and Slow are the mean times of the faster and the slower half of the newest layers
	// searched (hits left out); Slowest the longest layer of the phase, hits included.
	Fast, Slow, Slowest time.Duration
	// Parallel is how many layers were timed at once, on average (builder threads).
	Parallel float64
}

// Left estimates how long the timing phase still runs at build time at, from the phase as tree
// holds it. It says nothing (false) where an estimate would not be honest: no timing phase
// open, fewer than MinTimedLayers layers finished, no layer left, a builder silent for longer
// than any layer took so far, or a layer running longer than any before it (the pace so far
// does not explain it).
func (p Pace) Left(tree *Tree, at time.Duration) (Left, bool) {
	ph := tree.Get(p.Phase)
	if p.Phase == 0 || ph == nil || ph.Finished || p.Layers < MinTimedLayers {
		return Left{}, false
	}
	n := ph.Steps - ph.Done
	if n <= 0 || at-tree.LastProgress > p.Slowest {
		return Left{}, false
	}
	for i, open := len(ph.Children)-1, ph.Open; i >= 0 && open > 0; i-- {
		c := tree.Get(ph.Children[i])
		if c == nil || c.Finished {
			continue
		}
		open--
		if c.Duration(at) > p.Slowest {
			return Left{}, false
		}
	}
	per := func(searched time.Duration) time.Duration {
		d := p.HitRate*float64(p.Hit) + (1-p.HitRate)*float64(searched)
		return time.Duration(math.Round(float64(n) * d / max(p.Parallel, 1)))
	}
	return Left{Phase: p.Phase, Low: per(p.Fast), High: per(p.Slow)}, true
}
