//go:build !windows

package outpath

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// MkdirOwn makes the folders of rel below base, which must exist: base is the user's and its
// links are followed; the folders of rel are trtbuild's own (a matrix's target and model
// folders), made with mkdirat(2) and opened without following links, so a link planted at
// any of them is refused instead of leading elsewhere.
func MkdirOwn(base, rel string) error {
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: base, Err: err}
	}
	at := base
	for _, part := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		if part == ".." {
			unix.Close(fd)
			return fmt.Errorf("%s leaves %s", pathtext.Q(rel), pathtext.Q(base))
		}
		at = filepath.Join(at, part)
		if err := unix.Mkdirat(fd, part, 0o777); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return &fs.PathError{Op: "mkdir", Path: at, Err: err}
		}
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return fmt.Errorf("%s is not a folder (a link or a file is there); trtbuild does not follow links in folders it makes itself: remove it", pathtext.Q(at))
		}
		if err != nil {
			return &fs.PathError{Op: "open", Path: at, Err: err}
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}
