package cgo

/*
#cgo CPPFLAGS: -I${SRCDIR}/cudadecl
// The optimization level is CGO_CXXFLAGS's: Go's default -g -O2 for every build a user makes,
// -O1 in scripts/test.sh, which compiles this C++ about ten times (race, Windows, sanitizers,
// fuzzing) and checks behaviour, not speed.
#cgo CXXFLAGS: -std=c++17 -Wall -Wextra
#cgo LDFLAGS: -lstdc++ -lpthread
#include <stdlib.h>
#include "trtb.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// Backend names a builder behind the C boundary.
type Backend int32

// Backends, numbered as trtb_backend.
const (
	// BackendSim is a simulated build: the TensorRT shim over the stand-in TensorRT compiled
	// into every binary (SimOptions says which major it plays).
	BackendSim Backend = 1
	// BackendTensorRT is NVIDIA TensorRT 10 or 11, whichever the worker loaded (a shim of
	// each is in every binary).
	BackendTensorRT Backend = 2
)

// String returns "sim" or "tensorrt", the names the command line uses.
func (b Backend) String() string {
	switch b {
	case BackendSim:
		return "sim"
	case BackendTensorRT:
		return "tensorrt"
	}
	return fmt.Sprintf("backend(%d)", int32(b))
}

// Available reports whether the backend is compiled into this binary. It loads no library, so
// it says nothing about whether TensorRT can be loaded; Version does.
func Available(b Backend) bool {
	return C.trtb_backend_available(C.int32_t(b)) != 0
}

// VersionInfo describes a backend and one device, for `trtbuild version` and for choosing the
// precision path. Versions are NV_TENSORRT_VERSION-style (major*10000+minor*100+patch); all of
// them are 0 for BackendSim (a simulated build's worker asks BackendTensorRT once its stand-in is
// installed).
type VersionInfo struct {
	Backend                    string // "sim" or "tensorrt"
	Compiled, Loaded           int    // the TensorRT the binary was built against, and the one loaded
	ONNXParser                 int    // the loaded ONNX parser
	DeviceCount                int    // CUDA devices seen; 0 without a GPU
	DeviceName                 string // of the device asked for; empty without a GPU
	ComputeMajor, ComputeMinor int    // its compute capability
	SMs                        int    // the device's multiprocessors (fewer on a MIG slice)
	LoadedBuild                int    // the loaded TensorRT's build number (from the run-time loader); 0 for sim
}

// Version describes backend b and CUDA device number device. For TensorRT it loads the library
// and compares versions; a different major is an *Error with CodeVersionMismatch.
func Version(b Backend, device int) (VersionInfo, error) {
	dev, err := toInt32("device", device)
	if err != nil {
		return VersionInfo{}, err
	}
	var info C.trtb_version_info
	var st C.trtb_status
	if C.trtb_version(C.int32_t(b), dev, &info, &st) != C.TRTB_OK {
		return VersionInfo{}, statusError(&st)
	}
	v := VersionInfo{
		Backend:      C.GoString(&info.backend[0]),
		Compiled:     int(info.compiled_version),
		Loaded:       int(info.loaded_version),
		ONNXParser:   int(info.onnx_parser_version),
		DeviceCount:  int(info.device_count),
		DeviceName:   C.GoString(&info.device_name[0]),
		ComputeMajor: int(info.compute_major),
		ComputeMinor: int(info.compute_minor),
		SMs:          int(info.multiprocessor_count),
	}
	if b == BackendTensorRT {
		if lib, ok := InstalledLibrary(trt.LibInfer); ok && lib.Build > 0 {
			v.LoadedBuild = lib.Build
		}
	}
	return v, nil
}

// Code is a status code of the C boundary (trtb_code).
type Code int32

// Status codes, numbered as trtb_code.
const (
	CodeOK              Code = 0  // success
	CodeInvalidArgument Code = 1  // an option is malformed or out of range
	CodeUnavailable     Code = 2  // the backend's library is not loaded, or cannot be used
	CodeVersionMismatch Code = 3  // the library loaded is of a version no shim drives
	CodeParse           Code = 4  // the model could not be parsed
	CodeUnsupported     Code = 5  // the option exists but this backend or version cannot do it
	CodeBuildFailed     Code = 6  // the builder ran and returned no engine
	CodeCancelled       Code = 7  // Cancel was called and the builder stopped
	CodeIO              Code = 8  // reading the model or writing the plan failed
	CodeOutOfMemory     Code = 9  // host or device allocation failed
	CodeInternal        Code = 10 // an exception or an impossible state inside the builder
	CodeState           Code = 11 // a method was called out of order
	CodeCacheRejected   Code = 12 // a timing cache to merge is corrupt or of another builder, TensorRT or GPU
)

var codeNames = [...]string{
	CodeOK:              "ok",
	CodeInvalidArgument: "invalid argument",
	CodeUnavailable:     "unavailable",
	CodeVersionMismatch: "version mismatch",
	CodeParse:           "parse error",
	CodeUnsupported:     "unsupported",
	CodeBuildFailed:     "build failed",
	CodeCancelled:       "cancelled",
	CodeIO:              "i/o error",
	CodeOutOfMemory:     "out of memory",
	CodeInternal:        "internal error",
	CodeState:           "out of order",
	CodeCacheRejected:   "timing cache rejected",
}

// String returns the code's name in lower case, e.g. "build failed".
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", int32(c))
}

// Error is a failure reported by the C side (or found by this package before calling it).
type Error struct {
	Code    Code
	Message string // one line from the builder, e.g. TensorRT's own error text
}

// Error returns the message as is, or the code's name when there is none.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Message
}

// statusError turns a failed trtb_status into an *Error. It is the only place that reads one.
func statusError(st *C.trtb_status) error {
	code := Code(st.code)
	if code == CodeOK {
		return &Error{Code: CodeInternal, Message: "the engine builder failed without saying why"}
	}
	return &Error{Code: code, Message: C.GoString(&st.message[0])}
}

// invalid makes the *Error for an option this package refuses before calling C.
func invalid(format string, args ...any) error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// Precision requests: bits of Options.Precision (trtb_precision).
const (
	PrecisionFP16 uint32 = 1 << iota
	PrecisionBF16
	PrecisionINT8
	PrecisionFP8
)

// Builder switches: bits of Options.Flags (trtb_flag).
const (
	FlagNoTF32                 uint32 = 1 << iota // clear TF32
	FlagRefit                                     // refittable engine
	FlagStripWeights                              // strip refittable weights from the plan
	FlagVersionCompatible                         // version-compatible engine
	FlagExcludeLeanRuntime                        // with FlagVersionCompatible: leave out the lean runtime
	FlagSparseWeights                             // allow structured-sparsity tactics
	FlagDisableTimingCache                        // use no timing cache at all
	FlagErrorOnTimingCacheMiss                    // fail when a tactic is not in the cache
	FlagStrictTimingCache                         // a given cache the builder cannot use exactly fails Run (CodeCacheRejected)
)

// Log severities, most severe first (trtb_severity). Options.LogSeverity forwards messages up
// to and including its value; RawEvent.Severity carries one of them.
const (
	SeverityInternalError = 0
	SeverityError         = 1
	SeverityWarning       = 2
	SeverityInfo          = 3
	SeverityVerbose       = 4
)

// maxDims is TRTB_MAX_DIMS, the largest rank of a profile shape.
const maxDims = C.TRTB_MAX_DIMS

// SimOptions describe a simulated build (BackendSim): a build through the TensorRT shim over the
// stand-in TensorRT compiled into the binary, of the major TensorRT says. The other fields are
// the stand-in's settings (trtfake/trtfake.hpp), one each; zero fields take its defaults.
// Phase names in FailPhase, EarlyPhase and AbortPhase match whole names, '*' standing for any
// run of characters. A process plays one major: see trtb_sim_options.
type SimOptions struct {
	TensorRT   int           // the major the stand-in plays: 10 or 11 (0: 11)
	Threads    int           // > 1: the stand-in's stress setting, nodes timed on that many threads
	Tactics    int           // tactics of every evaluation
	Iterations int           // steps of a full "Measuring tactic time"
	Step       time.Duration // one measuring step at 8 averaging iterations
	FailPhase  string        // fail the build when such a phase starts
	EarlyPhase string        // such phases report only the first half of their steps
	AbortPhase string        // abort the process when such a phase starts, as a crash would
	// FailAt and AbortAt pick a timed node by its place in the optimized graph, a fraction of
	// the way through it (0.5: the middle): timing it fails the build with TensorRT's "Could
	// not find any implementation for node" or aborts the process. nil: none.
	FailAt, AbortAt *float64
	Silent          time.Duration // report nothing for this long at the start of "Timing graph nodes"
	LongStep        time.Duration // make the first measuring step take this long
	// IgnoreCancel keeps building after Cancel, for testing what kills a stuck build.
	IgnoreCancel bool
	Seed         uint64 // fixes tactic counts, timings and choices
	// Flood makes the builder never sleep: events come as fast as it can report them, for
	// benchmarks.
	Flood bool
	// SkipFinishOnStop reports no phase finish after a cancel or a failure, which TensorRT does
	// not promise either.
	SkipFinishOnStop bool
	// PreSilent and PostSilent are silences before the first phase (graph optimization) and
	// while the engine is generated.
	PreSilent, PostSilent time.Duration
	// FP16FailNode makes the build fail as TensorRT 11.2 fails an FP16 Conv it has no kernel
	// for ("No low-precision conv kernel available ... Failing node: X") when that node runs
	// in 16 bits and neither its name nor its op type is in KeepFP32.
	FP16FailNode string
	KeepFP32     []string
	// HoldAfter, when positive, stalls the builder once that many tactics are measured, until
	// a cancel comes: a builder stuck in one long step, and a point for tests to cancel at that
	// does not race the builder.
	HoldAfter int
	// Regime forces how the graph is timed: "cnn" or "myelin" ("": the model decides).
	Regime string
	// TimeCallbacks times every stepComplete call the stand-in makes (the shim's monitor, on
	// the builder thread) and logs their percentiles as an INFO line: for benchmarks.
	TimeCallbacks bool
	// Refuse names TensorRT calls that fail as TensorRT's can (null or false, an error
	// logged): "IBuilder::createNetworkV2", "ITimingCache::serialize", "createInferBuilder",
	// "createNvOnnxParser", "initLibNvInferPlugins", the stand-in CUDA driver's
	// "cuStreamCreate" (trtfake/trtfake.hpp lists how each fails); a '*' stands for any run of
	// characters. For the tests of what the shim does when TensorRT refuses.
	Refuse string
}

// Settings is the stand-in's settings text for s: "key=value;key=value".
func (s *SimOptions) Settings() string {
	var parts []string
	add := func(key, value string) {
		// ';' separates the items, ',' the names of keep-fp32: neither is in a value.
		parts = append(parts, key+"="+strings.NewReplacer(";", "", "\n", "").Replace(value))
	}
	// Zero takes the stand-in's default; any other value goes to it, a negative one too, so
	// that the stand-in refuses it (NewBuild: CodeInvalidArgument) rather than this text
	// dropping it for the default.
	dur := func(key string, d time.Duration) {
		if d != 0 {
			add(key, strconv.FormatInt(int64(d), 10)+"ns")
		}
	}
	num := func(key string, n int) {
		if n != 0 {
			add(key, strconv.Itoa(n))
		}
	}
	flag := func(key string, on bool) {
		if on {
			add(key, "1")
		}
	}
	text := func(key, v string) {
		if v != "" {
			add(key, v)
		}
	}
	frac := func(key string, f *float64) {
		if f != nil {
			add(key, strconv.FormatFloat(*f, 'g', -1, 64))
		}
	}
	dur("step", s.Step)
	if s.Seed != 0 {
		add("seed", strconv.FormatUint(s.Seed, 10))
	}
	num("threads", s.Threads)
	num("tactics", s.Tactics)
	num("iterations", s.Iterations)
	text("fail-phase", s.FailPhase)
	text("early-phase", s.EarlyPhase)
	text("abort-phase", s.AbortPhase)
	frac("fail-at", s.FailAt)
	frac("abort-at", s.AbortAt)
	dur("long-step", s.LongStep)
	flag("ignore-cancel", s.IgnoreCancel)
	dur("silent", s.Silent)
	dur("pre-silent", s.PreSilent)
	dur("post-silent", s.PostSilent)
	flag("flood", s.Flood)
	flag("time-callbacks", s.TimeCallbacks)
	num("hold-after", s.HoldAfter)
	flag("skip-finish", s.SkipFinishOnStop)
	text("fp16-fail-node", s.FP16FailNode)
	text("refuse", s.Refuse)
	var keep []string
	for _, k := range s.KeepFP32 {
		if k = strings.NewReplacer(",", "", ";", "").Replace(k); k != "" {
			keep = append(keep, k)
		}
	}
	if len(keep) > 0 {
		add("keep-fp32", strings.Join(keep, ","))
	}
	text("regime", s.Regime)
	return strings.Join(parts, ";")
}

// Options is everything a build needs. NewBuild copies it; nothing of it is kept but PlanFile.
type Options struct {
	ModelPath string
	// PlanFile is an open, writable, empty file the plan is written to. The build neither
	// closes nor renames it and keeps a reference to it until Close; the caller commits or
	// discards it.
	PlanFile       *os.File
	LogSeverity    int    // forward log lines up to and including this severity
	Device         int    // CUDA device ordinal
	Precision      uint32 // Precision* bits
	Flags          uint32 // Flag* bits
	OptLevel       int    // builder optimization level 0..5; -1: the builder's default
	MaxAuxStreams  int    // -1: the builder's default
	HardwareCompat int    // 0 none, 1 Ampere and later, 2 same compute capability
	WorkspaceBytes uint64 // workspace pool limit; 0: the builder's default
	// Profiles are the optimization profiles: per input, Min, Opt and Max of one rank (at most
	// maxDims).
	Profiles    []shapes.Profile
	PluginPaths []string // plugin libraries to load; this runs their code
	// TimingCache is a serialized timing cache to start from; nil: none. It is read in place,
	// never copied (a cache can be hundreds of MB): NewBuild takes it over, whether it succeeds
	// or fails, and the Build frees it in Close.
	TimingCache *CBuffer
	Sim         *SimOptions
	// BuildSettings are trtexec's other build settings (I/O formats, layer precisions, DLA …).
	BuildSettings
}

// Result is what Run reports, also when it fails (then PlanBytes is 0).
type Result struct {
	PlanBytes              uint64 // bytes written to Options.PlanFile
	TimingCacheUsed        bool   // Options.TimingCache was accepted
	CacheHits, CacheMisses uint64 // tactics found in the cache, and timed because they were not
	// CancelSeen is when a builder thread first saw Cancel at a step boundary, in nanoseconds
	// of CLOCK_MONOTONIC; 0 if none did.
	CancelSeen int64
}

// EventKind tells what a RawEvent reports.
type EventKind int32

// Event kinds, numbered as trtb_event_kind.
const (
	EventPhaseStart  EventKind = 1 // Name started, inside Parent if HasParent, with Steps steps
	EventStep        EventKind = 2 // Step of phase Name completed
	EventPhaseFinish EventKind = 3 // Name finished, perhaps before all of its steps
	EventLog         EventKind = 4 // a log line: Name is the message, Severity its level
)

// String returns "start", "step", "finish" or "log".
func (k EventKind) String() string {
	switch k {
	case EventPhaseStart:
		return "start"
	case EventStep:
		return "step"
	case EventPhaseFinish:
		return "finish"
	case EventLog:
		return "log"
	}
	return fmt.Sprintf("kind(%d)", int32(k))
}

// RawEvent is one report of a builder thread, as it crossed the C boundary. Phases are named,
// not numbered: equally named phases may be active on several threads at once, and a name may
// come back after its phase finished, so Thread is needed to tell them apart.
type RawEvent struct {
	Kind     EventKind
	Severity int // of a log line
	Steps    int // of a phase start: its number of steps
	Step     int // of a step: the step just completed, from 0
	// Thread is a small number (1, 2, ...) naming the reporting thread for the life of the
	// build; 1 is the thread that ran the build.
	Thread    uint64
	Time      time.Duration // since NewBuild
	Name      string        // the phase, or the log message
	Parent    string        // of a phase start, when HasParent
	HasParent bool
}

// Sizes of the drain buffers each Build allocates once in C memory.
const (
	defaultBatchEvents = 4096
	defaultBatchText   = 256 << 10 // at least 2 * TRTB_NAME_MAX
)

// Build is one engine build. Its methods follow the life described in the package
// documentation; each says from where it may be called.
type Build struct {
	// mu guards h against Close: Close holds it to write, every other method to read.
	mu          sync.RWMutex
	h           *C.trtb_build  // nil once closed
	batch       *C.trtb_batch  // C memory, with its events and text buffers; used by Drain only
	drainStatus *C.trtb_status // C memory; used by Drain only
	draining    atomic.Bool    // a Drain is under way
	plan        *os.File       // keeps the plan's descriptor open while C may write to it
	// cache is Options.TimingCache, which C reads in place until the handle is destroyed.
	cache *CBuffer
}

// NewBuild checks o and prepares a build on backend b without starting it. Everything C needs
// is copied into C memory and freed before NewBuild returns, except the timing cache, which it
// takes over (see Options.TimingCache). The error is an *Error, with
// CodeInvalidArgument for bad options and CodeUnavailable for TensorRT not loaded.
func NewBuild(b Backend, o Options) (*Build, error) {
	return newBuild(b, o, defaultBatchEvents, defaultBatchText)
}

// newBuild is NewBuild with drain buffers of the given sizes (tests use small ones).
func newBuild(b Backend, o Options, events, text int) (*Build, error) {
	var mem cmem
	defer mem.free()
	opts, err := o.toC(&mem)
	if err != nil {
		o.TimingCache.Free()
		return nil, err
	}
	var st C.trtb_status
	var h *C.trtb_build
	if C.trtb_build_create(C.int32_t(b), opts, &h, &st) != C.TRTB_OK {
		o.TimingCache.Free()
		return nil, statusError(&st)
	}
	w := wrap(h, o.PlanFile, events, text)
	w.cache = o.TimingCache
	return w, nil
}

// wrap makes the Build around a handle, with its drain buffers.
func wrap(h *C.trtb_build, plan *os.File, events, text int) *Build {
	batch := (*C.trtb_batch)(C.calloc(1, C.sizeof_trtb_batch))
	batch.events = (*C.trtb_event)(C.calloc(C.size_t(events), C.sizeof_trtb_event))
	batch.capacity = C.int32_t(events)
	batch.text = (*C.char)(C.malloc(C.size_t(text)))
	batch.text_capacity = C.uint32_t(text)
	return &Build{
		h:           h,
		batch:       batch,
		drainStatus: (*C.trtb_status)(C.calloc(1, C.sizeof_trtb_status)),
		plan:        plan,
	}
}

func errClosed() error {
	return &Error{Code: CodeState, Message: "the build was closed"}
}

// Run parses the model, builds the engine and writes the plan. It blocks for the whole build
// and may be called once. Call it from a goroutine that holds runtime.LockOSThread: TensorRT and
// CUDA keep per-thread state, which must stay on the thread that set it up.
//
// The error is an *Error; CodeCancelled means the build stopped because of Cancel. The Result
// is filled in either case (cache counts, CancelSeen).
func (b *Build) Run() (Result, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return Result{}, errClosed()
	}
	var res C.trtb_result
	var st C.trtb_status
	code := C.trtb_build_run(b.h, &res, &st)
	r := Result{
		PlanBytes:       uint64(res.plan_bytes),
		TimingCacheUsed: res.timing_cache_used != 0,
		CacheHits:       uint64(res.timing_cache_hits),
		CacheMisses:     uint64(res.timing_cache_misses),
		CancelSeen:      int64(res.cancel_seen_ns),
	}
	if code != C.TRTB_OK {
		return r, statusError(&st)
	}
	return r, nil
}

// Cancel asks the builder to stop at its next step boundary. It only sets a flag: any
// goroutine may call it any number of times, at any time, also after Close, and it never
// blocks.
func (b *Build) Cancel() {
	if !b.mu.TryRLock() {
		return // Close is under way, so the build is over
	}
	defer b.mu.RUnlock()
	if b.h != nil {
		C.trtb_build_cancel(b.h)
	}
}

// Drops counts the events a build's queue dropped because they were not drained fast enough
// (the queue holds a bounded number of bytes; see trtb_build_drain). Phase starts and finishes
// are never dropped.
type Drops struct {
	Steps uint64    // step reports; the next step or the phase's finish carries the truth
	Logs  [5]uint64 // log lines, indexed by severity (SeverityVerbose and SeverityInfo go first)
}

// Total is the number of events dropped.
func (d Drops) Total() uint64 {
	n := d.Steps
	for _, l := range d.Logs {
		n += l
	}
	return n
}

// String says what was dropped, e.g. "1200 verbose log lines, 35 step reports"; "" for none.
func (d Drops) String() string {
	names := [5]string{"internal error", "error", "warning", "info", "verbose"}
	var parts []string
	for sev := SeverityVerbose; sev >= SeverityInternalError; sev-- {
		if n := d.Logs[sev]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s log line%s", n, names[sev], plural(n)))
		}
	}
	if d.Steps > 0 {
		parts = append(parts, fmt.Sprintf("%d step report%s", d.Steps, plural(d.Steps)))
	}
	return strings.Join(parts, ", ")
}

func plural(n uint64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Drain moves queued events into dst[:0] and returns it, waiting up to timeout for the first
// one; it returns no events on timeout. While nothing is queued the calling OS thread sleeps in
// C until the builder reports, the build ends or the timeout passes, so a silent build costs no
// CPU; Cancel does not need the drainer and works meanwhile. done is true once Run has returned
// and every event has been handed out. dropped counts what the queue dropped so far because it
// was full. Call it from one goroutine at a time; a second concurrent call fails with
// CodeState. The strings are Go copies.
func (b *Build) Drain(dst []RawEvent, timeout time.Duration) (events []RawEvent, done bool, dropped Drops, err error) {
	dst = dst[:0]
	if !b.draining.CompareAndSwap(false, true) {
		return dst, false, Drops{}, &Error{Code: CodeState, Message: "Drain was called from two goroutines at once"}
	}
	defer b.draining.Store(false)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return dst, false, Drops{}, errClosed()
	}
	if C.trtb_build_drain(b.h, b.batch, timeoutMillis(timeout), b.drainStatus) != C.TRTB_OK {
		return dst, false, Drops{}, statusError(b.drainStatus)
	}
	if n := int(b.batch.count); n > 0 {
		// One copy of the batch's text; names and parents are substrings of it.
		text := C.GoStringN(b.batch.text, C.int(b.batch.text_len))
		for _, e := range unsafe.Slice(b.batch.events, n) {
			ev := RawEvent{
				Kind:      EventKind(e.kind),
				Severity:  int(e.severity),
				Steps:     int(e.nb_steps),
				Step:      int(e.step),
				Thread:    uint64(e.thread),
				Time:      time.Duration(e.time_ns),
				Name:      text[e.name_off : e.name_off+e.name_len],
				HasParent: e.has_parent != 0,
			}
			if ev.HasParent {
				ev.Parent = text[e.parent_off : e.parent_off+e.parent_len]
			}
			dst = append(dst, ev)
		}
	}
	dropped.Steps = uint64(b.batch.dropped_steps)
	for i := range dropped.Logs {
		dropped.Logs[i] = uint64(b.batch.dropped_logs[i])
	}
	return dst, b.batch.done != 0, dropped, nil
}

// timeoutMillis rounds a timeout up to whole milliseconds for C.
func timeoutMillis(d time.Duration) C.int32_t {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	return C.int32_t(ms)
}

// Close frees the build and its C memory. Call it after Run has returned (or if Run was never
// called) and after the last Drain; it waits for a Run or Drain still under way. Closing twice
// is harmless.
func (b *Build) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.h == nil {
		return
	}
	C.trtb_build_destroy(b.h)
	b.h = nil
	C.free(unsafe.Pointer(b.batch.events))
	C.free(unsafe.Pointer(b.batch.text))
	C.free(unsafe.Pointer(b.batch))
	C.free(unsafe.Pointer(b.drainStatus))
	b.cache.Free() // after the handle: C read it in place until then
	b.cache = nil
	b.batch = nil
	b.drainStatus = nil
	b.plan = nil
}

// cmem tracks C allocations made for one call, to free them all afterwards.
type cmem struct {
	ptrs []unsafe.Pointer
}

func (m *cmem) alloc(n int) unsafe.Pointer {
	p := C.calloc(1, C.size_t(n))
	m.ptrs = append(m.ptrs, p)
	return p
}

// str copies s into C memory; what names it is for messages (C strings cannot hold NUL).
func (m *cmem) str(what, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, invalid("%s %q contains a NUL byte", what, s)
	}
	p := C.CString(s)
	m.ptrs = append(m.ptrs, unsafe.Pointer(p))
	return p, nil
}

// strs copies a list of strings into a C array of C strings; nil when the list is empty.
func (m *cmem) strs(what string, list []string) (**C.char, error) {
	if len(list) == 0 {
		return nil, nil
	}
	arr := unsafe.Slice((**C.char)(m.alloc(len(list)*int(unsafe.Sizeof((*C.char)(nil))))), len(list))
	for i, s := range list {
		p, err := m.str(what, s)
		if err != nil {
			return nil, err
		}
		arr[i] = p
	}
	return &arr[0], nil
}

func (m *cmem) free() {
	for _, p := range m.ptrs {
		C.free(p)
	}
	m.ptrs = nil
}

func toInt32(what string, v int) (C.int32_t, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, invalid("%s %d is out of range", what, v)
	}
	return C.int32_t(v), nil
}

// toC copies o into C memory owned by mem.
func (o *Options) toC(mem *cmem) (*C.trtb_options, error) {
	c := (*C.trtb_options)(mem.alloc(C.sizeof_trtb_options))
	c.size = C.sizeof_trtb_options
	var err error
	if c.model_path, err = mem.str("model path", o.ModelPath); err != nil {
		return nil, err
	}
	c.plan_fd = -1
	if o.PlanFile != nil {
		fd := o.PlanFile.Fd()
		if fd == ^uintptr(0) {
			return nil, invalid("the plan file %s is closed: pass an open, empty, writable file", o.PlanFile.Name())
		}
		if fd > math.MaxInt32 {
			return nil, invalid("plan file descriptor %d is out of range", fd)
		}
		c.plan_fd = C.int32_t(fd)
	}
	ints := []struct {
		what string
		v    int
		dst  *C.int32_t
	}{
		{"log severity", o.LogSeverity, &c.log_severity},
		{"device", o.Device, &c.device},
		{"optimization level", o.OptLevel, &c.opt_level},
		{"max auxiliary streams", o.MaxAuxStreams, &c.max_aux_streams},
		{"hardware compatibility level", o.HardwareCompat, &c.hardware_compat},
	}
	for _, f := range ints {
		if *f.dst, err = toInt32(f.what, f.v); err != nil {
			return nil, err
		}
	}
	c.precision = C.uint32_t(o.Precision)
	c.flags = C.uint32_t(o.Flags)
	c.workspace_bytes = C.uint64_t(o.WorkspaceBytes)

	if len(o.Profiles) > 0 {
		if len(o.Profiles) > math.MaxInt32 {
			return nil, invalid("too many profiles")
		}
		profs := unsafe.Slice((*C.trtb_profile)(mem.alloc(len(o.Profiles)*C.sizeof_trtb_profile)), len(o.Profiles))
		for i, pr := range o.Profiles {
			p := pr.Inputs
			if len(p) == 0 {
				continue
			}
			dims := unsafe.Slice((*C.trtb_shape)(mem.alloc(len(p)*C.sizeof_trtb_shape)), len(p))
			for j, s := range p {
				rank := len(s.Min)
				if len(s.Opt) != rank || len(s.Max) != rank {
					return nil, invalid("profile %d, input %q: min, opt and max have ranks %d, %d and %d; give all three the same rank",
						i, s.Name, len(s.Min), len(s.Opt), len(s.Max))
				}
				if rank > maxDims {
					return nil, invalid("profile %d, input %q: rank %d is more than TensorRT's %d dimensions", i, s.Name, rank, maxDims)
				}
				if dims[j].input, err = mem.str("profile input", s.Name); err != nil {
					return nil, err
				}
				dims[j].nb_dims = C.int32_t(rank)
				for d := 0; d < rank; d++ {
					dims[j].min[d] = C.int64_t(s.Min[d])
					dims[j].opt[d] = C.int64_t(s.Opt[d])
					dims[j].max[d] = C.int64_t(s.Max[d])
				}
			}
			profs[i].shapes = &dims[0]
			profs[i].nb_shapes = C.int32_t(len(p))
		}
		c.profiles = &profs[0]
		c.nb_profiles = C.int32_t(len(o.Profiles))
	}

	if c.nb_plugin_paths, err = toInt32("plugin count", len(o.PluginPaths)); err != nil {
		return nil, err
	}
	if c.plugin_paths, err = mem.strs("plugin path", o.PluginPaths); err != nil {
		return nil, err
	}

	if o.TimingCache.Len() > 0 {
		c.timing_cache = o.TimingCache.p
		c.timing_cache_size = C.uint64_t(o.TimingCache.n)
	}

	if o.Sim != nil {
		if c.sim, err = o.Sim.toC(mem); err != nil {
			return nil, err
		}
	}
	if err := o.BuildSettings.toC(c, mem); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *SimOptions) toC(mem *cmem) (*C.trtb_sim_options, error) {
	c := (*C.trtb_sim_options)(mem.alloc(C.sizeof_trtb_sim_options))
	var err error
	if c.tensorrt_major, err = toInt32("simulated TensorRT major", s.TensorRT); err != nil {
		return nil, err
	}
	if settings := s.Settings(); settings != "" {
		if c.settings, err = mem.str("stand-in settings", settings); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Compile-time checks that the constants above, numbered by hand so that their documentation
// reads well, match trtb.h: every index below must be the constant 0, or this does not compile.
func _() {
	var x [1]struct{}
	_ = x[BackendSim-C.TRTB_BACKEND_SIM]
	_ = x[BackendTensorRT-C.TRTB_BACKEND_TENSORRT]
	_ = x[CodeOK-C.TRTB_OK]
	_ = x[CodeInvalidArgument-C.TRTB_ERR_INVALID_ARGUMENT]
	_ = x[CodeUnavailable-C.TRTB_ERR_UNAVAILABLE]
	_ = x[CodeVersionMismatch-C.TRTB_ERR_VERSION_MISMATCH]
	_ = x[CodeParse-C.TRTB_ERR_PARSE]
	_ = x[CodeUnsupported-C.TRTB_ERR_UNSUPPORTED]
	_ = x[CodeBuildFailed-C.TRTB_ERR_BUILD_FAILED]
	_ = x[CodeCancelled-C.TRTB_ERR_CANCELLED]
	_ = x[CodeIO-C.TRTB_ERR_IO]
	_ = x[CodeOutOfMemory-C.TRTB_ERR_OUT_OF_MEMORY]
	_ = x[CodeInternal-C.TRTB_ERR_INTERNAL]
	_ = x[CodeState-C.TRTB_ERR_STATE]
	_ = x[PrecisionFP16-C.TRTB_PRECISION_FP16]
	_ = x[PrecisionBF16-C.TRTB_PRECISION_BF16]
	_ = x[PrecisionINT8-C.TRTB_PRECISION_INT8]
	_ = x[PrecisionFP8-C.TRTB_PRECISION_FP8]
	_ = x[FlagNoTF32-C.TRTB_FLAG_NO_TF32]
	_ = x[FlagRefit-C.TRTB_FLAG_REFIT]
	_ = x[FlagStripWeights-C.TRTB_FLAG_STRIP_WEIGHTS]
	_ = x[FlagVersionCompatible-C.TRTB_FLAG_VERSION_COMPATIBLE]
	_ = x[FlagExcludeLeanRuntime-C.TRTB_FLAG_EXCLUDE_LEAN_RUNTIME]
	_ = x[FlagSparseWeights-C.TRTB_FLAG_SPARSE_WEIGHTS]
	_ = x[FlagDisableTimingCache-C.TRTB_FLAG_DISABLE_TIMING_CACHE]
	_ = x[FlagErrorOnTimingCacheMiss-C.TRTB_FLAG_ERROR_ON_TIMING_CACHE_MISS]
	_ = x[FlagStrictTimingCache-C.TRTB_FLAG_STRICT_TIMING_CACHE]
	_ = x[SeverityInternalError-C.TRTB_SEVERITY_INTERNAL_ERROR]
	_ = x[SeverityError-C.TRTB_SEVERITY_ERROR]
	_ = x[SeverityWarning-C.TRTB_SEVERITY_WARNING]
	_ = x[SeverityInfo-C.TRTB_SEVERITY_INFO]
	_ = x[SeverityVerbose-C.TRTB_SEVERITY_VERBOSE]
	_ = x[EventPhaseStart-C.TRTB_EVENT_PHASE_START]
	_ = x[EventStep-C.TRTB_EVENT_STEP]
	_ = x[EventPhaseFinish-C.TRTB_EVENT_PHASE_FINISH]
	_ = x[EventLog-C.TRTB_EVENT_LOG]
}

// The drain text buffer must hold the longest name and parent of one event (trtb_batch).
var _ [defaultBatchText - 2*C.TRTB_NAME_MAX]struct{}
