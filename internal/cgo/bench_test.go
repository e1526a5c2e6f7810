//go:build trtbench

package cgo

import (
	"runtime"
	"testing"
	"time"
)

func TestBenchMonitor(t *testing.T) {
	r, err := benchMonitor(4, 2000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.calls+r.droppedSteps != 4*2000 || r.drained != r.calls {
		t.Errorf("%d calls, %d drained, %d dropped", r.calls, r.drained, r.droppedSteps)
	}
	if r.p50 <= 0 || r.p50 > r.p99 || r.p99 > r.max {
		t.Errorf("p50 %v, p99 %v, max %v", r.p50, r.p99, r.max)
	}
	for _, bad := range [][2]int{{0, 1}, {1, 0}, {1025, 1}, {1, 1 << 25}} {
		if _, err := benchMonitor(bad[0], bad[1], 0); err == nil {
			t.Errorf("benchMonitor(%d, %d, 0) accepted", bad[0], bad[1])
		} else {
			asError(t, err, CodeInvalidArgument)
		}
	}
}

// BenchmarkMonitorCallback times what a builder thread pays per progress report (queue the
// step, check for cancel) with 16 threads reporting at once and one thread draining. b.N is
// the total number of reports. The latency percentiles are the figures that matter; ns/op
// is wall time divided by reports. "tight": every thread reports back to back, the worst
// case for the one counter all reports share. "gap-5us": 5 us of busy work between reports,
// still some thousand times TensorRT's rate.
func BenchmarkMonitorCallback(b *testing.B) {
	for _, bc := range []struct {
		name string
		gap  time.Duration
	}{{"tight", 0}, {"gap-5us", 5 * time.Microsecond}} {
		b.Run(bc.name, func(b *testing.B) {
			const threads = 16
			perThread := max(1, (b.N+threads-1)/threads)
			r, err := benchMonitor(threads, perThread, bc.gap)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.p50.Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(r.p99.Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(r.max.Nanoseconds()), "max-ns")
			b.ReportMetric(float64(r.droppedSteps), "dropped")
		})
	}
}

// BenchmarkDrain measures events per second through Drain, which turns batches into RawEvents
// with Go strings. "live": 4 threads flood the queue as fast as they can while it is drained
// (on a small machine they compete with the drainer for cores, and steps beyond the queue's
// bound are dropped and counted). "backlog": the flood has finished before draining starts,
// so this is the drain path alone.
func BenchmarkDrain(b *testing.B) {
	b.Run("live", func(b *testing.B) { benchmarkDrain(b, false) })
	b.Run("backlog", func(b *testing.B) { benchmarkDrain(b, true) })
}

func benchmarkDrain(b *testing.B, backlog bool) {
	const threads = 4
	perThread := max(1, (b.N+threads-1)/threads)
	build, err := newFloodBuild(threads, perThread, uint64(threads*perThread+64)*256, defaultBatchEvents, defaultBatchText)
	if err != nil {
		b.Fatal(err)
	}
	defer build.Close()
	ran := make(chan error, 1)
	run := func() {
		runtime.LockOSThread()
		_, err := build.Run()
		ran <- err
	}
	if backlog {
		run()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if !backlog {
		go run()
	}
	var events []RawEvent
	var n int
	var dropped Drops
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
	b.ReportMetric(float64(dropped.Total()), "dropped")
}
