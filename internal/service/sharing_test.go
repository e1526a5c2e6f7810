package service

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// shared is the options of a build two tests' clients share: seconds long, never a cache hit.
const shared = `{"backend": "sim", "sim-speed": 5, "no-timing-cache": true, "sim-seed": 11}`

// lastEvent is the last event of build id's log, decoded.
func lastEvent(t *testing.T, m *Manager, id string) progress.Event {
	t.Helper()
	l, _ := m.Events(id)
	lines := bytes.Split(bytes.TrimSpace(l.Lines()), []byte("\n"))
	e, err := progress.DecodeJSON(lines[len(lines)-1])
	if err != nil || e.Type != progress.EventResult {
		t.Fatalf("build %s's last event %s: %v", id, lines[len(lines)-1], err)
	}
	return e
}

// isPrefix fails unless build short's events, but its result, are the first of build long's:
// it followed the same run from the start.
func isPrefix(t *testing.T, m *Manager, short, long string) {
	t.Helper()
	ls, _ := m.Events(short)
	ll, _ := m.Events(long)
	s, l := ls.Lines(), ll.Lines()
	cut := bytes.LastIndexByte(bytes.TrimSuffix(s, []byte("\n")), '\n') + 1
	if cut == 0 || !bytes.HasPrefix(l, s[:cut]) {
		t.Errorf("build %s's events before its result are not the first of build %s's", short, long)
	}
}

// TestSharerBudgetIsItsOwn: of two clients of one run, the one with a short time budget times
// out alone; the other, without a budget, gets its engine.
func TestSharerBudgetIsItsOwn(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	// Seconds of silence at the end: the build outlasts the short budget by far.
	o := strings.Replace(shared, "{", `{"sim-post-silent": "3s", `, 1)
	long, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, o)})
	if err != nil {
		t.Fatal(err)
	}
	withBudget := strings.Replace(o, "{", `{"timeout": "1s", `, 1)
	short, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, withBudget)})
	if err != nil {
		t.Fatal(err)
	}
	end := wait(t, m, short.ID)
	if end.State != StateTimedOut || !strings.HasPrefix(end.Error, "build exceeded --timeout 1s ") || end.Engine {
		t.Fatalf("the build with the budget: %s %q, want timed_out by its own budget", end.State, end.Error)
	}
	if res := lastEvent(t, m, short.ID); res.Result.Status != progress.StatusTimedOut {
		t.Errorf("its events end with %+v, not its own result", res.Result)
	}
	if s, _ := m.Get(long.ID); s.State != StateRunning {
		t.Fatalf("the build without a budget is %s once the other timed out, want running", s.State)
	}
	if end := wait(t, m, long.ID); end.State != StateSucceeded || !end.Engine {
		t.Fatalf("the build without a budget: %+v", end)
	}
	isPrefix(t, m, short.ID, long.ID)
	if _, err := m.File(short.ID, "engine"); err == nil {
		t.Error("the timed-out build serves an engine")
	}
	if f, err := m.File(long.ID, "engine"); err != nil {
		t.Errorf("the build without a budget has no engine: %v", err)
	} else {
		f.Close()
	}
}

// TestCancelOneSharer: a client that cancels leaves the run at once, cancelled with its own
// result; a hard cancel too; the other client's build runs on to its engine.
func TestCancelOneSharer(t *testing.T) {
	for _, hard := range []bool{false, true} {
		t.Run(map[bool]string{false: "soft", true: "hard"}[hard], func(t *testing.T) {
			e := newEnv(t)
			m := e.manager(t, nil)
			stays, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, shared)})
			if err != nil {
				t.Fatal(err)
			}
			leaves, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, shared)})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, m, leaves.ID, "step")
			s, err := m.Cancel(leaves.ID, hard)
			if err != nil || s.State != StateCancelled || s.Where == nil {
				t.Fatalf("cancel: %+v %v, want cancelled at once, with where it was", s, err)
			}
			if res := lastEvent(t, m, leaves.ID); res.Result.Status != progress.StatusCancelled {
				t.Errorf("its events end with %+v", res.Result)
			}
			if end := wait(t, m, stays.ID); end.State != StateSucceeded || !end.Engine {
				t.Fatalf("the build that stayed: %+v", end)
			}
			if l, _ := m.Events(stays.ID); bytes.Contains(l.Lines(), []byte("Cancel requested")) {
				t.Error("the run was cancelled for the build that stayed")
			}
			isPrefix(t, m, leaves.ID, stays.ID)
			if left, _ := filepath.Glob(filepath.Join(e.state, "builds", leaves.ID, "*.engine")); len(left) > 0 {
				t.Errorf("the cancelled build has an engine: %v", left)
			}
		})
	}
}

// TestCancellingEverySharerCancelsTheRun: the run stops when its last client leaves, with the
// usual ladder: the last one's first cancel at a step boundary, its second at once. A hard
// cancel of another client before it only took that one out.
func TestCancellingEverySharerCancelsTheRun(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	o := `{"backend": "sim", "sim-speed": 0.5, "sim-ignore-cancel": true, "no-timing-cache": true}`
	first, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, o)})
	if err != nil {
		t.Fatal(err)
	}
	last, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, o)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, last.ID, "step")
	if s, _ := m.Cancel(first.ID, true); s.State != StateCancelled {
		t.Fatalf("the first client's hard cancel: %s", s.State)
	}
	if s, _ := m.Get(last.ID); s.State != StateRunning {
		t.Fatalf("the other build is %s after one client left", s.State)
	}
	if _, err := m.Cancel(last.ID, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, last.ID, "log") // the run's cancel notice: the builder ignores it
	if s, _ := m.Get(last.ID); s.State != StateRunning {
		t.Fatalf("the last build is %s after a cancel its builder ignores, want running until it stops", s.State)
	}
	if _, err := m.Cancel(last.ID, true); err != nil {
		t.Fatal(err)
	}
	end := wait(t, m, last.ID)
	if end.State != StateCancelled || end.Engine {
		t.Fatalf("the last build: %+v", end)
	}
	if res := lastEvent(t, m, last.ID); !strings.Contains(res.Result.Error, "stopped") {
		t.Errorf("the run's result %+v, want its worker stopped", res.Result)
	}
	if _, err := os.Stat(filepath.Join(m.owner.dir, first.ID)); !os.IsNotExist(err) {
		t.Errorf("the run's folder is left: %v", err)
	}
}

// TestLateSharerGetsTheEventsFromTheStart: a client that joins a running build reads its
// events from the first, as one that was there from the start.
func TestLateSharerGetsTheEventsFromTheStart(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	early, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, shared)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, early.ID, "step")
	late, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, shared)})
	if err != nil || late.State != StateRunning {
		t.Fatalf("the late build: %+v %v", late, err)
	}
	l, _ := m.Events(late.ID)
	evs, _, err := l.Next(context.Background(), 0)
	if err != nil || evs[0].Seq != 1 || evs[0].Type != "build" {
		t.Fatalf("the late build's first event: %+v %v", evs[0], err)
	}
	for _, id := range []string{early.ID, late.ID} {
		if end := wait(t, m, id); end.State != StateSucceeded {
			t.Fatalf("%+v", end)
		}
	}
	sameRun(t, m, early.ID, late.ID)
}

// TestBudgetOfTheLastSharerStopsTheRun: a build alone on its run whose budget runs out stops
// the run at its next step boundary, and ends timed out, naming the stage, with the run's
// events and a result of its own.
func TestBudgetOfTheLastSharerStopsTheRun(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, "timeout": "1s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	end := wait(t, m, s.ID)
	if end.State != StateTimedOut || !strings.HasPrefix(end.Error, "build exceeded --timeout 1s ") || end.Where == nil {
		t.Fatalf("%+v", end)
	}
	var res progress.Result
	if json.Unmarshal(end.Result, &res) != nil || res.Status != progress.StatusTimedOut {
		t.Fatalf("result %s", end.Result)
	}
	l, _ := m.Events(s.ID)
	if n := bytes.Count(l.Lines(), []byte(`"type":"result"`)); n != 1 {
		t.Errorf("%d result events, want 1", n)
	}
	if !bytes.Contains(l.Lines(), []byte("Cancel requested")) {
		t.Error("the run was not cancelled at a step boundary")
	}
}

// TestOnlyTheBudgetMayDiffer: requests share a run when every option but the time budget is
// the same; one that differs in an option outside the build key (here kill-after) gets a run
// of its own, though its build key is the same.
func TestOnlyTheBudgetMayDiffer(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	o := `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, %s}`
	var ids []string
	for _, extra := range []string{`"kill-after": "10s"`, `"kill-after": "10s", "timeout": "1h"`, `"kill-after": "20s"`} {
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, strings.Replace(o, "%s", extra, 1))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	m.mu.Lock()
	a, b, c := m.builds[ids[0]], m.builds[ids[1]], m.builds[ids[2]]
	shared, apart, sameKey := a.run != nil && a.run == b.run, a.run != c.run, a.key == c.key
	m.mu.Unlock()
	if !shared || !apart || !sameKey {
		t.Fatalf("the same options but the budget share a run: %v; another kill-after does not: %v; with the same build key: %v", shared, apart, sameKey)
	}
	for _, id := range ids {
		if _, err := m.Cancel(id, true); err != nil {
			t.Fatal(err)
		}
		wait(t, m, id)
	}
}
