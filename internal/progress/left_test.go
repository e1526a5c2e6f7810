package progress

import (
	"math"
	"testing"
	"time"
)

func TestLeftString(t *testing.T) {
	m, h := time.Minute, time.Hour
	tests := []struct {
		lo, hi time.Duration
		want   string
	}{
		{0, 0, "under a minute"},
		{10 * time.Second, 59 * time.Second, "under a minute"},
		{40 * time.Second, 70 * time.Second, "under 2 min"},
		{3 * m, 5 * m, "about 3–5 min"},
		{3*m + 10*time.Second, 4*m + 50*time.Second, "about 3–5 min"},
		{4 * m, 4 * m, "about 4 min"},
		{12 * m, 17 * m, "about 10–20 min"},
		{20 * m, 20 * m, "about 20 min"},
		{40 * m, 55 * m, "about 40–55 min"},
		{45 * m, 95 * m, "about 40 min–2 h"},
		{5 * m, 90 * m, "under 2 h"},
		{90 * m, 150 * m, "about 1–3 h"},
		{2 * h, 2 * h, "about 2 h"},
		{5 * m, 3 * m, "about 5 min"}, // a high end below the low end is the low end
	}
	for _, tc := range tests {
		l := Left{Low: tc.lo, High: tc.hi}
		if got := l.String(); got != tc.want+" of layer timing left" {
			t.Errorf("Left{%v, %v} = %q, want %q", tc.lo, tc.hi, got, tc.want+" of layer timing left")
		}
	}
}

// layers returns the events of a timing phase of steps layers under a root, with the given
// layers finished one after another on one thread, each taking its duration (0: a
// timing-cache hit, finished without a step), then a step of the timing phase.
func layers(steps int, times ...time.Duration) ([]Event, time.Duration) {
	evs := []Event{
		{Type: EventPhaseStart, Time: 0, ID: 1, Name: "Building engine", Steps: 4},
		{Type: EventPhaseStart, Time: ms(1), ID: 2, Parent: 1, Name: TimingPhase, Steps: steps},
	}
	at := ms(1)
	for i, d := range times {
		id := 10 + i
		evs = append(evs, Event{Type: EventPhaseStart, Time: at, ID: id, Parent: 2, Name: "Finding fastest tactic for layer", Steps: 4})
		at += d
		if d > 0 {
			evs = append(evs, Event{Type: EventStep, Time: at, ID: id, Step: 3})
		}
		evs = append(evs, Event{Type: EventPhaseFinish, Time: at, ID: id}, Event{Type: EventStep, Time: at, ID: 2, Step: i})
	}
	return evs, at
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// spread is the range Left gives for n nodes of the given mean and standard deviation: three
// standard deviations of their sum below the mean, two above.
func spread(n int, mean, sd time.Duration) (lo, hi time.Duration) {
	sum, dev := float64(n)*float64(mean), math.Sqrt(float64(n))*float64(sd)
	return time.Duration(math.Round(max(sum-3*dev, 0))), time.Duration(math.Round(sum + 2*dev))
}

// TestLeft checks the estimate of the timing phase from the layers (nodes) timed so far: the
// nodes left at the mean time per node, give or take the spread of their sum, and nothing where
// the data does not support one.
func TestLeft(t *testing.T) {
	s := time.Second
	mixed := append(repeat(5, 10*s), repeat(5, 30*s)...) // 10 layers: a fast half and a slow half
	mixedLo, mixedHi := spread(10, 20*s, 10*s)
	hitsLo, hitsHi := spread(10, 10*s, 10*s)
	tests := []struct {
		name   string
		steps  int
		times  []time.Duration
		extra  []Event       // applied after the layers, at their times
		after  time.Duration // build time after the last event the estimate is asked for
		cancel bool
		ok     bool
		lo, hi time.Duration
	}{
		{name: "too few layers", steps: 100, times: repeat(MinTimedLayers-1, 10*s)},
		{name: "equal layers", steps: 20, times: repeat(10, 6*s), ok: true, lo: 60 * s, hi: 60 * s},
		{name: "spread", steps: 20, times: mixed, ok: true, lo: mixedLo, hi: mixedHi},
		{name: "half of them hits", steps: 20, times: append(repeat(5, 0), repeat(5, 20*s)...), ok: true, lo: hitsLo, hi: hitsHi},
		{name: "only hits", steps: 1000, times: repeat(10, 0), ok: true},
		{name: "only hits, then silence", steps: 1000, times: repeat(10, 0), after: time.Second},
		{name: "asked a moment later", steps: 20, times: repeat(10, 6*s), after: 5 * s, ok: true, lo: 60 * s, hi: 60 * s},
		{name: "silent longer than any layer", steps: 20, times: mixed, after: 31 * s},
		{name: "a layer runs longer than any before", steps: 20, times: mixed,
			extra: []Event{{Type: EventPhaseStart, ID: 99, Parent: 2, Name: "Finding fastest tactic for big", Steps: 4},
				{Type: EventStep, Time: 31 * s, ID: 99, Step: 0}}, after: 31 * s},
		{name: "a layer runs as long as before", steps: 20, times: mixed,
			extra: []Event{{Type: EventPhaseStart, ID: 99, Parent: 2, Name: "Finding fastest tactic for big", Steps: 4},
				{Type: EventStep, Time: 20 * s, ID: 99, Step: 0}}, after: 25 * s, ok: true, lo: mixedLo, hi: mixedHi},
		{name: "a search in progress at its own pace", steps: 20, times: repeat(10, 6*s),
			extra: []Event{{Type: EventPhaseStart, ID: 99, Parent: 2, Name: "Evaluating tactic times", Steps: 100},
				{Type: EventStep, Time: 10 * s, ID: 99, Step: 9}}, after: 10 * s, ok: true, lo: 90*s + 54*s, hi: 90*s + 60*s},
		{name: "a search in progress, too few of its steps", steps: 20, times: repeat(10, 6*s),
			extra: []Event{{Type: EventPhaseStart, ID: 99, Parent: 2, Name: "Evaluating tactic times", Steps: 100},
				{Type: EventStep, Time: 10 * s, ID: 99, Step: 3}}, after: 10 * s},
		{name: "no layer left", steps: 10, times: repeat(10, 6*s)},
		{name: "timing finished", steps: 20, times: repeat(10, 6*s), extra: []Event{{Type: EventPhaseFinish, ID: 2}}},
		{name: "cancelled", steps: 20, times: repeat(10, 6*s), cancel: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, at := layers(tc.steps, tc.times...)
			last := at
			for _, e := range tc.extra {
				e.Time += at
				last = max(last, e.Time)
				evs = append(evs, e)
			}
			st := NewState(BuildInfo{}, t0)
			st.Apply(evs, t0.Add(last)) // arrives at its build time: no start-up delay
			now := t0.Add(at + tc.after)
			if tc.cancel {
				st.Notice(Notice{Kind: NoticeCancelRequested}, now)
			}
			for _, get := range []struct {
				from string
				left func(time.Time) (Left, bool)
			}{{"state", st.Left}, {"snapshot", st.Snapshot().Left}} {
				l, ok := get.left(now)
				if ok != tc.ok || ok && (l.Low != tc.lo || l.High != tc.hi || l.Phase != 2) {
					t.Errorf("%s: Left = %+v, %v; want %v–%v, %v", get.from, l, ok, tc.lo, tc.hi, tc.ok)
				}
			}
		})
	}
}

// TestLeftParallel: layers timed two at a time finish the phase in half the time; the two
// steps that come at one instant share the stretch before them.
func TestLeftParallel(t *testing.T) {
	s := time.Second
	evs := []Event{
		{Type: EventPhaseStart, Time: 0, ID: 1, Name: TimingPhase, Steps: 26},
	}
	for i := range 6 {
		at := time.Duration(i) * 10 * s
		for th := range 2 {
			evs = append(evs, Event{Type: EventPhaseStart, Time: at, ID: 10 + 2*i + th, Parent: 1, Name: "Finding fastest tactic for l", Steps: 1, Thread: uint64(th)})
		}
		for th := range 2 {
			id := 10 + 2*i + th
			evs = append(evs,
				Event{Type: EventStep, Time: at + 10*s, ID: id, Step: 0},
				Event{Type: EventPhaseFinish, Time: at + 10*s, ID: id},
				Event{Type: EventStep, Time: at + 10*s, ID: 1, Step: 2*i + th})
		}
	}
	st := NewState(BuildInfo{}, t0)
	st.Apply(evs, t0.Add(60*s))
	l, ok := st.Left(t0.Add(60 * s))
	if !ok || l.Low != 70*s || l.High != 70*s {
		t.Fatalf("Left = %+v, %v; want 14 layers, two at a time, of 10s: 70s", l, ok)
	}
}

// TestLeftFollowsTheNewestTimingPhase: a second timing phase (another profile or subgraph)
// starts from scratch.
func TestLeftFollowsTheNewestTimingPhase(t *testing.T) {
	evs, at := layers(20, repeat(10, 6*time.Second)...)
	evs = append(evs, Event{Type: EventPhaseFinish, Time: at, ID: 2},
		Event{Type: EventPhaseStart, Time: at, ID: 50, Parent: 1, Name: TimingPhase, Steps: 20})
	st := NewState(BuildInfo{}, t0)
	st.Apply(evs, t0.Add(at))
	if l, ok := st.Left(t0.Add(at)); ok {
		t.Fatalf("Left = %+v for a timing phase that has timed nothing", l)
	}
}

func TestShortLabel(t *testing.T) {
	tests := []struct{ name, want string }{
		{"Timing graph nodes", "Timing graph nodes"},
		{"Measuring tactic time", "Measuring tactic time"},
		{"Building engine from subgraph", "Building engine from subgraph"},
		{"Finding fastest tactic for features.0.2/HardSwish", "tactic features.0.2/HardSwish"},
		{"Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to features.0.2/HardSwish", "tactic reformat in 0 → features.0.2/HardSwish"},
		{"Finding fastest tactic for Reformatting CopyNode for Output Tensor 12 to head/fc", "tactic reformat out 12 → head/fc"},
		{"Reformatting CopyNode for Input Tensor 1 to x", "reformat in 1 → x"},
		{"Reformatting CopyNode for Input Tensor to x", "Reformatting CopyNode for Input Tensor to x"}, // no index: not the known form
		{"Finding fastest tactic for ", "Finding fastest tactic for "},
		{"Computing costs for conv1", "Computing costs for conv1"},
	}
	for _, tc := range tests {
		if got := ShortLabel(tc.name).String(); got != tc.want {
			t.Errorf("ShortLabel(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if l := ShortLabel("Finding fastest tactic for Reformatting CopyNode for Input Tensor 0 to x"); l.Kind != "tactic reformat in 0 →" || l.Subject != "x" {
		t.Errorf("kind %q, subject %q", l.Kind, l.Subject)
	}
}
