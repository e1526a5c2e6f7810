package convert

import (
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// OpenFiles checks the files of a conversion as `trtbuild convert` does, before anything is
// converted, and loads the model: in must be a readable regular file, out ("" is beside in,
// named by OutputName) a file that can be written and is not the model (internal/outpath's
// rules, a folder it can be written in found now), and a device only for a model without
// external data. It returns the model and the output path; errors are usage errors (exit
// status 2) that say what to do.
func OpenFiles(in, output string, to Target) (*modelio.Model, string, error) {
	out := output
	if out == "" {
		out = filepath.Join(filepath.Dir(in), OutputName(in, to))
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return nil, "", exitcode.Usagef("-o %s is a folder", pathtext.Q(out)).Hintf("give the converted model's file name")
	}
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return nil, "", exitcode.Usagef("-o %s: the folder %s does not exist", pathtext.Q(out), pathtext.Q(filepath.Dir(out))).Hintf("create it first")
	}
	if err := regfile.CheckInput("model", in); err != nil {
		return nil, "", err
	}
	target, err := outpath.Check("-o", out, OutputUse(output))
	if output == "" && err != nil {
		return nil, "", exitcode.Usagef("%s, or give the converted model's path with -o", exitcode.OneLine(err))
	}
	if err != nil {
		return nil, "", err
	}
	// A folder the output cannot be written in is found now, before the conversion, as every
	// output of a build is: an unnamed trial file, gone when closed.
	if probe, err := outpath.Create(target); err != nil {
		return nil, "", exitcode.Usagef("cannot write -o %s: %v", pathtext.Q(out), exitcode.PathCause(err)).Hintf("choose a writable folder")
	} else {
		probe.Cleanup() //nolint:errcheck // nothing was named
	}
	if src, err := outpath.Inspect(in); err == nil {
		if err := outpath.Conflicts([]outpath.Named{{Name: "-o", Target: target}}, []outpath.Named{{Name: "the model", Target: src}}); err != nil {
			return nil, "", exitcode.Wrap(exitcode.Usage, err)
		}
	}
	m, err := modelio.Load(in)
	if err != nil {
		return nil, "", exitcode.Wrap(exitcode.Usage, err)
	}
	if target.Kind == outpath.CharDevice && m.External {
		return nil, "", exitcode.Usagef("-o %s is a device, but the converted model keeps its weights in an external data file beside it", pathtext.Q(out)).Hintf("give a file path")
	}
	return m, out, nil
}

// OutputUse is how the converted model's path is written: a path the user named with -o
// (output) follows links, the default name beside the model, trtbuild's own, none.
func OutputUse(output string) outpath.Use {
	if output == "" {
		return outpath.Own
	}
	return outpath.WholeFile
}
