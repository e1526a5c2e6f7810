package service

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/filelock"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// owner is a Manager's own part of the state dir's runs/ folder: runs/<name>/, where its runs
// write, and runs/<name>.lock, which it holds locked while it lives (internal/filelock: the
// system lets the lock go when the process ends, however it ends). Several processes may use
// one state dir (trtbuild mcp, once per IDE window): each removes only the runs/ folders whose
// lock no live process holds, the leftovers of one that was killed.
type owner struct {
	name string
	dir  string // runs/<name>, absolute
	lock *filelock.Lock
}

// stateLockName is the state dir's lock file: a Manager that keeps the history (trtbuild
// serve) holds it exclusively, the others (trtbuild mcp, once per IDE window) shared.
const stateLockName = "lock"

// lockStateDir takes the state dir's lock: exclusive for a Manager that keeps the history,
// which marks the builds it finds unfinished interrupted, so that no other process may be
// running them; shared for the others, which keep no history and may be many. It is the lock
// of the folder itself (filelock.TryLockDir), which removing its lock file does not undo.
func lockStateDir(dir string, exclusive bool) (*filelock.Lock, error) {
	l, held, err := filelock.TryLockDir(dir, stateLockName, exclusive)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(dir), err)
	}
	if held {
		return l, nil
	}
	if !exclusive {
		return nil, exitcode.Usagef("state dir %s is in use by a trtbuild serve", pathtext.Q(dir)).Hintf("give another --state-dir, or stop that server")
	}
	// Held shared: by processes that keep no history (trtbuild mcp); else by another server.
	other := "another trtbuild serve"
	if probe, shared, _ := filelock.TryLockDir(dir, stateLockName, false); shared {
		probe.Release()
		other = "trtbuild mcp"
	}
	return nil, exitcode.Usagef("state dir %s is in use by %s", pathtext.Q(dir), other).Hintf("give another --state-dir, or stop the other process")
}

// ownerSuffix ends the name of an owner's lock file in runs/.
const ownerSuffix = ".lock"

// takeOwner removes the runs/ folders of owners that are gone, and makes this Manager's.
func (m *Manager) takeOwner() (*owner, error) {
	runs := filepath.Join(m.cfg.StateDir, "runs")
	m.removeDeadOwners(runs)
	for tries := 0; ; tries++ {
		var r [8]byte
		_, _ = rand.Read(r[:])
		name := hex.EncodeToString(r[:])
		path := filepath.Join(runs, name+ownerSuffix)
		l, held, err := filelock.TryLock(path, true)
		if err != nil {
			return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(m.cfg.StateDir), err)
		}
		// Another process that found the file unlocked (before this one locked it) may have
		// removed it: then the lock guards nothing, and a new name is tried.
		if held && l.Named() {
			o := &owner{name: name, dir: filepath.Join(runs, name), lock: l}
			if err := m.mkdirPrivate(filepath.Join("runs", name)); err != nil {
				o.release()
				return nil, exitcode.Usagef("state dir %s cannot be written (%s)", pathtext.Q(m.cfg.StateDir), exitcode.OneLine(exitcode.SyscallCause(err))).Hintf("give a folder this user may write")
			}
			return o, nil
		}
		l.Release()
		if tries == 10 {
			return nil, fmt.Errorf("state dir %s: cannot take a lock in %s; check the folder", pathtext.Q(m.cfg.StateDir), pathtext.Q(runs))
		}
	}
}

// removeDeadOwners removes the folders in runs/ that no live process owns: those whose lock
// file this process can lock, and those without one.
func (m *Manager) removeDeadOwners(runs string) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return
	}
	live := map[string]bool{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ownerSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(runs, e.Name())
		l, held, err := filelock.TryLock(path, true)
		if err != nil || !held {
			live[name] = true // its process lives (or the file is not ours to judge)
			continue
		}
		m.removeOwned(filepath.Join(runs, name))
		os.Remove(path) //nolint:errcheck // a later start removes it
		l.Release()
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ownerSuffix) && !live[e.Name()] {
			m.removeOwned(filepath.Join(runs, e.Name()))
		}
	}
}

// removeOwned removes a folder of runs/ (no link followed: RemoveAll removes a link, not what
// it names).
func (m *Manager) removeOwned(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: cannot remove the unfinished builds' files in %s: %s\n", pathtext.Q(dir), exitcode.OneLine(err))
	}
}

// runDir is the folder of the run named id.
func (o *owner) runDir(id string) string { return filepath.Join(o.dir, id) }

// claimRunDir marks the folder of the run named id in use (Manager.runDirs), before it is
// made: sweepRuns leaves it alone until releaseRunDir.
func (m *Manager) claimRunDir(id string) {
	m.mu.Lock()
	m.runDirs[id] = true
	m.mu.Unlock()
}

// releaseRunDir marks the folder of the run named id no longer in use: it is removed, or
// sweepRuns removes it.
func (m *Manager) releaseRunDir(id string) {
	m.mu.Lock()
	delete(m.runDirs, id)
	m.mu.Unlock()
}

// sweepRuns removes the folders of this Manager's runs/<owner>/ that no request or run uses:
// what a request left that ended half-way. Its queued and running builds' folders stay.
func (m *Manager) sweepRuns() {
	entries, err := os.ReadDir(m.owner.dir)
	if err != nil {
		return
	}
	var stale []string
	m.mu.Lock()
	for _, e := range entries {
		if !m.runDirs[e.Name()] {
			stale = append(stale, e.Name())
		}
	}
	m.mu.Unlock()
	for _, name := range stale {
		m.removeOwned(m.owner.runDir(name))
	}
}

// mkdirRun makes the folder of the run named id.
func (o *owner) mkdirRun(m *Manager, id string) error {
	return m.mkdirPrivate(filepath.Join("runs", o.name, id))
}

// release removes the owner's folder and lets its lock go. Nil does nothing.
func (o *owner) release() {
	if o == nil || o.lock == nil {
		return
	}
	os.RemoveAll(o.dir) //nolint:errcheck // the next start removes what is left
	path := o.dir + ownerSuffix
	o.lock.Release()
	o.lock = nil
	os.Remove(path) //nolint:errcheck // as above
}
