package buildkey

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/buildreq"
	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// Target is the builder and GPU a build runs on: what internal/probe finds on this machine, or what a
// matrix file names for a GPU type.
type Target struct {
	Backend string // "tensorrt" or "sim"
	// TensorRT is the full version, major.minor.patch.build; TRTMajor its major (TensorRT only).
	TensorRT string
	TRTMajor int
	// ONNXParser names the ONNX parser library TensorRT parses with: "version V, sha256:…",
	// V being its getNvOnnxParserVersion, with the SHA-256 of its file, since that version
	// (0.1.0) is the same in every TensorRT release; "" when not known.
	ONNXParser string
	// GPU is the device name without its MIG part, ComputeCapability "major.minor", SMs the
	// multiprocessor count, MIG the MIG profile of a slice (SplitMIG); each empty or zero when
	// not known.
	GPU               string
	ComputeCapability string
	SMs               int
	MIG               string
}

// FromRequest returns the parts of a build of req on target, hashing the model and the plugin
// libraries. The model's path is in no part.
func FromRequest(req buildreq.Request, target Target) (Parts, ModelHashes, error) {
	hashes, err := HashModel(req.Model)
	if err != nil {
		return Parts{}, ModelHashes{}, err
	}
	return FromHashes(req, target, hashes)
}

// FromHashes is FromRequest with the model's hashes already known (a matrix hashes each model
// once for all its cells).
func FromHashes(req buildreq.Request, target Target, hashes ModelHashes) (Parts, ModelHashes, error) {
	plugins, err := HashPlugins(req.Plugins)
	if err != nil {
		return Parts{}, ModelHashes{}, err
	}
	p := Parts{
		Graph: hashes.Graph, Weights: hashes.Weights,
		Backend: target.Backend, TensorRT: target.TensorRT, ONNXParser: target.ONNXParser,
		GPU: target.GPU, ComputeCapability: target.ComputeCapability, SMs: target.SMs, MIG: target.MIG,
		HardwareCompat: req.HardwareCompat, VersionCompatible: req.VersionCompatible, ExcludeLeanRuntime: req.ExcludeLeanRuntime,
		Settings: Settings{
			NoTF32: req.NoTF32, Refit: req.Refit, StripWeights: req.StripWeights, SparseWeights: req.SparseWeights,
			OptLevel: req.OptLevel, MaxAuxStreams: req.MaxAuxStreams, WorkspaceBytes: req.WorkspaceBytes,
			AvgTiming: req.AvgTiming, BuildRoute: req.BuildRoute,
			InputFormats: req.InputFormats, OutputFormats: req.OutputFormats,
			PrecisionConstraints: req.PrecisionConstraints, LayerPrecisions: req.LayerPrecisions,
			ProfilingVerbosity: req.ProfilingVerbosity, TacticSources: req.TacticSources, DLACore: req.DLACore,
			GPUFallback: req.GPUFallback, StronglyTyped: req.StronglyTyped, Best: req.Best, MemPools: req.MemPools,
			KeepFP32: req.KeepFP32, NoBuiltinPlugins: req.NoBuiltinPlugins,
		},
		Plugins: plugins,
	}
	NormalizeDefaults(&p.Settings, target)
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
		// A copy: Normalized sorts the inputs by name, and the request keeps its order.
		p.Profiles = append(p.Profiles, shapes.Profile{Inputs: append([]shapes.Input(nil), pr.Inputs...)})
	}
	if target.Backend != "tensorrt" {
		s := req.Sim
		major := s.TensorRT
		if major == 0 {
			major = buildreq.DefaultSimTensorRT
		}
		p.Sim = &Sim{TensorRT: major, Tactics: s.Tactics, Iterations: s.Iterations, Seed: s.Seed}
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
