// Package service runs the builds that programs submit — the HTTP server (trtbuild serve) and
// the MCP server (trtbuild mcp) — on the one build API (internal/builder): a queue that runs at
// most one TensorRT build per GPU at a time and a few simulated ones, every build's event log
// (the lines of `trtbuild --progress json`, numbered, for any number of readers), the cancel
// ladder, shared builds for the same build key, answers from the engine cache, and the history
// of builds kept across restarts (internal/history).
//
// Each build has its own folder in the state dir, builds/<id>/, trtbuild's own (no link is
// followed there) and private (0700, as builds/ and an engine cache inside the state dir are,
// so that a state dir others may read shows them nothing): the engine (unless a local caller named it elsewhere), report.html and
// events.jsonl, the build's event log, written when it ends.
package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/history"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// The states of a build.
const (
	StateQueued      = "queued"
	StateRunning     = "running"
	StateSucceeded   = "succeeded"
	StateFailed      = "failed"
	StateCancelled   = "cancelled"
	StateTimedOut    = "timed_out"
	StateInterrupted = "interrupted"
)

// States are every state, in the order a build can go through them.
var States = []string{StateQueued, StateRunning, StateSucceeded, StateFailed, StateCancelled, StateTimedOut, StateInterrupted}

// Config describes a Manager.
type Config struct {
	// StateDir is the service's folder: history.db and builds/<id>/. It is made (0700) if
	// missing, and must be a folder of this user that no one else may write.
	StateDir string
	// ModelRoot is the folder models are named relative to (opened as an os.Root); "" lets a
	// request name any path, as the command line does (trtbuild mcp on stdio).
	ModelRoot string
	// GPUs are the devices TensorRT builds run on, one build per GPU at a time (default [0]).
	GPUs []int
	// SimSlots is how many simulated builds run at once (default 4).
	SimSlots int
	// Refused names the options a request may not set, each with why (buildflags.Options).
	Refused map[string]string
	// EngineCache is where engines are reused from and stored; its Dir "" means none.
	EngineCache builder.EngineCache
	// KeepHistory keeps the builds in StateDir/history.db, so that a restarted service lists
	// them; a build that was running when the service stopped is then "interrupted".
	KeepHistory bool
	// CancelMessage is the notice of a first cancel (default: says how to stop at once).
	CancelMessage string
	// ExposePaths shows clients the server's own paths (the state dir's, the model root's,
	// the engine cache's) where a build's events, report and tool results name them; by
	// default they see names relative to the model root and the state dir instead.
	ExposePaths bool
	// Log receives the service's diagnostics, one line each (nil: none).
	Log io.Writer
	// Logger receives each build's start and end, one record each (nil: none).
	Logger *slog.Logger
}

// RequestError is a request the service refuses: the HTTP status that says why, what is wrong
// and what to do, each one line.
type RequestError struct {
	Status  int
	Problem string
	Hint    string
}

func (e *RequestError) Error() string {
	if e.Hint == "" {
		return e.Problem
	}
	return e.Problem + "; " + e.Hint
}

func badRequest(problem, hint string) *RequestError {
	return &RequestError{Status: http.StatusBadRequest, Problem: problem, Hint: hint}
}

// ErrNotFound is the error for a build id the service does not know.
var ErrNotFound = errors.New("no such build")

// Request is a build a client submits: the model (relative to the model root), the options by
// their long flag names (buildflags.Options), and the client's idempotency key ("": none).
type Request struct {
	Model          string
	Options        map[string]json.RawMessage
	IdempotencyKey string
}

// Snapshot is a build as a client sees it at one moment.
type Snapshot struct {
	ID       string          `json:"id"`
	State    string          `json:"state"`
	Key      string          `json:"key"`
	Model    string          `json:"model"`
	Position int             `json:"position,omitempty"`
	Created  time.Time       `json:"created"`
	Started  *time.Time      `json:"started,omitempty"`
	Ended    *time.Time      `json:"ended,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Where    *progress.Where `json:"where,omitempty"`
	Hint     string          `json:"hint,omitempty"`
	Error    string          `json:"error,omitempty"`
	Engine   bool            `json:"engine_available"`
	// EnginePath is where the engine is, for a local caller (trtbuild mcp on stdio); a service
	// does not show its paths.
	EnginePath string `json:"-"`

	encoded []byte // the JSON of an ended build's snapshot, which no longer changes
}

// snapshotJSON is Snapshot without its methods, for encoding/json.
type snapshotJSON Snapshot

// AppendJSON appends the snapshot's JSON object to buf: for an ended build, the encoding made
// once when it ended, so that listing thousands of builds encodes nothing again.
func (s Snapshot) AppendJSON(buf []byte) []byte {
	if s.encoded != nil {
		return append(buf, s.encoded...)
	}
	data, err := json.Marshal(snapshotJSON(s))
	if err != nil {
		return append(buf, "null"...)
	}
	return append(buf, data...)
}

// Stats are the service's counters, for /metrics.
type Stats struct {
	ByState        map[string]int
	Queued         int
	GPUBusySeconds float64
	EventsStreamed uint64
	SSEClients     int
}

// Manager queues and runs builds, and keeps their logs and history. It is safe for concurrent
// use.
type Manager struct {
	cfg    Config
	models *modelRoot // nil: local paths
	state  *os.Root   // the state dir
	store  *history.Store

	mu       sync.Mutex
	builds   map[string]*build
	order    []*build          // by creation, oldest first
	queue    []*build          // queued, in order
	active   map[string]*build // queued or running, by build key
	idem     map[string]*build // by idempotency key
	gpuBusy  map[int]*build
	simBusy  int
	draining bool
	running  sync.WaitGroup
	gpuSecs  float64 // ended TensorRT builds' seconds

	streamed atomic.Uint64
	clients  atomic.Int64

	hooks testHooks
}

// testHooks are points where a test acts in the middle of the Manager's work (export_test.go).
type testHooks struct {
	// opened runs when a request's model has been opened inside the model root, before
	// anything is read from it.
	opened func(name string)
}

// build is one build's record.
type build struct {
	id, model, key string
	options        map[string]json.RawMessage
	idem, reqHash  string
	opts           builder.Options
	onGPU          bool
	dir            string // absolute
	state          string
	created        time.Time
	started, ended time.Time
	log            *Log
	result         []byte
	sigs           chan os.Signal // the build's cancel ladder; nil until it runs
	cancels        int            // rungs asked for
	gpu            int
	done           chan struct{}   // closed when it has ended
	outcome        progress.Result // result's fields, read once
	finished       bool            // ended for good: its snapshot no longer changes
	encoded        []byte          // its snapshot's JSON, once finished
	finishing      bool            // finish has begun: it runs once
	budget         *time.Timer     // the time budget while queued
	paths          *shownPaths     // the server's paths as its clients are shown them
}

// New opens the state dir (and its history) and returns a Manager. Builds that were queued
// or running when the last service on this state dir stopped become "interrupted", their
// unfinished files removed.
func New(cfg Config) (*Manager, error) {
	if len(cfg.GPUs) == 0 {
		cfg.GPUs = []int{0}
	}
	if cfg.SimSlots <= 0 {
		cfg.SimSlots = 4
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CancelMessage == "" {
		cfg.CancelMessage = "Cancel requested: the builder stops at its next step boundary (this can take a while); a hard cancel stops it now."
	}
	dir, err := openStateDir(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	cfg.StateDir = dir
	m := &Manager{cfg: cfg, builds: map[string]*build{}, active: map[string]*build{}, idem: map[string]*build{}, gpuBusy: map[int]*build{}}
	if m.state, err = os.OpenRoot(dir); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(dir), err)
	}
	if err := m.mkdirPrivate("builds"); err != nil {
		m.state.Close()
		return nil, exitcode.Usagef("state dir %s cannot be written (%s); give a folder this user may write", pathtext.Q(dir), exitcode.OneLine(exitcode.SyscallCause(err)))
	}
	// An engine cache inside the state dir holds the engines too: its top folder is private.
	if rel, err := filepath.Rel(dir, cfg.EngineCache.Dir); cfg.EngineCache.Dir != "" && err == nil && filepath.IsLocal(rel) {
		if err := m.mkdirPrivate(strings.Split(rel, string(filepath.Separator))[0]); err != nil {
			m.state.Close()
			return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(dir), err)
		}
	}
	if cfg.ModelRoot != "" {
		if m.models, err = openModelRoot(cfg.ModelRoot); err != nil {
			m.state.Close()
			return nil, err
		}
	}
	if cfg.KeepHistory {
		if err := m.loadHistory(); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// openStateDir makes the state dir if it is missing and checks it is this user's folder that
// no one else can write (a folder another user could write would let them plant links and
// files where the service writes engines).
func openStateDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no state dir given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("cannot make the state dir %s: %w", pathtext.Q(abs), exitcode.SyscallCause(err))
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("state dir %s: %w", pathtext.Q(abs), err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("state dir %s is not a folder (a link or a file); give a folder of its own", pathtext.Q(abs))
	}
	if err := checkPrivate(abs, fi); err != nil {
		return "", err
	}
	return abs, nil
}

// Close closes the history; call it after Shutdown.
func (m *Manager) Close() error {
	var err error
	if m.store != nil {
		err = m.store.Close()
	}
	if m.models != nil {
		m.models.root.Close()
	}
	if m.state != nil {
		m.state.Close()
	}
	return err
}

// Refused is the options a request may not set here, each with why (Config.Refused).
func (m *Manager) Refused() map[string]string { return m.cfg.Refused }

// Local reports whether requests name the caller's own paths (no model root), as the command
// line does.
func (m *Manager) Local() bool { return m.models == nil }

// OpenModel is the path of the model a tool names, to read by path: for a Manager with a model
// root, a private copy of the model (and its external data) opened inside the root, in a
// folder of the state dir that release removes; for a local Manager, the caller's path made
// absolute. Errors are *RequestError.
func (m *Manager) OpenModel(name string) (path string, release func(), err error) {
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
		return "", nil, &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	dir, err := os.MkdirTemp(filepath.Join(m.cfg.StateDir, toolModels), "model-")
	if err != nil {
		return "", nil, &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
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
// state dir made private here, and returns the copy's path. Errors are *RequestError.
func (m *Manager) copyModel(src *onnx.Source, name, rel string) (string, error) {
	if err := m.mkdirPrivate(rel); err != nil {
		return "", &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make a folder for the model's copy: " + exitcode.OneLine(err), Hint: "check the state dir"}
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
	return "", &RequestError{Status: http.StatusInternalServerError, Problem: fmt.Sprintf("cannot copy the model %s for its build: %s", pathtext.Q(name), m.shownFor("").text(exitcode.OneLine(err))), Hint: "check the state dir's free space"}
}

// OutputDir is a folder of the state dir for a tool's outputs (kind "converted"), made 0700.
func (m *Manager) OutputDir(kind string) (string, error) {
	if kind == "" || !filepath.IsLocal(kind) || strings.ContainsRune(kind, filepath.Separator) {
		return "", fmt.Errorf("output kind %q is not a folder name", kind)
	}
	if err := m.mkdirPrivate(kind); err != nil {
		return "", err
	}
	return filepath.Join(m.cfg.StateDir, kind), nil
}

// mkdirPrivate makes the folder rel of the state dir (no link followed) and makes it 0700:
// the engines, reports and events in it are no one else's to read, even when the state dir
// itself may be read by others (a folder made with mkdir, mode 0755).
func (m *Manager) mkdirPrivate(rel string) error {
	if err := outpath.MkdirOwn(m.cfg.StateDir, rel); err != nil {
		return err
	}
	if err := m.state.Chmod(rel, 0o700); err != nil {
		return fmt.Errorf("making %s private: %w", pathtext.Q(filepath.Join(m.cfg.StateDir, rel)), exitcode.SyscallCause(err))
	}
	return nil
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
// the idempotency key of an earlier one gets that build; a build with the build key of a queued
// or running one is that build (created is false for both); an engine cache hit is succeeded
// when Submit returns. Errors are *RequestError.
func (m *Manager) Submit(r Request) (Snapshot, bool, error) {
	now := time.Now()
	if len(r.IdempotencyKey) > 200 || strings.ContainsFunc(r.IdempotencyKey, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return Snapshot{}, false, badRequest("the idempotency key is longer than 200 characters or has characters other than printable ASCII", "use a UUID")
	}
	hash := requestHash(r)
	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		return Snapshot{}, false, &RequestError{Status: http.StatusServiceUnavailable, Problem: "the server is shutting down", Hint: "submit the build again once it is back"}
	}
	if b := m.idem[r.IdempotencyKey]; r.IdempotencyKey != "" && b != nil {
		defer m.mu.Unlock()
		if b.reqHash != hash {
			return Snapshot{}, false, &RequestError{Status: http.StatusConflict, Problem: "this idempotency key was used for another request", Hint: "use a new key for a new request"}
		}
		return m.snapshotLocked(b), false, nil
	}
	m.mu.Unlock()

	var src *onnx.Source
	var model string
	var err error
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
		state: StateQueued, log: NewLog(), done: make(chan struct{})}
	b.dir = filepath.Join(m.cfg.StateDir, "builds", b.id)
	b.paths = m.shownFor(filepath.Join(b.dir, modelDir))
	b.log = newShownLog(b.paths)
	if err := m.mkdirPrivate(filepath.Join("builds", b.id)); err != nil {
		return Snapshot{}, false, &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}
	}
	if src != nil {
		// The build reads its own copy of the model, made from what open holds.
		if model, err = m.copyModel(src, r.Model, filepath.Join("builds", b.id, modelDir)); err != nil {
			m.removeDir(b)
			return Snapshot{}, false, err
		}
	}
	opts.Model = model
	if !m.Local() || opts.Engine == "" {
		opts.Engine = filepath.Join(b.dir, engineName(model))
	}
	opts.Report = filepath.Join(b.dir, "report.html")
	opts.OwnOutputs = !m.Local()
	if !m.Local() || opts.EngineCache.Dir == "" {
		opts.EngineCache = m.cfg.EngineCache
	}
	opts.Command = nil
	opts.ModelHashes = new(buildkey.Memo).Hash
	key, _, err := builder.Key(opts)
	if err != nil {
		m.removeDir(b)
		return Snapshot{}, false, refusal(err)
	}
	b.key, b.opts = key.Key, opts
	b.onGPU = opts.Backend != "sim"

	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		m.removeDir(b)
		return Snapshot{}, false, &RequestError{Status: http.StatusServiceUnavailable, Problem: "the server is shutting down", Hint: "submit the build again once it is back"}
	}
	if other := m.active[b.key]; other != nil {
		if r.IdempotencyKey != "" {
			m.idem[r.IdempotencyKey] = other
		}
		s := m.snapshotLocked(other)
		m.mu.Unlock()
		m.removeDir(b)
		return s, false, nil
	}
	// b is known from here on (a request with the same key shares it), and queued once the
	// engine cache turns out to have no engine for it.
	m.builds[b.id] = b
	m.order = append(m.order, b)
	m.active[b.key] = b
	if b.idem != "" {
		m.idem[b.idem] = b
	}
	m.mu.Unlock()
	m.persist(b)

	if opts.EngineCache.Dir != "" && m.fromCache(b) {
		s, _ := m.Get(b.id)
		return s, true, nil
	}
	m.mu.Lock()
	if b.state == StateQueued && !b.finishing {
		m.queue = append(m.queue, b)
		if opts.Timeout > 0 {
			b.budget = time.AfterFunc(time.Until(b.created.Add(opts.Timeout)), func() { m.queuedTimeout(b) })
		}
	}
	s := m.snapshotLocked(b)
	m.mu.Unlock()
	m.schedule()
	return s, true, nil
}

// queuedTimeout ends b as timed out when its time budget ran out while it was queued.
func (m *Manager) queuedTimeout(b *build) {
	m.mu.Lock()
	if b.state != StateQueued || b.finishing {
		m.mu.Unlock()
		return
	}
	m.dropQueuedLocked(b)
	m.mu.Unlock()
	m.finish(b, progress.Result{Status: progress.StatusTimedOut,
		Error: fmt.Sprintf("the time budget of %s ran out while the build was queued; nothing was built", b.opts.Timeout),
		Hint:  "give a longer timeout, or submit when the queue is shorter"}, nil)
}

// showCacheHit puts an engine cache hit in b's log as the command line's --progress json shows
// one: the build line, the hit's log line, the result.
func (b *build) showCacheHit(info progress.BuildInfo, start time.Time, hit []progress.Event, res progress.Result) error {
	j := tui.NewJSON(b.log, nil)
	j.Begin(progress.NewState(info, start))
	j.Handle(hit)
	return j.End(res)
}

// fromCache answers b from the engine cache when it holds b's engine: b has then ended.
func (m *Manager) fromCache(b *build) bool {
	o := b.opts
	o.CacheOnly = true
	began := time.Now()
	res, err := builder.Run(context.Background(), o, builder.Frontend{
		Cached:      b.showCacheHit,
		Diagnostics: m.diagnostics(b.id),
		Began:       began,
	})
	if errors.Is(err, builder.ErrNotCached) || !res.Cached {
		return false
	}
	m.mu.Lock()
	b.started, b.ended = began, time.Now()
	m.mu.Unlock()
	m.finish(b, res, err)
	return true
}

// refusal is the RequestError of options the builder refuses.
func refusal(err error) error {
	var re *RequestError
	if errors.As(err, &re) {
		return re
	}
	problem, hint := buildflags.SplitHint(exitcode.OneLine(err))
	if hint == "" {
		hint = "options are trtbuild's flags (trtbuild --help), with JSON types: the options schema lists each (GET /v1/openapi.json, or the MCP build tool's input schema)"
	}
	status := http.StatusBadRequest
	if exitcode.Of(err) != exitcode.Usage {
		status = http.StatusUnprocessableEntity
	}
	return &RequestError{Status: status, Problem: problem, Hint: hint}
}

// engineName is the engine's file name for a model: its name with .engine.
func engineName(model string) string {
	base := filepath.Base(model)
	return strings.TrimSuffix(base, filepath.Ext(base)) + ".engine"
}

func (m *Manager) removeDir(b *build) {
	_ = os.RemoveAll(b.dir)
}

// schedule starts the queued builds that have a free slot, in order: a TensorRT build needs a
// free GPU, a simulated one a free simulation slot.
func (m *Manager) schedule() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.draining {
		return
	}
	kept := m.queue[:0]
	for _, b := range m.queue {
		gpu, ok := -1, false
		if b.onGPU {
			for _, g := range m.cfg.GPUs {
				if m.gpuBusy[g] == nil {
					gpu, ok = g, true
					break
				}
			}
		} else {
			ok = m.simBusy < m.cfg.SimSlots
		}
		if !ok {
			kept = append(kept, b)
			continue
		}
		if b.onGPU {
			m.gpuBusy[gpu] = b
			b.gpu = gpu
			b.opts.Device = gpu
		} else {
			m.simBusy++
		}
		b.state, b.started = StateRunning, time.Now()
		b.sigs = make(chan os.Signal, 2)
		m.running.Add(1)
		go m.run(b)
	}
	for i := len(kept); i < len(m.queue); i++ {
		m.queue[i] = nil
	}
	m.queue = kept
}

// run builds b in a worker process, its events going to b's log.
func (m *Manager) run(b *build) {
	defer m.running.Done()
	m.logStart(b)
	m.persist(b)
	res, err := m.build(b)
	m.mu.Lock()
	b.ended = time.Now()
	if b.onGPU {
		delete(m.gpuBusy, b.gpu)
		m.gpuSecs += b.ended.Sub(b.started).Seconds()
	} else {
		m.simBusy--
	}
	m.mu.Unlock()
	m.finish(b, res, err)
	m.schedule()
}

// build runs b's build with the builder, its events going to b's log.
func (m *Manager) build(b *build) (progress.Result, error) {
	return builder.Run(context.Background(), b.opts, builder.Frontend{
		NewRenderer:   func(progress.Controls) progress.Renderer { return tui.NewJSON(b.log, nil) },
		Cached:        b.showCacheHit,
		Diagnostics:   m.diagnostics(b.id),
		Signals:       b.sigs,
		CancelMessage: m.cfg.CancelMessage,
		Began:         b.created, // a time budget counts the wait in the queue too
	})
}

// finish ends b with the builder's outcome: its result event (written now if the builder
// refused before one was), its state, and its log and record on disk.
func (m *Manager) finish(b *build, res progress.Result, err error) {
	m.mu.Lock()
	if b.finishing {
		m.mu.Unlock()
		return // a cancel ended it first
	}
	b.finishing = true
	if b.budget != nil {
		b.budget.Stop()
	}
	m.mu.Unlock()
	if !b.log.Ended() {
		r := res
		if r.Status == "" {
			r = builder.RefusalResult(err)
		}
		_ = tui.NewJSON(b.log, nil).End(r)
	}
	state := stateOf(res.Status)
	if res.Status == "" {
		state = stateOf(builder.RefusalResult(err).Status)
	}
	// The build's copy of the model is not needed any more; its report shows the model by
	// the name the client gave.
	_ = os.RemoveAll(filepath.Join(b.dir, modelDir))
	report := filepath.Join(b.dir, "report.html")
	if err := b.paths.rewriteFile(report, func(path string, data []byte) error { return outpath.WriteOwn(path, data, 0o600) }); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot keep its report: %s\n", b.id, exitcode.OneLine(err))
	}
	// The events file is in place before the state says the build ended.
	if err := outpath.WriteOwn(filepath.Join(b.dir, "events.jsonl"), b.log.Lines(), 0o600); err != nil {
		fmt.Fprintf(m.cfg.Log, "trtbuild: build %s: cannot keep its events: %s\n", b.id, exitcode.OneLine(err))
	}
	m.mu.Lock()
	if b.ended.IsZero() {
		b.ended = time.Now()
	}
	b.setResult(b.log.result())
	b.state, b.finished = state, true
	if m.active[b.key] == b {
		delete(m.active, b.key)
	}
	m.mu.Unlock()
	m.persist(b)
	m.logEnd(b)
	close(b.done)
}

// shown is b's state, result and the result's fields as clients see them. The result event is
// out a moment before the builder returns: a client that read it finds the build ended when it
// asks next, though finish has not yet recorded it. m.mu is held.
func (b *build) shown() (string, []byte, progress.Result) {
	if b.state == StateRunning && b.log != nil {
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

// Cancel asks build id to stop: a queued build is dropped, a running one stops at its next step
// boundary (asking again changes nothing); hard stops its worker at once. A build that has ended is left
// as it is.
func (m *Manager) Cancel(id string, hard bool) (Snapshot, error) {
	m.mu.Lock()
	b := m.builds[id]
	if b == nil {
		m.mu.Unlock()
		return Snapshot{}, ErrNotFound
	}
	switch {
	case b.finishing:
	case b.state == StateQueued:
		m.dropQueuedLocked(b)
		m.mu.Unlock()
		m.finish(b, progress.Result{Status: progress.StatusCancelled, Error: "cancelled while queued; nothing was built"}, nil)
		m.mu.Lock()
	case b.state == StateRunning:
		// A cancel is idempotent (a client may send it again); hard is the second rung.
		want := 1
		if hard {
			want = 2
		}
		for ; b.cancels < want; b.cancels++ {
			select {
			case b.sigs <- os.Interrupt:
			default:
			}
		}
	}
	s := m.snapshotLocked(b)
	m.mu.Unlock()
	return s, nil
}

// dropQueuedLocked takes b out of the queue.
func (m *Manager) dropQueuedLocked(b *build) {
	for i, q := range m.queue {
		if q == b {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			break
		}
	}
	b.ended = time.Now()
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

// File opens a file of build id: kind "engine", "report" or "trace" (its events). The files of
// a service are opened inside the state dir, following no link.
func (m *Manager) File(id, kind string) (*os.File, error) {
	m.mu.Lock()
	b := m.builds[id]
	var state, engine string
	settling := false
	if b != nil {
		state, _, _ = b.shown()
		engine = b.opts.Engine
		settling = state != b.state // its result is out, its files are still being written
	}
	m.mu.Unlock()
	if b == nil {
		return nil, ErrNotFound
	}
	if settling && kind != "engine" {
		// The report and the events file are written after the result event (the engine
		// before it): wait for them, as long as the manifest and the cache store take.
		select {
		case <-b.done:
		case <-time.After(time.Minute):
		}
	}
	var name string
	switch kind {
	case "engine":
		if state != StateSucceeded {
			return nil, fmt.Errorf("build %s is %s: %w", id, state, os.ErrNotExist)
		}
		if m.Local() && engine != "" {
			return os.Open(engine)
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

// openOwn opens a regular file below the state dir that is no link.
func (m *Manager) openOwn(rel string) (*os.File, error) {
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
	if b.state == StateQueued {
		for _, q := range m.queue {
			if q.onGPU == b.onGPU {
				s.Position++
			}
			if q == b {
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
			s.Engine = true
			s.EnginePath = outcome.Engine
		}
	}
	if s.Ended != nil && b.finished {
		if b.encoded == nil {
			b.encoded, _ = json.Marshal(snapshotJSON(s))
		}
		s.encoded = b.encoded
	}
	return s
}

// Shutdown refuses new builds, drops the queued ones and cancels the running ones at their next
// step boundary; when ctx ends first, it stops their workers at once. It returns when every
// build has ended (ctx's error if it had to stop them).
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.draining = true
	queued := append([]*build(nil), m.queue...)
	m.mu.Unlock()
	for _, b := range queued {
		_, _ = m.Cancel(b.id, false)
	}
	m.mu.Lock()
	var running []*build
	for _, b := range m.builds {
		if b.state == StateRunning {
			running = append(running, b)
		}
	}
	m.mu.Unlock()
	for _, b := range running {
		_, _ = m.Cancel(b.id, false)
	}
	done := make(chan struct{})
	go func() { m.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, b := range running {
		_, _ = m.Cancel(b.id, true)
	}
	<-done
	return ctx.Err()
}

// Draining reports whether Shutdown has begun.
func (m *Manager) Draining() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.draining
}

// Stats are the service's counters now.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{ByState: map[string]int{}, Queued: len(m.queue), GPUBusySeconds: m.gpuSecs,
		EventsStreamed: m.streamed.Load(), SSEClients: int(m.clients.Load())}
	for _, st := range States {
		s.ByState[st] = 0
	}
	for _, b := range m.builds {
		state, _, _ := b.shown()
		s.ByState[state]++
	}
	now := time.Now()
	for _, b := range m.gpuBusy {
		s.GPUBusySeconds += now.Sub(b.started).Seconds()
	}
	return s
}

// CountStreamed counts n events sent to clients.
func (m *Manager) CountStreamed(n int) { m.streamed.Add(uint64(n)) }

// ClientDelta counts streaming clients that connect (+1) and leave (-1).
func (m *Manager) ClientDelta(d int) { m.clients.Add(int64(d)) }
