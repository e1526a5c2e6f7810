//go:build !windows

package service

import (
	"errors"
	"fmt"
	"io/fs"
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

// checkAbove refuses a state dir (abs, absolute) that another user could swap while the
// server runs, which reaches it by this path: every folder above it on the path as given, and
// on the path its links lead to, must be root's or this user's and written by no one else unless it
// is sticky, as /tmp is (there only an entry's owner, or root, may rename it); every link on
// the way must be root's or this user's. The parts of the path that do not exist yet are not
// checked: make them, then check again (preparePath).
func checkAbove(abs string) error {
	if err := checkWalk(abs, abs); err != nil {
		return err
	}
	existing := abs
	for {
		if _, err := os.Lstat(existing); err == nil || filepath.Dir(existing) == existing {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("%s: %w", pathtext.Q(abs), err)
	}
	return checkWalk(abs, real)
}

// checkWalk checks each folder above path that exists, from the root down, for checkAbove;
// abs is the path named in its messages. path itself is its caller's to check (checkPrivate,
// checkOwnDir).
func checkWalk(abs, path string) error {
	var parts []string
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		parts = append(parts, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		dir := parts[i]
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", pathtext.Q(abs), err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("%s is reached through %s, which belongs to user %d, who could swap it for a folder of their own; give a folder reached only through folders and links of this user or root", pathtext.Q(abs), pathtext.Q(dir), st.Uid)
		}
		if fi.Mode()&os.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("%s is reached through %s, which others can write (mode %04o), who could swap it for a folder of their own; give a folder reached only through folders this user and root can write (or run chmod go-w %s)", pathtext.Q(abs), pathtext.Q(dir), fi.Mode().Perm(), pathtext.Q(dir))
		}
	}
	return nil
}

// checkOwnDir refuses abs, a folder the server keeps files in (what names it), unless it is a
// folder (no link) of this user or root that no one else can write.
func checkOwnDir(abs, what string) error {
	fi, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, pathtext.Q(abs), err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a folder (a link or a file); remove it, or give another folder", what, pathtext.Q(abs))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to user %d, not to this user; give a folder of your own", what, pathtext.Q(abs), st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s can be written by others (mode %04o); run chmod go-w %s, or give a private folder", what, pathtext.Q(abs), fi.Mode().Perm(), pathtext.Q(abs))
	}
	return nil
}
