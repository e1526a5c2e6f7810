package worker

import (
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/buildreq"
)

// Request is everything the worker needs to run one build (internal/buildreq).
type Request = buildreq.Request

// SimConfig tunes a simulated build (internal/buildreq).
type SimConfig = buildreq.SimConfig

// ModelFolderFD is Request.ModelFolder when the folder is the worker's inherited descriptor 5,
// after the event pipe (3) and the plan file (4).
const ModelFolderFD = buildreq.ModelFolderFD

// absolute makes the request's paths other than the model's absolute against dir (the
// worker's first working folder), before the worker moves into the model's folder.
func absolute(r *Request, dir string) {
	abs := func(p string) string {
		if p == "" || p == "auto" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	r.TimingCache, r.TimingCacheOut, r.TensorRTLib = abs(r.TimingCache), abs(r.TimingCacheOut), abs(r.TensorRTLib)
	for i, p := range r.Plugins {
		r.Plugins[i] = abs(p)
	}
	if r.TensorRT != nil {
		loc := *r.TensorRT
		loc.Dir, loc.LeanDir, loc.CUDARuntime = abs(loc.Dir), abs(loc.LeanDir), abs(loc.CUDARuntime)
		r.TensorRT = &loc
	}
}
