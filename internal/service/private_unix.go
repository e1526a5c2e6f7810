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

// checkAbove refuses a state dir (abs, with no link in it) below a folder another user could
// rename it out of, or swap it in: every folder above it must be root's or this user's, and
// written by no one else unless it is sticky, as /tmp is (there only an entry's owner, or root,
// may rename it).
func checkAbove(abs string) error {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Errorf("state dir %s: %w", pathtext.Q(abs), err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("state dir %s is in %s, which belongs to user %d, who could swap the state dir for a folder of their own; give a state dir below folders only this user and root own", pathtext.Q(abs), pathtext.Q(dir), st.Uid)
		}
		if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("state dir %s is in %s, which others can write (mode %04o), who could swap the state dir for a folder of their own; give a state dir below folders only this user and root can write (or run chmod go-w %s)", pathtext.Q(abs), pathtext.Q(dir), fi.Mode().Perm(), pathtext.Q(dir))
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}
