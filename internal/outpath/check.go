package outpath

import (
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// Check resolves an output path and refuses what cannot be written as use.
func Check(flag, path string, use Use) (Target, error) {
	inspect := Inspect
	if use == Own {
		inspect = InspectOwn
	}
	t, err := inspect(path)
	if err != nil {
		return t, exitcode.Usagef("cannot write %s %s: %v", flag, pathtext.Q(path), exitcode.PathCause(err))
	}
	if why := t.Refusal(use); why != "" {
		return t, exitcode.Usagef("%s %s %s", flag, pathtext.Q(path), why)
	}
	return t, nil
}
