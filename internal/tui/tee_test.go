package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

type diskFull struct{}

func (diskFull) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestTee drives a plain and a JSON renderer through a Tee and checks that each printed what
// it prints alone, and that End reports the first failure after ending every renderer.
func TestTee(t *testing.T) {
	batch := func() []progress.Event {
		return []progress.Event{
			{Type: progress.EventPhaseStart, Time: 10 * time.Millisecond, ID: 1, Name: "Building engine", Steps: 2, Thread: 1},
			{Type: progress.EventStep, Time: 20 * time.Millisecond, ID: 1, Step: 0},
			// The session's state sets Early before any renderer sees the event.
			{Type: progress.EventPhaseFinish, Time: 30 * time.Millisecond, ID: 1},
		}
	}
	clock := func() time.Time { return time.Unix(0, 0) }
	info := progress.BuildInfo{Model: "m.onnx", Engine: "m.engine", Backend: "sim"}
	res := progress.Result{Status: progress.StatusBuilt, Engine: "m.engine", Duration: time.Second}
	drive := func(r progress.Renderer) *kept {
		k := keep(r, clock)
		k.Begin(info)
		k.Handle(batch())
		k.Notice(progress.Notice{Kind: progress.NoticeCancelRequested, Message: "note"})
		k.Tick(clock())
		return k
	}

	var alonePlain, aloneJSON, teePlain, teeJSON bytes.Buffer
	for _, r := range []progress.Renderer{NewPlain(&alonePlain, PlainOptions{Now: clock}), progress.NewJSONLines(&aloneJSON, clock)} {
		if err := drive(r).End(res); err != nil {
			t.Fatal(err)
		}
	}
	tee := progress.Tee{NewPlain(&teePlain, PlainOptions{Now: clock}), progress.NewJSONLines(&teeJSON, clock)}
	if err := drive(tee).End(res); err != nil {
		t.Fatal(err)
	}
	if teePlain.String() != alonePlain.String() || teeJSON.String() != aloneJSON.String() {
		t.Errorf("teed output differs:\nplain:\n%s\nwant:\n%s\njson:\n%s\nwant:\n%s", &teePlain, &alonePlain, &teeJSON, &aloneJSON)
	}
	if !strings.Contains(teeJSON.String(), `"early":true`) {
		t.Errorf("the phase finished at 1/2 steps should be recorded as early:\n%s", &teeJSON)
	}

	var after bytes.Buffer
	broken := progress.Tee{progress.NewJSONLines(diskFull{}, clock), NewPlain(&after, PlainOptions{Now: clock})}
	if err := drive(broken).End(res); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("End = %v, want the failing renderer's error", err)
	}
	if !strings.Contains(after.String(), "Built m.engine") {
		t.Errorf("the renderer after a failing one was not ended:\n%s", &after)
	}
}
