package builder

import (
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/report"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// layerSource is a Source that generates the events of a build of n layers on four builder
// threads, each layer timing six tactics, as the simulated builder reports them, in batches of
// 256: 26 events a layer, generated as they are sent, so that the generator holds nothing.
type layerSource struct {
	n      int
	events chan []progress.Event
}

func newLayerSource(n int) *layerSource {
	s := &layerSource{n: n, events: make(chan []progress.Event, 4)}
	go s.run()
	return s
}

func (s *layerSource) Events() <-chan []progress.Event { return s.events }
func (s *layerSource) Cancel() error                   { return nil }
func (s *layerSource) Kill() error                     { return nil }
func (s *layerSource) Wait() error                     { return nil }

func (s *layerSource) run() {
	const threads, tactics = 4, 6
	batch := make([]progress.Event, 0, 256)
	emit := func(e progress.Event) {
		batch = append(batch, e)
		if len(batch) == cap(batch) {
			s.events <- batch
			batch = make([]progress.Event, 0, 256)
		}
	}
	emit(progress.Event{Type: progress.EventPhaseStart, ID: 1, Name: "Building engine", Steps: 1, Thread: 1})
	emit(progress.Event{Type: progress.EventPhaseStart, ID: 2, Parent: 1, Name: "Timing graph nodes", Steps: s.n, Thread: 1})
	id, at := 3, time.Duration(0)
	layers := make([]int, 0, threads)
	for l := 0; l < s.n; l += threads {
		layers = layers[:0]
		for k := 0; k < threads && l+k < s.n; k++ {
			emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: 2, Name: "Finding fastest tactic for /model/block_" + strconv.Itoa(l+k) + "/Conv", Steps: tactics, Thread: uint64(2 + k)})
			layers = append(layers, id)
			id++
		}
		for tac := 0; tac < tactics; tac++ {
			for k, layer := range layers {
				at += time.Microsecond
				emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: layer, Name: "Measuring tactic time", Steps: 1, Thread: uint64(2 + k)})
				emit(progress.Event{Type: progress.EventStep, Time: at, ID: id, Step: 0})
				emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: id})
				emit(progress.Event{Type: progress.EventStep, Time: at, ID: layer, Step: tac})
				id++
			}
		}
		for _, layer := range layers {
			emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: layer})
		}
		emit(progress.Event{Type: progress.EventStep, Time: at, ID: 2, Step: min(l+threads, s.n) - 1})
	}
	emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 2})
	emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 1})
	emit(progress.Event{Type: progress.EventResult, Time: at, Result: &progress.Result{Status: progress.StatusBuilt, Duration: at}})
	s.events <- batch
	close(s.events)
}

// heapSampler is a renderer that measures the live heap every 50 batches (12,800 events).
type heapSampler struct {
	progress.Renderer
	batches int
	peak    uint64
}

func (h *heapSampler) Handle(b []progress.Event) {
	h.Renderer.Handle(b)
	if h.batches++; h.batches%50 == 0 {
		h.sample()
	}
}

func (h *heapSampler) sample() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
}

// parentHeap drives a build of n layers through the session loop with the plain and JSON
// renderers and the report recorder, as `trtbuild --progress plain --trace F --report R`
// does, and returns the peak live heap and how many phases the report counts.
func parentHeap(t testing.TB, n int) (uint64, int) {
	rec := report.NewRecorder()
	h := &heapSampler{Renderer: progress.Tee{
		tui.NewPlain(io.Discard, tui.PlainOptions{}), progress.NewJSONLines(io.Discard, nil), rec,
	}}
	h.sample()
	base := h.peak
	h.peak = 0
	res, err := Drive(newLayerSource(n), Config{Frontend: Frontend{NewRenderer: func(progress.Controls) progress.Renderer { return h }}})
	if err != nil || res.Status != progress.StatusBuilt {
		t.Fatalf("status %s, %v", res.Status, err)
	}
	r := rec.Report()
	h.sample()
	return h.peak - min(base, h.peak), r.Count
}

// TestParentMemoryIsBounded: the parent's live heap during a build of 40,000 layers (over a
// million events) stays under 64 MiB, and every phase is still counted in the report.
func TestParentMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million events")
	}
	const n = 40000
	peak, count := parentHeap(t, n)
	if want := 2 + n*7; count != want {
		t.Errorf("the report counts %d phases, want %d", count, want)
	}
	if peak > 64<<20 {
		t.Errorf("the parent's live heap reached %.1f MiB, want at most 64", float64(peak)/(1<<20))
	}
}

// BenchmarkParentMemory100k reports the parent's peak live heap for a build of 100,000
// layers (2.6 million events): run with -benchtime 1x.
func BenchmarkParentMemory100k(b *testing.B) {
	for b.Loop() {
		peak, _ := parentHeap(b, 100000)
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}
