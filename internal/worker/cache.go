package worker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/timingcache"
)

// cacheFile is the timing cache of one build, seen from the worker: which file it is, what
// was loaded from it, and the problems met, which become warning log events (or, with
// --strict-cache, the build's error).
type cacheFile struct {
	path string // the file loaded; "" when the cache is off
	out  string // the file saved to (path, or Request.TimingCacheOut)
	// loaded is the cache read from from (C memory, handed to the next build, which frees it),
	// and stamp the state of that file when it was read.
	loaded *cgo.CBuffer
	from   string
	stamp  timingcache.Stamp
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
	err = c.load(ctx, path)
	switch {
	case errors.As(err, &p):
		return c.problem(fmt.Sprintf("%v; building without it", err))
	case err != nil:
		return c.problem(fmt.Sprintf("timing cache %s cannot be read (%v); building without it: %s", pathtext.Q(path), unwrap(err),
			timingcache.Advice(err, "fix its permissions, or pass --no-timing-cache")))
	}
	c.path, c.out = path, path
	if req.TimingCacheOut != "" {
		c.out = req.TimingCacheOut
	}
	return c, warnings, nil
}

// load reads the cache file at path into C memory, where the builder reads it in place: a
// cache of hundreds of MB is held once, not once by Go and again by C.
func (c *cacheFile) load(ctx context.Context, path string) error {
	c.loaded.Free()
	c.loaded = nil
	stamp, err := timingcache.LoadWith(ctx, path, func(f *os.File, size int64) error {
		buf, err := cgo.ReadCBuffer(f, size)
		c.loaded = buf
		return err
	})
	if err != nil {
		c.loaded.Free()
		c.loaded = nil
		return err
	}
	c.from, c.stamp = path, stamp
	return nil
}

// forBuild hands the loaded cache to a build, which frees it (cgo.Options.TimingCache). A
// second build of the request (the rebuild with a node kept in float32) reads the file again:
// after a save it holds what the first build learned.
func (c *cacheFile) forBuild(ctx context.Context) (*cgo.CBuffer, []string) {
	if c.path == "" {
		return nil, nil
	}
	if c.loaded == nil {
		if err := c.load(ctx, c.from); err != nil {
			return nil, []string{fmt.Sprintf("timing cache %s cannot be read again for the rebuild (%v); it builds without it", pathtext.Q(c.from), unwrap(err))}
		}
	}
	buf := c.loaded
	c.loaded = nil
	return buf, nil
}

// refused names the file in the builder's message for a cache it refused to build with
// (--strict-cache; the message says why and what to do).
func (c *cacheFile) refused(msg string) string {
	return fmt.Sprintf("timing cache %s %s", pathtext.Q(c.from), msg)
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
		major, err := simMajor(req)
		return SimCacheKey(major), err
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
	// When the file is still the one the build was given, it is not read again; otherwise it
	// is read into C memory, merged in place, and the result written straight to the new file.
	since := timingcache.Stamp{}
	if c.from == c.out {
		since = c.stamp
	}
	saved, err := timingcache.SaveWith(ctx, c.out, since, func(disk timingcache.Disk, out *os.File) (bool, error) {
		d := cgo.DiskCache{Given: disk.Unchanged}
		if !disk.Unchanged && disk.File != nil {
			buf, err := cgo.ReadCBuffer(disk.File, disk.Size)
			if err != nil {
				return false, fmt.Errorf("reading the timing cache before merging: %w", err)
			}
			defer buf.Free()
			d.Data = buf
		}
		changed, err := b.WriteTimingCache(d, out)
		var nerr *cgo.Error
		if errors.As(err, &nerr) && nerr.Code == cgo.CodeCacheRejected {
			return false, fmt.Errorf("%w: %s", timingcache.ErrRejected, nerr.Message)
		}
		return changed, err
	})
	switch {
	case err == nil:
		if saved.Written {
			c.from = c.out // a rebuild of the same request starts from what this one learned
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
