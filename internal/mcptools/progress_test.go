package mcptools

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/testtraces"
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
	cancelled := line(progress.Event{Type: progress.EventResult, Time: time.Second, Result: &progress.Result{Status: progress.StatusCancelled}})
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
		{"a built build is all done, its root ended early as TensorRT's does", [][]byte{
			start(1, 0, 6, "Building engine"), step(1, 0), step(1, 4), finish(1), result,
		}, want{6, 6, "Building engine"}},
		{"a finished root is all done", [][]byte{
			start(1, 0, 3, "Building engine"), step(1, 0), start(2, 1, 1, "Serializing"), step(2, 0), finish(2), step(1, 1), step(1, 2), finish(1), result,
		}, want{3, 3, "Building engine"}},
		{"a root cut short (cancelled) stays where it was", [][]byte{
			start(1, 0, 4, "Building engine"), step(1, 0), start(2, 1, 2, "Timing"), step(2, 0), finish(2), finish(1), cancelled,
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

// TestPhaseProgressOnRealBuilds feeds every real TensorRT fixture (internal/testtraces), line
// by line: progress and total never go back, progress never passes total, a built build ends
// at its total although TensorRT ends its top phase at step 5 of 6, a failed one short of it,
// and three engine generations count as three top phases.
func TestPhaseProgressOnRealBuilds(t *testing.T) {
	for _, name := range testtraces.Names() {
		t.Run(name, func(t *testing.T) {
			data, err := testtraces.Bytes(name)
			if err != nil {
				t.Fatal(err)
			}
			p := newPhaseProgress()
			last, lastTotal := -1.0, 0.0
			var msg string
			for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
				p.apply(l)
				done, total, m, ok := p.now()
				if !ok {
					continue
				}
				if done < last || total < lastTotal || done > total {
					t.Fatalf("progress %v/%v after %v/%v at %s", done, total, last, lastTotal, l)
				}
				last, lastTotal, msg = done, total, m
			}
			tr := testtraces.Must(name)
			wantTotal := 6.0
			if name == testtraces.TRT10161Opt5 {
				wantTotal = 18
			}
			if lastTotal != wantTotal || (tr.Result.Status == progress.StatusBuilt) != (last == lastTotal) {
				t.Errorf("ended at %v/%v (%s), want the total %v only when built", last, lastTotal, tr.Result.Status, wantTotal)
			}
			if name == testtraces.TRT10161Opt5 && !strings.HasPrefix(msg, "Building engine (generation 3)") {
				t.Errorf("message %q", msg)
			}
		})
	}
	// Halfway through the 110 s Myelin step the message is the path down to it.
	data, _ := testtraces.Bytes(testtraces.TRT1100Silent110)
	p := newPhaseProgress()
	for _, l := range bytes.Split(data, []byte("\n")) {
		p.apply(l)
		if bytes.Contains(l, []byte(`"name":"Evaluating tactic times"`)) {
			break
		}
	}
	if _, _, msg, _ := p.now(); msg != "Building engine > Building engine from subgraph > Computing profile costs > Timing tactics > Timing graph nodes > Evaluating tactic times" {
		t.Errorf("message %q", msg)
	}
}

// TestResultLineNamesTheNode: a failed build's one line says where it failed and the node
// TensorRT's error names.
func TestResultLineNamesTheNode(t *testing.T) {
	r := BuildResult{ID: "b1", State: "failed", Error: "TensorRT could not build the engine",
		Where: &progress.Where{Path: []string{"Building engine", "Timing graph nodes", "Evaluating tactic times"}, Done: 3, Steps: 153, Node: "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)"}}
	want := "failed: TensorRT could not build the engine; in Building engine > Timing graph nodes > Evaluating tactic times (3/153 steps); on node /model/model.6/Conv + PWN(/model/model.7/LeakyRelu); build b1"
	if got := r.line(); got != want {
		t.Errorf("line:\n%s\nwant:\n%s", got, want)
	}
}
