package replay

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// log is a renderer that records every call.
type log struct {
	mu      sync.Mutex
	info    progress.BuildInfo
	batches [][]progress.Event
	at      []time.Duration // when each batch arrived, from Begin
	ticks   int
	res     *progress.Result
	begun   time.Time
}

func (l *log) Begin(v progress.View) { l.info, l.begun = v.Info(), time.Now() }
func (l *log) Handle(b []progress.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, append([]progress.Event(nil), b...))
	l.at = append(l.at, time.Since(l.begun))
}
func (l *log) Notice(progress.Notice) {}
func (l *log) Tick(time.Time)         { l.ticks++ }
func (l *log) End(res progress.Result) error {
	l.res = &res
	return nil
}

func (l *log) events() []progress.Event {
	var all []progress.Event
	for _, b := range l.batches {
		all = append(all, b...)
	}
	return all
}

// synthetic returns a trace of n steps of one phase, spread evenly over span.
func synthetic(n int, span time.Duration, withResult bool) *trace.Trace {
	t := &trace.Trace{Info: progress.BuildInfo{Model: "m.onnx", Engine: "m.engine", Backend: "sim"}}
	t.Events = append(t.Events, progress.Event{Type: progress.EventPhaseStart, ID: 1, Name: "Building engine", Steps: n, Thread: 1})
	for i := 0; i < n; i++ {
		t.Events = append(t.Events, progress.Event{Type: progress.EventStep, Time: span * time.Duration(i+1) / time.Duration(n), ID: 1, Step: i})
	}
	t.Events = append(t.Events, progress.Event{Type: progress.EventPhaseFinish, Time: span, ID: 1})
	if withResult {
		t.Result = &progress.Result{Status: progress.StatusBuilt, Engine: "m.engine", Duration: span}
	}
	return t
}

// hung is how long a replay may run before the test gives up on it: every replay here ends
// within a second or so when it is right, and takes an hour or more when it waits for what it
// should not, so this only stops a hung test.
const hung = time.Minute

// TestPlayTiming checks the recorded timing by events, not by a bound on how long a replay
// took: no batch arrives before its recorded time divided by the speed, and a replay that
// must not wait for the recorded times (as fast as possible, or at a speed that makes an hour
// of recording a fraction of a second) ends: waiting for them would take an hour or more.
func TestPlayTiming(t *testing.T) {
	tests := []struct {
		name  string
		speed float64
		span  time.Duration
	}{
		{"as fast as possible", 0, 1000 * time.Hour},
		{"infinite speed", math.Inf(1), 1000 * time.Hour},
		{"ten thousand times faster", 10000, time.Hour},
		{"ten times faster", 10, 2 * time.Second},
		{"real time", 1, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := synthetic(50, tt.span, true)
			l := &log{}
			ctx, cancel := context.WithTimeout(context.Background(), hung)
			defer cancel()
			start := time.Now()
			err := Play(ctx, tr, l, Options{Speed: tt.speed})
			took := time.Since(start)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the replay of %v at speed %v was still running after %v: it waits for more than the recorded times divided by the speed", tt.span, tt.speed, hung)
			}
			if err != nil {
				t.Fatal(err)
			}
			fast := tt.speed == 0 || math.IsInf(tt.speed, 1)
			if due := time.Duration(float64(tt.span) / tt.speed); !fast && took < due {
				t.Errorf("the replay took %v, less than the %v the recording lasts at speed %v", took, due, tt.speed)
			}
			got := l.events()
			if len(got) != len(tr.Events) {
				t.Fatalf("%d events replayed, want %d", len(got), len(tr.Events))
			}
			for i := range got {
				if got[i].Time != tr.Events[i].Time || got[i].Type != tr.Events[i].Type {
					t.Fatalf("event %d: %+v, want %+v", i, got[i], tr.Events[i])
				}
			}
			if l.res == nil || l.res.Status != progress.StatusBuilt || l.info.Model != "m.onnx" {
				t.Errorf("result %+v, info %+v", l.res, l.info)
			}
			if !fast {
				// No batch may arrive before its time.
				for i, b := range l.batches {
					if due := time.Duration(float64(b[len(b)-1].Time) / tt.speed); l.at[i] < due-5*time.Millisecond {
						t.Errorf("batch %d arrived at %v, its last event is due at %v", i, l.at[i], due)
					}
				}
			}
		})
	}
}

func TestPlayTicksDuringSilence(t *testing.T) {
	tr := synthetic(1, 400*time.Millisecond, true)
	l := &log{}
	if err := Play(context.Background(), tr, l, Options{Speed: 1, Tick: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if l.ticks < 8 {
		t.Errorf("%d ticks during 400ms of recorded silence at 20ms a tick, want at least 8", l.ticks)
	}
}

func TestPlayFastBatches(t *testing.T) {
	tr := synthetic(5000, time.Minute, true)
	l := &log{}
	if err := Play(context.Background(), tr, l, Options{}); err != nil {
		t.Fatal(err)
	}
	for i, b := range l.batches {
		if len(b) > maxBatch {
			t.Errorf("batch %d holds %d events, more than %d", i, len(b), maxBatch)
		}
	}
	if len(l.events()) != len(tr.Events) {
		t.Errorf("%d events replayed, want %d", len(l.events()), len(tr.Events))
	}
}

func TestPlayCancel(t *testing.T) {
	tr := synthetic(10, time.Hour, true)
	l := &log{}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Play(ctx, tr, l, Options{Speed: 1})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Play = %v, want the context's error", err)
	}
	if l.res == nil || l.res.Status != progress.StatusCancelled {
		t.Errorf("ended with %+v, want a cancelled result", l.res)
	}
	if n := len(l.events()); n != 1 {
		t.Errorf("%d events shown before the cancel, want only the phase start at 0s", n)
	}
}

func TestPlayWithoutResult(t *testing.T) {
	l := &log{}
	if err := Play(context.Background(), synthetic(3, time.Second, false), l, Options{}); err != nil {
		t.Fatal(err)
	}
	if l.res == nil || l.res.Status != progress.StatusFailed || !strings.Contains(l.res.Error, "cut short") {
		t.Errorf("ended with %+v", l.res)
	}
}

func TestParseSpeed(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true}, {"2.5", 2.5, true}, {"0", 0, true}, {"inf", 0, true}, {"Inf", 0, true}, {"max", 0, true},
		{"+Inf", 0, true}, {"-1", 0, false}, {"fast", 0, false}, {"NaN", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSpeed(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseSpeed(%q) = %v, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--speed") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
}

// tickLog records the clock readings the session ticks the renderer with.
type tickLog struct {
	log
	tickAt []time.Time
}

func (l *tickLog) Tick(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tickAt = append(l.tickAt, now)
}

// TestPlayClockIsRecorded: the session and the renderer read the recording's clock, so the
// elapsed time a view shows is the recorded build's (as the rows' times are), not the wall
// time of the replay: at speed 20 a tick late in the replay reads far more than the wall time
// the replay took, and played as fast as possible the clock ends at the recorded duration.
func TestPlayClockIsRecorded(t *testing.T) {
	t.Run("speed 20", func(t *testing.T) {
		span := 2 * time.Second
		clock := NewClock(20)
		l := &tickLog{}
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		if err := Play(ctx, synthetic(40, span, true), l, Options{Speed: 20, Tick: 5 * time.Millisecond, Clock: clock}); err != nil {
			t.Fatal(err)
		}
		wall := time.Since(clock.base)
		var latest time.Duration
		for _, at := range l.tickAt {
			latest = max(latest, at.Sub(clock.base))
		}
		if latest <= wall {
			t.Errorf("the latest tick read %v after the start, the replay took %v of wall time: the ticks read the wall clock, not the recording's", latest, wall)
		}
		if got := clock.Now().Sub(clock.base); got < span {
			t.Errorf("the clock reads %v at the end, less than the %v recorded", got, span)
		}
	})
	t.Run("as fast as possible", func(t *testing.T) {
		span := 1000 * time.Hour
		clock := NewClock(0)
		l := &tickLog{}
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		if err := Play(ctx, synthetic(50, span, true), l, Options{Clock: clock}); err != nil {
			t.Fatal(err)
		}
		if got := clock.Now().Sub(clock.base); got != span {
			t.Errorf("the clock reads %v at the end, want the recorded %v", got, span)
		}
	})
}
