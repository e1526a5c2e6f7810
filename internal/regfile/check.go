package regfile

import (
	"errors"
	"io/fs"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// CheckInput checks that path, given as what ("model", "plugin"), is a regular file this
// process can read, without blocking on a FIFO. The error says what to do.
func CheckInput(what, path string) error { return InputError(what, path, Check(path)) }

// InputError is CheckInput's error for err, what opening (Open) or checking the input path
// returned: one line that says what to do; nil for nil.
func InputError(what, path string, err error) error {
	var nr *NotRegularError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return exitcode.Usagef("%s %s does not exist", what, pathtext.Q(path)).Hintf("check the path")
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return exitcode.Usagef("%s %s is a directory", what, pathtext.Q(path)).Hintf("give a file inside it")
	case errors.As(err, &nr):
		return exitcode.Usagef("%s %s is %s, not a regular file", what, pathtext.Q(path), nr.Kind).Hintf("save it to a regular file first")
	case errors.Is(err, fs.ErrPermission):
		return exitcode.Usagef("cannot read %s %s: permission denied", what, pathtext.Q(path)).Hintf("check its permissions")
	}
	return exitcode.Usagef("cannot read %s %s: %v", what, pathtext.Q(path), exitcode.PathCause(err))
}
