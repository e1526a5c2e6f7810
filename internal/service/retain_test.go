package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/history"
)

// built submits a fast simulated build with seed (a build of its own engine) and waits for it.
func built(t *testing.T, m *Manager, seed string) Snapshot {
	t.Helper()
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50, "no-timing-cache": true, "sim-seed": `+seed+`}`)})
	if err != nil {
		t.Fatal(err)
	}
	end := wait(t, m, s.ID)
	if end.State != StateSucceeded {
		t.Fatalf("%+v", end)
	}
	return end
}

// TestCacheHitLinksTheEngine: a hit costs no second copy of the engine: the hit's engine is
// the engine cache's file.
func TestCacheHitLinksTheEngine(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	first := built(t, m, "1")
	hit := built(t, m, "1")
	if hit.ID == first.ID {
		t.Fatal("the second build is the first")
	}
	entry := stat(t, filepath.Join(e.state, "engines", "entries", hit.Key, "engine"))
	if !os.SameFile(entry, stat(t, filepath.Join(e.state, "builds", hit.ID, "convnet.engine"))) {
		t.Fatal("the hit's engine is a copy of the engine cache's, not its file")
	}
	if f, err := m.File(hit.ID, "engine"); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
}

// TestRetention: the files of ended builds go by the rule, oldest first: beyond the size
// bound, then past the age; a build's record stays, saying its files are gone and why, also
// after a restart; what other processes left, and converted models, go by the same rule.
func TestRetention(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	old := built(t, m, "1")
	newer := built(t, m, "2")
	// Another process's builds: one ended (its events file), one running (none yet).
	ended, running := newID(time.Now().Add(-time.Hour)), newID(time.Now())
	for _, id := range []string{ended, running} {
		if err := os.MkdirAll(filepath.Join(e.state, "builds", id), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.state, "builds", ended, "events.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	converted := filepath.Join(e.state, "converted", "convert-1")
	if err := os.MkdirAll(converted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(converted, "convnet_fp16.onnx"), make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(e.state, "builds", ended, "events.jsonl"), converted} {
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}

	// The size bound: what the newer build takes, and a byte; the rest goes, oldest first.
	m.cfg.Keep = Keep{Bytes: countOnce(m.treeFiles(filepath.Join("builds", newer.ID)), map[fileID]bool{}) + 1}
	m.retain(time.Now())
	for _, gone := range []string{filepath.Join("builds", old.ID), filepath.Join("builds", ended), filepath.Join("converted", "convert-1")} {
		if _, err := os.Stat(filepath.Join(e.state, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is left beyond the bound: %v", gone, err)
		}
	}
	for _, left := range []string{filepath.Join("builds", newer.ID), filepath.Join("builds", running)} {
		if _, err := os.Stat(filepath.Join(e.state, left)); err != nil {
			t.Errorf("%s was removed: %v", left, err)
		}
	}
	s, ok := m.Get(old.ID)
	if !ok || s.Engine || !strings.Contains(s.FilesRemoved, "--keep-builds-size") || s.State != StateSucceeded {
		t.Fatalf("the removed build's record: %+v", s)
	}
	var gone *GoneError
	if _, err := m.File(old.ID, "engine"); !errors.As(err, &gone) || !strings.Contains(err.Error(), "files were removed") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the engine of a removed build: %v", err)
	}

	// The age: the newer build, an hour later than it ended plus the age.
	m.cfg.Keep = Keep{Age: time.Hour}
	m.retain(time.Now().Add(2 * time.Hour))
	if s, _ := m.Get(newer.ID); s.Engine || !strings.Contains(s.FilesRemoved, "--keep-builds 1h0m0s") {
		t.Fatalf("the newer build after its age: %+v", s)
	}
	m.cfg.Keep = Keep{}
	if err := m.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	st, err := history.Open(filepath.Join(e.state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	row, _, _ := st.Get(old.ID)
	st.Close()
	if !strings.Contains(row.Removed, "--keep-builds-size") {
		t.Fatalf("the history says %q of the removed build", row.Removed)
	}
	again := e.manager(t, nil)
	if s, _ := again.Get(old.ID); s.Engine || s.FilesRemoved == "" {
		t.Fatalf("after a restart, the removed build: %+v", s)
	}
}

// TestRetentionRunsWhenABuildEnds: with a bound, the files beyond it go once a build ends,
// without anyone asking.
func TestRetentionRunsWhenABuildEnds(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, func(c *Config) { c.Keep = Keep{Bytes: 1} })
	s := built(t, m, "1")
	deadline := time.Now().Add(time.Minute)
	for {
		if got, _ := m.Get(s.ID); got.FilesRemoved != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the build's files were not removed within a minute of its end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDelete: an ended build is removed, files and record; a running one is refused (409, with
// what to do); an unknown one is not found.
func TestDelete(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil)
	done := built(t, m, "1")
	if err := m.Delete(done.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(done.ID); ok {
		t.Error("a deleted build is still there")
	}
	if _, err := os.Stat(filepath.Join(e.state, "builds", done.ID)); !os.IsNotExist(err) {
		t.Errorf("a deleted build's folder is left: %v", err)
	}
	if err := m.Delete(done.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting it again: %v", err)
	}
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 0.5, "no-timing-cache": true}`)})
	if err != nil {
		t.Fatal(err)
	}
	var re *RequestError
	if err := m.Delete(s.ID); !errors.As(err, &re) || re.Kind != KindConflict || !strings.Contains(re.Hint, "cancel it first") {
		t.Fatalf("deleting a running build: %v", err)
	}
	if _, err := m.Cancel(s.ID, true); err != nil {
		t.Fatal(err)
	}
	wait(t, m, s.ID)
	if err := m.Delete(s.ID); err != nil {
		t.Fatalf("deleting it once cancelled: %v", err)
	}
	st, err := history.Open(filepath.Join(e.state, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{done.ID, s.ID} {
		if _, found, err := st.Get(id); found || err != nil {
			t.Errorf("the history still has deleted build %s: %v", id, err)
		}
	}
}
