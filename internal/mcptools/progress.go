package mcptools

import (
	"strings"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// phaseProgress follows a build's events (the v1 JSON lines) on the one phase tree of
// internal/progress, and says how far the build is as an MCP progress notification says it:
// progress and total in steps of the top phase (the root phase, parent 0), and the path of the
// phase it is in now. Not safe for concurrent use.
type phaseProgress struct {
	tree *progress.Tree
	// last is the progress last returned by now: a notification's progress must increase, so
	// what now returns never goes back, even where a finished child phase drops its share
	// before its parent's step event comes.
	last float64
	// message is the newest phase path, kept when no phase is open any more.
	message string
	// built says the result said the engine was built: TensorRT ends its top phase before
	// its last step (at 5 of 6), so only the result says the build went all the way.
	built bool
}

func newPhaseProgress() *phaseProgress {
	return &phaseProgress{tree: progress.NewTree(), last: -1}
}

// apply adds one event line to the tree. Lines that are no phase event (the build header,
// log lines, the result) and lines it cannot decode change nothing.
func (p *phaseProgress) apply(line []byte) {
	e, err := progress.DecodeJSON(line)
	if err != nil {
		return
	}
	switch e.Type {
	case progress.EventPhaseStart, progress.EventStep, progress.EventPhaseFinish:
		p.tree.Apply(&e)
	case progress.EventResult:
		p.built = e.Result != nil && e.Result.Status == progress.StatusBuilt
	}
}

// now is the build's progress: the completed steps of the top phase, plus the share of the
// step it is in that its open child phases have done (so an hour in the top phase's first step
// still moves), never less than before, and all of them once the result says the engine was
// built; total, the top phase's steps (those of earlier top phases added, when a build has
// several one after another: TensorRT's engine generations); and message, the path of open
// phases down to the deepest ("Building engine > Timing graph nodes > Evaluating tactic
// times"), a later top phase named with its generation. ok is false before the first phase
// started.
func (p *phaseProgress) now() (done, total float64, message string, ok bool) {
	roots := p.tree.Roots()
	if len(roots) == 0 {
		return 0, 0, "", false
	}
	for _, id := range roots[:len(roots)-1] {
		if r := p.tree.Get(id); r != nil {
			total += float64(r.Steps)
		}
	}
	top := p.tree.Get(roots[len(roots)-1])
	done = total + p.value(top)
	total += float64(top.Steps)
	if top.Finished && !top.Early || p.built {
		done = total // a build cut short (cancelled, failed) stays where it was
	}
	done = min(max(done, p.last, 0), total)
	p.last = done
	if path := p.tree.Active(); len(path) > 0 {
		names := make([]string, len(path))
		for i, ph := range path {
			names[i] = ph.Label()
		}
		p.message = strings.Join(names, " > ")
	}
	return done, total, p.message, true
}

// value is how many of ph's steps are done: its completed steps, plus the fraction of the
// newest open child, at most its step count.
func (p *phaseProgress) value(ph *progress.Phase) float64 {
	v := float64(ph.Done)
	for i := len(ph.Children) - 1; i >= 0; i-- {
		if c := p.tree.Get(ph.Children[i]); c != nil && !c.Finished {
			v += p.value(c) / float64(c.Steps)
			break
		}
	}
	return min(v, float64(ph.Steps))
}
