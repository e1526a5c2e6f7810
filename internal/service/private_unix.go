//go:build !windows

package service

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// openOwnFlags open a file below the state dir without following a link put in its place, and
// without waiting on a FIFO put there.
const openOwnFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// checkPrivate refuses a state dir (fi is its Lstat) that another user owns or can write to.
func checkPrivate(abs string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state dir %s belongs to user %d, not to this user; give a folder of your own", pathtext.Q(abs), st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state dir %s can be written by others (mode %04o); run chmod go-w %s, or give a private folder", pathtext.Q(abs), fi.Mode().Perm(), pathtext.Q(abs))
	}
	return nil
}

// checkOwnFolder refuses the folder rel of the state dir when another user owns it
// (*ForeignFolderError); it reads the folder through the state dir's root, following no link.
func (m *Manager) checkOwnFolder(rel string) error {
	fi, err := m.state.Lstat(rel)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return &ForeignFolderError{Path: filepath.Join(m.cfg.StateDir, rel), Owner: "user " + strconv.FormatUint(uint64(st.Uid), 10)}
	}
	return nil
}
