package worker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/timingcache"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// DefaultSimTensorRT is the TensorRT major a simulated build plays when the request names none:
// the newer of the two the binary drives.
const DefaultSimTensorRT = 11

// simMajor is the major the request's simulated build plays.
func simMajor(req Request) (int, error) {
	switch m := req.Sim.TensorRT; m {
	case 0:
		return DefaultSimTensorRT, nil
	case 10, 11:
		return m, nil
	default:
		return 0, fmt.Errorf("invalid simulated TensorRT %d: use 10 or 11", m)
	}
}

// SimCacheKey is the key of the default timing cache of a simulated build playing TensorRT
// major: the stand-in of each major writes caches of its own.
func SimCacheKey(major int) timingcache.Key {
	return timingcache.Key{Backend: "sim", TensorRT: major * 10000}
}

// installStandIn makes this worker's TensorRT the stand-in compiled into the binary, of the
// major the request plays, set up as its simulation settings say: the build then goes through
// the TensorRT shim as over a real TensorRT. It returns the lines that say so.
func installStandIn(req Request) ([]string, error) {
	major, err := simMajor(req)
	if err != nil {
		return nil, err
	}
	settings := standInSettings(req)
	if info, ok := cgo.InstalledLibrary(trt.LibInfer); ok {
		// A worker serving a second request (tests serve several in one process) plays the
		// stand-in it installed, with this request's settings.
		if got := info.Version / 10000; got != major {
			return nil, fmt.Errorf("this build worker plays TensorRT %d already; a simulated build of TensorRT %d runs in a worker of its own", got, major)
		}
		if err := cgo.ConfigureStandIn(settings); err != nil {
			return nil, err
		}
	} else if err := cgo.InstallStandIn(major, settings); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("simulated build: TensorRT %d's stand-in (no GPU; phases, timings and the plan are synthetic)", major)}, nil
}

// standInSettings are the stand-in's settings (internal/cgo/trtfake/trtfake.hpp) for the
// request's simulation knobs: one setting each.
func standInSettings(req Request) string {
	s := req.Sim
	var parts []string
	add := func(key, value string) {
		// The settings text separates items with ';' and the keep list with ','.
		parts = append(parts, key+"="+strings.NewReplacer(";", "", "\n", "").Replace(value))
	}
	dur := func(key string, d time.Duration) {
		if d > 0 {
			add(key, strconv.FormatInt(int64(d), 10)+"ns")
		}
	}
	num := func(key string, n int) {
		if n > 0 {
			add(key, strconv.Itoa(n))
		}
	}
	flag := func(key string, on bool) {
		if on {
			add(key, "1")
		}
	}
	text := func(key, v string) {
		if v != "" {
			add(key, v)
		}
	}
	frac := func(key string, f *float64) {
		if f != nil {
			add(key, strconv.FormatFloat(*f, 'g', -1, 64))
		}
	}
	dur("step", s.Step)
	if s.Seed != 0 {
		add("seed", strconv.FormatUint(s.Seed, 10))
	}
	num("threads", s.Threads)
	num("tactics", s.Tactics)
	num("iterations", s.Iterations)
	text("fail-phase", s.FailPhase)
	text("early-phase", s.EarlyPhase)
	text("abort-phase", s.AbortPhase)
	frac("fail-at", s.FailAt)
	frac("abort-at", s.AbortAt)
	dur("long-step", s.LongStep)
	flag("ignore-cancel", s.IgnoreCancel)
	dur("silent", s.Silent)
	dur("pre-silent", s.PreSilent)
	dur("post-silent", s.PostSilent)
	flag("flood", s.Flood)
	num("hold-after", s.HoldAfter)
	flag("skip-finish", s.SkipFinishOnStop)
	text("fp16-fail-node", s.FP16FailNode)
	if len(req.KeepFP32) > 0 {
		keep := make([]string, 0, len(req.KeepFP32))
		for _, k := range req.KeepFP32 {
			if k = strings.NewReplacer(",", "", ";", "").Replace(k); k != "" {
				keep = append(keep, k)
			}
		}
		add("keep-fp32", strings.Join(keep, ","))
	}
	text("regime", s.Regime)
	return strings.Join(parts, ";")
}
