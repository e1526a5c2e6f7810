package report

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// writeLongTrace writes the trace of a build of n layers on four threads, six tactics a layer
// (26 events a layer), and returns its path and how many events it holds.
func writeLongTrace(t testing.TB, n int) (string, int) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var buf []byte
	count := 0
	emit := func(e progress.Event) {
		buf = progress.AppendJSON(buf[:0], &e)
		w.Write(buf) //nolint:errcheck // checked by Flush
		count++
	}
	emit(progress.Event{Type: progress.EventBuild, Info: &progress.BuildInfo{Model: "long.onnx", Engine: "long.engine", Backend: "sim"}})
	emit(progress.Event{Type: progress.EventPhaseStart, ID: 1, Name: "Building engine", Steps: 1, Thread: 1})
	emit(progress.Event{Type: progress.EventPhaseStart, ID: 2, Parent: 1, Name: "Timing graph nodes", Steps: n, Thread: 1})
	id, at := 3, time.Duration(0)
	for l := 0; l < n; l += 4 {
		var layers []int
		for k := 0; k < 4 && l+k < n; k++ {
			emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: 2, Name: "Finding fastest tactic for /model/block_" + strconv.Itoa(l+k) + "/Conv", Steps: 6, Thread: uint64(2 + k)})
			layers = append(layers, id)
			id++
		}
		for tac := 0; tac < 6; tac++ {
			for k, layer := range layers {
				at += time.Microsecond
				emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: layer, Name: "Measuring tactic time", Steps: 1, Thread: uint64(2 + k)})
				emit(progress.Event{Type: progress.EventStep, Time: at, ID: id})
				emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: id})
				emit(progress.Event{Type: progress.EventStep, Time: at, ID: layer, Step: tac})
				id++
			}
		}
		for _, layer := range layers {
			emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: layer})
		}
	}
	emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 2})
	emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 1})
	emit(progress.Event{Type: progress.EventResult, Time: at, Result: &progress.Result{Status: progress.StatusBuilt, Duration: at}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path, count
}

// sampledReader measures the live heap every 20 reads of the trace (1.3 MB).
type sampledReader struct {
	r     io.Reader
	reads int
	peak  uint64
}

func (s *sampledReader) Read(p []byte) (int, error) {
	if s.reads++; s.reads%20 == 0 {
		s.sample()
	}
	return s.r.Read(p)
}

func (s *sampledReader) sample() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.peak = max(s.peak, m.HeapAlloc)
}

// reportHeap streams the report of a trace of n layers and returns the peak live heap above
// what was live before, the number of events and the report.
func reportHeap(t testing.TB, n int) (uint64, int, *Report) {
	path, events := writeLongTrace(t, n)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &sampledReader{r: f}
	s.sample()
	base := s.peak
	s.peak = 0
	r, err := FromReader(trace.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	s.sample()
	return s.peak - min(base, s.peak), events, r
}

// TestReportStreams: the report of a 450,000-event trace is made in bounded memory (the trace
// is read as a stream, old phases are folded), and it still counts every phase.
func TestReportStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("450,000 events")
	}
	const n = 17400 // 26 events a layer: about 452,000 events
	peak, events, r := reportHeap(t, n)
	if events < 450000 {
		t.Fatalf("the trace holds %d events", events)
	}
	if want := 2 + n*7; r.Count != want {
		t.Errorf("the report counts %d phases, want %d", r.Count, want)
	}
	if peak > 64<<20 {
		t.Errorf("the live heap reached %.1f MiB, want at most 64", float64(peak)/(1<<20))
	}
}

// BenchmarkReportStream450k reports the peak live heap of `trtbuild report` on a trace of
// about 450,000 events: run with -benchtime 1x.
func BenchmarkReportStream450k(b *testing.B) {
	for b.Loop() {
		peak, _, _ := reportHeap(b, 17400)
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}
