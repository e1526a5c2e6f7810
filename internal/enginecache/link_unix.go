//go:build !windows

package enginecache

import (
	"errors"
	"syscall"
)

// noLink reports whether a link failed because the file system cannot make it: across file
// systems (EXDEV), or on one without hard links (EPERM on FAT and some network file systems,
// ENOTSUP, EOPNOTSUPP), or one that has too many to the file (EMLINK).
func noLink(err error) bool {
	for _, e := range []syscall.Errno{syscall.EXDEV, syscall.EPERM, syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.EMLINK} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
