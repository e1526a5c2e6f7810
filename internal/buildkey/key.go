// Package buildkey computes the content key of an engine build: the hashes of the ONNX graph
// and of its weights, kept apart, plus everything else that changes the engine TensorRT
// writes — the converter that rewrites the graph for --fp16/--bf16 on TensorRT 11, TensorRT's
// full version with its build number and the ONNX parser beside it, the GPU and its compute
// capability (and the MIG profile of a slice), the hardware- and version-compatibility modes,
// every builder setting, the optimization profiles and the plugin libraries by content.
//
// The key is versioned: Schema is part of what is hashed, and a change to what the key covers
// or how a part is computed must raise it, so engines cached under the old rules are never
// served under the new ones. The parts are documented in docs/engine-cache.md.
package buildkey

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// Schema is the version of the key's definition (the Parts and how each is computed). 2 added
// trtexec's other build settings (Settings.InputFormats … MemPools), --keep-fp32 and
// --no-builtin-plugins. 3 hashes a tensor's data as a reader takes it: the external bytes
// only when its data_location is EXTERNAL, its inline data only otherwise (2 hashed both
// whatever the location said, and read the file of a DEFAULT tensor); frames every field the
// graph and weights hashes see with its number, wire type and length; and walks local
// functions' nodes and attribute defaults, so their tensors are weights. 4 added the tactic
// timing's averaging iterations (Settings.AvgTiming, which trtbuild now sets to trtexec's 8),
// TensorRT 11's build route, the ONNX parser (ONNXParser) and the MIG profile of the device
// the build runs on (MIG, which 3 held only for a matrix target that named one). 5 keys plugin
// libraries by content alone (a renamed file with the same bytes keeps the key; the names stay
// in Parts for people) and leaves out settings given as TensorRT 10's own defaults
// (NormalizeDefaults), so only what changes the engine changes the key.
const Schema = 5

// Prefix starts every key, naming the schema: "trtb5-" and 64 hex digits.
var Prefix = fmt.Sprintf("trtb%d-", Schema)

// Parts is everything a key covers. Its JSON form, with fields in this order, is what is
// hashed; fields that do not apply are empty and left out.
type Parts struct {
	Schema int `json:"schema"`
	// Graph and Weights are the model's content hashes (HashModel).
	Graph   string `json:"graph"`
	Weights string `json:"weights"`
	// Converter is trtbuild's ONNX converter version when the build converts the graph before
	// TensorRT sees it (--fp16/--bf16 on TensorRT 11); empty otherwise.
	Converter string `json:"converter,omitempty"`

	Backend string `json:"backend"` // "tensorrt" or "sim"
	// TensorRT is the loaded library's full version, major.minor.patch.build. ONNXParser is
	// the ONNX parser loaded beside it (Target.ONNXParser): its version and its file's SHA-256.
	TensorRT   string `json:"tensorrt,omitempty"`
	ONNXParser string `json:"onnx_parser,omitempty"`
	// GPU is the device's name without its MIG part (SplitMIG), ComputeCapability e.g. "9.0".
	// SMs is its multiprocessor count, which tells a MIG slice (or a cut-down part) from the
	// whole GPU; MIG is the MIG profile of a slice, e.g. "1g.10gb" (from the device name, or
	// a matrix target's mig).
	GPU               string `json:"gpu,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	SMs               int    `json:"sms,omitempty"`
	MIG               string `json:"mig,omitempty"`

	HardwareCompat     string `json:"hardware_compat"` // none, ampere+ or same-compute-capability
	VersionCompatible  bool   `json:"version_compatible,omitempty"`
	ExcludeLeanRuntime bool   `json:"exclude_lean_runtime,omitempty"`

	Settings Settings         `json:"settings"`
	Profiles []shapes.Profile `json:"profiles,omitempty"`
	Plugins  []Plugin         `json:"plugins,omitempty"`
	// Sim holds the simulated builder's settings that change its plan; nil for TensorRT.
	Sim *Sim `json:"sim,omitempty"`
}

// Settings are the builder settings.
type Settings struct {
	Precision      []string `json:"precision,omitempty"` // of fp16, bf16, int8, fp8, sorted
	NoTF32         bool     `json:"no_tf32,omitempty"`
	Refit          bool     `json:"refit,omitempty"`
	StripWeights   bool     `json:"strip_weights,omitempty"`
	SparseWeights  bool     `json:"sparse_weights,omitempty"`
	OptLevel       int      `json:"opt_level"`       // -1: the builder's default
	MaxAuxStreams  int      `json:"max_aux_streams"` // -1: the builder's default
	WorkspaceBytes uint64   `json:"workspace_bytes,omitempty"`
	// AvgTiming is the number of averaging iterations of every tactic's timing (trtexec's
	// --avgTiming; 0: TensorRT's default, 1). BuildRoute is TensorRT 11's build route
	// (--setBuildRoute), "" for none.
	AvgTiming  int    `json:"avg_timing"`
	BuildRoute string `json:"build_route,omitempty"`

	// trtexec's other build settings, as the request holds them (internal/trtexec); each is
	// left out when not set. Orders are kept: they are the user's.
	InputFormats         []trtexec.IOFormat       `json:"input_formats,omitempty"`
	OutputFormats        []trtexec.IOFormat       `json:"output_formats,omitempty"`
	PrecisionConstraints string                   `json:"precision_constraints,omitempty"`
	LayerPrecisions      []trtexec.LayerPrecision `json:"layer_precisions,omitempty"`
	ProfilingVerbosity   string                   `json:"profiling_verbosity,omitempty"`
	TacticSources        []string                 `json:"tactic_sources,omitempty"`
	DLACore              *int                     `json:"dla_core,omitempty"`
	GPUFallback          bool                     `json:"gpu_fallback,omitempty"`
	StronglyTyped        bool                     `json:"strongly_typed,omitempty"`
	Best                 bool                     `json:"best,omitempty"`
	MemPools             map[string]uint64        `json:"mem_pools,omitempty"` // encoded with sorted names

	// KeepFP32 are the operator types and node names a TensorRT 11 --fp16/--bf16 conversion
	// keeps in float32 (--keep-fp32); NoBuiltinPlugins leaves TensorRT's standard plugins out.
	KeepFP32         []string `json:"keep_fp32,omitempty"`
	NoBuiltinPlugins bool     `json:"no_builtin_plugins,omitempty"`
}

// Plugin is a plugin library: its file name (without folder), for people, and the hash of its
// content, which alone is keyed.
type Plugin struct {
	Name   string `json:"name,omitempty"`
	SHA256 string `json:"sha256"`
}

// Sim is what changes a simulated plan.
type Sim struct {
	// TensorRT is the major the stand-in TensorRT played (10 or 11).
	TensorRT   int    `json:"tensorrt,omitempty"`
	Tactics    int    `json:"tactics,omitempty"`
	Iterations int    `json:"iterations,omitempty"`
	Seed       uint64 `json:"seed,omitempty"`
}

// Key returns the key of p: Prefix and the SHA-256 of p's JSON form, with the plugins'
// file names left out (a plugin library is keyed by its content).
func (p Parts) Key() string {
	p.Schema = Schema
	p.normalize()
	if len(p.Plugins) > 0 {
		byContent := make([]Plugin, len(p.Plugins))
		for i, pl := range p.Plugins {
			byContent[i] = Plugin{SHA256: pl.SHA256}
		}
		p.Plugins = byContent
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("buildkey: encoding parts: %v", err)) // plain data: cannot fail
	}
	return fmt.Sprintf("%s%x", Prefix, sha256.Sum256(b))
}

// Normalized returns p as Key hashes it: schema set, precisions and profile inputs sorted.
func (p Parts) Normalized() Parts {
	p.Schema = Schema
	p.normalize()
	return p
}

func (p *Parts) normalize() {
	prec := append([]string(nil), p.Settings.Precision...)
	sort.Strings(prec)
	p.Settings.Precision = prec
	if p.HardwareCompat == "" {
		p.HardwareCompat = "none"
	}
	profiles := make([]shapes.Profile, len(p.Profiles))
	for i, pr := range p.Profiles {
		in := append([]shapes.Input(nil), pr.Inputs...)
		sort.Slice(in, func(a, b int) bool { return in[a].Name < in[b].Name })
		profiles[i] = shapes.Profile{Inputs: in}
	}
	if len(profiles) == 0 {
		profiles = nil
	}
	p.Profiles = profiles
}

// Valid reports whether s looks like a key of this schema, so it can safely name a folder.
func Valid(s string) bool {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(rest) != 64 {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HashPlugins hashes plugin library files by content. The order is kept: TensorRT loads them
// in the order given.
func HashPlugins(paths []string) ([]Plugin, error) {
	var out []Plugin
	for _, p := range paths {
		sum, err := HashFile(p)
		if err != nil {
			return nil, fmt.Errorf("plugin library %s: %w", p, err)
		}
		out = append(out, Plugin{Name: filepath.Base(p), SHA256: sum})
	}
	return out, nil
}

// HashFile returns "sha256:" and the hex SHA-256 of a file's content.
func HashFile(path string) (string, error) {
	f, _, err := regfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return "", err
	}
	defer f.Close()
	return HashReader(context.Background(), f)
}

// HashReader is HashFile for what r holds; it stops with ctx's cause when ctx ends (a signal,
// a time budget), looking at it between chunks of 1 MiB.
func HashReader(ctx context.Context, r io.Reader) (string, error) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", context.Cause(ctx)
		}
		n, err := r.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			return Sum(h), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// Sum formats a finished SHA-256 as the project writes hashes: "sha256:" and hex digits.
func Sum(h hash.Hash) string { return fmt.Sprintf("sha256:%x", h.Sum(nil)) }

// The builder defaults of TensorRT 10 and 11 (NvInfer.h of 10.16 and 11.1, IBuilderConfig:
// "The default optimization level is 3"; "Default value is ProfilingVerbosity::
// kLAYER_NAMES_ONLY"), which trtbuild's "leave it to TensorRT" values (-1, "") get.
const (
	trtDefaultOptLevel           = 3
	trtDefaultProfilingVerbosity = "layer_names_only"
)

// NormalizeDefaults rewrites settings given as the builder's own default into "not given",
// so an explicit default keys as its absence. It does so only where the default is known for
// the target's builder: TensorRT 10 and 11, whose headers say it. Other versions and the
// simulated builder are left alone (a setting given there keys apart from none, which errs on
// the safe side).
func NormalizeDefaults(s *Settings, target Target) {
	if target.Backend != "tensorrt" || (target.TRTMajor != 10 && target.TRTMajor != 11) {
		return
	}
	if s.OptLevel == trtDefaultOptLevel {
		s.OptLevel = -1
	}
	if s.ProfilingVerbosity == trtDefaultProfilingVerbosity {
		s.ProfilingVerbosity = ""
	}
}
