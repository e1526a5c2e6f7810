// Package service runs the builds that programs submit — the HTTP server (trtbuild serve) and
// the MCP server (trtbuild mcp) — on the one build API (internal/builder): a queue that runs at
// most one TensorRT build per GPU at a time and a few simulated ones, every build's event log
// (the lines of `trtbuild --progress json`, numbered, for any number of readers), the cancel
// ladder, shared builds for the same build key, answers from the engine cache, and the history
// of builds kept across restarts (internal/history).
//
// A build is what a client submitted: its id, its own time budget and its own cancel. It
// follows a run, the build in a worker process (run.go): requests with the same build key and
// the same options (all but the time budget) follow one run, which goes on while any of them
// follows it. A build that leaves its run (its client cancelled, its budget ran out) ends then,
// with a result of its own; the run is cancelled when the last one leaves.
//
// Each build has its own folder in the state dir, builds/<id>/, trtbuild's own (no link is
// followed there) and private (0700, as builds/, runs/ and an engine cache inside the state
// dir are, so that a state dir others may read shows them nothing): the engine (unless a
// local caller named it elsewhere), report.html and events.jsonl, the build's event log,
// written when it ends. A run writes in runs/<owner>/<id>/ (statedir.go), and its files are
// linked into the folder of every build that followed it to the end. Ended builds' files are
// removed by the retention rule (Config.Keep, retain.go); DELETE removes one build.
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
	"io/fs"
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
	"github.com/trtbuild/trtbuild/internal/enginecache"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/filelock"
	"github.com/trtbuild/trtbuild/internal/fserr"
	"github.com/trtbuild/trtbuild/internal/history"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/timingcache"
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
	// them; a build that was running when the service stopped is then "interrupted". Such a
	// Manager has the state dir to itself: New refuses it while another process uses the state
	// dir, and refuses any other while it does. Managers without a history may share one.
	KeepHistory bool
	// Keep is the retention rule of ended builds' files (retain.go); its zero value keeps
	// them all.
	Keep Keep
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
	// FilesRemoved says why the build's files (engine, report, trace) were removed, once they
	// were (the retention rule: Config.Keep).
	FilesRemoved string `json:"files_removed,omitempty"`
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
	lock   *filelock.Lock // the state dir's lock (lockStateDir)
	owner  *owner         // this Manager's runs/ folder and its lock (statedir.go)
	// cache is the engine cache, open, for the engines of hits it keeps (builder's CacheLink
	// where no link could be made); nil without one.
	cache *enginecache.Cache

	// roomMu guards copying, the bytes of model copies checkRoom let start that may not be
	// on the disk yet: each copy that starts counts them against the free room, so that
	// copies starting together cannot each take the same room.
	roomMu  sync.Mutex
	copying uint64

	// The retention rule's goroutine (retainer), which also sweeps runs/ (sweepRuns): kicked
	// when a build ends, stopped by Close.
	retainMu  sync.Mutex // one application of the rule at a time
	kick      chan struct{}
	closing   chan struct{}
	retained  chan struct{} // closed when the retainer has returned; nil when none runs
	closeOnce sync.Once

	mu       sync.Mutex
	builds   map[string]*build
	order    []*build        // by creation, oldest first
	queue    []*run          // queued, in order
	active   map[string]*run // runs new builds may follow, by sharing key (shareKey)
	runs     map[*run]bool   // every run that has not ended
	idem     map[string]*build
	gpuBusy  map[int]*run
	simBusy  int
	draining bool
	running  sync.WaitGroup // every run, from its creation to its end
	gpuSecs  float64        // ended TensorRT runs' seconds
	// runDirs names the folders of this Manager's runs/<owner>/ in use: a request's from
	// before it makes its folder until it is refused or follows another's run, a run's until
	// endRun has removed it. The rest are leftovers, which sweepRuns removes.
	runDirs map[string]bool
	// persistMu orders the writes of one build's record: each writes its state as it is when
	// it takes persistMu, so a later write never has an older state.
	persistMu sync.Mutex

	streamed atomic.Uint64
	clients  atomic.Int64

	hooks testHooks
}

// testHooks are points where a test acts in the middle of the Manager's work.
type testHooks struct {
	// opened runs when a request's model has been opened inside the model root, before
	// anything is read from it.
	opened func(name string)
	// copied runs when a request's model has been copied (to path), before the copy is read.
	copied func(path string)
	// diskSpace stands for the file system's free and total bytes at a folder (diskSpace).
	diskSpace func(dir string) (free, total uint64, err error)
}

// build is one build's record: what a client submitted and sees. It follows a run (run.go)
// until the run ends or the build leaves it.
type build struct {
	id, model, key string
	options        map[string]json.RawMessage
	idem, reqHash  string
	dir            string // absolute
	state          string // queued and running as its run is; then how it ended
	created        time.Time
	started, ended time.Time
	log            *Log // a view of its run's log (Log.view), cut when it leaves the run
	result         []byte
	outcome        progress.Result // result's fields, read once
	// run is the run it follows; nil once it ended, and for a build of an earlier service.
	run *run
	// timeout is its own time budget, counted from created (0: none); budget its timer.
	timeout time.Duration
	budget  *time.Timer
	// leaving is the result it ends with when its run ends, for a build whose time budget ran
	// out while it was the run's last follower (the run is then cancelled for it).
	leaving    *progress.Result
	enginePath string        // where its engine is, once it has one
	removed    string        // why its files were removed, once they were (retain.go)
	files      []fileUse     // its folder's files once it ended, read once by the rule
	done       chan struct{} // closed when it has ended
	finished   bool          // ended for good: its snapshot no longer changes
	encoded    []byte        // its snapshot's JSON, once finished
	finishing  bool          // its end has begun: it happens once
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
		if exitcode.Of(err) == exitcode.Usage {
			return nil, err
		}
		return nil, exitcode.Wrap(exitcode.Usage, err) // the state dir given is to be changed
	}
	// The builds keep their timing caches in the user cache folder (timingcache.DefaultDir),
	// which this server reads and writes as long as it runs: its path is held to the state
	// dir's rule, so that no other user can swap it (a HOME or XDG_CACHE_HOME of theirs).
	if tc, err := timingcache.DefaultDir(); err == nil {
		if err := preparePath(tc, "timing cache folder"); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
		if err := checkOwnDir(tc, "timing cache folder"); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	cfg.StateDir = dir
	lock, err := lockStateDir(dir, cfg.KeepHistory)
	if err != nil {
		return nil, err
	}
	m := &Manager{lock: lock, cfg: cfg, kick: make(chan struct{}, 1), closing: make(chan struct{}), builds: map[string]*build{}, active: map[string]*run{}, runs: map[*run]bool{}, runDirs: map[string]bool{}, idem: map[string]*build{}, gpuBusy: map[int]*run{}}
	if m.state, err = os.OpenRoot(dir); err != nil {
		lock.Release()
		return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(dir), err)
	}
	for _, sub := range []string{"builds", "runs"} {
		if err := m.mkdirPrivate(sub); err != nil {
			m.Close()
			if errors.As(err, new(*ForeignFolderError)) {
				return nil, exitcode.Wrap(exitcode.Usage, err)
			}
			return nil, exitcode.Usagef("state dir %s cannot be written (%s); give a folder this user may write", pathtext.Q(dir), exitcode.OneLine(exitcode.SyscallCause(err)))
		}
	}
	// The folders made when first needed, if an earlier server left them: another user's
	// would let its owner swap what the retention rule removes there.
	for _, sub := range []string{toolModels, "converted"} {
		if err := m.checkOwnFolder(sub); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.Close()
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if m.owner, err = m.takeOwner(); err != nil {
		m.Close()
		return nil, err
	}
	if err := checkCacheOutside(dir, cfg.EngineCache.Dir); err != nil {
		m.Close()
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	// An engine cache inside the state dir holds the engines too: its top folder is private.
	if rel, err := filepath.Rel(dir, cfg.EngineCache.Dir); cfg.EngineCache.Dir != "" && err == nil && filepath.IsLocal(rel) {
		if err := m.mkdirPrivate(strings.Split(rel, string(filepath.Separator))[0]); err != nil {
			m.Close()
			if errors.As(err, new(*ForeignFolderError)) {
				return nil, exitcode.Wrap(exitcode.Usage, err)
			}
			return nil, fmt.Errorf("state dir %s: %w", pathtext.Q(dir), err)
		}
	}
	if cfg.ModelRoot != "" {
		if m.models, err = openModelRoot(cfg.ModelRoot); err != nil {
			m.Close()
			return nil, err
		}
	}
	if !m.Local() && cfg.EngineCache.Dir != "" {
		// The engines of the hits it keeps are served from it (File). A cache that cannot be
		// opened now is the builds' to say: they warn and build without it.
		if m.cache, err = builder.OpenEngineCache(cfg.EngineCache); err != nil {
			m.cache = nil
		}
	}
	if cfg.KeepHistory {
		if err := m.loadHistory(); err != nil {
			m.Close()
			return nil, err
		}
	}
	if cfg.Keep.Age > 0 || cfg.Keep.Bytes > 0 {
		m.retained = make(chan struct{})
		go m.retainer()
		m.kickRetain() // what earlier processes left
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
	// The server reaches its state dir by this path as long as it runs: a folder or link on
	// the way that another user may change would let them swap the state dir for one of their
	// own. Checked before it is made, so as not to make it through their link, and again
	// after, for the folders made.
	if err := preparePath(abs, "state dir"); err != nil {
		return "", err
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

// checkCacheOutside holds an engine cache outside the state dir (dir "auto" or a path) to the
// state dir's rule for its path: the builds open it by that path for as long as the server runs,
// and remove what killed builds left in its tmp/, so a folder or link on the way, or the cache
// folder itself, that another user may change would let them point the server's writes and
// removals at a folder of their choosing. The cache folder may be shared (written by others,
// sticky or not: its entries are checked one by one), but must be root's or this user's.
func checkCacheOutside(stateDir, cache string) error {
	if cache == "" {
		return nil
	}
	dir := cache
	if dir == "auto" {
		d, err := enginecache.DefaultDir()
		if err != nil {
			return nil // the builds say so
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("--engine-cache %s: %w", pathtext.Q(dir), err)
	}
	if rel, err := filepath.Rel(stateDir, abs); err == nil && filepath.IsLocal(rel) {
		return nil // the state dir's, checked with it
	}
	if err := preparePath(abs, "engine cache"); err != nil {
		return err
	}
	return checkOwnedFolder(abs, "engine cache")
}

// preparePath makes the folder abs (what names it in messages), 0700, once checkAbove finds
// no one else can swap the part of its path that exists, and checks the whole path again once
// made: a folder another user made on the way meanwhile is theirs, and refused.
func preparePath(abs, what string) error {
	resolved, err := resolveAbove(abs)
	if err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	if err := mkdirNoFollow(resolved); err != nil {
		return fmt.Errorf("cannot make the %s %s: %w", what, pathtext.Q(abs), exitcode.SyscallCause(err))
	}
	if err := checkAbove(abs); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	return nil
}

// Close stops the retention rule and closes the history; call it after Shutdown. Closing
// again does nothing.
func (m *Manager) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.closing)
		if m.retained != nil {
			<-m.retained
		}
		if m.cache != nil {
			m.cache.Close()
		}
		if m.store != nil {
			err = m.store.Close()
		}
		if m.models != nil {
			m.models.root.Close()
		}
		m.owner.release()
		if m.state != nil {
			m.state.Close()
		}
		m.lock.Release()
	})
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
// state dir made private here, and returns the copy's path; a copy that would leave the state
// dir's file system too little room is refused (checkRoom). Errors are *RequestError.
func (m *Manager) copyModel(src *onnx.Source, name, rel string) (string, error) {
	copied, err := m.checkRoom(src, name)
	if err != nil {
		return "", err
	}
	defer copied()
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
	return "", copyError(name, err, m.shownFor("").text)
}

// copyError is the refusal of a model's copy that failed with err: 507 when the state dir's file
// system filled up (the room was there when the copy was let in: the model or its external data
// grew since, or other files took the room), 500 otherwise; shown turns err's text into what
// clients are shown.
func copyError(name string, err error, shown func(string) string) *RequestError {
	if fserr.Of(err) == fserr.DiskFull {
		return &RequestError{Status: http.StatusInsufficientStorage,
			Problem: fmt.Sprintf("the state dir's file system filled up while the model %s was copied for its build (it, or its external data, is larger than when the copy was let in, or other files took the room)", pathtext.Q(name)),
			Hint:    "submit it again once the model is in place and running builds have ended; the server's operator can free room there (a smaller --keep-builds-size) or give a --state-dir with more room"}
	}
	return &RequestError{Status: http.StatusInternalServerError, Problem: fmt.Sprintf("cannot copy the model %s for its build: %s", pathtext.Q(name), shown(exitcode.OneLine(err))), Hint: "check the state dir's free space"}
}

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

// mkdirPrivate makes the folder rel of the state dir (no link followed) and makes it 0700:
// the engines, reports and events in it are no one else's to read, even when the state dir
// itself may be read by others (a folder made with mkdir, mode 0755). A folder already there
// that another user owns is refused (*ForeignFolderError): its owner could swap what the
// server writes and serves in it, whatever its mode.
func (m *Manager) mkdirPrivate(rel string) error {
	if err := outpath.MkdirOwn(m.cfg.StateDir, rel); err != nil {
		return err
	}
	if err := m.checkOwnFolder(rel); err != nil {
		return err
	}
	if err := m.state.Chmod(rel, 0o700); err != nil {
		return fmt.Errorf("making %s private: %w", pathtext.Q(filepath.Join(m.cfg.StateDir, rel)), exitcode.SyscallCause(err))
	}
	return nil
}

// ForeignFolderError is a folder of the state dir that another user owns (a state dir whose
// owner changed with a chown that was not recursive, or a folder planted before it was
// private).
type ForeignFolderError struct {
	Path  string // the folder
	Owner string // its owner, as the system names it
}

func (e *ForeignFolderError) Error() string {
	return fmt.Sprintf("%s in the state dir belongs to %s, not to this user, who could swap the engines served from it; remove it, or give this user the whole state dir (chown -R), or give another --state-dir", pathtext.Q(e.Path), e.Owner)
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
		return Snapshot{}, false, &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}
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
	if src != nil {
		// The run reads its own copy of the model, made from what open holds, in its folder
		// (removed with it); a request that follows another's run removes its copy unused.
		made = append(made, runDir)
		if err := m.owner.mkdirRun(m, b.id); err != nil {
			return Snapshot{}, false, &RequestError{Status: http.StatusInternalServerError, Problem: "cannot make the build's folder: " + exitcode.OneLine(err), Hint: "check the state dir"}
		}
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
	opts.ModelHashes = new(buildkey.Memo).Hash
	// The budget is the build's own (b.timeout): the run, which others may follow, has none.
	opts.Timeout = 0
	key, _, err := builder.Key(opts)
	if err != nil {
		return Snapshot{}, false, refusal(err)
	}
	b.key = key.Key
	// Requests share a run by the model's name in the root (each has its own copy, whose
	// content the key holds), or by the local caller's path.
	shareName := model
	if src != nil {
		shareName = r.Model
	}
	share := shareKey(key.Key, shareName, r.Options)

	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		return Snapshot{}, false, &RequestError{Status: http.StatusServiceUnavailable, Problem: "the server is shutting down", Hint: "submit the build again once it is back"}
	}
	rn := m.active[share]
	fresh = rn == nil
	if !fresh && src != nil {
		defer m.removeOwned(runDir) // this request follows another's run, which has its own copy
	}
	if fresh {
		rn = &run{id: b.id, key: key.Key, share: share, model: r.Model, opts: opts, onGPU: opts.Backend != "sim",
			dir: runDir, state: StateQueued, created: now, log: newShownLog(m.shownFor(filepath.Join(runDir, modelDir))), sigs: make(chan os.Signal, 2)}
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

// shareKey is what the builds that follow one run have in common: the build key, the model
// file, and every option but the time budget, which each keeps for itself. Options outside the
// build key (the engine's path of a local caller, --trace, --stall-timeout, --kill-after) are
// in it, so that a client never gets what another asked for.
func shareKey(key, model string, options map[string]json.RawMessage) string {
	rest := make(map[string]json.RawMessage, len(options))
	for k, v := range options {
		if k != "timeout" {
			rest[k] = v
		}
	}
	return key + "\n" + requestHash(Request{Model: model, Options: rest})
}

// refusal is the RequestError of a request the builder refuses: its options, or its model. A
// refusal of the model's external data gets externalHint; another message without a hint of
// its own gets one about the options.
func refusal(err error) error {
	var re *RequestError
	if errors.As(err, &re) {
		return re
	}
	problem, hint := buildflags.SplitHint(exitcode.OneLine(err))
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
	status := http.StatusBadRequest
	if exitcode.Of(err) != exitcode.Usage {
		status = http.StatusUnprocessableEntity
	}
	return &RequestError{Status: status, Problem: problem, Hint: hint}
}

// externalHint is what to do about a model whose external data cannot be read.
const externalHint = "fix the model's external data: each file it names must be a regular file in the model's folder (or below it), named by a relative path, as large as the model needs; or export the model again with its data inside"

// engineName is the engine's file name for a model: its name with .engine.
func engineName(model string) string {
	base := filepath.Base(model)
	return strings.TrimSuffix(base, filepath.Ext(base)) + ".engine"
}

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

// Shutdown refuses new builds, drops the queued ones and cancels the running ones at their next
// step boundary; when ctx ends first, it stops their workers at once. It returns when every
// build has ended (ctx's error if it had to stop them).
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.draining = true
	var queued, running []*run
	for rn := range m.runs {
		if rn.queued {
			queued = append(queued, rn)
		} else {
			running = append(running, rn)
		}
	}
	for _, rn := range queued {
		m.stopLocked(rn, false)
	}
	for _, rn := range running {
		m.stopLocked(rn, false)
	}
	m.mu.Unlock()
	for _, rn := range queued {
		m.endRun(rn, progress.Result{Status: progress.StatusCancelled, Error: "cancelled while queued: the server is shutting down; nothing was built"}, nil)
	}
	done := make(chan struct{})
	go func() { m.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	m.mu.Lock()
	for _, rn := range running {
		m.stopLocked(rn, true)
	}
	m.mu.Unlock()
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
	for _, rn := range m.gpuBusy {
		s.GPUBusySeconds += now.Sub(rn.started).Seconds()
	}
	return s
}

// CountStreamed counts n events sent to clients.
func (m *Manager) CountStreamed(n int) { m.streamed.Add(uint64(n)) }

// ClientDelta counts streaming clients that connect (+1) and leave (-1).
func (m *Manager) ClientDelta(d int) { m.clients.Add(int64(d)) }
