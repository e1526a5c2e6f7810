package replay

import (
	"bufio"
	"context"
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

// heapReader measures the live heap every 20 reads (1.3 MB) of the trace.
type heapReader struct {
	r     io.Reader
	reads int
	peak  uint64
}

func (h *heapReader) Read(p []byte) (int, error) {
	if h.reads++; h.reads%20 == 0 {
		h.sample()
	}
	return h.r.Read(p)
}

func (h *heapReader) sample() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
}

// counter is a renderer that counts the events it is handed.
type counter struct{ events int }

func (c *counter) Begin(progress.View)           {}
func (c *counter) Handle(b []progress.Event)     { c.events += len(b) }
func (c *counter) Notice(progress.Notice)        {}
func (c *counter) Tick(time.Time)                {}
func (c *counter) End(res progress.Result) error { return nil }

// TestPlayReaderStreams replays a trace of about 450,000 events as fast as possible: every
// event reaches the renderer, and the live heap stays far under 64 MiB (a batch at a time,
// the session's tree folding old phases).
func TestPlayReaderStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("450,000 events")
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var buf []byte
	n := 0
	emit := func(e progress.Event) {
		buf = progress.AppendJSON(buf[:0], &e)
		w.Write(buf) //nolint:errcheck // checked by Flush
		if e.Type != progress.EventBuild && e.Type != progress.EventResult {
			n++
		}
	}
	emit(progress.Event{Type: progress.EventBuild, Info: &progress.BuildInfo{Model: "long.onnx"}})
	emit(progress.Event{Type: progress.EventPhaseStart, ID: 1, Name: "Timing graph nodes", Steps: 1 << 20, Thread: 1})
	id := 2
	for l := 0; n < 450000; l++ {
		layer := id
		at := time.Duration(l) * time.Microsecond
		emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: layer, Parent: 1, Name: "Finding fastest tactic for /m/block_" + strconv.Itoa(l) + "/Conv", Steps: 6, Thread: 2})
		id++
		for k := 0; k < 6; k++ {
			emit(progress.Event{Type: progress.EventPhaseStart, Time: at, ID: id, Parent: layer, Name: "Measuring tactic time", Steps: 1, Thread: 2})
			emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: id})
			emit(progress.Event{Type: progress.EventStep, Time: at, ID: layer, Step: k})
			id++
		}
		emit(progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: layer})
	}
	emit(progress.Event{Type: progress.EventResult, Time: time.Second, Result: &progress.Result{Status: progress.StatusBuilt, Duration: time.Second}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	h := &heapReader{r: in}
	h.sample()
	base := h.peak
	h.peak = 0
	c := &counter{}
	if err := PlayReader(context.Background(), trace.NewReader(h), c, Options{}); err != nil {
		t.Fatal(err)
	}
	h.sample()
	if c.events != n {
		t.Errorf("%d events replayed, want %d", c.events, n)
	}
	if peak := h.peak - min(base, h.peak); peak > 64<<20 {
		t.Errorf("the live heap reached %.1f MiB, want at most 64", float64(peak)/(1<<20))
	} else {
		t.Logf("peak live heap %.2f MiB for %d events", float64(peak)/(1<<20), n)
	}
}
