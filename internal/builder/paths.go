package builder

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/timingcache"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// buildPaths are a build's files, every one checked before anything starts.
type buildPaths struct {
	engine outpath.Target
	trace  *outpath.Target
	report *outpath.Target
	// manifest is ENGINE.json, nil with --no-manifest or for an engine written to a device.
	manifest *outpath.Target
	// cache is the timing cache file the parent knows of: the --timing-cache file, or the
	// simulated builder's default; "" when off or decided by the worker (TensorRT's default
	// depends on the GPU).
	cache string
}

// checkBuildPaths applies the output rules (internal/outpath) to every file the build writes,
// and refuses any output that is the model src holds, one of its external data files, a
// plugin, or another output, after symbolic and hard links are resolved. derived says that
// trtbuild named the engine itself (no -o: MODEL.engine), so that it follows no link, as the
// manifest's path does. It returns warnings.
func checkBuildPaths(o *Options, src *onnx.Source, engine string, derived bool, backend string, m *onnx.Model) (*buildPaths, []string, error) {
	var p buildPaths
	var err error
	var outputs []outpath.Named
	// A matrix names its cells' engines and reports itself: they follow no link.
	whole := outpath.WholeFile
	if o.OwnOutputs {
		whole = outpath.Own
	}
	if derived {
		// MODEL.engine, beside a model in a folder others may write: a link planted there
		// would make trtbuild replace the file it leads to.
		if p.engine, err = outpath.Check("the engine", engine, outpath.Own); err != nil {
			return nil, nil, exitcode.Usagef("%s, or give the engine's path with -o", exitcode.OneLine(err))
		}
	} else if p.engine, err = outpath.Check("the engine", engine, whole); err != nil {
		return nil, nil, err
	}
	outputs = append(outputs, outpath.Named{Name: "-o", Target: p.engine})
	if !o.NoManifest && p.engine.Kind != outpath.CharDevice {
		t, err := checkManifestPath(manifest.Path(engine))
		if err != nil {
			return nil, nil, err
		}
		p.manifest = &t
		outputs = append(outputs, outpath.Named{Name: "the manifest", Target: t})
	}
	if o.Trace != "" {
		t, err := outpath.Check("--trace", o.Trace, outpath.LiveStream)
		if err != nil {
			return nil, nil, err
		}
		p.trace = &t
		outputs = append(outputs, outpath.Named{Name: "--trace", Target: t})
	}
	if o.Report != "" {
		t, err := outpath.Check("--report", o.Report, whole)
		if err != nil {
			return nil, nil, err
		}
		p.report = &t
		outputs = append(outputs, outpath.Named{Name: "--report", Target: t})
	}
	var warnings []string
	if !o.NoTimingCache {
		cache := o.TimingCache
		if cache == timingcache.Auto && backend == "sim" {
			if cache, err = timingcache.DefaultPath(worker.SimCacheKey(simTensorRT(o))); err != nil {
				if o.StrictCache {
					return nil, nil, exitcode.Hinted(exitcode.Wrap(exitcode.Usage, err), "pass --timing-cache FILE, or --no-timing-cache (--strict-cache)")
				}
				// No user cache folder (HOME and XDG_CACHE_HOME unset, as in a minimal
				// container): the worker says so and builds without a timing cache, as it
				// does for a cache folder it cannot write.
				cache = timingcache.Auto
			}
		}
		if cache != timingcache.Auto {
			w, err := checkCache(cache, o.StrictCache)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
			p.cache = cache
			for _, c := range []struct{ name, path string }{{"--timing-cache", cache}, {"the timing cache's lock file", cache + ".lock"}} {
				t, err := outpath.Inspect(c.path)
				if err != nil {
					// A missing folder is created when the cache is saved; compare by path.
					t = outpath.Target{Path: c.path, Final: absClean(c.path)}
				}
				outputs = append(outputs, outpath.Named{Name: c.name, Target: t})
			}
		}
	}

	// The model and its external data as the held Source found them: the files that were read.
	inputs := []outpath.Named{{Name: "the model", Target: outpath.Target{Path: src.Path(), Final: absClean(src.Path()), Kind: outpath.Regular, Info: src.Info()}}}
	if m != nil {
		for _, f := range src.ExternalFiles(m) {
			if f.Path != "" && f.Info != nil {
				inputs = append(inputs, outpath.Named{Name: "the model's external data file",
					Target: outpath.Target{Path: f.Path, Final: absClean(f.Path), Kind: outpath.Regular, Info: f.Info}})
			}
		}
	}
	for _, pl := range o.Plugins {
		if t, err := outpath.Inspect(pl); err == nil && t.Info != nil {
			inputs = append(inputs, outpath.Named{Name: "the plugin", Target: t})
		}
	}
	if err := outpath.Conflicts(outputs, inputs); err != nil {
		return nil, nil, exitcode.Wrap(exitcode.Usage, err)
	}
	if err := checkManifestContent(p.manifest); err != nil {
		return nil, nil, err
	}
	return &p, warnings, nil
}

// checkManifestPath checks the manifest's path, a file trtbuild names itself: no link, FIFO,
// device or folder there (internal/outpath, Own), and no file that is not a trtbuild manifest,
// which would be lost.
func checkManifestPath(path string) (outpath.Target, error) {
	t, err := outpath.InspectOwn(path)
	if err != nil {
		return t, exitcode.Usagef("cannot write the manifest %s: %v", q(path), exitcode.PathCause(err))
	}
	if why := t.Refusal(outpath.Own); why != "" {
		return t, exitcode.Usagef("the manifest %s %s", q(path), why).Hintf("or choose another -o, or pass --no-manifest")
	}
	return t, nil
}

// checkManifestContent refuses to replace a file at the manifest's path that is not a
// trtbuild manifest (after Conflicts, which names a file that is an input or an output).
func checkManifestContent(t *outpath.Target) error {
	if t == nil || t.Kind != outpath.Regular {
		return nil
	}
	if m, err := manifest.Read(t.Path); err != nil || m.Key == "" || m.Engine.SHA256 == "" {
		return exitcode.Usagef("the manifest path %s holds a file that is not a trtbuild manifest, which writing the manifest would destroy", q(t.Path)).Hintf("move it, choose another -o, or pass --no-manifest")
	}
	return nil
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// checkCache decides up front what the worker would otherwise find only after the build: a
// cache path that is a link, not a regular file, unreadable, or (with --strict-cache) empty or
// in a folder where it could not be saved is refused now; without --strict-cache an empty
// file is a warning.
func checkCache(path string, strict bool) ([]string, error) {
	err := timingcache.Check(path, strict)
	var p *timingcache.Problem
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &p) && p.Empty && !strict:
		return nil, nil // the worker says so when it loads the cache
	case errors.As(err, &p) && p.Err != nil && !strict && !p.Empty && errors.Is(p.Err, fs.ErrPermission):
		return nil, nil // unreadable: the worker warns and builds without it
	case errors.As(err, &p) && strict:
		return nil, exitcode.Usagef("%v (--strict-cache)", err)
	}
	return nil, exitcode.Wrap(exitcode.Usage, err)
}

// checkPlugins refuses an empty item in --plugins (a stray comma) and a plugin that is not a
// readable regular file, before the worker starts.
func checkPlugins(plugins []string) error {
	for i, p := range plugins {
		if strings.TrimSpace(p) == "" {
			return exitcode.Usagef("--plugins has an empty item (number %d of %d)", i+1, len(plugins)).Hintf("list plugin files separated by commas, with no empty entries")
		}
	}
	for _, p := range plugins {
		if err := regfile.CheckInput("plugin", p); err != nil {
			return err
		}
	}
	return nil
}

// q quotes a file name for a message (internal/pathtext).
func q(name string) string { return pathtext.Q(name) }
