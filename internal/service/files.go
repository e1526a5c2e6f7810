// files.go: the files of a build that clients fetch (engine, manifest, report, events), and
// the engine cache's engines a hit keeps.

package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/enginecache"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// OutputDir is a folder of the state dir for a tool's outputs (kind "converted"), made 0700.
// What a tool writes there goes by the retention rule (Config.Keep), a folder of its own at a
// time: each call's outputs in a new folder inside it, left alone for a minute after it
// changed.
func (m *Manager) OutputDir(kind string) (string, error) {
	if kind == "" || !filepath.IsLocal(kind) || strings.ContainsRune(kind, filepath.Separator) {
		return "", fmt.Errorf("output kind %q is not a folder name", kind)
	}
	if err := m.mkdirPrivate(kind); err != nil {
		return "", err
	}
	m.kickRetain() // its outputs are under the retention rule too
	return filepath.Join(m.cfg.StateDir, kind), nil
}

// File opens a file of build id: kind "engine", "report" or "trace" (its events). The files of
// a service are opened inside the state dir, following no link.
func (m *Manager) File(id, kind string) (*os.File, error) {
	m.mu.Lock()
	b := m.builds[id]
	var state string
	settling := false
	if b != nil {
		state, _, _ = b.shown()
		settling = state != b.state // its result is out, its files are still being put in place
	}
	m.mu.Unlock()
	if b == nil {
		return nil, ErrNotFound
	}
	if settling {
		// The run's engine and report are linked into the build's folder, and its events
		// file written, after the result event: wait for them, as long as the manifest and
		// the cache store take.
		select {
		case <-b.done:
		case <-time.After(time.Minute):
		}
	}
	m.mu.Lock()
	engine, removed, outcome := b.enginePath, b.removed, b.outcome
	m.mu.Unlock()
	if removed != "" {
		return nil, goneError(id, removed)
	}
	var name string
	switch kind {
	case "engine":
		if state != StateSucceeded {
			return nil, fmt.Errorf("build %s is %s: %w", id, state, os.ErrNotExist)
		}
		if keptInCache(outcome) {
			f, _, err := m.cachedEngine(id, b.key)
			return f, err
		}
		if m.Local() && engine != "" && !strings.HasPrefix(engine, b.dir+string(filepath.Separator)) {
			return os.Open(engine) // the path the caller named
		}
		name = engineName(b.model)
	case "report":
		name = "report.html"
	case "trace":
		name = "events.jsonl"
	default:
		return nil, fmt.Errorf("no file %q of a build", kind)
	}
	return m.openOwn(filepath.Join("builds", id, name))
}

// EngineWithManifest opens the engine of build id, as File does, with a function that reads
// the manifest that describes it: the one the engine cache verified for a hit it keeps, the
// one beside it in the build's folder otherwise (manifest.ErrNotFound when there is none). A
// caller that describes the engine (engine_inspect) reads these, never the file again by its
// name.
func (m *Manager) EngineWithManifest(id string) (*os.File, func() (*manifest.Manifest, error), error) {
	m.mu.Lock()
	b := m.builds[id]
	m.mu.Unlock()
	if b == nil {
		return nil, nil, ErrNotFound
	}
	f, err := m.File(id, "engine")
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	engine, outcome, dir := b.enginePath, b.outcome, b.dir
	m.mu.Unlock()
	switch {
	case keptInCache(outcome):
		f.Close()
		verified, l, err := m.cachedEngine(id, b.key)
		if err != nil {
			return nil, nil, err
		}
		return verified, func() (*manifest.Manifest, error) { return manifest.Parse(l.Manifest) }, nil
	case m.Local() && engine != "" && !strings.HasPrefix(engine, dir+string(filepath.Separator)):
		return f, func() (*manifest.Manifest, error) { return manifest.Read(manifest.Path(engine)) }, nil // the caller's own path
	}
	beside := filepath.Join("builds", id, engineName(b.model)+manifest.Suffix)
	return f, func() (*manifest.Manifest, error) {
		mf, err := m.openOwn(beside)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, manifest.ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		defer mf.Close()
		data, err := io.ReadAll(io.LimitReader(mf, manifest.MaxBytes+1))
		if err != nil {
			return nil, err
		}
		if len(data) > manifest.MaxBytes {
			return nil, fmt.Errorf("%s: not a trtbuild manifest: larger than %d bytes", beside, manifest.MaxBytes)
		}
		return manifest.Parse(data)
	}, nil
}

// keptInCache reports whether a build's result is an engine cache hit that the cache keeps:
// no link could put it in the build's folder (builder.Options.CacheLink).
func keptInCache(r progress.Result) bool {
	return r.Status == progress.StatusBuilt && r.Cached && r.Engine == ""
}

// cachedEngine opens the engine of build id, a hit the engine cache keeps, from the cache,
// verified as a hit is.
func (m *Manager) cachedEngine(id, key string) (*os.File, enginecache.Lookup, error) {
	gone := &GoneError{Problem: fmt.Sprintf("build %s's engine was the engine cache's, which no longer has it (its size limit removed it, or it was found broken)", id),
		Hint: "submit the build again to build the engine anew"}
	if m.cache == nil {
		return nil, enginecache.Lookup{}, gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The descriptor the cache verified, and nothing opened again by its path: the cache's
	// folder may be another user's, who could put a file, a link or a FIFO there since.
	verified, l, err := m.cache.Open(ctx, key)
	if err != nil {
		return nil, enginecache.Lookup{}, err
	}
	if verified == nil {
		return nil, enginecache.Lookup{}, gone
	}
	return verified, l, nil
}

// openOwn opens a regular file below the state dir that is no link, in a folder of this user.
func (m *Manager) openOwn(rel string) (*os.File, error) {
	if dir := filepath.Dir(rel); dir != "." {
		// A folder another user owns (a build's folder left by a chown that was not
		// recursive) is its owner's to change, whoever may reach it now.
		if err := m.checkOwnFolder(dir); err != nil {
			if errors.As(err, new(*ForeignFolderError)) {
				m.cfg.Logger.Warn("refused a file of the state dir", "error", err.Error())
			}
			return nil, fmt.Errorf("%s: %w (%w)", rel, os.ErrNotExist, err)
		}
	}
	fi, err := m.state.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", rel, os.ErrNotExist)
	}
	f, err := m.state.OpenFile(rel, os.O_RDONLY|openOwnFlags, 0)
	if err != nil {
		return nil, err
	}
	if again, err := f.Stat(); err != nil || !os.SameFile(fi, again) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: %w", rel, os.ErrNotExist)
	}
	return f, nil
}
