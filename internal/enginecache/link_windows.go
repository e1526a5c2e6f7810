package enginecache

import (
	"errors"

	"golang.org/x/sys/windows"
)

// noLink reports whether a link failed because the file system cannot make it: across volumes
// (ERROR_NOT_SAME_DEVICE), on one without hard links (ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED
// on FAT), or one that has too many to the file (ERROR_TOO_MANY_LINKS).
func noLink(err error) bool {
	for _, e := range []windows.Errno{windows.ERROR_NOT_SAME_DEVICE, windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SUPPORTED, windows.ERROR_TOO_MANY_LINKS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
