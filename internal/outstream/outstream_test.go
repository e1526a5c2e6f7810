package outstream

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stuck is an output whose reader never reads: Write blocks until release is closed.
type stuck struct {
	release chan struct{}
	entered chan struct{}
	once    sync.Once
	buf     bytes.Buffer
}

func newStuck() *stuck { return &stuck{release: make(chan struct{}), entered: make(chan struct{})} }

func (s *stuck) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.buf.Write(p)
}

// within fails the test when f does not return: the property is "never blocks", so any
// bound works; a minute keeps a loaded machine from failing it.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked", what)
	}
}

func TestWriteNeverBlocks(t *testing.T) {
	out := newStuck()
	w := New(out, Options{})
	// The first line reaches the reader, which never returns; the rest queue behind it (were
	// they all written before the copier first ran, it would hand them over as one chunk).
	within(t, "Write to a stuck reader", func() { fmt.Fprintf(w, "line 0\n") })
	<-out.entered
	within(t, "Write to a stuck reader", func() {
		for i := 1; i < 10000; i++ {
			fmt.Fprintf(w, "line %d\n", i)
		}
	})
	stop := make(chan struct{})
	close(stop)
	var unwritten int64
	within(t, "Close with stop", func() { unwritten, _ = w.Close(0, stop) })
	if unwritten == 0 {
		t.Error("Close says everything was written to a reader that read nothing")
	}
	close(out.release)
}

func TestCloseDrainsInOrder(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, Options{})
	var want bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(w, "line %d\n", i)
		fmt.Fprintf(&want, "line %d\n", i)
	}
	unwritten, err := w.Close(0, nil)
	if unwritten != 0 || err != nil {
		t.Fatalf("Close = %d, %v", unwritten, err)
	}
	if out.String() != want.String() {
		t.Errorf("output differs from what was written")
	}
	if n, _ := w.Write([]byte("late")); n != 4 || bytes.Contains(out.Bytes(), []byte("late")) {
		t.Errorf("a write after Close reached the output")
	}
}

type broken struct{ calls atomic.Int32 }

func (b *broken) Write(p []byte) (int, error) {
	b.calls.Add(1)
	return 0, syscall.EPIPE
}

func TestBrokenPipeReportedOnce(t *testing.T) {
	out := &broken{}
	var reports atomic.Int32
	w := New(out, Options{OnError: func(err error) {
		if !errors.Is(err, syscall.EPIPE) {
			t.Errorf("OnError(%v), want EPIPE", err)
		}
		reports.Add(1)
	}})
	for range 100 {
		if n, err := w.Write([]byte("x\n")); n != 2 || err != nil {
			t.Fatalf("Write = %d, %v: the caller must not see the output's error", n, err)
		}
	}
	_, err := w.Close(0, nil)
	if !errors.Is(err, syscall.EPIPE) {
		t.Errorf("Close = %v, want EPIPE", err)
	}
	if reports.Load() != 1 || out.calls.Load() != 1 {
		t.Errorf("OnError called %d times, output written %d times; want 1 and 1", reports.Load(), out.calls.Load())
	}
}

func TestCloseGivesUpOnAStalledReader(t *testing.T) {
	out := newStuck()
	defer close(out.release)
	w := New(out, Options{})
	w.Write([]byte("never read\n"))
	<-out.entered
	w.Write([]byte("queued\n"))
	var unwritten int64
	within(t, "Close with a stall limit", func() { unwritten, _ = w.Close(time.Millisecond, nil) })
	if unwritten != int64(len("queued\n")) {
		t.Errorf("unwritten = %d, want the queued line", unwritten)
	}
}

func TestLimitDropsWholeWrites(t *testing.T) {
	out := newStuck()
	defer close(out.release)
	w := New(out, Options{Limit: 10})
	w.Write([]byte("first\n"))
	<-out.entered // "first" is with the output now; the queue is empty
	w.Write([]byte("12345678"))
	w.Write([]byte("abc")) // would pass the limit
	stop := make(chan struct{})
	close(stop)
	unwritten, _ := w.Close(0, stop)
	if unwritten != 8+3 {
		t.Errorf("unwritten = %d, want 8 queued + 3 dropped", unwritten)
	}
}
