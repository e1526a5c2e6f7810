package worker

import (
	"fmt"
	"strings"

	"github.com/trtbuild/trtbuild/internal/buildreq"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/timingcache"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// DefaultSimTensorRT is the TensorRT major a simulated build plays when the request names none:
// the newer of the two the binary drives.
const DefaultSimTensorRT = buildreq.DefaultSimTensorRT

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
// major the request plays, for its simulated build (cgo.BackendSim: the shim over the stand-in,
// with the request's settings for that build only). It returns the lines that say so.
func installStandIn(req Request) ([]string, error) {
	major, err := simMajor(req)
	if err != nil {
		return nil, err
	}
	if info, ok := cgo.InstalledLibrary(trt.LibInfer); ok {
		// A worker serving a second request (tests serve several in one process) plays the
		// stand-in it installed.
		if !strings.HasPrefix(info.Path, "trtfake ") {
			return nil, fmt.Errorf("this build worker loaded TensorRT from %s; a simulated build runs in a worker of its own", info.Path)
		}
		if got := info.Version / 10000; got != major {
			return nil, fmt.Errorf("this build worker plays TensorRT %d already; a simulated build of TensorRT %d runs in a worker of its own", got, major)
		}
	} else if err := cgo.InstallStandIn(major, ""); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("simulated build: TensorRT %d's stand-in (no GPU; phases, timings and the plan are synthetic)", major)}, nil
}
