// Package buildreq is the build request: everything a build's worker needs to run one build,
// as the parent (internal/builder) decides it and sends it, and what the build key
// (internal/buildkey) is computed from. A contract of its own, below both: the worker
// (internal/worker) serves it.
package buildreq

import (
	"time"

	"github.com/trtbuild/trtbuild/internal/trt"

	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// Request is everything the worker needs to run one build. The parent validates it and sends
// it to the worker as the first line of the control pipe (internal/worker).
type Request struct {
	Model string `json:"model"`
	// ModelFolder, when set, is the model's folder, held open by the parent (StartOptions.
	// ModelFolder): the worker works in it, and Model is the file's name there, so that the
	// model and its external data are read from the folder the parent opened and checked,
	// whatever is renamed or re-linked on the path to it meanwhile. It is ModelFolderFD on
	// Unix (the folder is that inherited descriptor) and the folder's path on Windows (the
	// parent's handle keeps it in place).
	ModelFolder string            `json:"model_folder,omitempty"`
	Backend     string            `json:"backend"` // "sim" or "tensorrt"
	LogSeverity progress.Severity `json:"log_severity"`
	Device      int               `json:"device,omitempty"`

	FP16 bool `json:"fp16,omitempty"`
	BF16 bool `json:"bf16,omitempty"`
	INT8 bool `json:"int8,omitempty"`
	FP8  bool `json:"fp8,omitempty"`

	NoTF32             bool   `json:"no_tf32,omitempty"`
	Refit              bool   `json:"refit,omitempty"`
	StripWeights       bool   `json:"strip_weights,omitempty"`
	VersionCompatible  bool   `json:"version_compatible,omitempty"`
	ExcludeLeanRuntime bool   `json:"exclude_lean_runtime,omitempty"`
	SparseWeights      bool   `json:"sparse_weights,omitempty"`
	OptLevel           int    `json:"opt_level"`       // -1: builder default
	MaxAuxStreams      int    `json:"max_aux_streams"` // -1: builder default
	HardwareCompat     string `json:"hardware_compat,omitempty"`
	WorkspaceBytes     uint64 `json:"workspace_bytes,omitempty"`
	// AvgTiming is how many iterations every tactic's timing averages (trtexec's --avgTiming;
	// 0: TensorRT's default, 1). The parent sends trtexec's 8 unless told otherwise.
	AvgTiming int `json:"avg_timing,omitempty"`
	// BuildRoute is TensorRT 11's build route (trtexec's --setBuildRoute), "" for none.
	BuildRoute string `json:"build_route,omitempty"`

	Profiles []shapes.Profile `json:"profiles,omitempty"`
	Plugins  []string         `json:"plugins,omitempty"`

	// TimingCache is the timing cache file the worker loads before the build and merges what
	// the build learned into afterwards, also when cancelled; "" or "auto" is the default file
	// for the builder (internal/timingcache). TimingCacheOut, when set, is where the merged
	// cache goes instead. NoTimingCache turns the cache off.
	TimingCache    string `json:"timing_cache,omitempty"`
	TimingCacheOut string `json:"timing_cache_out,omitempty"`
	NoTimingCache  bool   `json:"no_timing_cache,omitempty"`
	// StrictCache makes every timing cache problem (unreadable, rejected by the builder, not
	// saved) fail the build instead of being a warning; the builder refuses a given cache it
	// cannot use exactly before it builds (cgo.FlagStrictTimingCache).
	StrictCache bool `json:"strict_cache,omitempty"`

	// TensorRTLib is the folder the TensorRT libraries are loaded from (--tensorrt-lib, or
	// TRTBUILD_TENSORRT_LIB), absolute; "" searches TENSORRT_ROOT, pip's and the system's
	// (internal/trt.Search).
	TensorRTLib string `json:"tensorrt_lib,omitempty"`
	// TensorRT is where the parent chose TensorRT (internal/trt.Search.Locate): the worker
	// loads from there and nowhere else, and Start puts its folders on the worker's
	// LD_LIBRARY_PATH. nil for the simulated builder.
	TensorRT *trt.Location `json:"tensorrt,omitempty"`
	// NoBuiltinPlugins leaves TensorRT's standard plugins (libnvinfer_plugin) unloaded.
	NoBuiltinPlugins bool `json:"no_builtin_plugins,omitempty"`
	// KeepFP32 lists operator types and node names kept in float32 when a TensorRT 11
	// --fp16/--bf16 build converts the model (--keep-fp32).
	KeepFP32 []string `json:"keep_fp32,omitempty"`
	// trtexec's other build settings, checked by the parent (internal/trtexec holds the names).
	InputFormats         []trtexec.IOFormat       `json:"input_formats,omitempty"`         // one for all inputs, or one per input
	OutputFormats        []trtexec.IOFormat       `json:"output_formats,omitempty"`        // likewise for the outputs
	PrecisionConstraints string                   `json:"precision_constraints,omitempty"` // "", "prefer" or "obey"
	LayerPrecisions      []trtexec.LayerPrecision `json:"layer_precisions,omitempty"`
	ProfilingVerbosity   string                   `json:"profiling_verbosity,omitempty"` // "": TensorRT's default
	TacticSources        []string                 `json:"tactic_sources,omitempty"`      // "+name" or "-name"
	DLACore              *int                     `json:"dla_core,omitempty"`            // nil: build for the GPU
	GPUFallback          bool                     `json:"gpu_fallback,omitempty"`
	StronglyTyped        bool                     `json:"strongly_typed,omitempty"`
	Best                 bool                     `json:"best,omitempty"`
	// MemPools are pool sizes in bytes besides the workspace, by trtexec's pool name
	// (tacticSharedMem, dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM).
	MemPools map[string]uint64 `json:"mem_pools,omitempty"`

	Sim SimConfig `json:"sim"`
}

// SimConfig holds the simulated builder's knobs. Zero values take the builder's defaults.
type SimConfig struct {
	Threads      int           `json:"threads,omitempty"`
	Tactics      int           `json:"tactics,omitempty"`
	Iterations   int           `json:"iterations,omitempty"`
	Step         time.Duration `json:"step_ns,omitempty"`
	FailPhase    string        `json:"fail_phase,omitempty"`
	EarlyPhase   string        `json:"early_phase,omitempty"`
	AbortPhase   string        `json:"abort_phase,omitempty"`
	Silent       time.Duration `json:"silent_ns,omitempty"`
	LongStep     time.Duration `json:"long_step_ns,omitempty"`
	IgnoreCancel bool          `json:"ignore_cancel,omitempty"`
	Seed         uint64        `json:"seed,omitempty"`
	Flood        bool          `json:"flood,omitempty"`          // no sleeps: events as fast as possible (benchmarks)
	PreSilent    time.Duration `json:"pre_silent_ns,omitempty"`  // silence before the first phase
	PostSilent   time.Duration `json:"post_silent_ns,omitempty"` // silence after timing
	// SkipFinishOnStop sends no phase finish after a cancel or a failure.
	SkipFinishOnStop bool `json:"skip_finish_on_stop,omitempty"`
	// FP16FailNode makes the build fail as TensorRT 11.2 fails an FP16 Conv it has no kernel
	// for, naming this node, unless the node is kept in float32.
	FP16FailNode string `json:"fp16_fail_node,omitempty"`
	// TensorRT is the major the stand-in TensorRT plays (10 or 11; 0: DefaultSimTensorRT).
	TensorRT int `json:"tensorrt,omitempty"`
	// FailAt and AbortAt pick a timed node by its place in the optimized graph, a fraction of
	// the way through it (0.5: the middle): timing it fails the build (TensorRT's "Could not
	// find any implementation for node") or aborts the worker. nil: none.
	FailAt  *float64 `json:"fail_at,omitempty"`
	AbortAt *float64 `json:"abort_at,omitempty"`
	// HoldAfter stalls the builder after this many measured tactics until a cancel comes.
	HoldAfter int `json:"hold_after,omitempty"`
	// Regime forces how the stand-in times the graph: "cnn" or "myelin" ("": the model decides).
	Regime string `json:"regime,omitempty"`
	// TimeCallbacks logs the percentiles of the monitor's stepComplete calls (benchmarks).
	TimeCallbacks bool `json:"time_callbacks,omitempty"`
}

// ModelFolderFD is Request.ModelFolder when the folder is the worker's inherited descriptor 5,
// after the event pipe (3) and the plan file (4).
const ModelFolderFD = "fd:5"

// DefaultSimTensorRT is the TensorRT major a simulated build plays when the request names none:
// the newer of the two the binary drives.
const DefaultSimTensorRT = 11
