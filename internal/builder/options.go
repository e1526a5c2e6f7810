package builder

import (
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/onnx"
)

// Options describe one build, as every front end gives it: the command line binds its flags
// onto them, a matrix sets a cell's fields on a copy of its base, a service fills them from a
// request. Values keep trtexec's text syntax where trtexec has one (shapes, sizes, formats), so
// that a build can be described the same way everywhere; Check (and Run, and Key) reads and
// validates them, and every user-facing message of a bad option comes from there. Start from
// DefaultOptions, the options of a plain `trtbuild MODEL`: there OptLevel, MaxAuxStreams and
// Trtexec.DLACore are -1 (the builder's default), AvgTiming is trtexec's 8, KillAfter is 30 s
// and the engine cache's size and trust are set. In a bare Options literal those are 0 or "":
// optimization level 0, no auxiliary streams, DLA core 0, and refusals for the rest.
type Options struct {
	// Model is the ONNX model; Engine the engine's path ("": the model's path with .engine).
	Model, Engine string
	// Backend is auto, tensorrt or sim (the simulated builder, which needs no GPU).
	Backend string
	// Verbose forwards the builder's info and verbose log lines.
	Verbose bool

	// Profiles are the optimization profiles' shapes, in order; none: one profile of the
	// model's static shapes (or those preflight can complete).
	Profiles []Profile
	// Workspace is the workspace pool limit ("512M", "4G"; a bare number is MiB); MemPoolSize
	// trtexec's --memPoolSize list (workspace:4G,tacticSharedMem:48K).
	Workspace, MemPoolSize string

	FP16, BF16, INT8, FP8                                                             bool
	NoTF32, Refit, StripWeights, VersionCompatible, ExcludeLeanRuntime, SparseWeights bool
	// OptLevel (0-5) and MaxAuxStreams (0-64) are -1 for the builder's default.
	OptLevel, MaxAuxStreams int
	// AvgTiming is how many iterations every tactic's timing averages (1 to 1000): trtexec's
	// --avgTiming, whose default of 8 DefaultOptions takes (TensorRT's own is 1).
	AvgTiming int
	Device    int
	// HardwareCompat is none, ampere+ or same-compute-capability (trtexec's spellings too).
	HardwareCompat string
	// Plugins are plugin libraries to load: this runs their code.
	Plugins []string
	// KeepFP32 lists op types or node names a TensorRT 11 --fp16/--bf16 conversion keeps in
	// float32.
	KeepFP32 []string
	// TensorRTLib is the folder of the TensorRT libraries ("": TRTBUILD_TENSORRT_LIB, then
	// TENSORRT_ROOT, then the system's search). NoBuiltinPlugins leaves libnvinfer_plugin out.
	TensorRTLib      string
	NoBuiltinPlugins bool
	// Trtexec are trtexec's other build settings, in its syntax.
	Trtexec Trtexec

	// NoPreflight skips the shape and opset checks before the build (never the external data
	// rule).
	NoPreflight bool
	// TimingCache is the timing cache file, or "auto" (or ""): one per TensorRT version and
	// GPU in the user cache folder. NoTimingCache uses none; StrictCache fails on every timing
	// cache problem instead of warning.
	TimingCache                string
	NoTimingCache, StrictCache bool
	// NoManifest writes no manifest (ENGINE.json) beside the engine.
	NoManifest bool
	// Report and Trace are the --report and --trace files ("": none).
	Report, Trace string
	// EngineCache reuses and stores engines by build key; its Dir "" means no engine cache.
	// CacheOnly ends Run with ErrNotCached instead of building when the engine cache has no
	// engine for the build (a service answers a hit at once and queues the rest).
	EngineCache EngineCache
	CacheOnly   bool
	// CacheLink puts an engine cache hit in place as a hard link to the entry's engine,
	// verified as a copy is, instead of a copy: the engine costs no second copy. Where no
	// link can be made (the cache on another file system), nothing is put in place: the
	// result is the hit's, with Engine empty, and the caller serves the engine from the cache
	// (enginecache.Cache.Open). For trtbuild's own folders (a service's), whose files nobody
	// writes: a write to the link would write to the cache's entry.
	CacheLink bool

	// Timeout ends the build after this long (0: never), StallTimeout after this long without
	// a progress event; KillAfter is how long a cancel may take before the worker is killed
	// (it must be positive).
	Timeout, StallTimeout, KillAfter time.Duration

	// Sim tunes the simulated builder (Backend sim).
	Sim Sim

	// Command is the command line recorded in the report and trace (nil: none).
	Command []string
	// OwnOutputs marks the engine and report paths as trtbuild's own (a matrix cell's): they
	// follow no link.
	OwnOutputs bool
	// KeyTarget, for a simulated build, is the GPU its build key names (a matrix cell's
	// target), so cells map to keys as they would on the real GPUs.
	KeyTarget *buildkey.Target
	// ModelHashes, when set, hashes the model a build opened for its key (a matrix hashes each
	// model once for all its cells, keyed by the file's onnx.Source.Identity); nil:
	// buildkey.HashSource.
	ModelHashes func(src *onnx.Source) (buildkey.ModelHashes, error)
}

// Profile is one optimization profile's shapes as trtexec writes them
// (images:1x3x224x224,mask:1x16); "" leaves one out. Shapes sets min, opt and max at once.
type Profile struct {
	Shapes, Min, Opt, Max string
}

// EngineCache is the engine cache of a build.
type EngineCache struct {
	// Dir is the cache folder; "auto" is the user cache folder's trtbuild/engines; "": none.
	Dir string
	// Size bounds the cache ("20G"): the least recently used engines beyond it are removed.
	Size string
	// Trust says whose entries are served: self, group, or user names or ids, comma-separated.
	Trust string
}

// Trtexec are trtexec's build flags that map onto one builder setting each, beyond the ones
// trtbuild has its own names for. Their values are trtexec's syntax (package trtexec).
type Trtexec struct {
	InputFormats, OutputFormats       string
	PrecisionConstraints, LayerPrecs  string
	ProfilingVerbosity, TacticSources string
	DLACore                           int // -1: none
	GPUFallback, StronglyTyped, Best  bool
	// BuildRoute is TensorRT 11.1's build route (--setBuildRoute): knobs -NAME=VALUE separated
	// by spaces; "" for none. TensorRT 10 refuses it.
	BuildRoute string
}

// Sim are the simulated builder's knobs. Only Speed and Scenario are for users; the others
// exist for tests and demos.
type Sim struct {
	// Speed runs the simulation this many times faster (0.001 to 1e6).
	Speed float64
	// Scenario plays a situation: see SimScenarioNames.
	Scenario                          string
	Threads, Tactics, Iterations      int
	Step, Silent, LongStep            time.Duration
	FailPhase, EarlyPhase, AbortPhase string
	IgnoreCancel                      bool
	Seed                              uint64
	Flood                             bool
	PreSilent, PostSilent             time.Duration
	SkipFinish                        bool
	FP16FailNode                      string
	// TensorRT is the major the stand-in TensorRT plays: 10 or 11 (0: the newer).
	TensorRT int
	// TimeCallbacks logs the percentiles of the monitor's callbacks (benchmarks).
	TimeCallbacks bool
}

// TrtexecAvgTiming is trtexec's default --avgTiming (samples/common/sampleOptions.h,
// defaultAvgTiming), which a build takes unless told otherwise: TensorRT's own default of 1
// times each tactic once, so its choice among close tactics is noisier than trtexec's.
const TrtexecAvgTiming = 8

// maxAvgTiming bounds --avg-timing.
const maxAvgTiming = 1000

// DefaultOptions are the options of a plain `trtbuild MODEL`: what every front end starts from.
func DefaultOptions() Options {
	return Options{
		Backend: "auto", OptLevel: -1, MaxAuxStreams: -1, AvgTiming: TrtexecAvgTiming, HardwareCompat: "none",
		TimingCache: "auto", KillAfter: 30 * time.Second,
		EngineCache: EngineCache{Size: "20G", Trust: "self"},
		Trtexec:     Trtexec{DLACore: -1},
		Sim:         Sim{Speed: 1},
	}
}
