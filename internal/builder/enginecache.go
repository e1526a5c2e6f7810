package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/enginecache"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/plan"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// checkEngineCache applies the rules of the engine cache's options, its size and trust, and
// returns them read.
func checkEngineCache(c EngineCache) (limit uint64, trust enginecache.Trust, err error) {
	if c.Dir == "" {
		return 0, trust, nil
	}
	if limit, err = parseSize(c.Size, false); err != nil {
		return 0, trust, exitcode.Usagef("invalid --engine-cache-size: %v", err)
	}
	if trust, err = enginecache.ParseTrust(c.Trust); err != nil {
		return 0, trust, exitcode.Usagef("invalid --engine-cache-trust: %v", err)
	}
	return limit, trust, nil
}

// OpenEngineCache opens the engine cache c names, as a build does (nil, nil for none): a
// service serves from it the engines of the hits that CacheLink could not link.
func OpenEngineCache(c EngineCache) (*enginecache.Cache, error) { return openEngineCache(c) }

// openEngineCache opens the --engine-cache folder; nil when the flag is not given.
func openEngineCache(c EngineCache) (*enginecache.Cache, error) {
	if c.Dir == "" {
		return nil, nil
	}
	limit, trust, err := checkEngineCache(c)
	if err != nil {
		return nil, err
	}
	dir := c.Dir
	if dir == "auto" {
		if dir, err = enginecache.DefaultDir(); err != nil {
			return nil, exitcode.Wrap(exitcode.Usage, err)
		}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, exitcode.Usagef("--engine-cache %s is a file", q(dir)).Hintf("give a folder")
	}
	cache, err := enginecache.Open(dir, int64(limit), trust)
	var unusable *enginecache.UnusableError
	if errors.As(err, &unusable) {
		return nil, err // the caller warns and builds without the cache
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot use --engine-cache %s: %v", q(dir), exitcode.PathCause(err)).Hintf("give a writable folder")
	}
	return cache, nil
}

// keyedBuild is one build with its key: what the engine cache looks up and the manifest says.
type keyedBuild struct {
	cache   *enginecache.Cache // nil without --engine-cache
	target  buildkey.Target    // what the key names the build's TensorRT and GPU as
	src     *onnx.Source       // the model the key was hashed from
	key     string
	parts   buildkey.Parts
	hashes  buildkey.ModelHashes
	model   string
	backend string
	trt     string
	prec    string
	err     error // why there is no key (no manifest then)
	// ready, when not nil, is closed once the fields above are filled: without an engine
	// cache the key is computed while the build runs, so hashing a large model does not delay
	// the build's start.
	ready chan struct{}
}

// knownKey is k's key, "" while it is still being computed or when there is none.
func (k *keyedBuild) knownKey() string {
	if k == nil {
		return ""
	}
	if k.ready != nil {
		select {
		case <-k.ready:
		default:
			return ""
		}
	}
	if k.err != nil {
		return ""
	}
	return k.key
}

// engineCacheLookup runs before the worker starts: it computes the build's key and, on an
// engine cache hit, copies the engine into the build's files (held open since the start),
// puts them in place, shows it (Frontend.Cached), and returns the hit's result (Cached): the
// build is done. ctx ends the lookup
// (a signal, the time budget). An entry that is broken is removed and said so: the build goes
// on, into files that start empty again.
func (p *Plan) engineCacheLookup(ctx context.Context, fe *Frontend, info progress.BuildInfo, files *buildFiles, outs *outputs, w *workerTarget) (*keyedBuild, progress.Result, error) {
	var none progress.Result
	o, src := &p.o, p.src
	cache, err := openEngineCache(o.EngineCache)
	var unusable *enginecache.UnusableError
	if errors.As(err, &unusable) {
		fmt.Fprintf(fe.Diagnostics, "trtbuild: warning: not using the engine cache: %s; building without it\n", pathtext.Line(unusable.Why))
		err = nil
	}
	if err != nil {
		return nil, none, err
	}
	if cache == nil {
		k := &keyedBuild{src: src, ready: make(chan struct{})}
		release := src.Hold() // the build may end before the key is computed
		go func() {
			defer release()
			defer close(k.ready)
			key, err := p.keyedAfter(w, info.Precision)
			if err != nil {
				k.err = err
				return
			}
			// Every field but ready, which afterBuild reads while this runs.
			k.key, k.parts, k.hashes = key.key, key.parts, key.hashes
			k.model, k.backend, k.trt, k.prec = key.model, key.backend, key.trt, key.prec
		}()
		return k, none, nil
	}
	release := src.Hold() // a signal abandons the hashing, which goes on after Run returns
	k, err := abandonable(ctx, func() (*keyedBuild, error) {
		defer release()
		return p.keyed(cache, info.Precision)
	})
	if ctx.Err() != nil {
		cache.Close()
		return nil, none, err // the caller reports the signal or budget
	}
	if err != nil {
		cache.Close()
		return nil, none, exitcode.Usagef("cannot compute the build key for --engine-cache: %v", err)
	}
	start := time.Now()
	look, linked, kept, err := fetchCached(ctx, cache, k.key, o.CacheLink && !files.device, files)
	if err != nil {
		return k, none, exitcode.Wrap(exitcode.Failed, err)
	}
	if !look.Hit {
		if look.Skipped != "" {
			what := "left it there"
			if look.Repaired {
				what = "removed it"
			}
			fmt.Fprintf(fe.Diagnostics, "trtbuild: warning: the engine cache entry %s was not used: %s; %s, building the engine\n", q(cache.Entry(k.key)), look.Skipped, what)
		}
		if err := files.engine.Reset(); err != nil {
			return k, none, exitcode.Wrap(exitcode.Failed, fmt.Errorf("writing the engine %s: %w", q(info.Engine), err))
		}
		return k, none, nil
	}
	if ctx.Err() != nil {
		if linked != nil {
			linked.Close()
			os.Remove(files.engine.Target().Final) //nolint:errcheck // the link made a moment ago
		}
		return k, none, nil // a signal or the budget came during the copy: nothing is put in place
	}
	how, engine := "copied from", info.Engine
	switch {
	case kept:
		how, engine = "kept in", ""
	case linked != nil:
		how = "linked from"
		files.adoptLinked(linked, look.Bytes)
	}
	if !kept {
		if err := k.serve(ctx, fe.Diagnostics, files, look, linked != nil); err != nil {
			return k, none, exitcode.Wrap(exitcode.Failed, err)
		}
	}
	took := time.Since(start)
	what := info.Engine
	if kept {
		what = "the engine"
	}
	msg := fmt.Sprintf("Engine cache hit: %s %s %s in %s (key %s); nothing was built.",
		what, how, cache.Dir(), took.Round(time.Millisecond), buildkey.Short(k.key))
	res := progress.Result{Status: progress.StatusBuilt, Engine: engine, EngineBytes: look.Bytes, Duration: took, Cached: true}
	hit := []progress.Event{{Type: progress.EventLog, Severity: progress.SeverityInfo, Message: msg}}
	// --report and --trace record the hit as they record a build: the build line, the hit,
	// the result.
	if rec := outs.wrap(progress.Discard{}); outs.began {
		rec.Begin(progress.NewState(info, start))
		rec.Handle(hit)
		_ = rec.End(res)
		outs.finish(fe.Diagnostics, nil)
	}
	if fe.Cached != nil {
		if err := fe.Cached(info, start, hit, res); err != nil {
			return k, res, exitcode.Wrap(exitcode.OK, fmt.Errorf("the engine was copied, but writing progress failed: %v", err))
		}
	}
	return k, res, nil
}

// close releases the engine cache, if any.
func (k *keyedBuild) close() {
	if k != nil && k.cache != nil {
		k.cache.Close()
	}
}

// keyed finds the target of the plan's device (its Env asks the machine once) and computes the
// build's key, hashing the model the plan holds once (with Options.ModelHashes when set);
// precision is the build's, for the manifest. The errors of the target carry exit status 1,
// the others are the model's.
func (p *Plan) keyed(cache *enginecache.Cache, precision string) (*keyedBuild, error) {
	return p.keyedOn(p.Request.Device, cache, precision)
}

// keyedOn is keyed for a build on device.
func (p *Plan) keyedOn(device int, cache *enginecache.Cache, precision string) (*keyedBuild, error) {
	target, err := p.env.Target(p.Request.Backend, device, p.Request.TensorRTLib)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Failed, err)
	}
	return p.keyedWith(target, device, cache, precision)
}

// workerTarget is what a TensorRT build's worker says it loaded (its build event), for the key
// of a build without an engine cache, which is computed while the build runs: no probe child
// then loads TensorRT beside the worker.
type workerTarget struct {
	said  chan buildkey.Target // one value, when the worker said it
	ended chan struct{}        // closed when the build's session ended
	built atomic.Bool          // the build succeeded (set before ended is closed)
}

func newWorkerTarget() *workerTarget {
	return &workerTarget{said: make(chan buildkey.Target, 1), ended: make(chan struct{})}
}

// loaded takes the worker's build event (Config.Loaded).
func (w *workerTarget) loaded(info progress.BuildInfo) {
	var t buildkey.Target
	if len(info.Target) == 0 || json.Unmarshal(info.Target, &t) != nil || t.Backend == "" {
		return
	}
	select {
	case w.said <- t:
	default:
	}
}

// take is what the worker said it loaded, if it said it and nobody took it yet.
func (w *workerTarget) take() (buildkey.Target, bool) {
	select {
	case t := <-w.said:
		return t, true
	default:
		return buildkey.Target{}, false
	}
}

// end marks the build's session over.
func (w *workerTarget) end(built bool) {
	w.built.Store(built)
	close(w.ended)
}

// keyedAfter is keyed for a build without an engine cache: a TensorRT build's key is of the
// target its worker says it loaded, which its Env then remembers; a simulated one's needs no
// asking. Only when a build succeeded without its worker saying so is the Env asked.
func (p *Plan) keyedAfter(w *workerTarget, precision string) (*keyedBuild, error) {
	req := p.Request
	if req.Backend != "tensorrt" || w == nil {
		return p.keyed(nil, precision)
	}
	select {
	case t := <-w.said:
		p.env.remember(req.Backend, req.Device, req.TensorRTLib, t)
		return p.keyedWith(t, req.Device, nil, precision)
	case <-w.ended:
		select {
		case t := <-w.said:
			p.env.remember(req.Backend, req.Device, req.TensorRTLib, t)
			return p.keyedWith(t, req.Device, nil, precision)
		default:
		}
		if !w.built.Load() {
			return nil, errors.New("the build did not succeed") // no manifest is written
		}
		return p.keyed(nil, precision)
	}
}

// rekey makes k, the key of a build with an engine cache, the key of what its worker said it
// loaded (w) when that is not what k was computed for (an answer of the Env from before
// TensorRT was upgraded in place, or the GPU changed): the manifest and the cache then describe
// the engine by what built it, and the Env keeps the worker's answer. It returns k otherwise.
func (p *Plan) rekey(k *keyedBuild, w *workerTarget, diag io.Writer) *keyedBuild {
	req := p.Request
	t, said := w.take()
	if k == nil || k.cache == nil || req.Backend != "tensorrt" || !said || t == k.target {
		return k
	}
	p.env.remember(req.Backend, req.Device, req.TensorRTLib, t)
	again, err := p.keyedWith(t, req.Device, k.cache, k.prec)
	if err != nil {
		return k
	}
	fmt.Fprintf(diag, "trtbuild: warning: the build was keyed for TensorRT %s on %s, but its worker loaded TensorRT %s on %s; the engine is described and stored under the key of what built it (%s)\n",
		k.target.TensorRT, k.target.GPU, t.TensorRT, t.GPU, buildkey.Short(again.key))
	return again
}

// keyedWith is keyed for a build on device, whose target is known.
func (p *Plan) keyedWith(target buildkey.Target, device int, cache *enginecache.Cache, precision string) (*keyedBuild, error) {
	req := p.Request
	req.Device = device
	if p.o.KeyTarget != nil && target.Backend == "sim" {
		// A simulated build for a matrix target is keyed as that GPU's, so cells map to keys
		// as they would on the real GPUs.
		target.GPU, target.ComputeCapability, target.MIG = p.o.KeyTarget.GPU, p.o.KeyTarget.ComputeCapability, p.o.KeyTarget.MIG
	}
	hashes, err := p.modelHashes()
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	k := &keyedBuild{cache: cache, target: target, src: p.src, model: p.src.Path(), backend: req.Backend, trt: target.TensorRT, prec: precision}
	if k.parts, k.hashes, err = buildkey.FromHashes(req, target, hashes); err != nil {
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	k.key = k.parts.Key()
	return k, nil
}

// modelHashes hashes the plan's model, once.
func (p *Plan) modelHashes() (buildkey.ModelHashes, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hashes != nil {
		return *p.hashes, nil
	}
	hash := p.o.ModelHashes
	if hash == nil {
		hash = buildkey.HashSource
	}
	h, err := hash(p.src)
	if err != nil {
		return h, err
	}
	p.hashes = &h
	return h, nil
}

// fetchCached looks key up in cache: with link, a hit is hard linked at the engine's path
// (linked, the entry's engine open), or, where no link can be made, kept in the cache (kept:
// nothing is written); else it is copied into the engine's pending file.
func fetchCached(ctx context.Context, cache *enginecache.Cache, key string, link bool, files *buildFiles) (look enginecache.Lookup, linked *os.File, kept bool, err error) {
	if !link {
		look, err = cache.Get(ctx, key, files.engine)
		return look, nil, false, err
	}
	look, linked, err = cache.Link(ctx, key, files.engine.Target().Final)
	if errors.Is(err, enginecache.ErrNoLink) {
		return look, nil, look.Hit, nil
	}
	return look, linked, false, err
}

// serve puts the engine copied from the cache in place (or finds it there, linked), and the
// manifest beside it: the stored one (verified by the cache against the engine), with this
// copy's path and cache use.
func (k *keyedBuild) serve(ctx context.Context, errOut io.Writer, files *buildFiles, look enginecache.Lookup, linked bool) error {
	if !linked {
		if err := files.commitEngine(ctx); err != nil {
			return fmt.Errorf("writing the engine: %w", err)
		}
	}
	if files.manifest == nil {
		return nil // --no-manifest, or a device: nothing to describe
	}
	m, err := manifest.Parse(look.Manifest)
	if err != nil {
		return err // the cache checked it
	}
	m.Model.Path = k.model
	m.Engine.File = filepath.Base(files.engine.Target().Path)
	m.EngineCache = &manifest.CacheUse{Dir: k.cache.Dir(), Hit: true, ServedAt: time.Now().UTC().Truncate(time.Millisecond)}
	if _, err := files.putManifest(m); err != nil {
		fmt.Fprintf(errOut, "trtbuild: warning: %v\n", err)
	}
	return nil
}

// sameBytes hashes the model again and says whether its bytes are still the ones the key
// was computed from. Writes through a shared mapping change a file's bytes without moving its
// stamp until the kernel writes them back, which Source.Changed cannot see.
func (k *keyedBuild) sameBytes() error {
	again, err := buildkey.HashSource(k.src) // never a memo (Options.ModelHashes): the bytes now
	if err != nil {
		return fmt.Errorf("the model could not be hashed again to check it: %w", err)
	}
	if again.Graph != k.hashes.Graph || again.Weights != k.hashes.Weights || again.Bytes != k.hashes.Bytes || again.ExternalBytes != k.hashes.ExternalBytes {
		return fmt.Errorf("the model %s changed while it was being built (its bytes are not the ones its key was computed from, though its file times did not move, as a write through a shared mapping leaves them)", pathtext.Q(k.model))
	}
	return nil
}

// manifest describes the engine of this build.
func (k *keyedBuild) manifest(file string, bytes int64, sum string) *manifest.Manifest {
	return &manifest.Manifest{
		Key: k.key, Parts: k.parts,
		Model:    manifest.Model{Path: k.model, Bytes: k.hashes.Bytes, ExternalBytes: k.hashes.ExternalBytes},
		Engine:   manifest.Engine{File: filepath.Base(file), Bytes: bytes, SHA256: sum},
		Trtbuild: Version, Backend: k.backend, TensorRT: k.trt, Precision: k.prec,
	}
}

// afterBuild runs after a successful build has committed the engine: it writes the manifest
// beside it and stores the engine in the cache, both from the file the worker wrote, as hashed
// before it had a name (never by its path, which another build or user may have replaced
// since). ctx ends the work (a signal, the time budget). Problems are warnings: the engine is
// built.
func (k *keyedBuild) afterBuild(ctx context.Context, diag io.Writer, res progress.Result, files *buildFiles) {
	if k == nil || files.device {
		return // -o /dev/null: no file to describe, or to cache
	}
	if k.ready != nil {
		select {
		case <-k.ready: // ready: the manifest is written even when ctx has ended
		default:
			select {
			case <-k.ready:
			case <-ctx.Done():
				return // the caller reports the signal or budget
			}
		}
	}
	if k.err != nil {
		fmt.Fprintf(diag, "trtbuild: warning: no manifest written: %v\n", k.err)
		return
	}
	// The key is of the bytes the held model had when they were hashed (without an engine
	// cache, while the worker built): the manifest and the cache describe the engine by that
	// key only if the model stayed what the worker read, from its opening to now.
	if err := k.src.Changed(); err != nil {
		fmt.Fprintf(diag, "trtbuild: warning: no manifest written and nothing stored in the engine cache: %s; the key may not be the engine's\n", pathtext.Line(err.Error()))
		return
	}
	m := k.manifest(files.engine.Target().Path, files.size, files.sum)
	m.FromResult(res, time.Now())
	if h, err := plan.Read(io.NewSectionReader(files.built, 0, files.size)); err == nil && h.TensorRT != "" {
		m.TensorRT = h.TensorRT // what the plan says wrote it, build number included
	}
	if k.cache != nil {
		m.EngineCache = &manifest.CacheUse{Dir: k.cache.Dir(), Hit: false}
	}
	if files.manifest != nil {
		if _, err := files.putManifest(m); err != nil {
			fmt.Fprintf(diag, "trtbuild: warning: %v\n", err)
		}
	}
	if k.cache == nil || ctx.Err() != nil {
		return
	}
	stored := *m
	stored.EngineCache = nil
	data, err := manifest.Marshal(&stored)
	var put enginecache.Stored
	if err == nil {
		var st os.FileInfo
		if st, err = files.built.Stat(); err == nil {
			put, err = k.cache.Put(ctx, k.key, enginecache.Engine{File: files.built, Bytes: files.size, SHA256: files.sum, Perm: st.Mode().Perm()}, data)
		}
	}
	if err != nil {
		fmt.Fprintf(diag, "trtbuild: warning: the engine was not stored in the engine cache: %v\n", err)
		return
	}
	if put.Replaced != "" {
		fmt.Fprintf(diag, "trtbuild: warning: replaced the engine cache entry %s, which could not be used: %s\n", q(k.cache.Entry(k.key)), put.Replaced)
	}
	if put.Stale > 0 {
		fmt.Fprintf(diag, "trtbuild: removed %d temporary engine cache entries (%s) left by killed builds\n", put.Stale, progress.FormatBytes(put.StaleBytes))
	}
}
