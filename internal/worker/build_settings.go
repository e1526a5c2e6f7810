package worker

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// poolBits maps trtexec's memory pool names to the C boundary's pools.
var poolBits = map[string]uint32{
	"tacticSharedMem": cgo.PoolTacticSharedMemory,
	"dlaSRAM":         cgo.PoolDLAManagedSRAM,
	"dlaLocalDRAM":    cgo.PoolDLALocalDRAM,
	"dlaGlobalDRAM":   cgo.PoolDLAGlobalDRAM,
}

// buildSettings maps the request's trtexec build settings, by name, onto the C boundary's.
// The parent has checked the names; an unknown one here is a protocol error.
func buildSettings(req Request) (cgo.BuildSettings, error) {
	var s cgo.BuildSettings
	var err error
	if s.InputFormats, err = ioFormats("input", req.InputFormats); err != nil {
		return s, err
	}
	if s.OutputFormats, err = ioFormats("output", req.OutputFormats); err != nil {
		return s, err
	}
	switch req.PrecisionConstraints {
	case "", "none":
	case "prefer":
		s.PrecisionConstraints = cgo.PrecisionConstraintsPrefer
	case "obey":
		s.PrecisionConstraints = cgo.PrecisionConstraintsObey
	default:
		return s, fmt.Errorf("unknown precision constraints %q", req.PrecisionConstraints)
	}
	for _, lp := range req.LayerPrecisions {
		t, ok := cgo.DataTypes[lp.Type]
		if !ok {
			return s, fmt.Errorf("layer %q: unknown data type %q", lp.Layer, lp.Type)
		}
		s.LayerPrecisions = append(s.LayerPrecisions, cgo.LayerPrecision{Layer: lp.Layer, Type: t})
	}
	switch req.ProfilingVerbosity {
	case "":
	case "layer_names_only":
		s.ProfilingVerbosity = cgo.ProfilingLayerNamesOnly
	case "none":
		s.ProfilingVerbosity = cgo.ProfilingNone
	case "detailed":
		s.ProfilingVerbosity = cgo.ProfilingDetailed
	default:
		return s, fmt.Errorf("unknown profiling verbosity %q", req.ProfilingVerbosity)
	}
	for _, t := range req.TacticSources {
		bit, ok := cgo.TacticSources[strings.TrimLeft(t, "+-")]
		if !ok || len(t) < 2 {
			return s, fmt.Errorf("unknown tactic source %q", t)
		}
		if t[0] == '+' {
			s.TacticSourcesOn |= bit
		} else {
			s.TacticSourcesOff |= bit
		}
	}
	if req.DLACore != nil {
		s.UseDLA, s.DLACore = true, *req.DLACore
	}
	s.GPUFallback, s.StronglyTyped, s.Best = req.GPUFallback, req.StronglyTyped, req.Best
	s.AvgTiming, s.BuildRoute = req.AvgTiming, req.BuildRoute
	for name, size := range req.MemPools {
		bit, ok := poolBits[name]
		if !ok {
			return s, fmt.Errorf("unknown memory pool %q", name)
		}
		if s.Pools == nil {
			s.Pools = map[uint32]uint64{}
		}
		s.Pools[bit] = size
	}
	return s, nil
}

func ioFormats(what string, list []trtexec.IOFormat) ([]cgo.IOFormat, error) {
	var out []cgo.IOFormat
	for _, f := range list {
		t, ok := cgo.DataTypes[f.Type]
		if !ok {
			return nil, fmt.Errorf("%s format %s: unknown data type %q", what, f, f.Type)
		}
		var bits uint32
		for _, name := range f.Formats {
			b, ok := cgo.TensorFormats[name]
			if !ok {
				return nil, fmt.Errorf("%s format %s: unknown tensor format %q", what, f, name)
			}
			bits |= b
		}
		out = append(out, cgo.IOFormat{Type: t, Formats: bits})
	}
	return out, nil
}
