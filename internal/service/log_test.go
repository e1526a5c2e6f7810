package service

import (
	"context"
	"testing"
	"time"
)

func TestLogSplitsLinesAndWakesReaders(t *testing.T) {
	l := NewLog()
	got := make(chan []Event, 1)
	go func() {
		evs, _, _ := l.Next(context.Background(), 0)
		got <- evs
	}()
	_, _ = l.Write([]byte(`{"v":1,"type":"build"}` + "\n" + `{"v":1,"ty`))
	evs := <-got
	if len(evs) != 1 || evs[0].Type != "build" || evs[0].Seq != 1 {
		t.Fatalf("first read %+v", evs)
	}
	_, _ = l.Write([]byte(`pe":"step"}` + "\n\n" + `{"v":1,"type":"result"}` + "\n" + `{"v":1,"type":"log"}` + "\n"))
	evs, ended, err := l.Next(context.Background(), 1)
	if err != nil || !ended || len(evs) != 2 || evs[0].Type != "step" || evs[1].Type != "result" || evs[1].Seq != 3 {
		t.Fatalf("after 1: %+v ended %v %v", evs, ended, err)
	}
	if evs, ended, _ := l.Next(context.Background(), 3); len(evs) != 0 || !ended {
		t.Errorf("after the result: %+v %v", evs, ended)
	}
	if l.Head() != 3 || string(l.Lines()) != `{"v":1,"type":"build"}`+"\n"+`{"v":1,"type":"step"}`+"\n"+`{"v":1,"type":"result"}`+"\n" {
		t.Errorf("head %d, lines %q", l.Head(), l.Lines())
	}
}

func TestLogNextEndsWithItsContext(t *testing.T) {
	l := NewLog()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := l.Next(ctx, 0); err == nil {
		t.Fatal("Next returned without events or an error")
	}
}

// TestLogViewFollowsAndIsCut: a view shows its run's events, numbers and frames; cut, it keeps
// them and ends with a result of its own, waking its readers; the run's log goes on.
func TestLogViewFollowsAndIsCut(t *testing.T) {
	run := NewLog()
	v := run.view()
	_, _ = run.Write([]byte(`{"v":1,"type":"build"}` + "\n" + `{"v":1,"type":"step"}` + "\n"))
	evs, ended, err := v.Next(context.Background(), 0)
	if err != nil || ended || len(evs) != 2 || v.Head() != 2 || string(v.SSE(evs)) != string(run.SSE(evs)) {
		t.Fatalf("the view: %+v ended %v %v", evs, ended, err)
	}
	woke := make(chan []Event, 1)
	go func() {
		evs, _, _ := v.Next(context.Background(), 2)
		woke <- evs
	}()
	v.end([]byte(`{"v":1,"type":"result","status":"cancelled"}`))
	evs = <-woke
	if len(evs) != 1 || evs[0].Seq != 3 || evs[0].Type != "result" || !v.Ended() {
		t.Fatalf("after the cut: %+v", evs)
	}
	if got := string(v.SSE(evs)); got != "id: 3\nevent: result\ndata: {\"v\":1,\"type\":\"result\",\"status\":\"cancelled\"}\n\n" {
		t.Errorf("the cut view's frame %q", got)
	}
	_, _ = run.Write([]byte(`{"v":1,"type":"step"}` + "\n" + `{"v":1,"type":"result","status":"built"}` + "\n"))
	if run.Head() != 4 || v.Head() != 3 || string(run.result()) != `{"v":1,"type":"result","status":"built"}` {
		t.Errorf("run %d events, view %d; the run's result %s", run.Head(), v.Head(), run.result())
	}
	all, _, _ := run.Next(context.Background(), 0)
	if string(run.SSE(all[:2])) != string(v.SSE(all[:2])) {
		t.Error("the cut view's frames are not the run's")
	}
}

// TestLogViewHoldsTheRunsResult: a view holding back its run's result shows the run's events
// but not its result, until it ends with its own.
func TestLogViewHoldsTheRunsResult(t *testing.T) {
	run := NewLog()
	v := run.view()
	v.holdResult()
	_, _ = run.Write([]byte(`{"v":1,"type":"build"}` + "\n" + `{"v":1,"type":"result","status":"cancelled"}` + "\n"))
	if v.Ended() || v.Head() != 1 || v.result() != nil {
		t.Fatalf("the view shows the run's result: ended %v, head %d", v.Ended(), v.Head())
	}
	v.end([]byte(`{"v":1,"type":"result","status":"timed_out"}`))
	if !v.Ended() || v.Head() != 2 || string(v.result()) != `{"v":1,"type":"result","status":"timed_out"}` {
		t.Fatalf("the view's own result: %s", v.result())
	}
}
