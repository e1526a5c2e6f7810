package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/enginecache"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/plan"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/tui"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// engineCacheFlags are --engine-cache, --engine-cache-size and --engine-cache-trust.
type engineCacheFlags struct {
	dir, size, trust string
}

func addEngineCacheFlags(f *pflag.FlagSet, c *engineCacheFlags) {
	f.StringVar(&c.dir, "engine-cache", "", "reuse engines from, and store new ones in, this `DIR`, by build key (see trtbuild key); auto: the user cache folder's trtbuild/engines")
	f.StringVar(&c.size, "engine-cache-size", "20G", "with --engine-cache: remove the least recently used engines beyond this size")
	f.StringVar(&c.trust, "engine-cache-trust", "self", "with --engine-cache: whose entries are served: self, group (every member of the cache folder's group), user names or ids, comma-separated (see docs/engine-cache.md)")
}

// openEngineCache opens the --engine-cache folder; nil when the flag is not given.
func openEngineCache(c engineCacheFlags) (*enginecache.Cache, error) {
	if c.dir == "" {
		return nil, nil
	}
	limit, err := parseSize(c.size, false)
	if err != nil {
		return nil, exitcode.Usagef("invalid --engine-cache-size: %v", err)
	}
	trust, err := enginecache.ParseTrust(c.trust)
	if err != nil {
		return nil, exitcode.Usagef("invalid --engine-cache-trust: %v", err)
	}
	dir := c.dir
	if dir == "auto" {
		if dir, err = enginecache.DefaultDir(); err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, exitcode.Usagef("--engine-cache %s is a file; give a folder", q(dir))
	}
	cache, err := enginecache.Open(dir, int64(limit), trust)
	var unusable *enginecache.UnusableError
	if errors.As(err, &unusable) {
		return nil, err // the caller warns and builds without the cache
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot use --engine-cache %s: %v; give a writable folder", q(dir), unwrapPathError(err))
	}
	return cache, nil
}

// keyedBuild is one build with its key: what the engine cache looks up and the manifest says.
type keyedBuild struct {
	cache   *enginecache.Cache // nil without --engine-cache
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

// engineCacheLookup runs before the worker starts: it computes the build's key and, on an
// engine cache hit, copies the engine into the build's files (held open since the start),
// puts them in place, says so, and returns hit true: the build is done. ctx ends the lookup
// (a signal, the time budget). An entry that is broken is removed and said so: the build goes
// on, into files that start empty again.
func engineCacheLookup(ctx context.Context, s *streams, o *buildOptions, mode tui.Mode, req worker.Request, info progress.BuildInfo, files *buildFiles, outs *outputs) (*keyedBuild, bool, error) {
	cache, err := openEngineCache(o.engineCache)
	var unusable *enginecache.UnusableError
	if errors.As(err, &unusable) {
		fmt.Fprintf(s.Err, "trtbuild: warning: not using the engine cache: %s; building without it\n", escapeControls(unusable.Why))
		err = nil
	}
	if err != nil {
		return nil, false, err
	}
	if cache == nil {
		k := &keyedBuild{ready: make(chan struct{})}
		go func() {
			defer close(k.ready)
			key, err := computeKey(nil, o, req, info)
			if err != nil {
				k.err = err
				return
			}
			// Every field but ready, which afterBuild reads while this runs.
			k.key, k.parts, k.hashes = key.key, key.parts, key.hashes
			k.model, k.backend, k.trt, k.prec = key.model, key.backend, key.trt, key.prec
		}()
		return k, false, nil
	}
	k, err := abandonable(ctx, func() (*keyedBuild, error) { return computeKey(cache, o, req, info) })
	if ctx.Err() != nil {
		cache.Close()
		return nil, false, err // the caller reports the signal or budget
	}
	if err != nil {
		cache.Close()
		return nil, false, exitcode.Usagef("cannot compute the build key for --engine-cache: %v", err)
	}
	start := time.Now()
	look, err := cache.Get(ctx, k.key, files.engine)
	if err != nil {
		return k, false, exitcode.Wrap(exitcode.Failed, err)
	}
	if !look.Hit {
		if look.Skipped != "" {
			what := "left it there"
			if look.Repaired {
				what = "removed it"
			}
			fmt.Fprintf(s.Err, "trtbuild: warning: the engine cache entry %s was not used: %s; %s, building the engine\n", q(cache.Entry(k.key)), look.Skipped, what)
		}
		if err := files.engine.Reset(); err != nil {
			return k, false, exitcode.Wrap(exitcode.Failed, fmt.Errorf("writing the engine %s: %w", q(info.Engine), err))
		}
		return k, false, nil
	}
	if ctx.Err() != nil {
		return k, false, nil // a signal or the budget came during the copy: nothing is put in place
	}
	if err := k.serve(ctx, s.Err, files, look); err != nil {
		return k, false, exitcode.Wrap(exitcode.Failed, err)
	}
	took := time.Since(start)
	msg := fmt.Sprintf("Engine cache hit: %s copied from %s in %s (key %s); nothing was built.",
		info.Engine, cache.Dir(), took.Round(time.Millisecond), buildkey.Short(k.key))
	res := progress.Result{Status: progress.StatusBuilt, Engine: info.Engine, EngineBytes: look.Bytes, Duration: took, Cached: true}
	hit := []progress.Event{{Type: progress.EventLog, Severity: progress.SeverityInfo, Message: msg}}
	// --report and --trace record the hit as they record a build: the build line, the hit,
	// the result.
	if rec := outs.wrap(tui.Quiet{}); outs.began {
		rec.Begin(progress.NewState(info, start))
		rec.Handle(hit)
		_ = rec.End(res)
		outs.finish(s.Err, nil)
	}
	switch mode {
	case tui.ModeJSON:
		j := tui.NewJSON(s.Out, nil)
		j.Begin(progress.NewState(info, start))
		j.Handle(hit)
		if err := j.End(res); err != nil && !errors.Is(err, syscall.EPIPE) {
			return k, true, exitcode.Wrap(exitcode.OK, fmt.Errorf("the engine was copied, but writing progress failed: %v", err))
		}
	case tui.ModeQuiet:
	default:
		fmt.Fprintln(s.Out, escapeControls(msg))
	}
	return k, true, nil
}

// close releases the engine cache, if any.
func (k *keyedBuild) close() {
	if k != nil && k.cache != nil {
		k.cache.Close()
	}
}

// computeKey finds the target and computes the build's key.
func computeKey(cache *enginecache.Cache, o *buildOptions, req worker.Request, info progress.BuildInfo) (*keyedBuild, error) {
	target, err := localTarget(req)
	if err != nil {
		return nil, err
	}
	if o.keyTarget != nil && target.Backend == "sim" {
		// A simulated build for a matrix target is keyed as that GPU's, so cells map to keys
		// as they would on the real GPUs.
		target.GPU, target.ComputeCapability, target.MIG = o.keyTarget.GPU, o.keyTarget.ComputeCapability, o.keyTarget.MIG
	}
	k := &keyedBuild{cache: cache, model: req.Model, backend: req.Backend, trt: target.TensorRT, prec: info.Precision}
	hash := o.modelHashes
	if hash == nil {
		hash = buildkey.HashModel
	}
	if k.hashes, err = hash(req.Model); err != nil {
		return nil, err
	}
	if k.parts, k.hashes, err = buildkey.FromHashes(req, target, k.hashes); err != nil {
		return nil, err
	}
	k.key = k.parts.Key()
	return k, nil
}

// serve puts the engine copied from the cache in place, and the manifest beside it: the stored
// one (verified by the cache against the engine), with this copy's path and cache use.
func (k *keyedBuild) serve(ctx context.Context, errOut io.Writer, files *buildFiles, look enginecache.Lookup) error {
	if err := files.commitEngine(ctx); err != nil {
		return fmt.Errorf("writing the engine: %w", err)
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

// manifest describes the engine of this build.
func (k *keyedBuild) manifest(file string, bytes int64, sum string) *manifest.Manifest {
	return &manifest.Manifest{
		Key: k.key, Parts: k.parts,
		Model:    manifest.Model{Path: k.model, Bytes: k.hashes.Bytes, ExternalBytes: k.hashes.ExternalBytes},
		Engine:   manifest.Engine{File: filepath.Base(file), Bytes: bytes, SHA256: sum},
		Trtbuild: version, Backend: k.backend, TensorRT: k.trt, Precision: k.prec,
	}
}

// afterBuild runs after a successful build has committed the engine: it writes the manifest
// beside it and stores the engine in the cache, both from the file the worker wrote, as hashed
// before it had a name (never by its path, which another build or user may have replaced
// since). ctx ends the work (a signal, the time budget). Problems are warnings: the engine is
// built.
func (k *keyedBuild) afterBuild(ctx context.Context, s *streams, res progress.Result, files *buildFiles) {
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
		fmt.Fprintf(s.Err, "trtbuild: warning: no manifest written: %v\n", k.err)
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
			fmt.Fprintf(s.Err, "trtbuild: warning: %v\n", err)
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
		fmt.Fprintf(s.Err, "trtbuild: warning: the engine was not stored in the engine cache: %v\n", err)
		return
	}
	if put.Replaced != "" {
		fmt.Fprintf(s.Err, "trtbuild: warning: replaced the engine cache entry %s, which could not be used: %s\n", q(k.cache.Entry(k.key)), put.Replaced)
	}
	if put.Stale > 0 {
		fmt.Fprintf(s.Err, "trtbuild: removed %d temporary engine cache entries (%s) left by killed builds\n", put.Stale, progress.FormatBytes(put.StaleBytes))
	}
}

func newEngineCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Look at built engines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitcode.Usagef("engine needs a subcommand: trtbuild engine inspect ENGINE")
		},
	}
	cmd.AddCommand(newEngineInspectCmd(s))
	return cmd
}

// engineReport is what `engine inspect --json` writes.
type engineReport struct {
	Engine       string             `json:"engine"`
	Bytes        int64              `json:"bytes"`
	SHA256       string             `json:"sha256"`
	Header       plan.Header        `json:"header"`
	Manifest     *manifest.Manifest `json:"manifest,omitempty"`
	ManifestNote string             `json:"manifest_note,omitempty"`
	Problems     []string           `json:"problems,omitempty"`
}

func newEngineInspectCmd(s *streams) *cobra.Command {
	var asJSON bool
	var expectTRT, expectKey string
	cmd := &cobra.Command{
		Use:   "inspect ENGINE",
		Short: "Say what an engine file is, without a GPU: its plan header and its manifest",
		Long: `engine inspect reads an engine file in pure Go: the TensorRT version that wrote it, from the
plan header (as trtexec --getPlanVersionOnly does), or that it is a simulated plan; and the
manifest beside it (ENGINE.json), if there is one: the build key and its parts, versions, shapes,
flags and build time. It checks that the manifest describes this file (its SHA-256).

With --expect-tensorrt or --expect-key it exits with status 1 when the engine does not match,
so CI can refuse a stale engine before deploying it.`,
		Example: `  trtbuild engine inspect model.engine
  trtbuild engine inspect model.engine --expect-tensorrt 10.16 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("engine inspect takes one engine file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := inspectEngine(args[0])
			if err != nil {
				return err
			}
			if expectTRT != "" && !r.Header.Matches(expectTRT) {
				got := r.Header.TensorRT
				if r.Header.Kind == plan.KindSimulated {
					got = "none (a simulated plan)"
				} else if got == "" {
					got = "unknown"
				}
				r.Problems = append(r.Problems, fmt.Sprintf("built by TensorRT %s, expected %s", got, expectTRT))
			}
			if expectKey != "" && (r.Manifest == nil || r.Manifest.Key != expectKey) {
				got := "no manifest"
				if r.Manifest != nil {
					got = r.Manifest.Key
				}
				r.Problems = append(r.Problems, fmt.Sprintf("build key is %s, expected %s", got, expectKey))
			}
			if asJSON {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				writeEngineText(s.Out, r)
			}
			if len(r.Problems) > 0 {
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("engine %s: %s", r.Engine, r.Problems[0]))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write one JSON document")
	cmd.Flags().StringVar(&expectTRT, "expect-tensorrt", "", "fail unless the plan was written by this TensorRT `VERSION` (10, 10.16, 10.16.0 or 10.16.0.32)")
	cmd.Flags().StringVar(&expectKey, "expect-key", "", "fail unless the manifest names this build `KEY`")
	return cmd
}

// inspectEngine reads the engine's header and manifest. A file that is no engine is a usage
// error; a manifest that does not describe the file is a problem.
func inspectEngine(path string) (*engineReport, error) {
	// The engine is opened once, as every input is (internal/regfile: never blocking on a
	// FIFO), and its header and hash read from that one descriptor.
	f, st, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, exitcode.Usagef("engine %s does not exist; check the path", q(path))
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, exitcode.Usagef("engine %s is a directory; give the engine file", q(path))
	case errors.As(err, &nr):
		return nil, exitcode.Usagef("engine %s is %s, not a regular file; give the engine file", q(path), nr.Kind)
	case err != nil:
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), unwrapPathError(err))
	}
	defer f.Close()
	h, err := plan.Read(io.NewSectionReader(f, 0, st.Size()))
	if errors.Is(err, plan.ErrNotEngine) {
		return nil, exitcode.Usagef("%s is %v; give a file that trtbuild or TensorRT built", q(path), err)
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), unwrapPathError(err))
	}
	sum, err := buildkey.HashReader(context.Background(), io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return nil, exitcode.Usagef("cannot read engine %s: %v", q(path), unwrapPathError(err))
	}
	r := &engineReport{Engine: path, Bytes: st.Size(), SHA256: sum, Header: h}
	m, err := manifest.Read(manifest.Path(path))
	switch {
	case errors.Is(err, manifest.ErrNotFound):
		r.ManifestNote = "no manifest (" + filepath.Base(manifest.Path(path)) + ") beside the engine"
	case err != nil:
		r.Problems = append(r.Problems, fmt.Sprintf("manifest unreadable: %v", err))
	default:
		r.Manifest = m
		if m.Engine.SHA256 != sum {
			r.Problems = append(r.Problems, "the manifest describes another file (SHA-256 differs): the engine was replaced after it was written")
		}
		if h.Kind == plan.KindTensorRT && m.TensorRT != "" && h.TensorRT != "" && m.TensorRT != h.TensorRT {
			r.Problems = append(r.Problems, fmt.Sprintf("the manifest says TensorRT %s, the plan header %s", m.TensorRT, h.TensorRT))
		}
	}
	return r, nil
}

func writeEngineText(w io.Writer, r *engineReport) {
	fmt.Fprintf(w, "engine     %s (%d bytes, %s)\n", r.Engine, r.Bytes, r.SHA256)
	switch r.Header.Kind {
	case plan.KindSimulated:
		fmt.Fprintf(w, "plan       simulated by trtbuild (format %d), not a TensorRT engine", r.Header.SimVersion)
		if p := r.Header.Sim["precision"]; p != "" {
			fmt.Fprintf(w, "; precision %s", p)
		}
		fmt.Fprintln(w)
	default:
		if r.Header.TensorRT != "" {
			fmt.Fprintf(w, "plan       TensorRT plan written by TensorRT %s (serialization version %d)\n", r.Header.TensorRT, r.Header.SerializationVersion)
		} else {
			fmt.Fprintf(w, "plan       TensorRT plan of serialization version %d, whose version field this trtbuild cannot read\n", r.Header.SerializationVersion)
		}
	}
	if m := r.Manifest; m != nil {
		fmt.Fprintf(w, "key        %s\n", m.Key)
		fmt.Fprintf(w, "graph      %s\n", m.Parts.Graph)
		fmt.Fprintf(w, "weights    %s\n", m.Parts.Weights)
		target := m.Backend
		if m.TensorRT != "" {
			target += " " + m.TensorRT
		}
		if m.Parts.GPU != "" {
			target += ", " + m.Parts.GPU
		}
		if m.Parts.ComputeCapability != "" {
			target += " (sm " + m.Parts.ComputeCapability + ")"
		}
		fmt.Fprintf(w, "builder    %s\n", target)
		fmt.Fprintf(w, "precision  %s\n", m.Precision)
		for i, p := range m.Parts.Profiles {
			for _, in := range p.Inputs {
				fmt.Fprintf(w, "profile %d  %s min %v opt %v max %v\n", i, in.Name, in.Min, in.Opt, in.Max)
			}
		}
		fmt.Fprintf(w, "built      %s in %.2fs by trtbuild %s from %s\n", m.BuiltAt.Format(time.RFC3339), m.BuildSeconds, m.Trtbuild, m.Model.Path)
		if m.EngineCache != nil && m.EngineCache.Hit {
			fmt.Fprintf(w, "copied     from the engine cache %s\n", m.EngineCache.Dir)
		}
	} else if r.ManifestNote != "" {
		fmt.Fprintf(w, "manifest   %s\n", r.ManifestNote)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM    %s\n", p)
	}
}
