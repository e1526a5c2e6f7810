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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/enginecache"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/filelock"
	"github.com/trtbuild/trtbuild/internal/history"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
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

// DefaultMaxRuns is Config.MaxRuns's default.
const DefaultMaxRuns = 1000

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
	// MaxRuns is how many builds of their own (queued or running; a request that follows
	// another's build adds none) the service holds at once (default DefaultMaxRuns): each
	// holds its model open and a folder, so a client cannot exhaust the server's files.
	// Beyond it a submission is refused as KindUnavailable until one ends.
	MaxRuns int
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
	// Env answers what builds ask of the machine (each GPU's target), once for the
	// Manager's life; nil: an Env of its own.
	Env *builder.Env
}

// RequestError is a request the service refuses: the kind of refusal, what is wrong and what
// to do, each one line. It names no transport: the HTTP API (internal/httpapi) answers each Kind
// with a status, MCP (internal/mcptools) with a tool error.
type RequestError struct {
	Kind    Kind
	Problem string
	Hint    string
}

// Kind is what kind of refusal a RequestError is.
type Kind int

// The kinds of refusal.
const (
	// KindInvalid: the request is wrong (an option, a name); sending it again fails again.
	KindInvalid Kind = iota
	// KindUnusable: the request is well formed, but what it names cannot be built as asked
	// (the model fails the checks, the build fails its preflight).
	KindUnusable
	// KindNotFound: what it names is not there (a model in the model root).
	KindNotFound
	// KindConflict: it contradicts the service's state (an idempotency key used for another
	// request, deleting a build that has not ended).
	KindConflict
	// KindUnavailable: the service cannot take it now (it is shutting down); later it can.
	KindUnavailable
	// KindNoRoom: the state dir has no room for it.
	KindNoRoom
	// KindInternal: the service's own problem (its folders); not the client's.
	KindInternal
)

func (e *RequestError) Error() string {
	if e.Hint == "" {
		return e.Problem
	}
	return e.Problem + "; " + e.Hint
}

func badRequest(problem, hint string) *RequestError {
	return &RequestError{Kind: KindInvalid, Problem: problem, Hint: hint}
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
	// Along is how far along the build is, 0 to 1 (progress.Along, what a terminal's taskbar
	// and MCP's progress notifications show): absent until its build reports a step, 1 once
	// it succeeded, where it stopped for a build that did not.
	Along *float64 `json:"along,omitempty"`
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
	// env is what builds ask of the machine, asked once (Config.Env).
	env *builder.Env

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
	// along is how far along the build of its run is (kept once the run ended).
	along *along
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
	if cfg.Env == nil {
		cfg.Env = builder.NewEnv()
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
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
	m := &Manager{lock: lock, cfg: cfg, kick: make(chan struct{}, 1), closing: make(chan struct{}), builds: map[string]*build{}, active: map[string]*run{}, runs: map[*run]bool{}, runDirs: map[string]bool{}, idem: map[string]*build{}, gpuBusy: map[int]*run{}, env: cfg.Env}
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
			return nil, exitcode.Usagef("state dir %s cannot be written (%s)", pathtext.Q(dir), exitcode.OneLine(exitcode.SyscallCause(err))).Hintf("give a folder this user may write")
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

// Stop is the shutdown ladder of a server that is asked to stop: no new build (Submit answers
// KindUnavailable), every build cancelled at its next step boundary, and once within has passed,
// or now is closed (a second signal), the workers of those still running stopped at once
// (within zero: at once). It returns when every build has ended; the error is a problem
// other than the ladder's reaching its top.
func (m *Manager) Stop(within time.Duration, now <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	go func() {
		select {
		case <-now:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := m.Shutdown(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// DefaultStateDir is the state dir of the server name ("serve", "mcp") when none is given: the
// user cache folder's trtbuild/<name>.
func DefaultStateDir(name string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "trtbuild", name), nil
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
