package matrix

import (
	"regexp"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// SHA256Flag is the flag of `trtbuild matrix cell` that carries the SHA-256 of the matrix file
// an emitted script or Job was written from.
const SHA256Flag = "matrix-sha256"

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckSHA256 fails, with exit status 2, unless the matrix file is the one whose SHA-256 want
// is: the one a script or Job was emitted from. Their tasks are numbered by the file's cells, so
// after any change (a precision added, a model removed) task N may name another cell; a task
// of an old script builds nothing instead.
func (f *File) CheckSHA256(want string) error {
	if !sha256RE.MatchString(want) {
		return exitcode.Usagef("--%s %q: give the 64 lowercase hex digits that emit wrote", SHA256Flag, want)
	}
	if f.SHA256 == want {
		return nil
	}
	return exitcode.Usagef("matrix file %s has changed since this script or Job was emitted from it (sha256 %s, emitted from %s), "+
		"so its task numbers may name other cells: nothing was built; emit again (trtbuild matrix emit) and submit the new files",
		pathtext.Q(f.Path), f.SHA256[:12], want[:12])
}
