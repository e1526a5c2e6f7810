// Package replay plays a recorded build (a trace, see internal/trace) through a renderer with
// the recorded timing, so the live view, the plain log and the JSON stream can be watched, and
// their bugs reproduced, with a real build's events and no GPU.
package replay

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
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
	// Clock is the replay's clock, which the session reads and which the renderer should read
	// too (its Now), so the footer's elapsed time and the rows' times are both the recorded
	// build's; nil: PlayReader makes one.
	Clock *Clock
}

// Clock is the time of the recorded build as a replay plays it: at Speed 2, two seconds of the
// recording per second of wall time; played as fast as possible, the time of the newest event
// delivered. Its zero is when NewClock was called; Now reads it from any goroutine.
type Clock struct {
	base  time.Time
	speed float64      // 0: as fast as possible
	shown atomic.Int64 // the recorded time of the newest event delivered, in ns
}

// NewClock returns a clock that starts now and runs at speed (0 or +Inf: as fast as possible).
func NewClock(speed float64) *Clock {
	if math.IsInf(speed, 1) || speed < 0 {
		speed = 0
	}
	return &Clock{base: time.Now(), speed: speed}
}

// Now is the recorded build's time, as an instant counted from the clock's start: never
// behind the newest event delivered.
func (c *Clock) Now() time.Time { return c.base.Add(c.recorded()) }

func (c *Clock) recorded() time.Duration {
	shown := time.Duration(c.shown.Load())
	if c.speed == 0 {
		return shown
	}
	return max(shown, time.Duration(float64(time.Since(c.base))*c.speed))
}

// delivered moves the clock to at, the recorded time of an event handed to the session.
func (c *Clock) delivered(at time.Duration) {
	for {
		old := c.shown.Load()
		if int64(at) <= old || c.shown.CompareAndSwap(old, int64(at)) {
			return
		}
	}
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

// PlayReader plays the trace read from tr through r as a build would show it: the events go
// through the same session loop a build uses (builder.Drive), which applies them to its one
// progress.State before r sees them, in batches at their recorded times divided by the speed,
// with the session's ticks while it waits, and End with the recorded result (a failure saying
// the trace was cut short when it has none). It holds a batch of events at a time, so a trace
// of any length replays in bounded memory; a damaged line ends the replay with its error (a
// *TraceError). When ctx is cancelled the replay stops, r is ended with a cancelled result,
// and PlayReader returns ctx.Err(). Notices that the build printed were recorded as warning
// log lines and are replayed as such.
func PlayReader(ctx context.Context, tr *trace.Reader, r progress.Renderer, o Options) error {
	// The build line comes first: read ahead one event so that Begin shows the build.
	first, err := tr.Next()
	if err != nil && err != io.EOF {
		return &TraceError{Err: err}
	}
	pending := &first
	if err == io.EOF {
		pending = nil
	}
	next := func() (progress.Event, error) {
		if pending != nil {
			e := *pending
			pending = nil
			return e, nil
		}
		if err == io.EOF {
			return progress.Event{}, io.EOF
		}
		return tr.Next()
	}
	return play(ctx, tr.Info, next, func() *progress.Result { return tr.Result }, r, o)
}

func play(ctx context.Context, info progress.BuildInfo, next func() (progress.Event, error), result func() *progress.Result, r progress.Renderer, o Options) error {
	clock := o.Clock
	if clock == nil {
		clock = NewClock(o.Speed)
	}
	src := &source{next: next, result: result, clock: clock, events: make(chan []progress.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go src.run()
	var endErr error
	_, _ = builder.Drive(src, builder.Config{
		Frontend: builder.Frontend{
			NewRenderer: func(progress.Controls) progress.Renderer {
				return endError{Renderer: r, err: &endErr}
			},
			Tick:          o.Tick,
			CancelMessage: "Replay stopped.",
		},
		Info: info,
		// The session's clock is the recording's, so the elapsed time it and the renderer show
		// agree with the events' times, whatever the speed.
		Now:  clock.Now,
		Stop: ctx.Done(),
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if src.err != nil {
		return &TraceError{Err: src.err}
	}
	if endErr != nil {
		return fmt.Errorf("showing the replay: %w", endErr)
	}
	return nil
}

// TraceError reports that the trace could not be read: it is not a trace, or it is damaged.
type TraceError struct{ Err error }

func (e *TraceError) Error() string { return e.Err.Error() }
func (e *TraceError) Unwrap() error { return e.Err }

// endError keeps the error of the renderer's End, which the session does not return for a
// build that did not succeed (a replayed failure is a successful replay).
type endError struct {
	progress.Renderer
	err *error
}

func (e endError) End(res progress.Result) error {
	*e.err = e.Renderer.End(res)
	return *e.err
}

// maxBatch bounds a batch when playing as fast as possible, as the worker's reader does.
const maxBatch = 1024

// source delivers a trace's events to the session at their recorded times, as a worker
// would, and ends with the recorded result. Cancel and Kill stop it at once: a replay has no
// step boundary to wait for.
type source struct {
	next   func() (progress.Event, error)
	result func() *progress.Result
	clock  *Clock
	events chan []progress.Event
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
	err    error // a damaged trace; valid after done
}

// Events implements builder.Source.
func (s *source) Events() <-chan []progress.Event { return s.events }

// Cancel implements builder.Source.
func (s *source) Cancel() error {
	s.once.Do(func() { close(s.stop) })
	return nil
}

// Kill implements builder.Source.
func (s *source) Kill() error { return s.Cancel() }

// Wait implements builder.Source.
func (s *source) Wait() error {
	<-s.done
	return nil
}

// run sends the batches, then the result, and closes the channel.
func (s *source) run() {
	defer close(s.done)
	defer close(s.events)
	speed := s.clock.speed
	fast := speed == 0
	due := func(at time.Duration) time.Duration {
		if fast {
			return 0
		}
		return time.Duration(float64(at) / speed)
	}
	start := s.clock.base
	// wait sleeps until the build time at is due; false: the replay was stopped.
	wait := func(at time.Duration) bool {
		d := due(at) - time.Since(start)
		if d <= 0 {
			select {
			case <-s.stop:
				return false
			default:
				return true
			}
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-s.stop:
			return false
		case <-timer.C:
			return true
		}
	}
	send := func(batch []progress.Event) bool {
		select {
		case s.events <- batch:
			return true
		case <-s.stop:
			return false
		}
	}
	var last time.Duration
	end := func(res progress.Result) {
		s.clock.delivered(res.Duration)
		s.events <- []progress.Event{{Type: progress.EventResult, Time: res.Duration, Result: &res}}
	}
	stopped := func() { end(progress.Result{Status: progress.StatusCancelled, Duration: last}) }
	pending, err := s.next()
	for err == nil {
		if !wait(pending.Time) {
			stopped()
			return
		}
		// Everything due by now goes in one batch, as the worker's pipe delivers it.
		elapsed := time.Since(start)
		batch := []progress.Event{pending}
		for {
			if pending, err = s.next(); err != nil {
				break
			}
			if fast && len(batch) < maxBatch || !fast && due(pending.Time) <= elapsed {
				batch = append(batch, pending)
				continue
			}
			break
		}
		last = batch[len(batch)-1].Time
		s.clock.delivered(last)
		if !send(batch) {
			stopped()
			return
		}
	}
	if err != io.EOF {
		s.err = err
		end(progress.Result{Status: progress.StatusFailed, Error: "the trace is damaged: " + err.Error(), Duration: last})
		return
	}
	res := progress.Result{Status: progress.StatusFailed, Error: "the trace ends without a result: the build was still running, or the trace was cut short", Duration: last}
	if r := s.result(); r != nil {
		res = *r
		// Let the view show the time between the last event and the end of the build.
		if !wait(res.Duration) {
			stopped()
			return
		}
	}
	end(res)
}
