package native

import (
	"runtime"
	"testing"
	"time"
)

func TestBenchMonitor(t *testing.T) {
	r, err := benchMonitor(4, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if r.calls != 4*2000 || r.drained+r.droppedSteps != r.calls {
		t.Errorf("%d calls, %d drained, %d dropped", r.calls, r.drained, r.droppedSteps)
	}
	if r.p50 <= 0 || r.p50 > r.p99 || r.p99 > r.max {
		t.Errorf("p50 %v, p99 %v, max %v", r.p50, r.p99, r.max)
	}
	for _, bad := range [][2]int{{0, 1}, {1, 0}, {1025, 1}, {1, 1 << 25}} {
		if _, _, _, err := BenchMonitor(bad[0], bad[1]); err == nil {
			t.Errorf("BenchMonitor(%d, %d) accepted", bad[0], bad[1])
		} else {
			asError(t, err, CodeInvalidArgument)
		}
	}
}

// BenchmarkMonitorCallback times what a builder thread pays per progress report (queue the
// step, check for cancel) with 16 threads reporting at once and one thread draining. b.N is
// the total number of reports. The latency percentiles are the figures that matter; ns/op
// is wall time divided by reports and so shrinks with parallelism.
func BenchmarkMonitorCallback(b *testing.B) {
	const threads = 16
	perThread := max(1, (b.N+threads-1)/threads)
	r, err := benchMonitor(threads, perThread)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(r.p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(r.p99.Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(r.max.Nanoseconds()), "max-ns")
	b.ReportMetric(float64(r.droppedSteps), "dropped")
}

// BenchmarkDrain measures events per second through Drain, with 4 threads flooding the queue
// as fast as they can and Drain turning batches into RawEvents with Go strings.
func BenchmarkDrain(b *testing.B) {
	const threads = 4
	perThread := max(1, (b.N+threads-1)/threads)
	build, err := newFloodBuild(threads, perThread, 0, defaultBatchEvents, defaultBatchText)
	if err != nil {
		b.Fatal(err)
	}
	defer build.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	ran := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		_, err := build.Run()
		ran <- err
	}()
	var events []RawEvent
	var n int
	var dropped uint64
	for done := false; !done; {
		events, done, dropped, err = build.Drain(events, 100*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		n += len(events)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(dropped), "dropped")
}
