package builder

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
)

// buildFiles are the files a build writes whole at its end, created when it starts (after
// every check): each is written into its own folder as that folder was then (internal/outpath),
// so a folder swapped for a link while the build runs redirects nothing, and nothing of an old
// file changes unless the build succeeds.
//
// The engine and its manifest go in place together: the engine is hashed before it has a
// name (no other process can reach it then, so the hash, the manifest and the engine cache
// describe what the build wrote), and both renames happen under a lock of the engine's folder.
// A build that commits the same -o meanwhile waits (at most outpath.FolderLockWait, then the
// commit goes on); whichever engine is at -o in the end has its own manifest beside it, or
// none, never another's. With --no-manifest an old manifest is left as it is.
type buildFiles struct {
	engine *outpath.Pending
	// manifest is ENGINE.json, a file trtbuild names itself; nil with --no-manifest or for an
	// engine written to a device.
	manifest *outpath.Pending
	device   bool            // the engine goes to a character device (-o /dev/null)
	folder   *outpath.Folder // the engine's folder, held open; nil for a device
	// built reads back the file the worker wrote (or the cache copied), whatever replaces the
	// path later; sum and size are its hash and size, set when it is committed.
	built *os.File
	sum   string
	size  int64
}

// createBuildFiles creates the engine's and the manifest's pending files.
func createBuildFiles(p *buildPaths) (*buildFiles, error) {
	f := &buildFiles{device: p.engine.Kind == outpath.CharDevice}
	var err error
	if f.engine, err = outpath.Create(p.engine); err != nil && f.device {
		return nil, exitcode.Usagef("cannot write the engine to %s: %v", q(p.engine.Path), exitcode.PathCause(err))
	}
	if err != nil {
		return nil, exitcode.Usagef("cannot write the engine %s: %v", q(p.engine.Path), exitcode.PathCause(err)).Hintf("choose a writable path with -o")
	}
	if !f.device {
		if f.folder, err = f.engine.Folder(); err == nil {
			f.built, err = f.engine.ReadBack()
		}
		if err != nil {
			f.cleanup()
			return nil, exitcode.Wrap(exitcode.Failed, err)
		}
	}
	if p.manifest != nil && !f.device {
		if f.manifest, err = outpath.Create(*p.manifest); err != nil {
			f.cleanup()
			return nil, exitcode.Usagef("cannot write the manifest %s: %v", q(p.manifest.Path), exitcode.PathCause(err)).Hintf("choose another -o, or pass --no-manifest")
		}
	}
	return f, nil
}

// commitEngine puts the engine in place: hashed first, then renamed under the folder's lock;
// an old manifest beside it is removed in the same step (it describes a file no longer
// there), and putManifest puts the new one in place.
func (f *buildFiles) commitEngine(ctx context.Context) error {
	if f.device {
		return f.engine.CloseAtomicallyReplace()
	}
	st, err := f.built.Stat()
	if err == nil {
		f.size = st.Size()
		f.sum, err = buildkey.HashReader(ctx, io.NewSectionReader(f.built, 0, f.size))
	}
	if err != nil {
		return fmt.Errorf("reading the engine back: %w", err)
	}
	unlock, _ := f.folder.Lock() // not had: another process holds it; commit all the same
	defer unlock()
	if err := f.engine.CloseAtomicallyReplace(); err != nil {
		return err
	}
	if f.manifest != nil {
		if err := f.manifest.RemoveTarget(); err != nil {
			return fmt.Errorf("the engine is in place, but its old manifest stays: %w", err)
		}
	}
	return nil
}

// adoptLinked takes engine, the engine cache's file that is now linked at the engine's path
// (enginecache.Link), as the build's engine: the pending file is dropped, and putManifest
// writes the manifest beside the link as beside an engine committed.
func (f *buildFiles) adoptLinked(engine *os.File, size int64) {
	f.engine.Cleanup() //nolint:errcheck // nothing was written to it
	if f.built != nil {
		f.built.Close()
	}
	f.built, f.size = engine, size
}

// putManifest puts m in place beside the engine, unless another build has replaced the engine
// since this one committed it (that build writes its own manifest). It reports whether it
// wrote m.
func (f *buildFiles) putManifest(m *manifest.Manifest) (bool, error) {
	b, err := manifest.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("encoding the manifest: %w", err)
	}
	path := f.manifest.Target().Path
	unlock, _ := f.folder.Lock() // not had: another process holds it; the check below still holds
	defer unlock()
	if !f.folder.Holds(filepath.Base(f.engine.Target().Final), f.built) {
		return false, nil
	}
	if _, err := f.manifest.Write(b); err != nil {
		return false, fmt.Errorf("writing the manifest %s: %w", q(path), exitcode.PathCause(err))
	}
	if err := f.manifest.CloseAtomicallyReplace(); err != nil {
		return false, fmt.Errorf("writing the manifest %s: %w", q(path), err)
	}
	return true, nil
}

// cleanup drops what was not put in place.
func (f *buildFiles) cleanup() {
	if f.engine != nil {
		f.engine.Cleanup() //nolint:errcheck // a no-op once committed
	}
	if f.manifest != nil {
		f.manifest.Cleanup() //nolint:errcheck // a no-op once committed
	}
	if f.built != nil {
		f.built.Close()
	}
	f.folder.Close() //nolint:errcheck // nil-safe
}
