package worker

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// lineCounter counts the event lines the worker writes and keeps the last one.
type lineCounter struct {
	lines int
	last  []byte
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	if i := bytes.LastIndexByte(bytes.TrimRight(p, "\n"), '\n'); i >= 0 {
		c.last = append(c.last[:0], p[i+1:]...)
	} else {
		c.last = append(c.last[:0], p...)
	}
	return len(p), nil
}

// BenchmarkServeFlood measures the worker's half of the event pipeline: the simulated builder
// in flood mode (no sleeps) -> C queue -> Drain -> resolve -> JSON encoding -> one write per
// batch, into a writer that only counts lines (no pipe, no parent). events/s counts the lines
// written per second of Serve; dropped/build counts the steps the bounded queue dropped
// because this stage fell behind the builder. Each iteration is one build of 16 layers (the
// simulated builder's default, as the request names none) x 256 tactics x 258 steps.
func BenchmarkServeFlood(b *testing.B) {
	for _, threads := range []int{1, 4} {
		b.Run(fmt.Sprintf("threads-%d", threads), func(b *testing.B) {
			var lines, dropped int
			var elapsed time.Duration
			for b.Loop() {
				req := Request{
					Model: filepath.Join("..", "..", "testdata", "models", "convnet.onnx"), Backend: "sim",
					LogSeverity: progress.SeverityWarning, OptLevel: -1, MaxAuxStreams: -1, NoTimingCache: true,
					Sim: SimConfig{Threads: threads, Tactics: 256, Iterations: 256, Flood: true},
				}
				msg, err := encodeControl(control{Type: controlBuild, Request: &req})
				if err != nil {
					b.Fatal(err)
				}
				ctrlR, ctrlW := io.Pipe()
				go ctrlW.Write(msg)
				plan, err := os.Create(filepath.Join(b.TempDir(), "plan"))
				if err != nil {
					b.Fatal(err)
				}
				var out lineCounter
				start := time.Now()
				if err := Serve(ctrlR, &out, plan); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				ctrlW.Close()
				plan.Close()
				e, err := progress.DecodeJSON(out.last)
				if err != nil || e.Result == nil || e.Result.Status != progress.StatusBuilt {
					b.Fatalf("last line %q: %v", out.last, err)
				}
				lines += out.lines
				dropped += int(e.Result.DroppedSteps)
			}
			b.ReportMetric(float64(lines)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(dropped)/float64(b.N), "dropped/build")
			b.ReportMetric(float64(lines)/float64(b.N), "events/build")
		})
	}
}
