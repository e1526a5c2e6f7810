package builder

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/probe"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/trtexec"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// The --sim-speed range: beyond it a simulated step is shorter than a nanosecond or longer
// than a minute.
const minSimSpeed, maxSimSpeed = 0.001, 1e6

// DefaultSimStep is the simulated step at --sim-speed 1: a simulated build of the bundled
// model lasts about six seconds, or twelve with --no-timing-cache (then, as TensorRT, the
// stand-in times identical layers again), no longer than before the simulator was a TensorRT
// (docs/benchmarks.md).
const DefaultSimStep = 900 * time.Microsecond

// prepareRequest turns the flags into the worker's request for model: the backend, the shape
// profiles, trtexec's build settings and the model's preflight checks (which complete the
// profiles). It returns the model as read and the warnings to show. A build and `trtbuild key`
// share it, so a key is computed from the request the build would send.
func prepareRequest(o *Options, src *onnx.Source) (worker.Request, *onnx.Model, []string, error) {
	backend, err := resolveBackend(o.Backend)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	return prepareRequestOn(o, src, backend)
}

// prepareRequestOn is prepareRequest for a resolved backend ("tensorrt" or "sim").
func prepareRequestOn(o *Options, src *onnx.Source, backend string) (worker.Request, *onnx.Model, []string, error) {
	flags, err := parseShapeFlags(o)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	req, err := buildRequest(o, src.Path(), backend, flags)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	txWarnings, err := applyTrtexecFlags(o.Trtexec, &req)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	m, warnings, err := checkModel(src, &req, flags, o.NoPreflight)
	if err != nil {
		return worker.Request{}, nil, nil, err
	}
	return req, m, append(txWarnings, warnings...), nil
}

// resolveEngine is the engine's path: engine, or when it is "" the model's path with .engine
// (derived is then true: trtbuild named it, so it follows no link).
func resolveEngine(src *onnx.Source, engine string) (path string, derived bool, err error) {
	model := src.Path()
	if engine == "" {
		derived = true
		ext := filepath.Ext(model)
		if strings.EqualFold(ext, ".onnx") {
			engine = strings.TrimSuffix(model, ext) + ".engine"
		} else {
			engine = model + ".engine"
		}
	}
	if st, err := os.Stat(engine); err == nil && st.IsDir() {
		return "", false, exitcode.Usagef("engine path %s is a directory", q(engine)).Hintf("give a file name with -o")
	}
	if isModel(src, engine) {
		return "", false, exitcode.Usagef("engine path %s is the model itself", q(engine)).Hintf("choose another path with -o")
	}
	return engine, derived, nil
}

// isModel reports whether path is the model src holds.
func isModel(src *onnx.Source, path string) bool {
	if st, err := os.Stat(path); err == nil {
		return os.SameFile(st, src.Info())
	}
	return absClean(path) == absClean(src.Path())
}

func resolveBackend(name string) (string, error) {
	switch name {
	case "auto", "tensorrt":
		// Whether TensorRT loads is found out by the worker, which alone loads it: with auto
		// as with tensorrt, a TensorRT that cannot be loaded fails the build (exit 2) with the
		// places searched, never a silent simulated build.
		return "tensorrt", nil
	case "sim":
		return "sim", nil
	}
	return "", exitcode.Usagef("invalid --backend %q: use auto, tensorrt or sim", name)
}

func buildRequest(o *Options, model, backend string, flags []shapeFlags) (worker.Request, error) {
	req := worker.Request{
		Model: model, Backend: backend, LogSeverity: progress.SeverityWarning, Device: o.Device,
		FP16: o.FP16, BF16: o.BF16, INT8: o.INT8, FP8: o.FP8,
		NoTF32: o.NoTF32, Refit: o.Refit, StripWeights: o.StripWeights, VersionCompatible: o.VersionCompatible,
		ExcludeLeanRuntime: o.ExcludeLeanRuntime, SparseWeights: o.SparseWeights,
		OptLevel: o.OptLevel, MaxAuxStreams: o.MaxAuxStreams, AvgTiming: o.AvgTiming, HardwareCompat: o.HardwareCompat,
		Plugins: o.Plugins, NoTimingCache: o.NoTimingCache, TimingCache: o.TimingCache, StrictCache: o.StrictCache,
		NoBuiltinPlugins: o.NoBuiltinPlugins, KeepFP32: o.KeepFP32,
	}
	lib, err := ResolveTensorRTLib(o.TensorRTLib)
	if err != nil {
		return req, err
	}
	req.TensorRTLib = lib
	if backend == "tensorrt" {
		// The one choice of TensorRT: the worker loads from it and starts with its folders on
		// LD_LIBRARY_PATH (worker.Start), where TensorRT finds its builder resources.
		loc := probe.Locate(lib)
		req.TensorRT = &loc
	}
	if o.Verbose {
		req.LogSeverity = progress.SeverityVerbose
	}
	if err := checkPlugins(o.Plugins); err != nil {
		return req, err
	}
	if o.NoTimingCache && o.TimingCache != "auto" {
		return req, exitcode.Usagef("give --timing-cache %s or --no-timing-cache, not both", o.TimingCache)
	}
	if o.KillAfter <= 0 {
		return req, exitcode.Usagef("invalid --kill-after %s: give how long a cancelled build may take to stop, like 30s", o.KillAfter)
	}
	if o.Timeout < 0 || o.StallTimeout < 0 {
		return req, exitcode.Usagef("invalid time budget: --timeout and --stall-timeout take a positive duration, like 20m")
	}
	if o.Device < 0 {
		return req, exitcode.Usagef("invalid --device %d: use a CUDA device number, 0 or more", o.Device)
	}
	// The flags' own parsers keep these in range; Options from elsewhere are checked here, so
	// the user's message never comes from the C ABI's guard (check_options).
	for _, r := range []struct {
		flag      string
		v, lo, hi int
	}{
		{"--opt-level", o.OptLevel, 0, 5},
		{"--max-aux-streams", o.MaxAuxStreams, 0, 64},
		{"--use-dla-core", o.Trtexec.DLACore, 0, 63},
	} {
		if r.v != -1 && (r.v < r.lo || r.v > r.hi) {
			return req, exitcode.Usagef("invalid %s %d: use %d to %d, or leave it out for TensorRT's default", r.flag, r.v, r.lo, r.hi)
		}
	}
	if o.AvgTiming < 1 || o.AvgTiming > maxAvgTiming {
		return req, exitcode.Usagef("invalid --avg-timing %d: give how many iterations each tactic's timing averages, 1 to %d (trtexec's default, and trtbuild's, is %d)", o.AvgTiming, maxAvgTiming, TrtexecAvgTiming)
	}
	switch o.HardwareCompat {
	case "none", "ampere+", "same-compute-capability":
	case "ampere_plus", "ampereplus":
		req.HardwareCompat = "ampere+"
	case "sameComputeCapability", "same_compute_capability":
		req.HardwareCompat = "same-compute-capability"
	default:
		return req, exitcode.Usagef("invalid --hardware-compat %q: use none, ampere+ or same-compute-capability", o.HardwareCompat)
	}
	if o.FP8 && (req.HardwareCompat == "ampere+" || (req.HardwareCompat == "" && o.HardwareCompat == "ampere+")) {
		// TensorRT 10's FP8 flag "is not supported when HardwareCompatibilityLevel::kAMPERE_PLUS
		// is enabled" (NvInfer.h); TensorRT 11 has no FP8 flag at all.
		return req, exitcode.Usagef("--fp8 cannot be combined with --hardware-compat ampere+ (TensorRT does not support it)").Hintf("drop one of them")
	}
	if len(o.KeepFP32) > 0 && !o.FP16 && !o.BF16 {
		return req, exitcode.Usagef("--keep-fp32 keeps nodes in float32 when --fp16 or --bf16 converts the model").Hintf("add one of them, or drop --keep-fp32")
	}
	if o.ExcludeLeanRuntime && !o.VersionCompatible {
		return req, exitcode.Usagef("--exclude-lean-runtime needs --version-compatible")
	}
	if o.StripWeights && !o.Refit {
		// TensorRT strips weights only from refittable engines.
		req.Refit = true
	}
	if o.Workspace != "" {
		ws, err := parseSize(o.Workspace, false)
		if err != nil {
			return req, exitcode.Usagef("invalid --workspace: %v", err)
		}
		req.WorkspaceBytes = ws
	}
	if o.MemPoolSize != "" {
		ws, pools, err := parseMemPoolSize(o.MemPoolSize)
		if err != nil {
			return req, exitcode.Usagef("invalid %v", err)
		}
		if ws != 0 && o.Workspace != "" {
			return req, exitcode.Usagef("give the workspace once: --workspace or --memPoolSize workspace:SIZE, not both")
		}
		if ws != 0 {
			req.WorkspaceBytes = ws
		}
		req.MemPools = pools
	}
	if req.Profiles, err = flagProfiles(flags); err != nil {
		return req, err
	}
	sim, err := simConfig(o.Sim)
	if err != nil {
		return req, err
	}
	req.Sim = sim
	return req, nil
}

// flagProfiles are the optimization profiles the shape flags give, before the preflight
// completes them; none when one profile names no input.
func flagProfiles(flags []shapeFlags) ([]shapes.Profile, error) {
	var out []shapes.Profile
	for i, f := range flags {
		profile, err := shapeProfile(f)
		if err != nil {
			if len(flags) > 1 {
				return nil, exitcode.Usagef("profile %d: %v", i, err)
			}
			return nil, err
		}
		if len(profile.Inputs) > 0 || len(flags) > 1 {
			out = append(out, profile)
		}
	}
	return out, nil
}

func shapeProfile(f shapeFlags) (shapes.Profile, error) {
	inputs, _, err := shapes.Ranges(f.shapes, f.min, f.opt, f.max)
	if err != nil {
		return shapes.Profile{}, exitcode.Usagef("invalid shapes: %v", err)
	}
	var p shapes.Profile
	p.Inputs = append(p.Inputs, inputs...) // nil when there are none
	return p, nil
}

// simTensorRT is the TensorRT major a simulated build of o plays.
func simTensorRT(o *Options) int {
	if o.Sim.TensorRT != 0 {
		return o.Sim.TensorRT
	}
	return worker.DefaultSimTensorRT
}

func simConfig(f Sim) (worker.SimConfig, error) {
	// Written so that NaN fails too: every comparison with NaN is false.
	if !(f.Speed >= minSimSpeed && f.Speed <= maxSimSpeed) {
		return worker.SimConfig{}, exitcode.Usagef("invalid --sim-speed %g: use a number from %g to %g, like 1 or 20", f.Speed, minSimSpeed, maxSimSpeed)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--sim-threads", f.Threads}, {"--sim-tactics", f.Tactics}, {"--sim-iterations", f.Iterations}} {
		if n.v < 0 || n.v > 256 {
			return worker.SimConfig{}, exitcode.Usagef("invalid %s %d: use 1 to 256", n.name, n.v)
		}
	}
	if f.TensorRT != 0 && f.TensorRT != 10 && f.TensorRT != 11 {
		return worker.SimConfig{}, exitcode.Usagef("invalid --sim-tensorrt %d: the stand-in plays TensorRT 10 or 11", f.TensorRT)
	}
	step := f.Step
	if step == 0 {
		step = time.Duration(float64(DefaultSimStep) / f.Speed)
		if step <= 0 {
			step = time.Nanosecond
		}
	}
	return worker.SimConfig{
		Threads: f.Threads, Tactics: f.Tactics, Iterations: f.Iterations, Step: step,
		FailPhase: f.FailPhase, EarlyPhase: f.EarlyPhase, AbortPhase: f.AbortPhase,
		Silent: f.Silent, LongStep: f.LongStep, IgnoreCancel: f.IgnoreCancel, Seed: f.Seed,
		Flood: f.Flood, PreSilent: f.PreSilent, PostSilent: f.PostSilent, SkipFinishOnStop: f.SkipFinish,
		FP16FailNode: f.FP16FailNode, TensorRT: f.TensorRT, TimeCallbacks: f.TimeCallbacks,
	}, nil
}

func precisionName(o *Options) string {
	var names []string
	for _, p := range []struct {
		on   bool
		name string
	}{{o.FP16, "fp16"}, {o.BF16, "bf16"}, {o.INT8, "int8"}, {o.FP8, "fp8"}} {
		if p.on {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return "as typed in the model"
	}
	return strings.Join(names, "+")
}

// workerCommand returns the argv that starts a worker of this same binary.
func workerCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the trtbuild executable to start the build worker: %w", err)
	}
	return []string{exe, worker.Subcommand}, nil
}

// buildSettings is the request as the report and trace record it, so that a build can be
// repeated: every setting.
func buildSettings(req worker.Request) json.RawMessage {
	b, err := json.Marshal(req)
	if err != nil {
		return nil
	}
	return b
}

// ParseSize reads a size as --engine-cache-size does: a number with an optional unit B, K, M,
// G or T (base 2, case-insensitive; a bare number is MiB), more than zero.
func ParseSize(s string) (uint64, error) { return parseSize(s, false) }

// parseSize reads a memory size: a number with an optional unit B, K/KiB, M/MiB, G/GiB, T/TiB
// (base 2, case-insensitive). A bare number is MiB, as in trtexec's --memPoolSize. Zero is
// refused unless allowZero.
func parseSize(s string, allowZero bool) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("the size is empty: write a number with a unit, like 512M or 4G")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a size: write a number with a unit, like 512M or 4G", s)
	}
	mult := map[string]float64{
		"": 1 << 20, "b": 1,
		"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q has an unknown unit %q: use B, K, M, G or T (base 2)", s, t[i:])
	}
	bytes := v * mult
	switch {
	case bytes == 0 && allowZero:
		return 0, nil
	case bytes < 1:
		return 0, fmt.Errorf("%q is too small: give at least 1 byte, like 512M or 4G (leave the flag out for TensorRT's default)", s)
	case bytes >= math.MaxUint64/2 || math.IsInf(bytes, 0):
		return 0, fmt.Errorf("%q is too large: give at most 8 EiB, like 512M or 4G", s)
	}
	return uint64(bytes), nil
}

// MemPoolNames are trtexec's --memPoolSize pools: the workspace and the others by trtexec's name.
var MemPoolNames = []string{"workspace", "tacticSharedMem", "dlaSRAM", "dlaLocalDRAM", "dlaGlobalDRAM"}

// parseMemPoolSize reads trtexec's --memPoolSize=workspace:1024,tacticSharedMem:1K,… and
// returns the workspace (0 when not given) and the other pools' sizes in bytes.
func parseMemPoolSize(s string) (workspace uint64, pools map[string]uint64, err error) {
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		pool, size, ok := strings.Cut(part, ":")
		pool = strings.TrimSpace(pool)
		if !ok {
			return 0, nil, fmt.Errorf("--memPoolSize %q: write POOL:SIZE, like workspace:4G or tacticSharedMem:1K", part)
		}
		canon := ""
		for _, n := range MemPoolNames {
			if strings.EqualFold(n, pool) {
				canon = n
			}
		}
		if canon == "" {
			return 0, nil, fmt.Errorf("--memPoolSize pool %q is unknown: use %s", pool, strings.Join(MemPoolNames, ", "))
		}
		if seen[canon] {
			return 0, nil, fmt.Errorf("--memPoolSize gives pool %s twice: give each pool once", canon)
		}
		seen[canon] = true
		v, err := parseSize(size, canon != "workspace")
		if err != nil {
			return 0, nil, fmt.Errorf("--memPoolSize %s: %w", canon, err)
		}
		if canon == "workspace" {
			workspace = v
			continue
		}
		if pools == nil {
			pools = map[string]uint64{}
		}
		pools[canon] = v
	}
	return workspace, pools, nil
}

// applyTrtexecFlags checks t and copies it into req. warnings are for stderr.
func applyTrtexecFlags(t Trtexec, req *worker.Request) (warnings []string, err error) {
	if t.InputFormats != "" {
		if req.InputFormats, err = trtexec.ParseIOFormats("--inputIOFormats", t.InputFormats); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.OutputFormats != "" {
		if req.OutputFormats, err = trtexec.ParseIOFormats("--outputIOFormats", t.OutputFormats); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.PrecisionConstraints != "" {
		if req.PrecisionConstraints, err = trtexec.ParsePrecisionConstraints(t.PrecisionConstraints); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.LayerPrecs != "" {
		if req.LayerPrecisions, err = trtexec.ParseLayerPrecisions(t.LayerPrecs); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
		if req.PrecisionConstraints == "" {
			return nil, exitcode.Usagef("--layerPrecisions has no effect without --precisionConstraints: add --precisionConstraints obey (fail where a layer cannot run in its precision) or prefer")
		}
	} else if req.PrecisionConstraints != "" {
		warnings = append(warnings, fmt.Sprintf("--precisionConstraints %s without --layerPrecisions constrains only the precisions the model itself sets; add --layerPrecisions LAYER:TYPE,…", req.PrecisionConstraints))
	}
	if req.PrecisionConstraints != "" {
		warnings = append(warnings, "--precisionConstraints and --layerPrecisions work on TensorRT 10 only: TensorRT 11 builds every network strongly typed, each layer in the types the model gives it, and refuses them; there, change the types in the model (trtbuild convert)")
	}
	if t.ProfilingVerbosity != "" {
		if req.ProfilingVerbosity, err = trtexec.ParseProfilingVerbosity(t.ProfilingVerbosity); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.TacticSources != "" {
		if req.TacticSources, err = trtexec.ParseTacticSources(t.TacticSources); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.DLACore >= 0 {
		core := t.DLACore
		req.DLACore = &core
	} else if t.GPUFallback {
		return nil, exitcode.Usagef("--allowGPUFallback needs --useDLACore N, the DLA core to build for").Hintf("without DLA every layer runs on the GPU anyway")
	}
	req.GPUFallback = t.GPUFallback
	if t.Best && t.StronglyTyped {
		return nil, exitcode.Usagef("--best and --stronglyTyped contradict each other: a strongly typed network takes its precisions from the model, --best lets TensorRT 10 choose any").Hintf("give one of them")
	}
	req.StronglyTyped, req.Best = t.StronglyTyped, t.Best
	if t.BuildRoute != "" {
		if req.BuildRoute, err = trtexec.ParseBuildRoute(t.BuildRoute); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if t.Best {
		warnings = append(warnings, "--best enables fp16, bf16 and int8 on TensorRT 10 (weak typing, deprecated there); TensorRT 11 has no weak typing and refuses it: use --fp16 or --bf16, which convert the model, or a Q/DQ-quantized model")
	}
	return warnings, nil
}

// ResolveTensorRTLib checks --tensorrt-lib (or, when it is empty, TRTBUILD_TENSORRT_LIB: the
// worker reads the variable itself, but a bad value is the user's to fix before anything
// starts) and makes it absolute. "" stays "".
func ResolveTensorRTLib(dir string) (string, error) {
	from := "--tensorrt-lib"
	if dir == "" {
		if dir = os.Getenv(trt.EnvLibDir); dir == "" {
			return "", nil
		}
		from = trt.EnvLibDir
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", exitcode.Usagef("%s %s does not exist", from, dir).Hintf("give the folder that holds %s", trt.InferFilePattern)
	case err != nil:
		return "", exitcode.Usagef("%s %s cannot be read: %v", from, dir, exitcode.PathCause(err))
	case !st.IsDir() && trt.NamesInferLibrary(dir): // Windows: the DLL stands for its folder
		dir = filepath.Dir(dir)
	case !st.IsDir():
		return "", exitcode.Usagef("%s %s is not a folder", from, dir).Hintf("give the folder that holds %s, not the file", trt.InferFilePattern)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exitcode.Usagef("%s %s: %v", from, dir, err)
	}
	if !trt.FitsLibraryPath(abs) {
		return "", exitcode.Usagef("%s %s holds ':' or ';', which the worker's LD_LIBRARY_PATH cannot hold (TensorRT loads its builder resources through it)", from, abs).Hintf("give a path without them, such as a symbolic link to the folder")
	}
	return abs, nil
}

// CheckBackend checks a backend name (auto, tensorrt or sim) as a build would.
func CheckBackend(name string) error {
	_, err := resolveBackend(name)
	return err
}
