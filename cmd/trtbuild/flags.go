package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/trtexec"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// trtexecNames maps trtexec's flag spellings to trtbuild's, so a trtexec command line can be
// pasted. Names not listed here are converted from camelCase to kebab-case (saveEngine →
// save-engine, minShapes → min-shapes), which covers the rest.
var trtexecNames = map[string]string{
	"builderOptimizationLevel":   "opt-level",
	"hardwareCompatibilityLevel": "hardware-compat",
	"vc":                         "version-compatible",
	"noTF32":                     "no-tf32",
	"timingCacheFile":            "timing-cache",
	"noBuilderCache":             "no-timing-cache",
	"staticPlugins":              "plugins",
	"dynamicPlugins":             "plugins",
	"memPoolSize":                "mem-pool-size",
}

// normalizeFlagName is the pflag NormalizeFunc that accepts trtexec's spellings.
func normalizeFlagName(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := trtexecNames[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(kebab(name))
}

// kebab turns camelCase into kebab-case; names already in kebab-case are unchanged.
func kebab(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(runes[i-1]) || unicode.IsDigit(runes[i-1]))
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if i > 0 && (prevLower || nextLower) && runes[i-1] != '-' {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

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

// memPoolNames are trtexec's --memPoolSize pools: the workspace and the others by trtexec's name.
var memPoolNames = []string{"workspace", "tacticSharedMem", "dlaSRAM", "dlaLocalDRAM", "dlaGlobalDRAM"}

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
		for _, n := range memPoolNames {
			if strings.EqualFold(n, pool) {
				canon = n
			}
		}
		if canon == "" {
			return 0, nil, fmt.Errorf("--memPoolSize pool %q is unknown: use %s", pool, strings.Join(memPoolNames, ", "))
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

// optionalInt is an integer flag whose unset state means "the builder's default"; unlike an
// IntVar with a sentinel, --help shows no fake default.
type optionalInt struct {
	v        *int // -1 while unset
	min, max int
	set      bool
}

func newOptionalInt(p *int, min, max int) *optionalInt {
	*p = -1
	return &optionalInt{v: p, min: min, max: max}
}

func (o *optionalInt) String() string {
	if o == nil || o.v == nil || !o.set {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	if n < o.min || n > o.max {
		return fmt.Errorf("use %d to %d", o.min, o.max)
	}
	*o.v, o.set = n, true
	return nil
}

func (o *optionalInt) Type() string { return "int" }

// trtexecFlags are trtexec's build flags that map onto one builder setting each, beyond the
// ones trtbuild has its own names for. Their values are trtexec's syntax (package trtexec).
type trtexecFlags struct {
	inputFormats, outputFormats       string
	precisionConstraints, layerPrecs  string
	profilingVerbosity, tacticSources string
	dlaCore                           int // -1: none
	gpuFallback, stronglyTyped, best  bool
}

func addTrtexecFlags(f *pflag.FlagSet, t *trtexecFlags) {
	f.StringVar(&t.inputFormats, "input-io-formats", "", "input types and formats, trtexec syntax: fp16:chw,int8:chw4+chw32 (one for all inputs, or one per input)")
	f.StringVar(&t.outputFormats, "output-io-formats", "", "output types and formats, as --input-io-formats")
	f.StringVar(&t.precisionConstraints, "precision-constraints", "", "TensorRT 10: prefer or obey the --layer-precisions (none: ignore them)")
	f.StringVar(&t.layerPrecs, "layer-precisions", "", "TensorRT 10: per-layer precisions, LAYER:TYPE,… (*:fp16 for all); needs --precision-constraints")
	f.StringVar(&t.profilingVerbosity, "profiling-verbosity", "", "layer information kept in the engine: layer_names_only, detailed or none")
	f.StringVar(&t.tacticSources, "tactic-sources", "", "enable or disable tactic sources: -CUDNN,+CUBLAS,-JIT_CONVOLUTIONS …")
	f.Var(newOptionalInt(&t.dlaCore, 0, 63), "use-dla-core", "build for this DLA core (with --allow-gpu-fallback for layers DLA cannot run)")
	f.BoolVar(&t.gpuFallback, "allow-gpu-fallback", false, "with --use-dla-core: run layers DLA cannot run on the GPU")
	f.BoolVar(&t.stronglyTyped, "strongly-typed", false, "strongly typed network: types come from the model (TensorRT 11 always; TensorRT 10: the network flag)")
	f.BoolVar(&t.best, "best", false, "TensorRT 10: enable every precision (fp16, bf16, int8); TensorRT 11 has no weak typing and refuses it")
}

// applyTrtexecFlags checks t and copies it into req. warnings are for stderr.
func applyTrtexecFlags(t trtexecFlags, req *worker.Request) (warnings []string, err error) {
	if t.inputFormats != "" {
		if req.InputFormats, err = trtexec.ParseIOFormats("--inputIOFormats", t.inputFormats); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if t.outputFormats != "" {
		if req.OutputFormats, err = trtexec.ParseIOFormats("--outputIOFormats", t.outputFormats); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if t.precisionConstraints != "" {
		if req.PrecisionConstraints, err = trtexec.ParsePrecisionConstraints(t.precisionConstraints); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if t.layerPrecs != "" {
		if req.LayerPrecisions, err = trtexec.ParseLayerPrecisions(t.layerPrecs); err != nil {
			return nil, exitcode.Usagef("%v", err)
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
	if t.profilingVerbosity != "" {
		if req.ProfilingVerbosity, err = trtexec.ParseProfilingVerbosity(t.profilingVerbosity); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if t.tacticSources != "" {
		if req.TacticSources, err = trtexec.ParseTacticSources(t.tacticSources); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if t.dlaCore >= 0 {
		core := t.dlaCore
		req.DLACore = &core
	} else if t.gpuFallback {
		return nil, exitcode.Usagef("--allowGPUFallback needs --useDLACore N, the DLA core to build for; without DLA every layer runs on the GPU anyway")
	}
	req.GPUFallback = t.gpuFallback
	if t.best && t.stronglyTyped {
		return nil, exitcode.Usagef("--best and --stronglyTyped contradict each other: a strongly typed network takes its precisions from the model, --best lets TensorRT 10 choose any; give one of them")
	}
	req.StronglyTyped, req.Best = t.stronglyTyped, t.best
	if t.best {
		warnings = append(warnings, "--best enables fp16, bf16 and int8 on TensorRT 10 (weak typing, deprecated there); TensorRT 11 has no weak typing and refuses it: use --fp16 or --bf16, which convert the model, or a Q/DQ-quantized model")
	}
	return warnings, nil
}

// durationValue is a duration flag whose errors say how to write a duration: a bare number,
// which Go's time.ParseDuration refuses as "missing unit", gets "use a unit, like 2s or 20m".
type durationValue struct{ d *time.Duration }

func newDuration(p *time.Duration, def time.Duration) durationValue {
	*p = def
	return durationValue{p}
}

// String is "" for zero, so that --help shows no "(default 0s)".
func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	t := strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(t, 64); err == nil && t != "0" {
		return fmt.Errorf("a duration needs a unit: use a unit, like %ss or %sm", t, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return fmt.Errorf("not a duration: write a number with a unit, like 90s, 20m or 1h30m")
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }
