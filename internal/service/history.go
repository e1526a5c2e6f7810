package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/history"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// loadHistory opens StateDir/history.db, ends the builds a stopped service left queued or
// running as interrupted (removing their unfinished files), and loads every build.
func (m *Manager) loadHistory() error {
	s, err := history.Open(filepath.Join(m.cfg.StateDir, "history.db"))
	if err != nil {
		return err
	}
	m.store = s
	interrupted, err := s.Interrupt(time.Now())
	if err != nil {
		return fmt.Errorf("state dir %s: %w", pathtext.Q(m.cfg.StateDir), err)
	}
	for _, h := range interrupted {
		m.cleanInterrupted(h)
	}
	all, err := s.List(history.Filter{})
	if err != nil {
		return fmt.Errorf("state dir %s: %w", pathtext.Q(m.cfg.StateDir), err)
	}
	for i := len(all) - 1; i >= 0; i-- { // oldest first
		h := all[i]
		if !idPattern.MatchString(h.ID) {
			continue
		}
		b := &build{id: h.ID, model: h.Model, key: h.Key, idem: h.IdempotencyKey, reqHash: h.RequestHash, state: h.State,
			created: h.Created, started: h.Started, ended: h.Ended, removed: h.Removed, done: make(chan struct{})}
		b.setResult(h.Result)
		b.finished = b.state != StateQueued && b.state != StateRunning
		b.dir = filepath.Join(m.cfg.StateDir, "builds", h.ID)
		_ = json.Unmarshal(h.Options, &b.options)
		close(b.done)
		m.builds[b.id] = b
		m.order = append(m.order, b)
		if b.idem != "" {
			m.idem[b.idem] = b
		}
	}
	return nil
}

// cleanInterrupted removes what a build the service stopped with left in its folder (the
// engine's and the report's temporary files) and records its end as one result event.
func (m *Manager) cleanInterrupted(h history.Build) {
	if !idPattern.MatchString(h.ID) {
		return
	}
	rel := filepath.Join("builds", h.ID)
	if d, err := m.state.Open(rel); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if strings.HasPrefix(n, ".") && strings.Contains(n, ".trtbuild-") && strings.HasSuffix(n, ".tmp") {
				_ = m.state.Remove(filepath.Join(rel, n))
			}
		}
	}
	res := progress.Result{Status: progress.StatusFailed, Error: "the server stopped while this build was " + wasState(h), Hint: "submit it again"}
	var line bytes.Buffer
	_ = progress.NewJSONLines(&line, nil).End(res)
	h.Result = json.RawMessage(bytes.TrimSpace(line.Bytes()))
	if err := outpath.WriteOwn(filepath.Join(m.cfg.StateDir, rel, "events.jsonl"), line.Bytes(), 0o600); err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: %s\n", h.ID, exitcode.OneLine(err))
	}
	if err := m.store.Put(h); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: history: %s\n", h.ID, exitcode.OneLine(err))
	}
}

func wasState(h history.Build) string {
	if h.Started.IsZero() {
		return "queued"
	}
	return "running"
}

// loadLog is the log of a build from an earlier service: its events.jsonl, or its result alone.
func (m *Manager) loadLog(b *build) *Log {
	l := NewLog()
	if f, err := m.openOwn(filepath.Join("builds", b.id, "events.jsonl")); err == nil {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(f)
		f.Close()
		_, _ = l.Write(buf.Bytes())
	}
	if !l.Ended() && b.result != nil {
		_, _ = l.Write(append(append([]byte(nil), b.result...), '\n'))
	}
	if !l.Ended() {
		var line bytes.Buffer
		_ = progress.NewJSONLines(&line, nil).End(progress.Result{Status: progress.StatusFailed, Error: "the build's events are lost"})
		_, _ = l.Write(line.Bytes())
	}
	return l
}

// persist writes b's record to the history.
func (m *Manager) persist(b *build) {
	if m.store == nil {
		return
	}
	m.persistMu.Lock()
	defer m.persistMu.Unlock()
	m.mu.Lock()
	h := history.Build{ID: b.id, State: b.state, Key: b.key, Model: b.model, IdempotencyKey: b.idem, RequestHash: b.reqHash,
		Dir: filepath.Join("builds", b.id), Result: json.RawMessage(b.result), Created: b.created, Started: b.started, Ended: b.ended,
		Removed: b.removed}
	if b.state == StateQueued || b.state == StateRunning {
		h.Ended = time.Time{}
	}
	m.mu.Unlock()
	if opts, err := json.Marshal(b.options); err == nil {
		h.Options = opts
	}
	if err := m.store.Put(h); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: history: %s\n", b.id, exitcode.OneLine(err))
	}
}
