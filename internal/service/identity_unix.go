//go:build !windows

package service

import (
	"os"
	"syscall"
)

// fileID is a file's identity on its system: its device and inode.
type fileID struct{ dev, ino uint64 }

// identity is fi's identity, from its Stat_t.
func identity(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true
}
