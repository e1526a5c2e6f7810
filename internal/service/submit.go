// submit.go: a request becomes a build: its model opened (and copied), its options checked,
// its build planned once and keyed by GPU type, and the run it follows.

package service

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/fserr"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/preflight"
)

// OpenModel is the path of the model a tool names, to read by path: for a Manager with a model
// root, a private copy of the model (and its external data) opened inside the root, in a
// folder of the state dir that release removes; for a local Manager, the caller's path made
// absolute. Errors are *RequestError, with the server's paths as clients are shown them.
func (m *Manager) OpenModel(name string) (path string, release func(), err error) {
	defer func() { err = m.shownError(err, "") }()
	if m.models == nil {
		if name == "" {
			return "", nil, badRequest("no model given", "name an ONNX file")
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", nil, badRequest(fmt.Sprintf("model %s: %v", pathtext.Q(name), err), "name an ONNX file")
		}
		return abs, func() {}, nil
	}
	src, err := m.models.open(name)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	if err := m.mkdirPrivate(toolModels); err != nil {
		return "", nil, &RequestError{Kind: KindInternal, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	dir, err := os.MkdirTemp(filepath.Join(m.cfg.StateDir, toolModels), "model-")
	if err != nil {
		return "", nil, &RequestError{Kind: KindInternal, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	release = func() { _ = os.RemoveAll(dir) }
	rel, _ := filepath.Rel(m.cfg.StateDir, dir)
	if path, err = m.copyModel(src, name, rel); err != nil {
		release()
		return "", nil, err
	}
	return path, release, nil
}

// modelDir is the folder of a build's folder that holds its copy of the model, and
// toolModels the state dir's folder of the copies tools read (OpenModel).
const modelDir, toolModels = "model", "models"

// copyModel copies the model src holds (named name in the root) into rel, a folder of the
// state dir made private here, and returns the copy's path; a copy that would leave the state
// dir's file system too little room is refused (checkRoom). Errors are *RequestError.
func (m *Manager) copyModel(src *onnx.Source, name, rel string) (string, error) {
	copied, err := m.checkRoom(src, name)
	if err != nil {
		return "", err
	}
	defer copied()
	if err := m.mkdirPrivate(rel); err != nil {
		return "", &RequestError{Kind: KindInternal, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	path, err := copyModel(src, name, filepath.Join(m.cfg.StateDir, rel))
	var fe *onnx.FormatError
	var ee *onnx.ExternalError
	switch {
	case err == nil:
		return path, nil
	case errors.As(err, &fe), errors.As(err, &ee):
		return "", refusal(exitcode.Wrap(exitcode.Usage, err))
	}
	return "", copyError(name, err, m.shownFor("").text)
}

// copyError is the refusal of a model's copy that failed with err: 507 when the state dir's file
// system filled up (the room was there when the copy was let in: the model or its external data
// grew since, or other files took the room), 500 otherwise; shown turns err's text into what
// clients are shown.
func copyError(name string, err error, shown func(string) string) *RequestError {
	if fserr.Of(err) == fserr.DiskFull {
		return &RequestError{Kind: KindNoRoom,
			Problem: fmt.Sprintf("the state dir's file system filled up while the model %s was copied for its build (it, or its external data, is larger than when the copy was let in, or other files took the room)", pathtext.Q(name)),
			Hint:    "submit it again once the model is in place and running builds have ended; the server's operator can free room there (a smaller --keep-builds-size) or give a --state-dir with more room"}
	}
	return &RequestError{Kind: KindInternal, Problem: fmt.Sprintf("cannot copy the model %s for its build: %s", pathtext.Q(name), shown(exitcode.OneLine(err))), Hint: "check the state dir's free space"}
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{12}-[0-9a-f]{8}$`)

// newID is a build id: the creation time in milliseconds and random bits, in hex, so that ids
// sort by creation.
func newID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%012x-%s", now.UnixMilli(), hex.EncodeToString(r[:]))
}

// requestHash is the SHA-256 of a request's model and options, each value compacted, the keys
// in order: the same request hashes the same however its JSON is spaced.
func requestHash(r Request) string {
	keys := make([]string, 0, len(r.Options))
	for k := range r.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", r.Model)
	for _, k := range keys {
		var c bytes.Buffer
		if json.Compact(&c, r.Options[k]) != nil {
			c.Write(r.Options[k])
		}
		fmt.Fprintf(h, "%q=%s\n", k, c.Bytes())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Submit checks a request with the command line's rules and queues its build. A request with
// the idempotency key of an earlier one gets that build (created is false). A build with the
// build key and options of a queued or running one is a build of its own that follows that
// one's run: its own id, time budget and cancel, the run's events, result and engine. An
// engine cache hit is succeeded when Submit returns. Errors are *RequestError, with the
// server's paths as clients are shown them (shownError); a refused request leaves no folder.
func (m *Manager) Submit(r Request) (_ Snapshot, _ bool, err error) {
	// The folders this request made, removed when it is refused, and the folder of its
	// model's copy, whose paths a refusal shows relative to the model root.
	var made []string
	var modelCopy string
	defer func() {
		if err != nil {
			for _, dir := range made {
				m.removeOwned(dir)
			}
			err = m.shownError(err, modelCopy)
		}
	}()
	now := time.Now()
	if len(r.IdempotencyKey) > 200 || strings.ContainsFunc(r.IdempotencyKey, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return Snapshot{}, false, badRequest("the idempotency key is longer than 200 characters or has characters other than printable ASCII", "use a UUID")
	}
	hash := requestHash(r)
	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		return Snapshot{}, false, &RequestError{Kind: KindUnavailable, Problem: "the server is shutting down", Hint: "submit the build again once it is back"}
	}
	if b := m.idem[r.IdempotencyKey]; r.IdempotencyKey != "" && b != nil {
		defer m.mu.Unlock()
		if b.reqHash != hash {
			return Snapshot{}, false, &RequestError{Kind: KindConflict, Problem: "this idempotency key was used for another request", Hint: "use a new key for a new request"}
		}
		return m.snapshotLocked(b), false, nil
	}
	m.mu.Unlock()

	var src *onnx.Source
	var model string
	if m.models != nil {
		if src, err = m.models.open(r.Model); err != nil {
			return Snapshot{}, false, err
		}
		defer src.Close()
		if m.hooks.opened != nil {
			m.hooks.opened(r.Model)
		}
	} else if model, _, err = m.OpenModel(r.Model); err != nil {
		return Snapshot{}, false, err // a local path: nothing to release
	}
	opts, err := buildflags.Options(r.Options, m.cfg.Refused)
	if err != nil {
		return Snapshot{}, false, refusal(err)
	}
	b := &build{id: newID(now), model: r.Model, options: r.Options, idem: r.IdempotencyKey, reqHash: hash, created: now,
		state: StateQueued, done: make(chan struct{}), timeout: opts.Timeout}
	b.dir = filepath.Join(m.cfg.StateDir, "builds", b.id)
	made = append(made, b.dir)
	if err := m.mkdirPrivate(filepath.Join("builds", b.id)); err != nil {
		return Snapshot{}, false, &RequestError{Kind: KindInternal, Problem: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	// A new run writes in a folder of its own, named after this build (statedir.go); its
	// files are linked into the folders of the builds that follow it to its end. The folder
	// is this request's until a new run takes it over.
	runDir := m.owner.runDir(b.id)
	m.claimRunDir(b.id)
	fresh := false
	defer func() {
		if !fresh {
			m.releaseRunDir(b.id)
		}
	}()
	// The run writes in its folder, made now: the plan checks where its files go. A request
	// that follows another's run removes it unused.
	made = append(made, runDir)
	if err := m.owner.mkdirRun(m, b.id); err != nil {
		return Snapshot{}, false, &RequestError{Kind: KindInternal, Problem: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	if src != nil {
		// The run reads its own copy of the model, made from what open holds, in its folder
		// (removed with it).
		modelCopy = filepath.Join(runDir, modelDir)
		rel, _ := filepath.Rel(m.cfg.StateDir, modelCopy)
		if model, err = m.copyModel(src, r.Model, rel); err != nil {
			return Snapshot{}, false, err
		}
		if m.hooks.copied != nil {
			m.hooks.copied(model)
		}
	}
	opts.Model = model
	if !m.Local() || opts.Engine == "" {
		opts.Engine = filepath.Join(runDir, engineName(model))
	}
	opts.Report = filepath.Join(runDir, "report.html")
	opts.OwnOutputs = !m.Local()
	// A hit is a link to the cache's engine, or the cache's engine itself: never a copy.
	opts.CacheLink = !m.Local()
	if !m.Local() || opts.EngineCache.Dir == "" {
		opts.EngineCache = m.cfg.EngineCache
	}
	opts.Command = nil
	// The budget is the build's own (b.timeout): the run, which others may follow, has none.
	opts.Timeout = 0
	// The build is planned once: its checks, its key on each GPU type, its lookups and its
	// build all read the one plan (and the model it holds open).
	plan, err := builder.Prepare(opts, m.env)
	if err != nil {
		return Snapshot{}, false, refusal(err)
	}
	keep := false
	defer func() {
		if !keep {
			plan.Close()
		}
	}()
	keys, lookups, err := m.keys(plan)
	if err != nil {
		return Snapshot{}, false, refusal(err)
	}
	// A build's key is the one of the GPU it builds on: known now when every GPU the service
	// builds on is of one type, else once its run has a GPU (or the cache answered it).
	if len(lookups) == 1 {
		b.key = keys[lookups[0]]
	}
	// Requests share a run by the model's name in the root (each has its own copy, whose
	// content the keys hold), or by the local caller's path.
	shareName := model
	if src != nil {
		shareName = r.Model
	}
	share := shareKey(keys, lookups, shareName, r.Options)

	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		return Snapshot{}, false, &RequestError{Kind: KindUnavailable, Problem: "the server is shutting down", Hint: "submit the build again once it is back"}
	}
	rn := m.active[share]
	fresh = rn == nil
	if fresh && len(m.runs) >= m.cfg.MaxRuns {
		m.mu.Unlock()
		return Snapshot{}, false, &RequestError{Kind: KindUnavailable,
			Problem: fmt.Sprintf("the server holds %d builds, its most at once (--max-runs)", m.cfg.MaxRuns),
			Hint:    "submit it again once one has ended, or ask the server's operator for a larger --max-runs"}
	}
	if !fresh {
		// This request follows another's run, which has its own plan, folder and copy of
		// the model: this one's are closed and removed (in that order: Windows removes no
		// file that is open).
		keep = true
		defer func() {
			plan.Close()
			m.removeOwned(runDir)
		}()
	}
	if fresh {
		rn = &run{id: b.id, key: b.key, share: share, model: r.Model, opts: opts, plan: plan, keys: keys, lookups: lookups,
			onGPU: plan.Request.Backend != "sim", dir: runDir, state: StateQueued, created: now, log: newShownLog(m.shownFor(filepath.Join(runDir, modelDir)))}
		keep = true
		// Known from here on: a request with the same key and options follows it, also
		// while the engine cache is looked up.
		m.active[share] = rn
		m.runs[rn] = true
		m.running.Add(1)
	}
	m.followLocked(b, rn)
	m.builds[b.id] = b
	m.order = append(m.order, b)
	if b.idem != "" {
		m.idem[b.idem] = b
	}
	m.mu.Unlock()
	m.persist(b)
	if fresh {
		m.start(rn)
	}
	if src != nil {
		m.kickRetain() // its copy counts in the retention rule's size
	}
	s, _ := m.Get(b.id)
	return s, true, nil
}

// shareKey is what the builds that follow one run have in common: the build keys (by GPU type),
// the model file, and every option but the time budget, which each keeps for itself. Options
// outside the build key (the engine's path of a local caller, --trace, --stall-timeout,
// --kill-after) are in it, so that a client never gets what another asked for.
func shareKey(keys map[int]string, lookups []int, model string, options map[string]json.RawMessage) string {
	rest := make(map[string]json.RawMessage, len(options))
	for k, v := range options {
		if k != "timeout" {
			rest[k] = v
		}
	}
	var all strings.Builder
	for _, gpu := range lookups {
		all.WriteString(keys[gpu] + "\n")
	}
	return all.String() + requestHash(Request{Model: model, Options: rest})
}

// keys are plan's build keys on the GPUs the service builds on (one, under -1, for a
// simulated build, which runs on none), and a GPU of each distinct key in the order of
// Config.GPUs: each GPU's target is asked of the machine once for the Manager's life (its Env).
func (m *Manager) keys(plan *builder.Plan) (map[int]string, []int, error) {
	if plan.Request.Backend == "sim" {
		k, err := plan.Key()
		if err != nil {
			return nil, nil, err
		}
		return map[int]string{-1: k.Key}, []int{-1}, nil
	}
	// The GPUs are asked at once: each probe is a child process that loads TensorRT.
	found := make([]builder.BuildKey, len(m.cfg.GPUs))
	errs := make([]error, len(m.cfg.GPUs))
	var wg sync.WaitGroup
	for i, gpu := range m.cfg.GPUs {
		wg.Go(func() { found[i], errs[i] = plan.KeyFor(gpu) })
	}
	wg.Wait()
	keys := make(map[int]string, len(m.cfg.GPUs))
	var lookups []int
	seen := map[string]bool{}
	var failed error
	for i, gpu := range m.cfg.GPUs {
		if errs[i] != nil {
			// A GPU that cannot say what it is builds nothing of this submission; the others
			// do. Only when none can is the submission refused.
			fmt.Fprintf(m.cfg.Log, "trtbuild: GPU %d: %s; the build goes to the other GPUs\n", gpu, exitcode.OneLine(errs[i]))
			failed = cmp.Or(failed, errs[i])
			continue
		}
		k := found[i].Key
		keys[gpu] = k
		if !seen[k] {
			seen[k] = true
			lookups = append(lookups, gpu)
		}
	}
	if len(keys) == 0 {
		return nil, nil, failed
	}
	return keys, lookups, nil
}

// refusal is the RequestError of a request the builder refuses: its options, or its model. A
// refusal of the model's external data gets externalHint; another message without a hint of
// its own gets one about the options.
func refusal(err error) error {
	var re *RequestError
	if errors.As(err, &re) {
		return re
	}
	problem, hint := exitcode.Split(err)
	var ee *onnx.ExternalError
	var pe *preflight.Error
	switch {
	case errors.As(err, &ee), errors.As(err, &pe) && pe.Rule == "external-data":
		// What the message says to do is part of its sentence (or its reason holds a "; "):
		// the whole message is the problem.
		problem, hint = exitcode.OneLine(err), externalHint
	case hint == "":
		hint = "options are trtbuild's flags (trtbuild --help), with JSON types: the options schema lists each (GET /v1/openapi.json, or the MCP build tool's input schema)"
	}
	kind := KindInvalid
	if exitcode.Of(err) != exitcode.Usage {
		kind = KindUnusable
	}
	return &RequestError{Kind: kind, Problem: problem, Hint: hint}
}

// externalHint is what to do about a model whose external data cannot be read.
const externalHint = "fix the model's external data: each file it names must be a regular file in the model's folder (or below it), named by a relative path, as large as the model needs; or export the model again with its data inside"

// engineName is the engine's file name for a model: its name with .engine.
func engineName(model string) string {
	base := filepath.Base(model)
	return strings.TrimSuffix(base, filepath.Ext(base)) + ".engine"
}
