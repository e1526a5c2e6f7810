package service

import (
	"math"
	"sync/atomic"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// along is how far along a run's build is, 0 to 1 (progress.Along: the measure the taskbar
// and MCP's progress notifications show), as its renderer last saw it. Its renderer writes it,
// snapshots read it; it never goes back.
type along struct{ bits atomic.Uint64 }

// get is the fraction, and whether the build has said any (a build never started, a cache hit
// and a build of an earlier service, a nil a, have not).
func (a *along) get() (float64, bool) {
	if a == nil {
		return 0, false
	}
	b := a.bits.Load()
	return math.Float64frombits(b), b != 0
}

// set raises the fraction to f (0 < f ≤ 1); a smaller f is ignored.
func (a *along) set(f float64) {
	for {
		old := a.bits.Load()
		if old != 0 && math.Float64frombits(old) >= f || a.bits.CompareAndSwap(old, math.Float64bits(f)) {
			return
		}
	}
}

// alongRenderer renders a run's build with next and keeps how far along it is in a.
type alongRenderer struct {
	progress.Renderer
	view progress.View
	a    *along
}

func (r *alongRenderer) Begin(v progress.View) {
	r.view = v
	r.Renderer.Begin(v)
}

func (r *alongRenderer) Handle(batch []progress.Event) {
	r.Renderer.Handle(batch)
	if done, total, ok := progress.Along(r.view.Tree(), false); ok && total > 0 && done > 0 {
		r.a.set(done / total)
	}
}
