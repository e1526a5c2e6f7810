package worker

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/cgo"
)

// nativeOptions maps a build request onto the C boundary's options. The timing cache's bytes
// are the caller's to fill in (see openCache).
func nativeOptions(req Request, plan *os.File) (cgo.Options, error) {
	o := cgo.Options{
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
	}{{req.FP16, cgo.PrecisionFP16}, {req.BF16, cgo.PrecisionBF16}, {req.INT8, cgo.PrecisionINT8}, {req.FP8, cgo.PrecisionFP8}} {
		if p.on {
			o.Precision |= p.bit
		}
	}
	for _, f := range []struct {
		on  bool
		bit uint32
	}{
		{req.NoTF32, cgo.FlagNoTF32}, {req.Refit, cgo.FlagRefit}, {req.StripWeights, cgo.FlagStripWeights},
		{req.VersionCompatible, cgo.FlagVersionCompatible}, {req.ExcludeLeanRuntime, cgo.FlagExcludeLeanRuntime},
		{req.SparseWeights, cgo.FlagSparseWeights}, {req.NoTimingCache, cgo.FlagDisableTimingCache},
		{req.StrictCache && !req.NoTimingCache, cgo.FlagStrictTimingCache},
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
	o.Profiles = req.Profiles
	settings, err := buildSettings(req)
	if err != nil {
		return o, err
	}
	o.BuildSettings = settings
	s := req.Sim
	o.Sim = &cgo.SimOptions{
		TensorRT: s.TensorRT, Threads: s.Threads, Tactics: s.Tactics, Iterations: s.Iterations, Step: s.Step,
		FailPhase: s.FailPhase, EarlyPhase: s.EarlyPhase, AbortPhase: s.AbortPhase, FailAt: s.FailAt, AbortAt: s.AbortAt,
		Silent: s.Silent, LongStep: s.LongStep, IgnoreCancel: s.IgnoreCancel, Seed: s.Seed,
		Flood: s.Flood, PreSilent: s.PreSilent, PostSilent: s.PostSilent, SkipFinishOnStop: s.SkipFinishOnStop,
		FP16FailNode: s.FP16FailNode, KeepFP32: req.KeepFP32, HoldAfter: s.HoldAfter, Regime: s.Regime, TimeCallbacks: s.TimeCallbacks,
	}
	return o, nil
}
