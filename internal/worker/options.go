package worker

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/builder"
	native "github.com/trtbuild/trtbuild/internal/cgo"
)

// nativeOptions maps a build request onto the C boundary's options. The timing cache's bytes
// are the caller's to fill in (see openCache).
func nativeOptions(req builder.Request, plan *os.File) (native.Options, error) {
	o := native.Options{
		ModelPath:      req.Model,
		PlanFile:       plan,
		LogSeverity:    int(req.LogSeverity),
		Device:         req.Device,
		OptLevel:       req.OptLevel,
		MaxAuxStreams:  req.MaxAuxStreams,
		WorkspaceBytes: req.WorkspaceBytes,
		PluginPaths:    req.Plugins,
	}
	for _, p := range []struct {
		on  bool
		bit uint32
	}{{req.FP16, native.PrecisionFP16}, {req.BF16, native.PrecisionBF16}, {req.INT8, native.PrecisionINT8}, {req.FP8, native.PrecisionFP8}} {
		if p.on {
			o.Precision |= p.bit
		}
	}
	for _, f := range []struct {
		on  bool
		bit uint32
	}{
		{req.NoTF32, native.FlagNoTF32}, {req.Refit, native.FlagRefit}, {req.StripWeights, native.FlagStripWeights},
		{req.VersionCompatible, native.FlagVersionCompatible}, {req.ExcludeLeanRuntime, native.FlagExcludeLeanRuntime},
		{req.SparseWeights, native.FlagSparseWeights}, {req.NoTimingCache, native.FlagDisableTimingCache},
	} {
		if f.on {
			o.Flags |= f.bit
		}
	}
	switch req.HardwareCompat {
	case "", "none":
		o.HardwareCompat = 0
	case "ampere+":
		o.HardwareCompat = 1
	case "same-compute-capability":
		o.HardwareCompat = 2
	default:
		return o, fmt.Errorf("unknown hardware compatibility level %q", req.HardwareCompat)
	}
	for _, p := range req.Profiles {
		var prof native.Profile
		for _, in := range p.Inputs {
			prof = append(prof, native.Shape{Input: in.Name, Min: in.Min, Opt: in.Opt, Max: in.Max})
		}
		o.Profiles = append(o.Profiles, prof)
	}
	s := req.Sim
	o.Sim = &native.SimOptions{
		Threads: s.Threads, Tactics: s.Tactics, Iterations: s.Iterations, Step: s.Step,
		Layers: req.Layers, FailPhase: s.FailPhase, EarlyPhase: s.EarlyPhase, AbortPhase: s.AbortPhase,
		Silent: s.Silent, LongStep: s.LongStep, IgnoreCancel: s.IgnoreCancel, Seed: s.Seed,
	}
	return o, nil
}
