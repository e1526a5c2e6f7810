package builder

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// recyclingSource delivers events in batches it refills once the session hands them back
// (Recycle), as the worker's reader does. Recycle poisons every event it gets back, so an
// event the session or a renderer still used after handing its batch back would show up as
// "poison" in the output.
type recyclingSource struct {
	events   chan []progress.Event
	free     chan []progress.Event
	recycled int
}

func (s *recyclingSource) Events() <-chan []progress.Event { return s.events }
func (s *recyclingSource) Cancel() error                   { return nil }
func (s *recyclingSource) Kill() error                     { return nil }
func (s *recyclingSource) Wait() error                     { return nil }

func (s *recyclingSource) Recycle(batch []progress.Event) {
	for i := range batch {
		batch[i] = progress.Event{Type: "poison", Name: "poison", ID: -1}
	}
	s.recycled++
	s.free <- batch
}

func (s *recyclingSource) run(all []progress.Event) {
	for len(all) > 0 {
		var batch []progress.Event
		select {
		case batch = <-s.free:
			batch = batch[:0]
		default:
			batch = make([]progress.Event, 0, 7)
		}
		n := min(7, len(all))
		batch = append(batch, all[:n]...)
		all = all[n:]
		s.events <- batch
	}
	close(s.events)
}

func TestRecycledBatchesArriveWhole(t *testing.T) {
	var all []progress.Event
	at := time.Millisecond
	all = append(all, progress.Event{Type: progress.EventPhaseStart, Time: at, ID: 1, Name: "Building engine", Steps: 40, Thread: 1})
	for i := 0; i < 40; i++ {
		at += time.Millisecond
		all = append(all,
			progress.Event{Type: progress.EventPhaseStart, Time: at, ID: 2 + i, Parent: 1, Name: "Finding fastest tactic for layer " + strconv.Itoa(i), Steps: 2, Thread: 1},
			progress.Event{Type: progress.EventStep, Time: at, ID: 2 + i, Step: 0},
			progress.Event{Type: progress.EventStep, Time: at, ID: 2 + i, Step: 1},
			progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 2 + i},
			progress.Event{Type: progress.EventStep, Time: at, ID: 1, Step: i})
	}
	all = append(all, progress.Event{Type: progress.EventPhaseFinish, Time: at, ID: 1})
	var want bytes.Buffer
	for i := range all {
		want.Write(progress.AppendJSON(nil, &all[i]))
	}
	all = append(all, progress.Event{Type: progress.EventResult, Time: at, Result: &progress.Result{Status: progress.StatusBuilt, Duration: at}})

	src := &recyclingSource{events: make(chan []progress.Event), free: make(chan []progress.Event, 64)}
	go src.run(append([]progress.Event(nil), all...))
	var out bytes.Buffer
	fixed := time.Unix(1000, 0)
	res, err := Drive(src, Config{Frontend: Frontend{NewRenderer: func(progress.Controls) progress.Renderer {
		return progress.NewJSONLines(&out, func() time.Time { return fixed })
	}}})
	if err != nil || res.Status != progress.StatusBuilt {
		t.Fatalf("Drive = %+v, %v; want built", res, err)
	}
	if src.recycled == 0 {
		t.Fatal("the session handed no batch back")
	}
	got := out.Bytes()
	if i := bytes.IndexByte(got, '\n'); bytes.HasPrefix(got, []byte(`{"v":1,"type":"build"`)) && i >= 0 {
		got = got[i+1:] // the renderer's own first line
	}
	if i := bytes.LastIndex(got, []byte(`{"v":1,"type":"result"`)); i >= 0 {
		got = got[:i]
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the renderer saw other events than were sent:\n got %s\nwant %s", got, want.Bytes())
	}
}
