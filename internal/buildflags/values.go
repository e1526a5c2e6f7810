package buildflags

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/spf13/pflag"
	"github.com/trtbuild/trtbuild/internal/builder"
)

// trtexecNames maps trtexec's flag spellings to trtbuild's, so a trtexec command line can be
// pasted. Names not listed here are trtbuild's own in another case or without dashes
// (saveEngine, minshapes and SAVEENGINE for save-engine, min-shapes), which covers the rest.
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

// byFold maps each build flag's name and each trtexec spelling, folded (Fold), to the flag's
// name: trtexec users type its flags from memory, in any case (--minshapes, --MinShapes).
var byFold = sync.OnceValue(func() map[string]string {
	f := pflag.NewFlagSet("fold", pflag.ContinueOnError) // without Normalize, which calls this
	Bind(f, &Flags{})
	m := map[string]string{}
	f.VisitAll(func(f *pflag.Flag) { m[Fold(f.Name)] = f.Name })
	for name, flag := range trtexecNames {
		m[Fold(name)] = flag
	}
	return m
})

// Normalize is the pflag NormalizeFunc that accepts trtexec's spellings and any case of a
// build flag's long name (shorthands such as -o and -v are never normalized). Other names are
// converted from camelCase to kebab-case, for the flags a command adds to the build's.
func Normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := trtexecNames[name]; ok {
		return pflag.NormalizedName(n)
	}
	if n, ok := byFold()[Fold(name)]; ok {
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

// addTrtexecFlags binds trtexec's build flags that map onto one builder setting each.
func addTrtexecFlags(f *pflag.FlagSet, t *builder.Trtexec) {
	f.Var(nonEmptyString{&t.InputFormats}, "input-io-formats", "input types and formats, trtexec syntax: fp16:chw,int8:chw4+chw32 (one for all inputs, or one per input)")
	f.Var(nonEmptyString{&t.OutputFormats}, "output-io-formats", "output types and formats, as --input-io-formats")
	f.Var(nonEmptyString{&t.PrecisionConstraints}, "precision-constraints", "TensorRT 10: prefer or obey the --layer-precisions (none: ignore them)")
	f.Var(nonEmptyString{&t.LayerPrecs}, "layer-precisions", "TensorRT 10: per-layer precisions, LAYER:TYPE,… (*:fp16 for all); needs --precision-constraints")
	f.Var(nonEmptyString{&t.ProfilingVerbosity}, "profiling-verbosity", "layer information kept in the engine: layer_names_only, detailed or none")
	f.Var(nonEmptyString{&t.TacticSources}, "tactic-sources", "enable or disable tactic sources: -CUDNN,+CUBLAS,-JIT_CONVOLUTIONS …")
	f.Var(newOptionalInt(&t.DLACore, 0, 63), "use-dla-core", "build for this DLA core (with --allow-gpu-fallback for layers DLA cannot run)")
	f.BoolVar(&t.GPUFallback, "allow-gpu-fallback", false, "with --use-dla-core: run layers DLA cannot run on the GPU")
	f.BoolVar(&t.StronglyTyped, "strongly-typed", false, "strongly typed network: types come from the model (TensorRT 11 always; TensorRT 10: the network flag)")
	f.BoolVar(&t.Best, "best", false, "TensorRT 10: enable every precision (fp16, bf16, int8); TensorRT 11 has no weak typing and refuses it")
	f.Var(nonEmptyString{&t.BuildRoute}, "set-build-route", "TensorRT 11.1+: build with this build route, knobs -NAME=VALUE separated by spaces (trtexec --helpBuildRoute lists them)")
}

// nonEmptyString is a string flag whose value, when given, must not be empty: `--tactic-sources
// ""` or trtexec's `--setBuildRoute=` would otherwise build silently without the setting asked
// for, as if the flag were not there. Empty values are refused, never taken for the default.
type nonEmptyString struct{ p *string }

func (v nonEmptyString) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v nonEmptyString) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("the value is empty; give one, or leave the flag out")
	}
	*v.p = s
	return nil
}

func (v nonEmptyString) Type() string { return "string" }

// durationValue is a duration flag whose errors say how to write a duration: a bare number,
// which Go's time.ParseDuration refuses as "missing unit", gets "use a unit, like 2s or 20m",
// one written right but beyond what a time.Duration holds says it is too long, and a negative
// one, which no duration flag means (a time budget of -5s would be none at all), is refused.
type durationValue struct{ d *time.Duration }

// durationSyntax is what time.ParseDuration accepts: a sign, then numbers with units. A text
// of this form that it refuses is too long for a time.Duration.
var durationSyntax = regexp.MustCompile(`^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$`)

// maxDuration is the longest duration, as a message says it: time.Duration's limit in whole
// hours, about 292 years.
const maxDuration = "2562047h"

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
	if err != nil && durationSyntax.MatchString(t) {
		return fmt.Errorf("%s is too long: the longest duration is %s (about 292 years)", t, maxDuration)
	}
	if err != nil {
		return fmt.Errorf("not a duration: write a number with a unit, like 90s, 20m or 1h30m")
	}
	if d < 0 {
		return fmt.Errorf("%s is negative: give a positive duration, like 20m", t)
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

// AddTensorRTLib adds --tensorrt-lib, the folder the TensorRT libraries are loaded from.
func AddTensorRTLib(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "tensorrt-lib", "", builder.TensorRTLibUsage)
}
