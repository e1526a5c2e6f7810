// builds.go: what clients ask of the builds: snapshots, lists, waits, event logs, cancels.

package service

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// shown is b's state, result and the result's fields as clients see them. The result event is
// out a moment before the run ends: a client that read it finds the build ended when it asks
// next, though finishBuild has not yet recorded it. m.mu is held.
func (b *build) shown() (string, []byte, progress.Result) {
	if !b.finished && b.log != nil {
		if line := b.log.result(); line != nil {
			var r progress.Result
			_ = json.Unmarshal(line, &r)
			return stateOf(r.Status), line, r
		}
	}
	return b.state, b.result, b.outcome
}

// setResult keeps the result event's line, and what a snapshot shows of it.
func (b *build) setResult(line []byte) {
	b.result = line
	b.outcome = progress.Result{}
	if line != nil {
		_ = json.Unmarshal(line, &b.outcome)
	}
}

// stateOf is the state of a build that ended with status s.
func stateOf(s progress.Status) string {
	switch s {
	case progress.StatusBuilt:
		return StateSucceeded
	case progress.StatusCancelled:
		return StateCancelled
	case progress.StatusTimedOut:
		return StateTimedOut
	}
	return StateFailed
}

// diagnostics is where the builder's warnings of build id go: the service's log, one line each.
func (m *Manager) diagnostics(id string) io.Writer {
	return &prefixWriter{w: m.cfg.Log, prefix: "build " + id + ": "}
}

// prefixWriter writes each line with a prefix (after "trtbuild: " when the line starts so).
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "trtbuild: "); ok {
			line = "trtbuild: " + p.prefix + rest
		} else {
			line = p.prefix + line
		}
		_, _ = io.WriteString(p.w, line)
	}
	return len(b), nil
}

// Cancel asks build id to stop. A build that others' builds share a run with leaves it at
// once: it ends cancelled, and the run goes on for them (hard or not). The run's last follower
// cancels the run: a queued run is dropped, a running one stops at its next step boundary
// (asking again changes nothing); hard stops its worker at once; the build ends with the
// run. A build that has ended is left as it is.
func (m *Manager) Cancel(id string, hard bool) (Snapshot, error) {
	m.mu.Lock()
	b := m.builds[id]
	if b == nil {
		m.mu.Unlock()
		return Snapshot{}, ErrNotFound
	}
	// A build whose run's result is out has ended: it is left as it is.
	if rn := b.run; rn != nil && !b.finishing && b.log.result() == nil {
		if len(rn.followers) > 1 {
			m.leaveLocked(b)
			res := m.leftResult(rn, progress.StatusCancelled, time.Now())
			m.mu.Unlock()
			m.endEarly(b, res)
			m.mu.Lock()
		} else if dropped := m.stopLocked(rn, hard); dropped {
			m.mu.Unlock()
			m.endRun(rn, progress.Result{Status: progress.StatusCancelled, Error: "cancelled while queued; nothing was built"}, nil)
			m.mu.Lock()
		}
	}
	s := m.snapshotLocked(b)
	m.mu.Unlock()
	return s, nil
}

// Get is build id's snapshot.
func (m *Manager) Get(id string) (Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.builds[id]
	if b == nil {
		return Snapshot{}, false
	}
	return m.snapshotLocked(b), true
}

// Wait returns when build id has ended (or ctx ends), with its snapshot.
func (m *Manager) Wait(ctx context.Context, id string) (Snapshot, error) {
	m.mu.Lock()
	b := m.builds[id]
	m.mu.Unlock()
	if b == nil {
		return Snapshot{}, ErrNotFound
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	}
	s, _ := m.Get(id)
	return s, nil
}

// List is the builds, newest first: those in state (all for ""), at most limit (all for 0),
// created before build before (from the newest for "").
func (m *Manager) List(state string, limit int, before string) []Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	end := len(m.order)
	if before != "" {
		end = -1
		for i := len(m.order) - 1; i >= 0; i-- {
			if m.order[i].id == before {
				end = i
				break
			}
		}
		if end < 0 {
			return nil
		}
	}
	var out []Snapshot
	for i := end - 1; i >= 0; i-- {
		b := m.order[i]
		if shown, _, _ := b.shown(); state != "" && shown != state {
			continue
		}
		out = append(out, m.snapshotLocked(b))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// Events is build id's event log.
func (m *Manager) Events(id string) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.builds[id]
	if b == nil {
		return nil, false
	}
	if b.log == nil {
		b.log = m.loadLog(b)
	}
	return b.log, true
}

// snapshotLocked is b's snapshot; m.mu is held.
func (m *Manager) snapshotLocked(b *build) Snapshot {
	s := Snapshot{ID: b.id, State: b.state, Key: b.key, Model: b.model, Created: b.created}
	if !b.started.IsZero() {
		t := b.started
		s.Started = &t
	}
	if !b.ended.IsZero() && b.state != StateQueued && b.state != StateRunning {
		t := b.ended
		s.Ended = &t
	}
	if rn := b.run; b.state == StateQueued && rn != nil && rn.queued {
		for _, q := range m.queue {
			if q.onGPU == rn.onGPU {
				s.Position++
			}
			if q == rn {
				break
			}
		}
	}
	state, result, outcome := b.shown()
	if state != b.state {
		s.State = state
		t := time.Now()
		s.Ended = &t
	}
	if result != nil {
		s.Result = json.RawMessage(result)
		s.Where, s.Hint, s.Error = outcome.Where, outcome.Hint, outcome.Error
		if s.State == StateSucceeded {
			s.Engine = !keptInCache(outcome) || m.cache != nil && m.cache.Has(b.key)
			s.EnginePath = b.enginePath
		}
	}
	if f, ok := b.along.get(); ok && s.State != StateQueued {
		s.Along = &f
	}
	if s.State == StateSucceeded {
		one := 1.0
		s.Along = &one
	}
	if b.removed != "" {
		s.Engine, s.EnginePath, s.FilesRemoved = false, "", b.removed
	}
	if s.Ended != nil && b.finished && !keptInCache(outcome) {
		if b.encoded == nil {
			b.encoded, _ = json.Marshal(snapshotJSON(s))
		}
		s.encoded = b.encoded
	}
	return s
}
