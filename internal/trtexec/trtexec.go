// Package trtexec reads the values of trtexec's build flags that trtbuild takes
// (--inputIOFormats, --outputIOFormats, --layerPrecisions, --precisionConstraints,
// --profilingVerbosity, --tacticSources, --setBuildRoute), in trtexec's syntax, and names the
// trtexec flags trtbuild does not take, with the reason and what to use instead.
//
// Every error is one line that names the problem and the fix.
package trtexec

import (
	"fmt"
	"sort"
	"strings"
)

// DataTypes are trtexec's data type names, in its order.
var DataTypes = []string{"fp32", "fp16", "bf16", "int8", "fp8", "int32", "int64", "bool", "uint8", "int4"}

// TensorFormats are trtexec's tensor format names, in its order ("chw" is TensorRT's kLINEAR).
var TensorFormats = []string{"chw", "chw2", "chw4", "hwc8", "chw16", "chw32", "dhwc8", "cdhw32", "hwc", "dhwc", "dla_linear", "hwc16", "dla_hwc4"}

// TacticSources are trtexec's tactic source names, in lower case. cublas, cublas_lt and cudnn
// exist in TensorRT 10 only.
var TacticSources = []string{"cublas", "cublas_lt", "cudnn", "edge_mask_convolutions", "jit_convolutions"}

// ProfilingVerbosities are the values of --profilingVerbosity.
var ProfilingVerbosities = []string{"layer_names_only", "detailed", "none"}

// PrecisionConstraints are the values of --precisionConstraints.
var PrecisionConstraints = []string{"none", "prefer", "obey"}

// IOFormat is one input's or output's type and allowed formats, as in fp16:chw or
// int8:chw4+chw32.
type IOFormat struct {
	Type    string   `json:"type"`
	Formats []string `json:"formats"`
}

// String writes f in trtexec's syntax.
func (f IOFormat) String() string { return f.Type + ":" + strings.Join(f.Formats, "+") }

// LayerPrecision is one layer's precision, as in conv1:fp16; Layer "*" means every layer.
type LayerPrecision struct {
	Layer string `json:"layer"`
	Type  string `json:"type"`
}

// ParseIOFormats reads a --inputIOFormats or --outputIOFormats value: TYPE:FORMAT[+FORMAT…]
// entries joined by ','.
func ParseIOFormats(flag, s string) ([]IOFormat, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s is empty; give TYPE:FORMAT entries such as fp16:chw (one for all, or one per tensor, joined by ',')", flag)
	}
	var out []IOFormat
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		typ, formats, ok := strings.Cut(e, ":")
		if !ok {
			return nil, fmt.Errorf("%s entry %q has no ':'; write TYPE:FORMAT, such as fp16:chw or int8:chw32", flag, e)
		}
		typ = strings.ToLower(strings.TrimSpace(typ))
		if !contains(DataTypes, typ) {
			return nil, fmt.Errorf("%s entry %q: unknown type %q; use one of %s", flag, e, typ, strings.Join(DataTypes, ", "))
		}
		f := IOFormat{Type: typ}
		for _, name := range strings.Split(formats, "+") {
			name = strings.ToLower(strings.TrimSpace(name))
			if !contains(TensorFormats, name) {
				return nil, fmt.Errorf("%s entry %q: unknown format %q; use one of %s (several joined by '+')", flag, e, name, strings.Join(TensorFormats, ", "))
			}
			if contains(f.Formats, name) {
				return nil, fmt.Errorf("%s entry %q names format %q twice; give each once", flag, e, name)
			}
			f.Formats = append(f.Formats, name)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseLayerPrecisions reads a --layerPrecisions value: LAYER:TYPE entries joined by ','.
// LAYER is everything before the last ':' (layer names often hold ':' or '/'); it may be
// single-quoted, and "*" means every layer. A layer given twice is an error.
func ParseLayerPrecisions(s string) ([]LayerPrecision, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--layerPrecisions is empty; give LAYER:TYPE entries such as conv1:fp16 or *:fp32")
	}
	var out []LayerPrecision
	seen := map[string]bool{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		i := strings.LastIndexByte(e, ':')
		if i < 0 {
			return nil, fmt.Errorf("--layerPrecisions entry %q has no ':'; write LAYER:TYPE, such as conv1:fp16 or *:fp32", e)
		}
		layer, typ := strings.TrimSpace(e[:i]), strings.ToLower(strings.TrimSpace(e[i+1:]))
		if len(layer) >= 2 && layer[0] == '\'' && layer[len(layer)-1] == '\'' {
			layer = layer[1 : len(layer)-1]
		}
		if layer == "" {
			return nil, fmt.Errorf("--layerPrecisions entry %q has no layer name; write LAYER:TYPE, or *:TYPE for every layer", e)
		}
		if strings.IndexByte(layer, 0) >= 0 {
			return nil, fmt.Errorf("--layerPrecisions entry %q: a layer name cannot hold a NUL byte", e)
		}
		if !contains(DataTypes, typ) {
			return nil, fmt.Errorf("--layerPrecisions entry %q: unknown type %q; use one of %s", e, typ, strings.Join(DataTypes, ", "))
		}
		if seen[layer] {
			return nil, fmt.Errorf("--layerPrecisions names layer %q twice; give each layer once", layer)
		}
		seen[layer] = true
		out = append(out, LayerPrecision{Layer: layer, Type: typ})
	}
	return out, nil
}

// ParsePrecisionConstraints reads --precisionConstraints: none, prefer or obey. "none" is
// returned as "".
func ParsePrecisionConstraints(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if !contains(PrecisionConstraints, v) {
		return "", fmt.Errorf("invalid --precisionConstraints %q: use prefer (keep layer precisions where possible), obey (fail otherwise) or none", s)
	}
	if v == "none" {
		return "", nil
	}
	return v, nil
}

// ParseProfilingVerbosity reads --profilingVerbosity: layer_names_only, detailed or none, and
// trtexec's deprecated spellings default (layer_names_only) and verbose (detailed).
func ParseProfilingVerbosity(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "default":
		return "layer_names_only", nil
	case "verbose":
		return "detailed", nil
	}
	if !contains(ProfilingVerbosities, v) {
		return "", fmt.Errorf("invalid --profilingVerbosity %q: use layer_names_only, detailed or none", s)
	}
	return v, nil
}

// ParseTacticSources reads --tacticSources: entries +NAME (enable) or -NAME (disable) joined
// by ','. Names are case-insensitive. It returns the entries in lower case, sorted, each once.
func ParseTacticSources(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--tacticSources is empty; give entries such as -CUDNN,+CUBLAS")
	}
	sign := map[string]byte{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" || (e[0] != '+' && e[0] != '-') {
			return nil, fmt.Errorf("--tacticSources entry %q needs a + (enable) or - (disable) before the name, as in -CUDNN", e)
		}
		name := strings.ToLower(e[1:])
		if !contains(TacticSources, name) {
			return nil, fmt.Errorf("--tacticSources entry %q: unknown source %q; use %s", e, e[1:], strings.ToUpper(strings.Join(TacticSources, ", ")))
		}
		if prev, ok := sign[name]; ok && prev != e[0] {
			return nil, fmt.Errorf("--tacticSources both enables and disables %s; give it once", strings.ToUpper(name))
		}
		sign[name] = e[0]
	}
	out := make([]string, 0, len(sign))
	for name, sg := range sign {
		out = append(out, string(sg)+name)
	}
	sort.Strings(out)
	return out, nil
}

// ParseBuildRoute reads --setBuildRoute, TensorRT 11's build route: knobs -NAME=VALUE
// separated by blanks, such as "-conv_use_long_w=off -kgen:codegen:cuda_tile=2" (the form of
// IBuilderConfig::setBuildRoute and of the routes trtexec --tuneBuildRoutes reports). It
// returns the knobs joined by single spaces; which knobs exist only TensorRT knows.
func ParseBuildRoute(s string) (string, error) {
	knobs := strings.Fields(s)
	if len(knobs) == 0 {
		return "", fmt.Errorf("--setBuildRoute is empty; give knobs -NAME=VALUE separated by spaces, such as -conv_use_long_w=off (trtexec --helpBuildRoute lists them)")
	}
	for _, k := range knobs {
		name, value, ok := strings.Cut(k, "=")
		if !ok || len(name) < 2 || name[0] != '-' || value == "" || strings.ContainsAny(k, "'\"") {
			return "", fmt.Errorf("--setBuildRoute knob %q is not -NAME=VALUE; give knobs such as -conv_use_long_w=off, separated by spaces (trtexec --helpBuildRoute lists them)", k)
		}
		for _, r := range k {
			if r < 0x20 || r == 0x7f {
				return "", fmt.Errorf("--setBuildRoute knob %q holds a control character; give knobs such as -conv_use_long_w=off", k)
			}
		}
	}
	return strings.Join(knobs, " "), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
