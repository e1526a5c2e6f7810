package outpath

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// Named is a path with what it is for, for messages: an output's flag ("-o", "--trace") or an
// input's role ("the model", "external data file").
type Named struct {
	Name   string
	Target Target
}

// Conflicts returns an error naming the first output that is the same file as another
// output or as an input, after symbolic and hard links are resolved, or nil. Character
// devices may be shared by several outputs (-o /dev/null --report /dev/null).
func Conflicts(outputs, inputs []Named) error {
	for i, o := range outputs {
		for _, in := range inputs {
			if same(o.Target, in.Target) {
				return fmt.Errorf("%s %s is %s %s; writing it would destroy it, choose another path for %s",
					o.Name, pathtext.Q(o.Target.Path), in.Name, pathtext.Q(in.Target.Path), o.Name)
			}
		}
		for _, p := range outputs[:i] {
			if o.Target.Kind == CharDevice && p.Target.Kind == CharDevice {
				continue
			}
			if same(o.Target, p.Target) {
				return fmt.Errorf("%s %s and %s %s are the same file; one would overwrite the other, give each its own path",
					p.Name, pathtext.Q(p.Target.Path), o.Name, pathtext.Q(o.Target.Path))
			}
		}
	}
	return nil
}

// same reports whether two targets are one file: the same inode (hard links included) when
// both exist, the same resolved path when neither does.
func same(a, b Target) bool {
	if a.Info != nil && b.Info != nil {
		return os.SameFile(a.Info, b.Info)
	}
	return a.Info == nil && b.Info == nil && a.Final != "" && a.Final == b.Final
}
