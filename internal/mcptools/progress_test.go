package mcptools

import (
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// line is one v1 JSON event line, as a build's event log holds it.
func line(e progress.Event) []byte { return progress.AppendJSON(nil, &e) }

func start(id, parent, steps int, name string) []byte {
	return line(progress.Event{Type: progress.EventPhaseStart, ID: id, Parent: parent, Name: name, Steps: steps, Thread: 1})
}
func step(id, n int) []byte { return line(progress.Event{Type: progress.EventStep, ID: id, Step: n}) }
func finish(id int) []byte  { return line(progress.Event{Type: progress.EventPhaseFinish, ID: id}) }

func TestPhaseProgress(t *testing.T) {
	type want struct {
		done, total float64
		message     string
	}
	logLine := line(progress.Event{Type: progress.EventLog, Severity: progress.SeverityInfo, Message: "hello"})
	result := line(progress.Event{Type: progress.EventResult, Time: time.Second, Result: &progress.Result{Status: progress.StatusBuilt}})
	tests := []struct {
		name   string
		events [][]byte
		want   want
	}{
		{"root started", [][]byte{start(1, 0, 4, "Building engine")}, want{0, 4, "Building engine"}},
		{"root steps", [][]byte{start(1, 0, 4, "Building engine"), step(1, 0), step(1, 1)}, want{2, 4, "Building engine"}},
		{"open child adds its share of one step", [][]byte{
			start(1, 0, 4, "Building engine"), step(1, 0),
			start(2, 1, 2, "Timing"), step(2, 0),
		}, want{1.5, 4, "Building engine > Timing"}},
		{"the share is nested", [][]byte{
			start(1, 0, 2, "Building engine"),
			start(2, 1, 2, "Timing"), step(2, 0),
			start(3, 2, 4, "conv1"), step(3, 0), step(3, 1),
		}, want{0.75, 2, "Building engine > Timing > conv1"}},
		{"a finished child does not take back its share", [][]byte{
			start(1, 0, 2, "Building engine"),
			start(2, 1, 2, "Timing"), step(2, 0), step(2, 1), finish(2),
		}, want{1, 2, "Building engine"}},
		{"the deepest open phase names the message", [][]byte{
			start(1, 0, 2, "Building engine"),
			start(2, 1, 1, "Timing"), start(3, 2, 1, "conv1"), finish(3), start(4, 2, 1, "conv2"),
		}, want{0, 2, "Building engine > Timing > conv2"}},
		{"a finished root is all done", [][]byte{
			start(1, 0, 3, "Building engine"), step(1, 0), start(2, 1, 1, "Serializing"), step(2, 0), finish(2), step(1, 1), step(1, 2), finish(1), result,
		}, want{3, 3, "Building engine"}},
		{"a root cut short (cancelled) stays where it was", [][]byte{
			start(1, 0, 4, "Building engine"), step(1, 0), start(2, 1, 2, "Timing"), step(2, 0), finish(2), finish(1), result,
		}, want{1.5, 4, "Building engine"}},
		{"a second root adds its steps", [][]byte{
			start(1, 0, 2, "Converting"), step(1, 0), step(1, 1), finish(1),
			start(2, 0, 4, "Building engine"), step(2, 0),
		}, want{3, 6, "Building engine"}},
		{"other lines change nothing", [][]byte{
			start(1, 0, 4, "Building engine"), logLine, []byte("not json"), []byte(`{"v":99,"type":"step"}`), step(1, 0),
		}, want{1, 4, "Building engine"}},
		{"a step past the count is clamped", [][]byte{start(1, 0, 2, "Building engine"), step(1, 7)}, want{2, 2, "Building engine"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPhaseProgress()
			if _, _, _, ok := p.now(); ok {
				t.Fatal("progress before any event")
			}
			for _, e := range tt.events {
				p.apply(e)
				p.now() // as the notifier asks, after every batch
			}
			done, total, msg, ok := p.now()
			if !ok || done != tt.want.done || total != tt.want.total || msg != tt.want.message {
				t.Errorf("now() = %v/%v %q (ok %v), want %v/%v %q", done, total, msg, ok, tt.want.done, tt.want.total, tt.want.message)
			}
		})
	}
}

// TestPhaseProgressNeverDecreases feeds a build whose child phase finishes before its parent's
// step event, one event at a time: every value is at least the one before.
func TestPhaseProgressNeverDecreases(t *testing.T) {
	p := newPhaseProgress()
	events := [][]byte{start(1, 0, 3, "Building engine")}
	for layer := 0; layer < 3; layer++ {
		id := 2 + layer
		events = append(events, start(id, 1, 2, "layer"), step(id, 0), step(id, 1), finish(id), step(1, layer))
	}
	events = append(events, finish(1))
	last := -1.0
	for i, e := range events {
		p.apply(e)
		done, total, _, _ := p.now()
		if done < last || done > total {
			t.Fatalf("after event %d: progress %v/%v, before %v", i, done, total, last)
		}
		last = done
	}
	if last != 3 {
		t.Fatalf("final progress %v, want 3", last)
	}
}
