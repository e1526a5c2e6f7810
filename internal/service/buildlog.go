package service

import (
	"fmt"
	"time"
)

// logStart puts rn's start in the service's log (Config.Logger): its id (its first build's),
// model, where it runs, how long it was queued, and the builds that follow it.
func (m *Manager) logStart(rn *run) {
	m.mu.Lock()
	on := "sim"
	if rn.onGPU {
		on = fmt.Sprintf("gpu %d", rn.gpu)
	}
	attrs := []any{"build", rn.id, "model", rn.model, "on", on, "queued_s", seconds(rn.started.Sub(rn.created)), "followers", len(rn.followers)}
	m.mu.Unlock()
	m.cfg.Logger.Info("build started", attrs...)
}

// logEnd puts b's end in the service's log: its id, state, the time since it was submitted,
// whether the engine cache answered it, and its error.
func (m *Manager) logEnd(b *build) {
	m.mu.Lock()
	attrs := []any{"build", b.id, "state", b.state, "duration_s", seconds(b.ended.Sub(b.created))}
	if b.outcome.Cached {
		attrs = append(attrs, "cached", true)
	}
	if b.outcome.Error != "" {
		attrs = append(attrs, "error", b.outcome.Error)
	}
	m.mu.Unlock()
	m.cfg.Logger.Info("build ended", attrs...)
}

// seconds is d in seconds, to the millisecond, for the log.
func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
