package tui

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/testtraces"
)

// bigTree is a 300-phase build shaped like TensorRT's: four wrapping phases, then layers timed
// by `threads` builder threads, each layer with four measuring phases. The last `threads`
// layers are still running, each in its last measuring phase.
func bigTree(threads int) []progress.Event {
	evs := []progress.Event{
		evStart(0, 1, 0, "Building engine", 4),
		evStart(sec(0.1), 2, 1, "Building engine from subgraph", 1),
		evStart(sec(0.2), 3, 2, "Computing profile costs", 1),
		evStart(sec(0.3), 4, 3, "Timing graph nodes", 60),
	}
	id := 5
	at := sec(1)
	for layer := 0; id+4 <= 300; layer++ {
		lid := id
		id++
		evs = append(evs, evStart(at, lid, 4, fmt.Sprintf("Finding fastest tactic for /backbone/stage%d/block%d/conv", layer/8, layer%8), 4))
		running := id+5*threads > 300
		for m := 0; m < 4; m++ {
			evs = append(evs, evStart(at, id, lid, "Measuring tactic time", 8), evStep(at, id, 7))
			if !(running && m == 3) {
				evs = append(evs, evFinish(at+time.Millisecond, id), evStep(at, lid, m))
			}
			id++
			at += 10 * time.Millisecond
		}
		if !running {
			evs = append(evs, evFinish(at, lid), evStep(at, 4, layer))
		}
	}
	return evs
}

// BenchmarkFrame300 draws one frame of a 300-phase tree at 120x40 (the target is under 2 ms).
func BenchmarkFrame300(b *testing.B) {
	for _, threads := range []int{1, 8} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			s := scene{events: bigTree(threads), at: sec(20), width: 120, height: 40, color: true}
			m := s.model(b)
			// The view draws from the session's snapshot: the running phases and the newest
			// finished children of each, not all 300.
			if m.tree.Open() < 5 {
				b.Fatalf("the snapshot has %d open phases", m.tree.Open())
			}
			now := epoch.Add(sec(20))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.frame(now)
			}
		})
	}
}

// BenchmarkBurst100k is what a burst of 100,000 TensorRT callbacks costs the parent with the
// live view: the session applies them to its state in batches of 256 and hands each batch to
// the view (which keeps only log lines), then one snapshot is taken and one frame drawn, as
// happens at most ten times a second.
func BenchmarkBurst100k(b *testing.B) {
	var evs []progress.Event
	for id := 1; id <= 64; id++ {
		evs = append(evs, evStart(0, id, 0, fmt.Sprintf("phase %d", id), 1<<20))
	}
	for i := 0; len(evs) < 100000; i++ {
		evs = append(evs, evStep(time.Duration(i)*time.Microsecond, 1+i%64, i/64))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, in, clk := newTestModel(modelOptions{})
		for j := 0; j < len(evs); j += 256 {
			batch := evs[j:min(j+256, len(evs))]
			in.st.Apply(batch, clk.Now())
			in.box.put(batch)
		}
		in.box.snapshot(in.st.Snapshot())
		clk.Set(time.Second)
		m.step(clk.Now())
		m.frame(clk.Now())
	}
}

// BenchmarkRealBuild is what TensorRT 10.16.1's real progress (internal/testtraces: 6,439
// callbacks, 1,164 phases, eight levels) costs the parent with the plain log and the live view
// together: the session applies it to its state in batches of 64 and hands each batch to the
// plain renderer and the live view's inbox; every tenth batch the view takes a snapshot and
// draws a frame, as it does at most ten times a second.
func BenchmarkRealBuild(b *testing.B) {
	tr := testtraces.Must(testtraces.TRT10161)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, in, clk := newTestModel(modelOptions{})
		plain := NewPlain(io.Discard, PlainOptions{Now: clk.Now})
		plain.Begin(in.st)
		batch := make([]progress.Event, 0, 64)
		for j := 0; j < len(tr.Events); j += 64 {
			batch = append(batch[:0], tr.Events[j:min(j+64, len(tr.Events))]...)
			clk.Set(batch[len(batch)-1].Time)
			in.st.Apply(batch, clk.Now())
			plain.Handle(batch)
			plain.Tick(clk.Now())
			in.box.put(batch)
			if (j/64)%10 == 0 {
				in.box.snapshot(in.st.Snapshot())
				m.step(clk.Now())
				m.frame(clk.Now())
			}
		}
	}
}
