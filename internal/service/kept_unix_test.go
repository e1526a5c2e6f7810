//go:build unix

package service

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/inspect"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// TestKeptHitDescribedFromWhatWasVerified: a cache hit that no link could put in the build's
// folder (the cache on another file system) stays the cache's; its engine and manifest are
// given to whoever describes it (engine_inspect) as the cache verified them, never opened again
// by their names in the cache's folder, which may be another user's (who could put another
// engine, a link or a FIFO there meanwhile). The old code reopened the engine by its path and
// looked for a manifest beside it under the wrong name, so a kept hit was always "no manifest".
func TestKeptHitDescribedFromWhatWasVerified(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "trtbuild-cache-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	e := newEnv(t)
	if err := os.MkdirAll(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	var a, b syscall.Stat_t
	if syscall.Stat(e.state, &a) != nil || syscall.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skip("the state dir and /dev/shm are one file system")
	}
	m := e.manager(t, func(c *Config) {
		c.EngineCache = builder.EngineCache{Dir: filepath.Join(other, "engines"), Size: "1G", Trust: "self"}
	})
	first := built(t, m, "1")
	hit := built(t, m, "1")
	var res progress.Result
	if err := json.Unmarshal(hit.Result, &res); err != nil || !res.Cached || res.Engine != "" {
		t.Fatalf("the second build: %s (%v), want a hit the cache keeps", hit.Result, err)
	}
	f, readManifest, err := m.EngineWithManifest(hit.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := inspect.EngineOf(f, st, f.Name(), readManifest)
	if err != nil {
		t.Fatal(err)
	}
	if r.Manifest == nil || r.Manifest.Key != first.Key || len(r.Problems) > 0 {
		t.Fatalf("the kept hit described: manifest %+v, problems %v; want the verified manifest of key %s", r.Manifest, r.Problems, first.Key)
	}
}
