// Package replay plays a recorded build (a trace, see internal/trace) through a renderer with
// the recorded timing, so the live view, the plain log and the JSON stream can be watched, and
// their bugs reproduced, with a real build's events and no GPU.
package replay

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// Options control a replay.
type Options struct {
	// Speed divides the recorded times: 2 plays twice as fast. Zero or +Inf plays as fast as
	// possible, without waiting.
	Speed float64
	// Tick is how often the renderer's clock advances while waiting; zero means one second, as
	// during a build.
	Tick time.Duration
}

// ParseSpeed reads a --speed value: a number above zero, or 0, "inf" or "max" for as fast as
// possible.
func ParseSpeed(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "inf", "+inf", "max":
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || v < 0 {
		return 0, fmt.Errorf("invalid --speed %q: use a number above 0 (2 plays twice as fast), or 0 or inf for as fast as possible", s)
	}
	if math.IsInf(v, 1) {
		return 0, nil
	}
	return v, nil
}

// Play feeds the trace to r as a build's session does, through one progress.State that
// applies every event before r sees it: Begin with the recorded build, the events in batches at their
// recorded times divided by the speed, Tick while waiting, and End with the recorded result
// (a failure saying the trace was cut short when it has none). When ctx is cancelled it stops
// waiting, ends the renderer with a cancelled result and returns ctx.Err(). Notices that the
// build printed were recorded as warning log lines and are replayed as such.
func Play(ctx context.Context, t *trace.Trace, r progress.Renderer, o Options) error {
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	fast := o.Speed <= 0 || math.IsInf(o.Speed, 1)
	due := func(at time.Duration) time.Duration {
		if fast {
			return 0
		}
		return time.Duration(float64(at) / o.Speed)
	}
	start := time.Now()
	st := progress.NewState(t.Info, start)
	r.Begin(st)
	ticker := time.NewTicker(o.Tick)
	defer ticker.Stop()
	var last time.Duration
	events := t.Events
	for len(events) > 0 {
		wait := due(events[0].Time) - time.Since(start)
		for wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return stopped(ctx, st, r, last)
			case now := <-ticker.C:
				r.Tick(now)
			case <-timer.C:
			}
			timer.Stop()
			wait = due(events[0].Time) - time.Since(start)
		}
		if ctx.Err() != nil {
			return stopped(ctx, st, r, last)
		}
		// Everything due by now goes in one batch, as the worker's pipe delivers it.
		elapsed := time.Since(start)
		n := 1
		for n < len(events) && (fast && n < maxBatch || !fast && due(events[n].Time) <= elapsed) {
			n++
		}
		last = events[n-1].Time
		st.Apply(events[:n], time.Now())
		r.Handle(events[:n])
		events = events[n:]
		select {
		case now := <-ticker.C:
			r.Tick(now)
		default:
		}
	}
	res := progress.Result{Status: progress.StatusFailed, Error: "the trace ends without a result: the build was still running, or the trace was cut short", Duration: last}
	if t.Result != nil {
		res = *t.Result
		if !fast && due(res.Duration) > time.Since(start) {
			// Let the view show the time between the last event and the end of the build.
			timer := time.NewTimer(due(res.Duration) - time.Since(start))
			select {
			case <-ctx.Done():
				timer.Stop()
				return stopped(ctx, st, r, last)
			case <-timer.C:
			}
		}
	}
	if err := r.End(st.End(res, time.Now())); err != nil {
		return fmt.Errorf("showing the replay: %w", err)
	}
	return nil
}

// maxBatch bounds a batch when playing as fast as possible, as the worker's reader does.
const maxBatch = 1024

func stopped(ctx context.Context, st *progress.State, r progress.Renderer, last time.Duration) error {
	_ = r.End(st.End(progress.Result{Status: progress.StatusCancelled, Duration: last}, time.Now()))
	return ctx.Err()
}
