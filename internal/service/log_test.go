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
