package main

import (
	"fmt"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/outpath"
)

// buildFiles are the files a build writes whole at its end, created when it starts (after
// every check): each is written into its own folder as that folder was then (internal/outpath),
// so a folder swapped for a link while the build runs redirects nothing, and nothing of an old
// file changes unless the build succeeds.
type buildFiles struct {
	engine *outpath.Pending
	// manifest is ENGINE.json, a file trtbuild names itself; nil with --no-manifest or for an
	// engine written to a device.
	manifest *outpath.Pending
	device   bool // the engine goes to a character device (-o /dev/null)
}

// createBuildFiles creates the engine's and the manifest's pending files.
func createBuildFiles(p *buildPaths) (*buildFiles, error) {
	f := &buildFiles{device: p.engine.Kind == outpath.CharDevice}
	var err error
	if f.engine, err = outpath.Create(p.engine); err != nil {
		return nil, exitcode.Usagef("cannot write the engine %s: %v; choose a writable path with -o", q(p.engine.Path), unwrapPathError(err))
	}
	if p.manifest != nil && !f.device {
		if f.manifest, err = outpath.Create(*p.manifest); err != nil {
			f.cleanup()
			return nil, exitcode.Usagef("cannot write the manifest %s: %v; choose another -o, or pass --no-manifest", q(p.manifest.Path), unwrapPathError(err))
		}
	}
	return f, nil
}

// writeManifest puts m in place as the engine's manifest.
func (f *buildFiles) writeManifest(m *manifest.Manifest) error {
	b, err := manifest.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding the manifest: %w", err)
	}
	path := f.manifest.Target().Path
	if _, err := f.manifest.Write(b); err != nil {
		return fmt.Errorf("writing the manifest %s: %w", q(path), unwrapPathError(err))
	}
	if err := f.manifest.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("writing the manifest %s: %w", q(path), err)
	}
	return nil
}

// cleanup drops what was not put in place.
func (f *buildFiles) cleanup() {
	if f.engine != nil {
		f.engine.Cleanup() //nolint:errcheck // a no-op once committed
	}
	if f.manifest != nil {
		f.manifest.Cleanup() //nolint:errcheck // a no-op once committed
	}
}
