//go:build linux

package service

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCacheHitKeptInTheCache: where the engine cache is on another file system than the state
// dir (no link can be made), a hit's engine stays in the cache, and is served from there while
// the cache has it.
func TestCacheHitKeptInTheCache(t *testing.T) {
	e := newEnv(t)
	other, err := os.MkdirTemp("/dev/shm", "trtbuild-service-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(other)
	if err := os.MkdirAll(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	if stat(t, other).Sys().(*syscall.Stat_t).Dev == stat(t, e.state).Sys().(*syscall.Stat_t).Dev {
		t.Skip("the temporary folder and /dev/shm are one file system")
	}
	m := e.manager(t, func(c *Config) { c.EngineCache.Dir = filepath.Join(other, "engines") })
	built(t, m, "1")
	hit := built(t, m, "1")
	if left, _ := filepath.Glob(filepath.Join(e.state, "builds", hit.ID, "*.engine")); len(left) > 0 {
		t.Fatalf("the hit copied the engine: %v", left)
	}
	if !hit.Engine {
		t.Fatal("the hit has no engine")
	}
	f, err := m.File(hit.ID, "engine")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	want, _ := os.ReadFile(filepath.Join(other, "engines", "entries", hit.Key, "engine"))
	if len(data) == 0 || string(data) != string(want) {
		t.Fatalf("served %d bytes, not the cache's %d", len(data), len(want))
	}
	if err := os.RemoveAll(filepath.Join(other, "engines", "entries", hit.Key)); err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Get(hit.ID); s.Engine {
		t.Error("an engine the cache no longer has is available")
	}
	var gone *GoneError
	if _, err := m.File(hit.ID, "engine"); !errors.As(err, &gone) || !strings.Contains(gone.Problem, "engine cache") {
		t.Fatalf("the engine the cache no longer has: %v", err)
	}
}
