package matrix

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// Open reads and checks a matrix file as Load does, with errors that say what to fix (exit
// status 2): a FIFO, a device or a folder is refused at once, and so is a file larger than
// MaxFileSize.
func Open(path string) (*File, error) {
	f, err := Load(path)
	var nr *regfile.NotRegularError
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		return nil, exitcode.Usagef("matrix file %s does not exist", pathtext.Q(path)).Hintf("check the path")
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, exitcode.Usagef("matrix file %s is a directory", pathtext.Q(path)).Hintf("give the .yaml file")
	case errors.As(err, &nr):
		return nil, exitcode.Usagef("matrix file %s is %s, not a regular file", pathtext.Q(path), nr.Kind).Hintf("save the matrix to a regular file and give its path")
	case errors.Is(err, ErrTooLarge):
		return nil, exitcode.Usagef("matrix file %s is larger than 16 MiB, which no matrix file is", pathtext.Q(path)).Hintf("give the matrix's .yaml file")
	case errors.Is(err, fs.ErrPermission):
		return nil, exitcode.Usagef("cannot read matrix file %s: permission denied", pathtext.Q(path)).Hintf("check its permissions")
	case errors.As(err, new(*fs.PathError)):
		return nil, exitcode.Usagef("cannot read matrix file %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	default:
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	return f, nil
}

// WriteSlurmScripts writes one sbatch script per target, trtbuild-TARGET.sbatch, into dir
// ("": the matrix file's folder), each a file trtbuild names itself (no link followed), and
// returns the paths written. It makes the tasks' log folder in the matrix folder first: Slurm
// opens a task's log before the script runs, and a task whose log folder is missing fails
// to launch, logging nothing. The default folder is trtbuild's own (no link followed); one
// that o names may be a link, to scratch storage say.
func (f *File) WriteSlurmScripts(dir string, o SlurmOptions) ([]string, error) {
	var written []string
	if dir == "" {
		dir = f.Dir
	}
	scripts := make([]string, len(f.Targets))
	for i, t := range f.Targets {
		script, err := f.SlurmScript(t.Name, o)
		if err != nil {
			return written, exitcode.Wrap(exitcode.Usage, err)
		}
		scripts[i] = script
	}
	paths := make([]string, len(f.Targets))
	for i, t := range f.Targets {
		paths[i] = filepath.Join(dir, SlurmScriptName(t.Name))
		if err := refuseOwn(paths[i]); err != nil {
			return written, err // before anything is made or written
		}
	}
	logs := o.LogDir
	var err error
	if logs == "" || logs == DefaultLogDir {
		logs = DefaultLogDir
		err = outpath.MkdirOwn(f.Dir, logs)
	} else {
		err = os.MkdirAll(filepath.Join(f.Dir, logs), 0o755)
	}
	if err != nil {
		return written, exitcode.Usagef("cannot create the tasks' log folder %s: %v", pathtext.Q(filepath.Join(f.Dir, logs)), exitcode.PathCause(err))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return written, exitcode.Usagef("cannot create %s: %v", dir, exitcode.PathCause(err))
	}
	for i, p := range paths {
		if err := outpath.WriteOwn(p, []byte(scripts[i]), 0o755); err != nil {
			return written, exitcode.Wrap(exitcode.Failed, err)
		}
		written = append(written, p)
	}
	return written, nil
}

// WriteTriton writes the Triton model named model into the repository folder out: its
// config.pbtxt and a copy of each engine, in files trtbuild names itself. A model folder that
// holds another model's, profile's or precision's engines, or a config trtbuild did not
// write, is refused before anything is written. It returns the config's path.
func (f *File) WriteTriton(out, model string, engines []TritonEngine) (string, error) {
	if err := CheckTritonName(model); err != nil {
		return "", exitcode.Wrap(exitcode.Usage, err)
	}
	config := filepath.Join(out, model, "config.pbtxt")
	existing, err := readRegular(config)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existing = nil
	case err != nil:
		return "", exitcode.Usagef("cannot read %s: %v", pathtext.Q(config), exitcode.PathCause(err))
	}
	if err := checkTritonOwner(config, existing, model, engines[0].Variant()); err != nil {
		return "", exitcode.Wrap(exitcode.Usage, err)
	}
	version := filepath.Join(out, model, "1")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", exitcode.Usagef("cannot create %s: %v", pathtext.Q(out), exitcode.PathCause(err))
	}
	if err := outpath.MkdirOwn(out, filepath.Join(model, "1")); err != nil {
		return "", exitcode.Usagef("cannot create %s: %v", pathtext.Q(version), exitcode.PathCause(err))
	}
	for _, p := range append(tritonFiles(version, engines), config) {
		if err := refuseOwn(p); err != nil {
			return "", err // before any engine is copied
		}
	}
	for _, e := range engines {
		data, err := readRegular(filepath.Join(f.OutputDir(), e.Cell.Engine()))
		if err == nil {
			err = outpath.WriteOwn(filepath.Join(version, e.File), data, 0o644)
		}
		if err != nil {
			return "", exitcode.Wrap(exitcode.Failed, fmt.Errorf("copying the engine of %s: %w", e.Cell.ID(), err))
		}
	}
	if err := outpath.WriteOwn(config, []byte(TritonConfig(model, engines)), 0o644); err != nil {
		return "", exitcode.Wrap(exitcode.Failed, err)
	}
	return config, nil
}

// readRegular reads a file trtbuild wrote itself, as every input is opened: only a regular
// file, never blocking on a FIFO, never through a link.
func readRegular(path string) ([]byte, error) {
	f, _, err := regfile.OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// tritonFiles are the engine copies WriteTriton writes into the model's version folder.
func tritonFiles(version string, engines []TritonEngine) []string {
	out := make([]string, len(engines))
	for i, e := range engines {
		out[i] = filepath.Join(version, e.File)
	}
	return out
}

// refuseOwn fails with a usage error when path, a file trtbuild names itself, holds what
// outpath's rule for such files never writes (a link, a FIFO, a device, a folder): checked for
// every file before the first is written, so that a refusal leaves nothing half done. A path
// that cannot be looked at is left to the write to report.
func refuseOwn(path string) error {
	t, err := outpath.InspectOwn(path)
	if err != nil {
		return nil
	}
	if why := t.Refusal(outpath.Own); why != "" {
		return exitcode.Usagef("%s %s", pathtext.Q(path), why)
	}
	return nil
}

// WriteOut writes data to path, which the user named with flag, atomically (internal/outpath),
// or to stdout when path is "". A path that is the matrix file or one of its models (after
// links are followed) is refused, as a build refuses -o naming its model: writing it would
// destroy an input.
func (f *File) WriteOut(stdout io.Writer, flag, path string, data []byte) error {
	if path == "" {
		_, err := stdout.Write(data)
		return err
	}
	out, err := outpath.Inspect(path)
	if err != nil {
		return exitcode.Usagef("cannot write %s: %v", pathtext.Q(path), exitcode.PathCause(err))
	}
	inputs := []outpath.Named{}
	add := func(name, p string) {
		if t, err := outpath.Inspect(p); err == nil {
			inputs = append(inputs, outpath.Named{Name: name, Target: t})
		}
	}
	if f.Path != "" {
		add("the matrix file", f.Path)
	}
	for _, m := range f.Models {
		add("the model", f.Resolve(m.Path))
	}
	if err := outpath.Conflicts([]outpath.Named{{Name: flag, Target: out}}, inputs); err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	if err := outpath.WriteFile(path, data); err != nil {
		return exitcode.Usagef("cannot write %s: %v", path, exitcode.PathCause(err))
	}
	return nil
}
