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

// now is the build's progress (progress.Along), never less than before; and message, the path
// of open phases down to the deepest ("Building engine > Timing graph nodes > Evaluating
// tactic times"), a later top phase named with its generation. ok is false before the first
// phase started.
func (p *phaseProgress) now() (done, total float64, message string, ok bool) {
	done, total, ok = progress.Along(p.tree, p.built)
	if !ok {
		return 0, 0, "", false
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
