package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// run is one build in a worker process (or one answer of the engine cache) that the builds of
// one or more requests follow: those with the same build key, model and options but the time
// budget (shareKey). It has no budget of its own and no client: each build that follows it
// keeps its own budget and cancel (Manager.Cancel, budgetOut), and the run is cancelled when
// its last follower leaves. Its fields are guarded by Manager.mu but for log, which is safe
// for concurrent use, and opts and model, which do not change once it is queued. Its folder holds
// its copy of the model (model/NAME, models.go), which it reads and nothing else.
type run struct {
	id         string // the first build's: its folder is runs/<owner>/<id>, its diagnostics say "build <id>"
	key, share string // its build key, and its sharing key
	model      string // the model as the first request named it
	opts       builder.Options
	// plan is its build, planned once when it was submitted: looked up in the engine cache
	// under the key of each GPU type the service has, then built on the GPU it gets.
	plan *builder.Plan
	// keys are its build keys by GPU (one, under -1, for a simulated build), distinct ones
	// in the order of Config.GPUs in lookups.
	keys      map[int]string
	lookups   []int // a GPU of each distinct key, in order
	onGPU     bool
	gpu       int
	dir       string // absolute
	state     string // StateQueued (while the engine cache is looked up, then in the queue) or StateRunning
	queued    bool   // in Manager.queue
	created   time.Time
	started   time.Time
	log       *Log
	handle    *builder.Handle // its lookup's or build's, while one runs
	cancels   int             // rungs of the cancel ladder asked for (1: cancel, 2: stop now)
	followers []*build        // the builds that follow it now
	killer    *time.Timer     // the hard stop after a budget cancelled it
	along     along           // how far along its build is, for its builds' snapshots
	ending    bool            // endRun has begun: it runs once
}

// followLocked makes b follow rn: its log a view of rn's, its state rn's. m.mu is held.
func (m *Manager) followLocked(b *build, rn *run) {
	b.run = rn
	b.along = &rn.along
	if rn.key != "" {
		b.key = rn.key // the key of the GPU it builds on, when the service has several types
	}
	b.log = rn.log.view()
	b.state = rn.state
	if !rn.started.IsZero() {
		b.started = later(rn.started, b.created) // a build that joins a running run starts then
	}
	rn.followers = append(rn.followers, b)
	if b.timeout > 0 {
		b.budget = time.AfterFunc(time.Until(b.created.Add(b.timeout)), func() { m.budgetOut(b) })
	}
}

// leaveLocked takes b out of its run's followers: b's end has begun. m.mu is held.
func (m *Manager) leaveLocked(b *build) {
	rn := b.run
	for i, f := range rn.followers {
		if f == b {
			rn.followers = append(rn.followers[:i], rn.followers[i+1:]...)
			break
		}
	}
	b.run = nil
	b.finishing = true
	if b.budget != nil {
		b.budget.Stop()
	}
}

// stopLocked cancels rn, whose last follower leaves: no build follows it any more. A queued
// run is taken out of the queue (dropped: the caller ends it with endRun); a run looking up
// the engine cache or building goes up the cancel ladder: the first rung stops it at its next
// step boundary, hard the second stops its worker at once. m.mu is held.
func (m *Manager) stopLocked(rn *run, hard bool) (dropped bool) {
	if rn.ending {
		return false
	}
	if m.active[rn.share] == rn {
		delete(m.active, rn.share) // a new request starts a run of its own
	}
	if rn.queued {
		for i, q := range m.queue {
			if q == rn {
				m.queue = append(m.queue[:i], m.queue[i+1:]...)
				break
			}
		}
		rn.queued = false
		return true
	}
	// A cancel is idempotent (a client may send it again); hard is the second rung.
	rn.cancels = max(rn.cancels, 1)
	if hard {
		rn.cancels = 2
	}
	rn.applyCancels()
	return false
}

// applyCancels passes the rungs asked for to the lookup or build that runs now, if any; one
// that starts later gets them when it starts (setHandleLocked). m.mu is held.
func (rn *run) applyCancels() {
	if rn.handle == nil {
		return
	}
	switch rn.cancels {
	case 1:
		rn.handle.Cancel()
	case 2:
		rn.handle.Stop()
	}
}

// setHandleLocked makes h the handle of what rn runs now (nil once it ended), with the cancels
// asked for so far. m.mu is held.
func (rn *run) setHandleLocked(h *builder.Handle) {
	rn.handle = h
	rn.applyCancels()
}

// start makes rn's folder, answers it from the engine cache when the cache has its engine,
// and queues it otherwise.
func (m *Manager) start(rn *run) {
	if err := m.owner.mkdirRun(m, rn.id); err != nil {
		m.endRun(rn, progress.Result{Status: progress.StatusFailed, Error: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}, nil)
		return
	}
	if rn.opts.EngineCache.Dir != "" {
		if res, err, hit := m.lookup(rn); hit {
			m.endRun(rn, res, err)
			return
		}
	}
	m.mu.Lock()
	var why string
	switch {
	case m.draining:
		why = "cancelled: the server is shutting down; nothing was built"
	case rn.cancels > 0 || len(rn.followers) == 0:
		why = "cancelled before the build started; nothing was built"
	}
	if why == "" {
		rn.queued = true
		m.queue = append(m.queue, rn)
	}
	m.mu.Unlock()
	if why != "" {
		m.endRun(rn, progress.Result{Status: progress.StatusCancelled, Error: why}, nil)
		return
	}
	m.schedule()
}

// lookup answers rn from the engine cache: hit is true when the cache had its engine under the
// key of one of the service's GPU types (the first, in the order of Config.GPUs), which is
// then the key of its builds.
func (m *Manager) lookup(rn *run) (progress.Result, error, bool) {
	began := time.Now()
	for _, gpu := range rn.lookups {
		if gpu >= 0 {
			rn.plan.SetDevice(gpu)
		}
		h := rn.plan.Lookup(context.Background(), builder.Frontend{
			Cached:      rn.showCacheHit,
			Diagnostics: m.diagnostics(rn.id),
			Began:       began,
		})
		res, err := m.follow(rn, h)
		if errors.Is(err, builder.ErrNotCached) {
			continue
		}
		if !res.Cached {
			if err == nil || exitcode.Of(err) == exitcode.Interrupted {
				return res, err, false // a cancel: start ends the run as cancelled before it started
			}
			return res, err, true // a refusal ends the run
		}
		m.mu.Lock()
		rn.started = began
		m.setKeyLocked(rn, rn.keys[gpu])
		m.mu.Unlock()
		return res, err, true
	}
	return progress.Result{}, nil, false
}

// setKeyLocked makes key the build key of rn and of the builds that follow it: the key of the
// GPU it builds on, or of the engine the cache had. m.mu is held.
func (m *Manager) setKeyLocked(rn *run, key string) {
	rn.key = key
	for _, b := range rn.followers {
		b.key = key
	}
}

// showCacheHit puts an engine cache hit in rn's log as the command line's --progress json
// shows one: the build line, the hit's log line, the result.
func (rn *run) showCacheHit(info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
	j := progress.NewJSONLines(rn.log, nil)
	j.Begin(progress.NewState(info, start))
	j.Handle(hit)
	return j.End(res)
}

// schedule starts the queued runs that have a free slot, in order: a TensorRT build needs a
// free GPU, a simulated one a free simulation slot.
func (m *Manager) schedule() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.draining {
		return
	}
	kept := m.queue[:0]
	for _, rn := range m.queue {
		gpu, ok := -1, false
		if rn.onGPU {
			for _, g := range m.cfg.GPUs {
				if _, keyed := rn.keys[g]; keyed && m.gpuBusy[g] == nil {
					gpu, ok = g, true
					break
				}
			}
		} else {
			ok = m.simBusy < m.cfg.SimSlots
		}
		if !ok {
			kept = append(kept, rn)
			continue
		}
		if rn.onGPU {
			m.gpuBusy[gpu] = rn
			rn.gpu = gpu
			rn.opts.Device = gpu
			rn.plan.SetDevice(gpu)
			m.setKeyLocked(rn, rn.keys[gpu])
		} else {
			m.simBusy++
		}
		rn.queued = false
		rn.state, rn.started = StateRunning, time.Now()
		for _, b := range rn.followers {
			b.state, b.started = rn.state, later(rn.started, b.created)
		}
		go m.runBuild(rn)
	}
	for i := len(kept); i < len(m.queue); i++ {
		m.queue[i] = nil
	}
	m.queue = kept
}

// runBuild builds rn in a worker process, its events going to rn's log.
func (m *Manager) runBuild(rn *run) {
	m.mu.Lock()
	followers := append([]*build(nil), rn.followers...)
	m.mu.Unlock()
	for _, b := range followers {
		m.persist(b)
	}
	m.logStart(rn)
	res, err := m.build(rn)
	m.mu.Lock()
	if rn.onGPU {
		delete(m.gpuBusy, rn.gpu)
		m.gpuSecs += time.Since(rn.started).Seconds()
	} else {
		m.simBusy--
	}
	m.mu.Unlock()
	m.endRun(rn, res, err)
	m.schedule()
}

// build runs rn's build with the builder, its events going to rn's log.
func (m *Manager) build(rn *run) (progress.Result, error) {
	if m.Local() && rn.plan.Changed() != nil {
		// A local caller's model (its own file, not a copy) changed while the build was
		// queued: the build is of the model as it is now, planned and keyed again.
		if err := m.replan(rn); err != nil {
			return progress.Result{}, err
		}
	}
	h := rn.plan.Start(context.Background(), builder.Frontend{
		NewRenderer: func(progress.Controls) progress.Renderer {
			return &alongRenderer{Renderer: progress.NewJSONLines(rn.log, nil), a: &rn.along}
		},
		Cached:        rn.showCacheHit,
		Diagnostics:   m.diagnostics(rn.id),
		CancelMessage: m.cfg.CancelMessage,
		Began:         rn.created,
	})
	res, err := m.follow(rn, h)
	// A worker that loaded another TensorRT or GPU than the Env said (TensorRT upgraded in
	// place, a GPU swapped) had its engine keyed by what built it: so is the run, and every
	// build that follows it.
	if k := h.Key(); k != "" && k != rn.key {
		m.mu.Lock()
		m.setKeyLocked(rn, k)
		m.mu.Unlock()
	}
	return res, err
}

// follow makes h, rn's lookup or build that just started, what rn's cancels reach (those asked
// for already too), waits for it to end, and returns its outcome.
func (m *Manager) follow(rn *run, h *builder.Handle) (progress.Result, error) {
	m.mu.Lock()
	rn.setHandleLocked(h)
	m.mu.Unlock()
	res, err := h.Wait()
	m.mu.Lock()
	rn.setHandleLocked(nil)
	m.mu.Unlock()
	return res, err
}

// replan plans rn again, on its GPU, from the options it was submitted with, and makes its key
// the new plan's.
func (m *Manager) replan(rn *run) error {
	plan, err := builder.Prepare(rn.opts, m.env)
	if err != nil {
		return err
	}
	if rn.onGPU {
		plan.SetDevice(rn.gpu)
	}
	key, err := plan.Key()
	if err != nil {
		plan.Close()
		return err
	}
	m.mu.Lock()
	old := rn.plan
	rn.plan = plan
	m.setKeyLocked(rn, key.Key)
	m.mu.Unlock()
	old.Close()
	return nil
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// endRun ends rn with the builder's outcome: its result event (written now if the builder
// refused before one was), then every build that followed it to the end, which gets its files
// (linked into the build's folder) and its result, or the result of its own it was leaving
// with (leaving). rn's folder is removed.
func (m *Manager) endRun(rn *run, res progress.Result, err error) {
	m.mu.Lock()
	if rn.ending {
		m.mu.Unlock()
		return
	}
	rn.ending = true
	if m.active[rn.share] == rn {
		delete(m.active, rn.share)
	}
	delete(m.runs, rn)
	if rn.killer != nil {
		rn.killer.Stop()
	}
	followers := rn.followers
	rn.followers = nil
	for _, b := range followers {
		b.run = nil
		b.finishing = true
		if b.started.IsZero() && !rn.started.IsZero() {
			b.started = later(rn.started, b.created) // an engine cache hit
		}
		if b.budget != nil {
			b.budget.Stop()
		}
	}
	m.mu.Unlock()
	defer m.running.Done()
	if rn.plan != nil {
		rn.plan.Close()
	}
	if !rn.log.Ended() {
		r := res
		if r.Status == "" {
			r = builder.RefusalResult(err)
		}
		_ = progress.NewJSONLines(rn.log, nil).End(r)
	}
	line := rn.log.result()
	var outcome progress.Result
	_ = json.Unmarshal(line, &outcome)
	at := eventTime(line)
	// The model's copy goes with the run's folder; its report shows the model by the name
	// the client gave before the builds that followed it get it.
	report := filepath.Join(rn.dir, "report.html")
	if err := rn.log.shown.rewriteFile(report, func(path string, data []byte) error { return outpath.WriteOwn(path, data, 0o600) }); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot keep its report: %s\n", rn.id, exitcode.OneLine(err))
	}
	files := m.runFiles(rn)
	for _, b := range followers {
		if b.leaving == nil { // one that leaves when the run ends has none of its files
			m.adopt(rn, b, files, outcome)
		}
	}
	if err := os.RemoveAll(rn.dir); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot remove its run's folder: %s\n", rn.id, exitcode.OneLine(err))
	}
	m.releaseRunDir(rn.id)
	for _, b := range followers {
		if b.leaving != nil {
			own := *b.leaving
			if outcome.Where != nil {
				own.Where = outcome.Where // where the run stopped for it
			}
			own.Duration = max(own.Duration, at)
			b.log.end(resultLine(own))
		}
		m.finishBuild(b)
	}
}

// runFiles are the names of the files rn left in its folder (the engine, its manifest, the
// report): what a build that followed it to the end gets.
func (m *Manager) runFiles(rn *run) []string {
	entries, err := os.ReadDir(rn.dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// adopt puts rn's files in b's folder: hard links (the same bytes, not a copy), or copies
// where the file system has no links; and says where b's engine is.
func (m *Manager) adopt(rn *run, b *build, files []string, outcome progress.Result) {
	for _, name := range files {
		src, dst := filepath.Join(rn.dir, name), filepath.Join(b.dir, name)
		if err := os.Link(src, dst); err != nil {
			if err := copyOwn(src, dst); err != nil {
				fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot put %s in its folder: %s\n", b.id, name, exitcode.OneLine(err))
			}
		}
	}
	if outcome.Status != progress.StatusBuilt {
		return
	}
	engine := outcome.Engine
	if rel, err := filepath.Rel(rn.dir, engine); err == nil && filepath.IsLocal(rel) {
		engine = filepath.Join(b.dir, rel)
	}
	m.mu.Lock()
	b.enginePath = engine
	m.mu.Unlock()
}

// copyOwn copies src, a file of the service's own, to dst, a new file (0600).
func copyOwn(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// finishBuild records that b has ended: its events file, then its state, result and record.
func (m *Manager) finishBuild(b *build) {
	line := b.log.result()
	var res progress.Result
	_ = json.Unmarshal(line, &res)
	// The events file is in place before the state says the build ended.
	if err := outpath.WriteOwn(filepath.Join(b.dir, "events.jsonl"), b.log.Lines(), 0o600); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot keep its events: %s\n", b.id, exitcode.OneLine(err))
	}
	m.mu.Lock()
	if b.ended.IsZero() {
		b.ended = time.Now()
	}
	b.setResult(line)
	b.state, b.finished = stateOf(res.Status), true
	m.mu.Unlock()
	m.persist(b)
	m.logEnd(b)
	close(b.done)
	m.kickRetain()
}

// endEarly ends b, which left its run before the run ended, with res.
func (m *Manager) endEarly(b *build, res progress.Result) {
	b.log.end(resultLine(res))
	m.finishBuild(b)
}

// resultLine is res as the result event's line of --progress json.
func resultLine(res progress.Result) []byte {
	var line bytes.Buffer
	_ = progress.NewJSONLines(&line, nil).End(res)
	return bytes.TrimSuffix(line.Bytes(), []byte("\n"))
}

// eventTime is the "t" of an event line, on its build's clock.
func eventTime(line []byte) time.Duration {
	e, err := progress.DecodeJSON(line)
	if err != nil {
		return 0
	}
	return e.Time
}

// leftResult is the result of a build that leaves rn at wall time now, with status cancelled
// or timed out, before rn has ended: where rn was then, read back from its events. m.mu is
// held.
func (m *Manager) leftResult(rn *run, status progress.Status, now time.Time) progress.Result {
	res := progress.Result{Status: status}
	if rn.state != StateRunning {
		res.Error = "cancelled while queued; nothing was built"
		return res
	}
	res.Error = "cancelled; the build it shared with other requests goes on for them"
	st := replay(rn.log.lines(), rn.started)
	res.Duration = st.BuildNow(now)
	return st.End(res, now)
}

// replay reads a run's events back into the state its session kept, their times taken on the
// wall clock from begin (the run's start).
func replay(lines [][]byte, begin time.Time) *progress.State {
	st := progress.NewState(progress.BuildInfo{}, begin)
	for _, line := range lines {
		e, err := progress.DecodeJSON(line)
		switch {
		case err != nil || e.Type == progress.EventResult:
		case e.Type == progress.EventBuild && e.Info != nil:
			st = progress.NewState(*e.Info, begin)
		default:
			st.Apply([]progress.Event{e}, begin.Add(e.Time))
		}
	}
	return st
}

// budgetOut ends b's time budget. A build that others' builds share a run with leaves it, and
// ends timed out at once; the run goes on for them. The run's last follower ends the run: a
// queued run ends timed out; a running one is cancelled at its next step boundary (its worker
// stopped after its kill-after), and b ends with it, timed out.
func (m *Manager) budgetOut(b *build) {
	now := time.Now()
	m.mu.Lock()
	rn := b.run
	if rn == nil || b.finishing || b.leaving != nil || b.log.result() != nil {
		m.mu.Unlock()
		return // it has ended, or its run has: the budget did not run out first
	}
	res := m.budgetResult(b, rn, now)
	if len(rn.followers) > 1 {
		m.leaveLocked(b)
		m.mu.Unlock()
		m.endEarly(b, res)
		return
	}
	if dropped := m.stopLocked(rn, false); dropped {
		m.mu.Unlock()
		m.endRun(rn, res, nil)
		return
	}
	b.leaving = &res
	b.log.holdResult()
	if rn.killer == nil {
		rn.killer = time.AfterFunc(rn.opts.KillAfter, func() {
			m.mu.Lock()
			m.stopLocked(rn, true)
			m.mu.Unlock()
		})
	}
	m.mu.Unlock()
}

// budgetResult is the result of b, whose time budget ran out at now while it followed rn:
// the stage that used the time, as the builder says it for --timeout. m.mu is held.
func (m *Manager) budgetResult(b *build, rn *run, now time.Time) progress.Result {
	res := progress.Result{Status: progress.StatusTimedOut}
	if rn.state != StateRunning {
		res.Error = fmt.Sprintf("the time budget of %s ran out while the build was queued; nothing was built", b.timeout)
		res.Hint = "give a longer timeout, or submit when the queue is shorter"
		return res
	}
	st := replay(rn.log.lines(), rn.started)
	res.Error = fmt.Sprintf("build exceeded --timeout %s %s", b.timeout, st.Budget(b.timeout, now))
	res.Duration = st.BuildNow(now)
	return st.End(res, now)
}
