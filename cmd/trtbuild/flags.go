package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/pflag"
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
// (base 2, case-insensitive). A bare number is MiB, as in trtexec's --memPoolSize.
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
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
	if bytes < 1 || bytes >= math.MaxUint64/2 || math.IsInf(bytes, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return uint64(bytes), nil
}

// parseMemPoolSize reads trtexec's --memPoolSize=workspace:1024,… and returns the workspace.
func parseMemPoolSize(s string) (uint64, error) {
	var ws uint64
	for _, part := range strings.Split(s, ",") {
		pool, size, ok := strings.Cut(part, ":")
		if !ok {
			return 0, fmt.Errorf("--memPoolSize %q: write pool:size, like workspace:4G", part)
		}
		if strings.TrimSpace(pool) != "workspace" {
			return 0, fmt.Errorf("--memPoolSize pool %q is not supported; trtbuild sets only the workspace pool (--workspace)", pool)
		}
		v, err := parseSize(size)
		if err != nil {
			return 0, fmt.Errorf("--memPoolSize: %w", err)
		}
		ws = v
	}
	return ws, nil
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
