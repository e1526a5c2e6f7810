package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/timingcache"
)

// cacheFile is the timing cache of one build, seen from the worker: which file it is, what
// was loaded from it, and the problems met, which become warning log events (or, with
// --strict-cache, the build's error).
type cacheFile struct {
	path   string // the file loaded; "" when the cache is off
	out    string // the file saved to (path, or Request.TimingCacheOut)
	loaded []byte
	strict bool
}

// openCache resolves and loads the build's timing cache. Problems are returned as warnings
// and the build goes on without a cache; with StrictCache the first one is the error.
func openCache(ctx context.Context, req Request) (*cacheFile, []string, error) {
	c := &cacheFile{strict: req.StrictCache}
	if req.NoTimingCache {
		return c, nil, nil
	}
	path, err := req.TimingCache, error(nil)
	if path == "" || path == timingcache.Auto {
		// Only the default file depends on the TensorRT version and the GPU.
		var key timingcache.Key
		if key, err = cacheKey(req); err == nil {
			path, err = timingcache.DefaultPath(key)
		}
	}
	if err != nil {
		return c.problem(fmt.Sprintf("no timing cache: %v; pass --timing-cache FILE, or --no-timing-cache", err))
	}
	var warnings []string
	var p *timingcache.Problem
	err = timingcache.Check(path, req.StrictCache)
	switch {
	case errors.As(err, &p) && p.Empty && !req.StrictCache:
		warnings = append(warnings, fmt.Sprintf("timing cache %s is empty; this build starts a new one there", pathtext.Q(path)))
	case err != nil && req.StrictCache:
		// Decided before the build, not after it.
		return c.problem(err.Error())
	}
	p = nil
	data, err := timingcache.Load(ctx, path)
	switch {
	case errors.As(err, &p):
		return c.problem(fmt.Sprintf("%v; building without it", err))
	case err != nil:
		return c.problem(fmt.Sprintf("timing cache %s cannot be read (%v); building without it: %s", pathtext.Q(path), unwrap(err),
			timingcache.Advice(err, "fix its permissions, or pass --no-timing-cache")))
	}
	c.path, c.out, c.loaded = path, path, data
	if req.TimingCacheOut != "" {
		c.out = req.TimingCacheOut
	}
	return c, warnings, nil
}

func (c *cacheFile) problem(msg string) (*cacheFile, []string, error) {
	if c.strict {
		return c, nil, errors.New(msg + " (--strict-cache)")
	}
	return c, []string{msg}, nil
}

// cacheKey names the builder a cache belongs to. Only TensorRT needs asking: its version and the
// GPU decide whether a cache can be used.
func cacheKey(req Request) (timingcache.Key, error) {
	if req.Backend != "tensorrt" {
		return timingcache.Key{Backend: "sim"}, nil
	}
	v, err := cgo.Version(cgo.BackendTensorRT, req.Device)
	if err != nil {
		return timingcache.Key{}, fmt.Errorf("cannot tell the TensorRT version and GPU for --timing-cache auto: %w", err)
	}
	// The build number too: NVIDIA requires major.minor.patch.build to match for a timing cache.
	return timingcache.Key{Backend: "tensorrt", TensorRT: v.Loaded, Build: v.LoadedBuild, GPU: v.DeviceName, ComputeMajor: v.ComputeMajor, ComputeMinor: v.ComputeMinor}, nil
}

// save merges what the build learned into the cache file, also after a cancelled or failed
// build (the builder keeps what it measured). The builder's merge refuses a file that is not a
// cache it can read (the one it was given at the start, or one another program wrote since):
// such a file is left alone. After a save, the merged cache is what the next build of the same
// request loads (the rebuild with a node kept in float32). It returns warnings, or with StrictCache the error that must fail
// the build.
func (c *cacheFile) save(ctx context.Context, b *cgo.Build) ([]string, error) {
	if c.path == "" {
		return nil, nil
	}
	var merged []byte
	_, err := timingcache.Save(ctx, c.out, func(disk []byte) ([]byte, error) {
		m, err := b.MergeTimingCache(disk)
		var nerr *cgo.Error
		if errors.As(err, &nerr) && nerr.Code == cgo.CodeCacheRejected {
			return nil, fmt.Errorf("%w: %s", timingcache.ErrRejected, nerr.Message)
		}
		merged = m
		return m, err
	})
	switch {
	case err == nil:
		if merged != nil {
			c.loaded = merged // a rebuild of the same request starts from what this one learned
		}
		return nil, nil
	case errors.Is(err, timingcache.ErrRejected):
		_, warn, err := c.problem(fmt.Sprintf("timing cache %s is corrupt or was made by another TensorRT version or GPU; it is left as it is, and what this build learned is not saved: delete it, or pass another --timing-cache file", pathtext.Q(c.out)))
		return warn, err
	default:
		var p *timingcache.Problem
		if errors.As(err, &p) {
			_, warn, err := c.problem(fmt.Sprintf("%v; what this build learned is not saved", err))
			return warn, err
		}
		_, warn, err := c.problem(fmt.Sprintf("timing cache not saved to %s: %v; %s", pathtext.Q(c.out), unwrap(err),
			timingcache.Advice(err, "make its folder writable, or pass --no-timing-cache")))
		return warn, err
	}
}

// unwrap drops the wrapping context of an error for a one-line message: the innermost error
// that still names something (a path error's cause, say).
func unwrap(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
