package buildkey

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/trt"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// Target is the builder and GPU a build runs on: what Local finds on this machine, or what a
// matrix file names for a GPU type.
type Target struct {
	Backend string // "tensorrt" or "sim"
	// TensorRT is the full version, major.minor.patch.build; TRTMajor its major (TensorRT only).
	TensorRT string
	TRTMajor int
	// GPU is the device name, ComputeCapability "major.minor", SMs the multiprocessor count, MIG
	// a MIG profile name; each empty or zero when not known.
	GPU               string
	ComputeCapability string
	SMs               int
	MIG               string
}

// Local describes the backend and CUDA device of this machine. For TensorRT it asks the loaded
// library and the driver (cgo.Version), so it must run in a process that has loaded TensorRT
// (cgo.LoadTensorRT): trtbuild's short-lived __target probe, never a build's parent. The
// simulated builder needs no asking.
func Local(backend string, device int) (Target, error) {
	if backend != "tensorrt" {
		return Target{Backend: "sim"}, nil
	}
	v, err := cgo.Version(cgo.BackendTensorRT, device)
	if err != nil {
		return Target{}, fmt.Errorf("asking TensorRT for its version and the GPU: %w", err)
	}
	loaded := v.Loaded
	if loaded == 0 {
		loaded = v.Compiled
	}
	ver, err := trt.FromInt(loaded)
	if err != nil {
		return Target{}, err
	}
	build := "unknown"
	switch {
	case v.LoadedBuild > 0:
		build = fmt.Sprint(v.LoadedBuild) // what the loaded library says
	case v.Loaded == 0 || v.Loaded == v.Compiled:
		if c := cgo.CompiledFor(); c.Build > 0 {
			// The library has no getInferLibBuildVersion: the headers' build, for the same version.
			build = fmt.Sprint(c.Build)
		}
	}
	if v.DeviceCount == 0 || v.DeviceName == "" {
		return Target{}, fmt.Errorf("no CUDA device %d: an engine is built for one GPU; check nvidia-smi and --device", device)
	}
	return Target{
		Backend:           "tensorrt",
		TensorRT:          fmt.Sprintf("%d.%d.%d.%s", ver.Major, ver.Minor, ver.Patch, build),
		TRTMajor:          ver.Major,
		GPU:               v.DeviceName,
		ComputeCapability: fmt.Sprintf("%d.%d", v.ComputeMajor, v.ComputeMinor),
		SMs:               v.SMs,
	}, nil
}

// FromRequest returns the parts of a build of req on target, hashing the model and the plugin
// libraries. The model's path is in no part.
func FromRequest(req worker.Request, target Target) (Parts, ModelHashes, error) {
	hashes, err := HashModel(req.Model)
	if err != nil {
		return Parts{}, ModelHashes{}, err
	}
	return FromHashes(req, target, hashes)
}

// FromHashes is FromRequest with the model's hashes already known (a matrix hashes each model
// once for all its cells).
func FromHashes(req worker.Request, target Target, hashes ModelHashes) (Parts, ModelHashes, error) {
	plugins, err := HashPlugins(req.Plugins)
	if err != nil {
		return Parts{}, ModelHashes{}, err
	}
	p := Parts{
		Graph: hashes.Graph, Weights: hashes.Weights,
		Backend: target.Backend, TensorRT: target.TensorRT,
		GPU: target.GPU, ComputeCapability: target.ComputeCapability, SMs: target.SMs, MIG: target.MIG,
		HardwareCompat: req.HardwareCompat, VersionCompatible: req.VersionCompatible, ExcludeLeanRuntime: req.ExcludeLeanRuntime,
		Settings: Settings{
			NoTF32: req.NoTF32, Refit: req.Refit, StripWeights: req.StripWeights, SparseWeights: req.SparseWeights,
			OptLevel: req.OptLevel, MaxAuxStreams: req.MaxAuxStreams, WorkspaceBytes: req.WorkspaceBytes,
			InputFormats: req.InputFormats, OutputFormats: req.OutputFormats,
			PrecisionConstraints: req.PrecisionConstraints, LayerPrecisions: req.LayerPrecisions,
			ProfilingVerbosity: req.ProfilingVerbosity, TacticSources: req.TacticSources, DLACore: req.DLACore,
			GPUFallback: req.GPUFallback, StronglyTyped: req.StronglyTyped, Best: req.Best, MemPools: req.MemPools,
			KeepFP32: req.KeepFP32, NoBuiltinPlugins: req.NoBuiltinPlugins,
		},
		Plugins: plugins,
	}
	for _, pr := range []struct {
		on   bool
		name string
	}{{req.FP16, "fp16"}, {req.BF16, "bf16"}, {req.INT8, "int8"}, {req.FP8, "fp8"}} {
		if pr.on {
			p.Settings.Precision = append(p.Settings.Precision, pr.name)
		}
	}
	if target.Backend == "tensorrt" && (req.FP16 || req.BF16) {
		plan, err := trt.PrecisionPlan(target.TRTMajor, req.FP16, req.BF16, req.INT8, req.FP8)
		if err != nil {
			return Parts{}, ModelHashes{}, err
		}
		if plan.ConvertONNX != "" {
			p.Converter = fmt.Sprintf("%d", convert.Version)
		}
	}
	for _, pr := range req.Profiles {
		var out Profile
		for _, in := range pr.Inputs {
			out.Inputs = append(out.Inputs, Input{Name: in.Name, Min: in.Min, Opt: in.Opt, Max: in.Max})
		}
		p.Profiles = append(p.Profiles, out)
	}
	if target.Backend != "tensorrt" {
		s := req.Sim
		p.Sim = &Sim{Tactics: s.Tactics, Iterations: s.Iterations, Seed: s.Seed}
	}
	return p.Normalized(), hashes, nil
}

// Short is the key shortened for people: the schema prefix and 12 hex digits.
func Short(key string) string {
	if rest, ok := strings.CutPrefix(key, Prefix); ok && len(rest) >= 12 {
		return Prefix + rest[:12]
	}
	return key
}
