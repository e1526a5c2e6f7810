package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder/buildertest"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/history"
)

// TestMain lets the test binary be the build worker and the probe, as trtbuild is.
func TestMain(m *testing.M) { buildertest.Main(m) }

// env is a model root with the bundled convnet model, and a state dir.
type env struct {
	models, state string
}

func newEnv(t *testing.T) env {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the timing cache's auto folder
	e := env{models: t.TempDir(), state: filepath.Join(t.TempDir(), "state")}
	data, err := os.ReadFile("../../testdata/models/convnet.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.models, "convnet.onnx"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e env) manager(t *testing.T, mutate func(*Config)) *Manager {
	t.Helper()
	cfg := Config{StateDir: e.state, ModelRoot: e.models, SimSlots: 4, KeepHistory: true,
		EngineCache: builder.EngineCache{Dir: filepath.Join(e.state, "engines"), Size: "1G", Trust: "self"},
		Refused:     map[string]string{"report": "the server writes it"}}
	if mutate != nil {
		mutate(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = m.Shutdown(ctx)
		m.Close()
	})
	return m
}

func opts(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func wait(t *testing.T, m *Manager, id string) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := m.Wait(ctx, id)
	if err != nil {
		t.Fatalf("build %s did not end: %v", id, err)
	}
	return s
}

// waitFor waits until the build's log has an event of type typ.
func waitFor(t *testing.T, m *Manager, id, typ string) {
	t.Helper()
	waitForEvent(t, m, id, typ+" event", func(e Event) bool { return e.Type == typ })
}

// waitForEvent waits until the build's log has an event that is what want, described as what.
func waitForEvent(t *testing.T, m *Manager, id, what string, want func(Event) bool) {
	t.Helper()
	l, ok := m.Events(id)
	if !ok {
		t.Fatalf("no build %s", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var after int64
	for {
		evs, ended, err := l.Next(ctx, after)
		if err != nil {
			t.Fatalf("no %s: %v", what, err)
		}
		for _, e := range evs {
			if want(e) {
				return
			}
			after = e.Seq
		}
		if ended {
			t.Fatalf("the build ended with no %s", what)
		}
	}
}

func TestBuildSucceedsWithTheEventsOfProgressJSON(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, created, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50}`)})
	if err != nil || !created || s.State != StateQueued && s.State != StateRunning {
		t.Fatalf("submit: %+v %v %v", s, created, err)
	}
	if !strings.HasPrefix(s.Key, builder.KeyPrefix) {
		t.Errorf("key %q", s.Key)
	}
	end := wait(t, m, s.ID)
	if end.State != StateSucceeded || !end.Engine || end.Ended == nil {
		t.Fatalf("ended %+v", end)
	}
	if end.Along == nil || *end.Along != 1 || s.Along != nil {
		t.Errorf("along: %v when it succeeded, %v when it was submitted; want 1 and none", end.Along, s.Along)
	}
	for _, snap := range []Snapshot{end, m.List("", 1, "")[0], s} {
		want, err := json.Marshal(snap)
		if err != nil || string(snap.AppendJSON(nil)) != string(want) {
			t.Errorf("AppendJSON %s, want %s", snap.AppendJSON(nil), want)
		}
	}
	l, _ := m.Events(s.ID)
	evs, ended, err := l.Next(context.Background(), 0)
	if err != nil || !ended {
		t.Fatalf("log: ended %v, %v", ended, err)
	}
	if evs[0].Type != "build" || evs[len(evs)-1].Type != "result" || evs[0].Seq != 1 || evs[len(evs)-1].Seq != int64(len(evs)) {
		t.Errorf("events run %s#%d … %s#%d", evs[0].Type, evs[0].Seq, evs[len(evs)-1].Type, evs[len(evs)-1].Seq)
	}
	types := map[string]int{}
	for _, ev := range evs {
		types[ev.Type]++
	}
	if types["phase_start"] == 0 || types["phase_start"] != types["phase_finish"] || types["step"] == 0 {
		t.Errorf("event types %v", types)
	}
	f, err := m.File(s.ID, "engine")
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 23)
	_, _ = f.Read(head)
	f.Close()
	if string(head) != "TRTBUILD-SIMULATED-PLAN" {
		t.Errorf("engine begins %q", head)
	}
	for _, kind := range []string{"report", "trace"} {
		f, err := m.File(s.ID, kind)
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		f.Close()
	}
	trace, _ := os.ReadFile(filepath.Join(e.state, "builds", s.ID, "events.jsonl"))
	if string(trace) != string(l.Lines()) {
		t.Errorf("events.jsonl is not the log")
	}
}

func TestCancelRunningAndQueued(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, func(c *Config) { c.SimSlots = 1 })
	slow := `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, "sim-seed": %d}`
	first, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, 1))})
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, 2))})
	if err != nil {
		t.Fatal(err)
	}
	if second.State != StateQueued || second.Position != 1 {
		t.Fatalf("second %+v, want queued at 1", second)
	}
	waitFor(t, m, first.ID, "step")
	if s, err := m.Cancel(second.ID, false); err != nil || s.State != StateCancelled {
		t.Fatalf("cancel queued: %+v %v", s, err)
	}
	l, _ := m.Events(second.ID)
	if evs, ended, _ := l.Next(context.Background(), 0); !ended || len(evs) != 1 || evs[0].Type != "result" {
		t.Errorf("a queued build's log: %d events, ended %v", len(evs), ended)
	}
	if _, err := m.Cancel(first.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Cancel(first.ID, false); err != nil { // again: no harder
		t.Fatal(err)
	}
	end := wait(t, m, first.ID)
	if end.State != StateCancelled || end.Engine || end.Where == nil {
		t.Fatalf("cancelled build %+v", end)
	}
	// How far it got: some of the way, not all of it; the queued build never began.
	if end.Along == nil || *end.Along <= 0 || *end.Along >= 1 {
		t.Errorf("a build cancelled after its first step is %v along", end.Along)
	}
	if q, _ := m.Get(second.ID); q.Along != nil {
		t.Errorf("a build cancelled in the queue is %v along", *q.Along)
	}
	if _, err := m.File(first.ID, "engine"); err == nil {
		t.Error("a cancelled build serves an engine")
	}
	if left, _ := filepath.Glob(filepath.Join(e.state, "builds", first.ID, "*.engine")); len(left) > 0 {
		t.Errorf("engine files of a cancelled build: %v", left)
	}
	if _, err := m.Cancel("000000000000-00000000", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestHardCancelStopsAnIgnoringBuilder(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "sim-ignore-cancel": true, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "step")
	if _, err := m.Cancel(s.ID, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "log") // the cancel notice
	if _, err := m.Cancel(s.ID, true); err != nil {
		t.Fatal(err)
	}
	if end := wait(t, m, s.ID); end.State != StateCancelled {
		t.Fatalf("hard-cancelled build %+v", end)
	}
}

func TestSameKeyFollowsOneRunAndIdempotencyKeyReplays(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	o := `{"backend": "sim", "sim-speed": 2, "no-timing-cache": true}`
	a, created, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, o), IdempotencyKey: "k1"})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	// The same build: a build of its own that follows the same run.
	b, created, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"sim-speed": 2, "backend": "sim", "no-timing-cache": true}`)})
	if err != nil || !created || b.ID == a.ID {
		t.Fatalf("same key: %+v created %v %v, want a build of its own", b, created, err)
	}
	c, created, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{ "backend":"sim","sim-speed":2, "no-timing-cache":true }`), IdempotencyKey: "k1"})
	if err != nil || created || c.ID != a.ID {
		t.Fatalf("idempotent replay: %+v %v %v", c, created, err)
	}
	_, _, err = m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "fp16": true}`), IdempotencyKey: "k1"})
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != KindConflict {
		t.Fatalf("another request with the key: %v", err)
	}
	for _, id := range []string{a.ID, b.ID} {
		if end := wait(t, m, id); end.State != StateSucceeded || !end.Engine {
			t.Fatalf("%+v", end)
		}
	}
	sameRun(t, m, a.ID, b.ID)
	ea, eb := filepath.Join(e.state, "builds", a.ID, "convnet.engine"), filepath.Join(e.state, "builds", b.ID, "convnet.engine")
	if sa, sb := stat(t, ea), stat(t, eb); !os.SameFile(sa, sb) {
		t.Errorf("the two builds' engines are two files, not the run's one")
	}
	if left, _ := os.ReadDir(m.owner.dir); len(left) != 0 {
		t.Errorf("the run's folder is left: %v", left)
	}
	// The same build again is an engine cache hit: succeeded at once, a build of its own.
	hit, created, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, o)})
	if err != nil || !created || hit.ID == a.ID || hit.State != StateSucceeded || !hit.Engine {
		t.Fatalf("cache hit: %+v %v %v", hit, created, err)
	}
	var res struct {
		Cached bool `json:"cached"`
	}
	if json.Unmarshal(hit.Result, &res) != nil || !res.Cached {
		t.Errorf("cache hit's result %s", hit.Result)
	}
}

// sameRun fails unless the builds followed one run to its end: the same events, the run's
// build line (with its start) first and its result last.
func sameRun(t *testing.T, m *Manager, ids ...string) {
	t.Helper()
	var first []byte
	for i, id := range ids {
		l, ok := m.Events(id)
		if !ok {
			t.Fatalf("no build %s", id)
		}
		if i == 0 {
			first = l.Lines()
		} else if string(l.Lines()) != string(first) {
			t.Errorf("build %s's events are not build %s's: they followed two runs", id, ids[0])
		}
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func TestRefusedRequests(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.onnx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.onnx"), filepath.Join(e.models, "out.onnx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("convnet.onnx", filepath.Join(e.models, "in.onnx")); err != nil {
		t.Fatal(err)
	}
	dynamic, err := os.ReadFile("../../testdata/models/dynamic_batch.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.models, "dynamic_batch.onnx"), dynamic, 0o644); err != nil {
		t.Fatal(err)
	}
	fifos, err := makeFIFO(filepath.Join(e.models, "fifo.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, nil)
	for _, tt := range []struct {
		model, options string
		kind           Kind
		want           string
	}{
		{"", `{}`, KindInvalid, "no model given"},
		{"../convnet.onnx", `{}`, KindInvalid, "leads out of the model root"},
		{"a/../../convnet.onnx", `{}`, KindInvalid, "leads out of the model root"},
		{filepath.Join(e.models, "convnet.onnx"), `{}`, KindInvalid, "is an absolute path"},
		{"out.onnx", `{"backend": "sim"}`, KindInvalid, "model out.onnx is a symbolic link; name the file itself"},
		{"in.onnx", `{"backend": "sim"}`, KindInvalid, "model in.onnx is a symbolic link; name the file itself"},
		{"fifo.onnx", `{"backend": "sim"}`, KindInvalid, "model fifo.onnx is a named pipe (FIFO), not a regular file"},
		{"missing.onnx", `{}`, KindNotFound, "no model missing.onnx in the model root"},
		{"convnet.onnx", `{"report": "/etc/x"}`, KindInvalid, `option "report" cannot be set here`},
		{"convnet.onnx", `{"fp61": true}`, KindInvalid, `unknown option "fp61"`},
		{"convnet.onnx", `{"backend": "sim", "shapes": "nope:1x2"}`, KindInvalid, "nope"},
		{"convnet.onnx", `{"backend": "warp"}`, KindInvalid, "warp"},
		// Shapes TensorRT cannot build for: the preflight's one line, as the CLI says it.
		{"dynamic_batch.onnx", `{"backend": "sim", "shapes": "images:0x3x64x64"}`, KindInvalid,
			`input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more`},
		{"dynamic_batch.onnx", `{"backend": "sim", "shapes": "images:9223372036854775807x3x64x64"}`, KindInvalid,
			`input "images": the shape 9223372036854775807x3x64x64 is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; check the shape flags for a typo`},
	} {
		if tt.model == "fifo.onnx" && !fifos {
			continue
		}
		t.Run(tt.model+tt.options, func(t *testing.T) {
			_, _, err := m.Submit(Request{Model: tt.model, Options: opts(t, tt.options)})
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %v, want a RequestError", err)
			}
			if re.Kind != tt.kind || !strings.Contains(re.Error(), tt.want) || strings.Contains(re.Error(), "\n") {
				t.Errorf("got kind %d %q, want kind %d with %q", re.Kind, re.Error(), tt.kind, tt.want)
			}
		})
	}
	// A folder on the way may be a link that stays inside the root; the model's own name may not.
	if err := os.Symlink(".", filepath.Join(e.models, "here")); err != nil {
		t.Fatal(err)
	}
	s, _, err := m.Submit(Request{Model: "here/convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	if end := wait(t, m, s.ID); end.State != StateSucceeded {
		t.Errorf("%+v", end)
	}
	if dirs, _ := os.ReadDir(filepath.Join(e.state, "builds")); len(dirs) != 1 {
		t.Errorf("refused builds left folders: %d in builds/", len(dirs))
	}
}

func TestHistoryAcrossRestarts(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50}`), IdempotencyKey: "once"})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, m, s.ID)
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close()

	// A build a killed server left running, with an unfinished engine file beside it.
	st, err := history.Open(filepath.Join(e.state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	dead := history.Build{ID: newID(time.Now()), State: StateRunning, Model: "convnet.onnx", Key: "k", Created: time.Now(), Started: time.Now()}
	if err := st.Put(dead); err != nil {
		t.Fatal(err)
	}
	st.Close()
	deadDir := filepath.Join(e.state, "builds", dead.ID)
	if err := os.MkdirAll(deadDir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(deadDir, ".convnet.engine.trtbuild-123.tmp")
	if err := os.WriteFile(tmp, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}

	m2 := e.manager(t, nil)
	list := m2.List("", 0, "")
	if len(list) != 2 || list[0].ID != dead.ID || list[1].ID != s.ID {
		t.Fatalf("after restart: %+v", list)
	}
	if list[0].State != StateInterrupted || list[1].State != StateSucceeded || !list[1].Engine {
		t.Errorf("states %s, %s", list[0].State, list[1].State)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the interrupted build's temporary file is still there: %v", err)
	}
	l, _ := m2.Events(dead.ID)
	if evs, ended, _ := l.Next(context.Background(), 0); !ended || evs[len(evs)-1].Type != "result" {
		t.Errorf("interrupted build's events end %v", ended)
	}
	l, _ = m2.Events(s.ID)
	if evs, ended, _ := l.Next(context.Background(), 0); !ended || evs[0].Type != "build" {
		t.Errorf("the old build's events are not replayed")
	}
	if again, created, err := m2.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50}`), IdempotencyKey: "once"}); err != nil || created || again.ID != s.ID {
		t.Errorf("idempotency key after restart: %+v %v %v", again, created, err)
	}
	if got := m2.List(StateSucceeded, 1, ""); len(got) != 1 || got[0].ID != s.ID {
		t.Errorf("filter: %+v", got)
	}
	if got := m2.List("", 0, dead.ID); len(got) != 1 || got[0].ID != s.ID {
		t.Errorf("before: %+v", got)
	}
}

func TestShutdownRefusesAndCancels(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "step")
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Get(s.ID); got.State != StateCancelled {
		t.Errorf("after shutdown: %+v", got)
	}
	_, _, err = m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim"}`)})
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != KindUnavailable {
		t.Errorf("submit while draining: %v", err)
	}
}

// TestStopLadder: Stop is a server's shutdown ladder: a build that ignores the cancel (its
// builder never reaches a step boundary it honours) keeps running through the first rung, and
// ends, its worker stopped, once the second comes (now closed, as a second signal does); a
// submission meanwhile is refused as unavailable.
func TestStopLadder(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, "sim-ignore-cancel": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, s.ID, "step")
	now := make(chan struct{})
	stopped := make(chan error, 1)
	go func() { stopped <- m.Stop(time.Hour, now) }()
	waitForText(t, m, s.ID, "Cancel requested")
	_, _, err = m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim"}`)})
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != KindUnavailable {
		t.Errorf("submit while stopping: %v", err)
	}
	if got, _ := m.Get(s.ID); got.State != StateRunning {
		t.Fatalf("after the first rung the build ignoring it is %s, want running", got.State)
	}
	close(now)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got, _ := m.Get(s.ID)
	if got.State != StateCancelled || got.Engine {
		t.Fatalf("after the second rung: %+v", got)
	}
	l, _ := m.Events(s.ID)
	if !strings.Contains(string(l.Lines()), "Stopping the build worker now.") {
		t.Errorf("the build's events do not say its worker was stopped:\n%s", l.Lines())
	}
}

// waitForText waits until build id's log has a line that contains text.
func waitForText(t *testing.T, m *Manager, id, text string) {
	t.Helper()
	waitForEvent(t, m, id, "line with "+strconv.Quote(text), func(e Event) bool { return strings.Contains(string(e.Data), text) })
}

func TestStateDirRefused(t *testing.T) {
	e := newEnv(t)
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	// A state dir whose builds folder cannot be made (a file there, as a full or read-only
	// disk would refuse it).
	blocked := t.TempDir()
	if err := os.WriteFile(filepath.Join(blocked, "builds"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{open: "can be written by others", link: "is not a folder", blocked: "cannot be written ("} {
		_, err := New(Config{StateDir: dir, ModelRoot: e.models})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state dir %s: %v, want %q", dir, err, want)
		}
	}
}

func TestTimeBudgetCountsTheQueue(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, func(c *Config) { c.SimSlots = 1 })
	first, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	queued, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-seed": 9, "timeout": "1s"}`)})
	if err != nil || queued.State != StateQueued {
		t.Fatalf("%+v %v", queued, err)
	}
	end := wait(t, m, queued.ID)
	if end.State != StateTimedOut || !strings.Contains(end.Error, "while the build was queued") {
		t.Errorf("queued past its budget: %+v", end)
	}
	if _, err := m.Cancel(first.ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, first.ID)
}

func TestConcurrentSameRequestsFollowOneRun(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	ids := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go func() {
			s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 20, "no-timing-cache": true}`)})
			if err != nil {
				t.Error(err)
			}
			ids <- s.ID
		}()
	}
	var all []string
	for i := 0; i < 8; i++ {
		all = append(all, <-ids)
	}
	for _, id := range all {
		if end := wait(t, m, id); end.State != StateSucceeded {
			t.Errorf("%+v", end)
		}
	}
	sameRun(t, m, all...)
}

// TestMaxRunsBoundsTheBuildsHeld: a server at its most builds refuses a new one as unavailable
// (nothing left behind: no build, no folder), lets a request that shares a held build follow
// it, and takes new ones again once one ended.
func TestMaxRunsBoundsTheBuildsHeld(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, func(c *Config) { c.SimSlots, c.MaxRuns = 1, 2 })
	slow := `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true, "sim-seed": %d}`
	var held []Snapshot
	for seed := 1; seed <= 2; seed++ {
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, seed))})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}
	folders := func() int {
		es, _ := os.ReadDir(filepath.Join(e.state, "builds"))
		return len(es)
	}
	before := folders()
	_, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, 3))})
	var re *RequestError
	if !errors.As(err, &re) || re.Kind != KindUnavailable || !strings.Contains(re.Problem, "--max-runs") {
		t.Fatalf("a third build of its own: %v; want it refused as unavailable", err)
	}
	if n := len(m.List("", 100, "")); n != 2 || folders() != before {
		t.Errorf("the refused build left %d builds listed and %d folders (want 2, %d)", n, folders(), before)
	}
	follower, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, 2))})
	if err != nil {
		t.Fatalf("a request sharing a held build: %v", err)
	}
	if _, err := m.Cancel(held[0].ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, held[0].ID)
	again, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, fmt.Sprintf(slow, 3))})
	if err != nil {
		t.Fatalf("once a build ended: %v", err)
	}
	for _, s := range []Snapshot{held[1], follower, again} {
		if _, err := m.Cancel(s.ID, true); err != nil {
			t.Fatal(err)
		}
		wait(t, m, s.ID)
	}
}
