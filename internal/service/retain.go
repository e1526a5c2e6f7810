package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// Keep is the retention rule of what ended builds leave in the state dir: their folders
// builds/<id>/ (engine, report, events) and the models the MCP convert tool wrote there
// (OutputDir). What it removes goes oldest first (by when the build ended); a build's record
// stays in the history, saying its files are gone and why. The engine cache has its own bound
// (--engine-cache-size): an engine a hit linked from it (no copy) counts in both while both
// hold it. The models' copies of queued and running builds count in Bytes too (inUseBytes):
// the rule never removes them, and ended builds' files go to make room for them.
type Keep struct {
	// Age removes what ended this long ago; 0 keeps it however old.
	Age time.Duration
	// Bytes removes the oldest while all of it takes more than this; 0 for no bound.
	Bytes int64
}

// The retention rule's defaults, which trtbuild serve and trtbuild mcp take unless told
// otherwise: a week, and 10 GiB (half the engine cache's default 20G).
const (
	DefaultKeepAge   = 7 * 24 * time.Hour
	DefaultKeepBytes = 10 << 30
)

// retainEvery is how often the rule is applied while nothing ends (for the age).
const retainEvery = time.Hour

// youngest is how long a converted model's folder is left alone after it changed: it may be
// being written.
const youngest = time.Minute

// GoneError is a file of a build that the service no longer has: removed by the retention
// rule, or evicted from the engine cache it was served from. Problem says what and why, Hint
// what to do, each one line.
type GoneError struct{ Problem, Hint string }

// Error is the problem and the hint on one line.
func (e *GoneError) Error() string { return e.Problem + "; " + e.Hint }

// goneError is the GoneError of a build whose files were removed for why.
func goneError(id, why string) *GoneError {
	return &GoneError{Problem: fmt.Sprintf("build %s's files were removed: %s", id, why),
		Hint: "submit the build again for its engine (the engine cache answers at once while it still has it)"}
}

// retainer runs the retention rule in the background, after sweepRuns: every retainEvery, and
// soon after it is kicked (a build ended, a request copied a model, a tool asked for an output
// folder). Close stops it.
func (m *Manager) retainer() {
	defer close(m.retained)
	tick := time.NewTicker(retainEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.closing:
			return
		case <-tick.C:
		case <-m.kick:
		}
		m.sweepRuns()
		m.retain(time.Now())
	}
}

// kickRetain asks the retainer to apply the rule soon; it never waits.
func (m *Manager) kickRetain() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// kept is one thing the rule may remove: an ended build's folder (build set when this
// Manager knows it), or a folder of converted models.
type kept struct {
	rel   string // below the state dir
	build *build
	ended time.Time
	bytes int64
}

// retain applies the rule at now: it removes the files of the ended builds and the converted
// models that are older than Keep.Age, and then the oldest while they take more than
// Keep.Bytes. One at a time.
func (m *Manager) retain(now time.Time) {
	k := m.cfg.Keep
	if k.Age <= 0 && k.Bytes <= 0 {
		return
	}
	m.retainMu.Lock()
	defer m.retainMu.Unlock()
	items := m.retainable(now)
	sort.Slice(items, func(i, j int) bool { return items[i].ended.Before(items[j].ended) })
	total := m.inUseBytes()
	for _, it := range items {
		total += it.bytes
	}
	for _, it := range items {
		var why string
		switch {
		case k.Age > 0 && now.Sub(it.ended) > k.Age:
			why = fmt.Sprintf("it ended more than --keep-builds %s ago", k.Age)
		case k.Bytes > 0 && total > k.Bytes:
			why = fmt.Sprintf("the oldest builds' files go while they take more than --keep-builds-size %s", progress.FormatBytes(k.Bytes))
		default:
			return // the rest are newer, and within the bound
		}
		m.remove(it, why)
		total -= it.bytes
	}
}

// retainable lists what the rule may remove: the folders of ended builds (this Manager's, and
// for a state dir other processes use too, those on disk whose events file says they ended),
// and the folders of converted models.
func (m *Manager) retainable(now time.Time) []kept {
	var items []kept
	m.mu.Lock()
	known := make(map[string]bool, len(m.builds))
	for id, b := range m.builds {
		known[id] = true
		if b.finished && b.removed == "" {
			items = append(items, kept{rel: filepath.Join("builds", id), build: b, ended: b.ended})
		}
	}
	m.mu.Unlock()
	if entries, err := os.ReadDir(filepath.Join(m.cfg.StateDir, "builds")); err == nil {
		for _, e := range entries {
			if known[e.Name()] || !e.IsDir() || !idPattern.MatchString(e.Name()) {
				continue
			}
			// A build of another process, or of an earlier one without a history: it ended when
			// its events file was written; one without it is running (or was killed, and stays).
			rel := filepath.Join("builds", e.Name())
			if fi, err := m.state.Lstat(filepath.Join(rel, "events.jsonl")); err == nil && fi.Mode().IsRegular() {
				items = append(items, kept{rel: rel, ended: fi.ModTime()})
			}
		}
	}
	if entries, err := os.ReadDir(filepath.Join(m.cfg.StateDir, "converted")); err == nil {
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil || !e.IsDir() || now.Sub(fi.ModTime()) < youngest {
				continue
			}
			items = append(items, kept{rel: filepath.Join("converted", e.Name()), ended: fi.ModTime()})
		}
	}
	seen := map[fileID]bool{}
	for i := range items {
		b := items[i].build
		var files []fileUse
		if b != nil {
			m.mu.Lock()
			files = b.files
			m.mu.Unlock()
		}
		if files == nil {
			// An ended build's files do not change: a build of this Manager's is read once.
			files = m.treeFiles(items[i].rel)
			if b != nil {
				m.mu.Lock()
				b.files = files
				m.mu.Unlock()
			}
		}
		items[i].bytes = countOnce(files, seen)
	}
	return items
}

// inUseBytes is what builds and tools at work hold in the state dir: runs/ (the models' copies
// of queued and running builds, what they are writing) and models/ (the copies tools read).
// It counts in Keep.Bytes, so that ended builds' files make room for it, but it is not the
// rule's to remove.
func (m *Manager) inUseBytes() int64 {
	var n int64
	for _, rel := range []string{"runs", toolModels} {
		n += countOnce(m.treeFiles(rel), map[fileID]bool{})
	}
	return n
}

// fileUse is one file of a folder the rule may remove: its size, and its identity where the
// system says it.
type fileUse struct {
	id    fileID
	known bool
	size  int64
}

// treeFiles are the regular files in the folder rel of the state dir (no link followed).
func (m *Manager) treeFiles(rel string) []fileUse {
	files := []fileUse{}
	_ = fs.WalkDir(m.state.FS(), filepath.ToSlash(rel), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		id, known := identity(fi)
		files = append(files, fileUse{id: id, known: known, size: fi.Size()})
		return nil
	})
	return files
}

// countOnce is the bytes of files, each file counted once (seen: those counted before, by
// identity: an engine linked into several builds' folders is one file).
func countOnce(files []fileUse, seen map[fileID]bool) int64 {
	var n int64
	for _, f := range files {
		if f.known {
			if seen[f.id] {
				continue
			}
			seen[f.id] = true
		}
		n += f.size
	}
	return n
}

// remove removes it's folder, for why: a build of this Manager's keeps its record, which says
// its files are gone and why.
func (m *Manager) remove(it kept, why string) {
	if b := it.build; b != nil {
		m.mu.Lock()
		b.removed, b.encoded = why, nil
		m.mu.Unlock()
		m.persist(b)
	}
	if err := os.RemoveAll(filepath.Join(m.cfg.StateDir, it.rel)); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: cannot remove %s: %s\n", it.rel, exitcode.OneLine(err))
	}
}

// Delete removes build id, an ended one: its files and its record. A queued or running build
// is refused (409: cancel it first). Errors are ErrNotFound and *RequestError.
func (m *Manager) Delete(id string) error {
	m.retainMu.Lock() // not while the rule is applied: it would write the record again
	defer m.retainMu.Unlock()
	m.mu.Lock()
	b := m.builds[id]
	if b == nil {
		m.mu.Unlock()
		return ErrNotFound
	}
	if state, _, _ := b.shown(); !b.finished && state != b.state {
		// Its result is out, its files are being put in place: it ends in a moment.
		m.mu.Unlock()
		select {
		case <-b.done:
		case <-time.After(time.Minute):
		}
		m.mu.Lock()
		if m.builds[id] != b {
			m.mu.Unlock()
			return ErrNotFound // deleted meanwhile
		}
	}
	if !b.finished {
		state, _, _ := b.shown()
		m.mu.Unlock()
		return &RequestError{Kind: KindConflict, Problem: fmt.Sprintf("build %s is %s: only an ended build can be deleted", id, state),
			Hint: fmt.Sprintf("cancel it first (POST /v1/builds/%s/cancel), then delete it once it has ended", id)}
	}
	delete(m.builds, id)
	for i, o := range m.order {
		if o == b {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	if b.idem != "" && m.idem[b.idem] == b {
		delete(m.idem, b.idem)
	}
	m.mu.Unlock()
	var errs []error
	if err := os.RemoveAll(b.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing build %s's files: %w", id, exitcode.SyscallCause(err)))
	}
	if m.store != nil {
		errs = append(errs, m.store.Delete(id))
	}
	return errors.Join(errs...)
}
