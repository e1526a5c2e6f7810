//go:build !windows

package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

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
// server runs, which reaches it by this path: the folders above it are resolved as the system
// resolves them, a part at a time, each link followed where it leads, and every folder met must
// be root's or this user's and written by no one else unless it is sticky, as /tmp is (there
// only an entry's owner, or root, may rename it), and every link met root's or this user's.
// The parts that do not exist yet are not checked: make them, then check again (preparePath).
func checkAbove(abs string) error {
	_, err := resolveAbove(abs)
	return err
}

// resolveAbove is checkAbove that also returns abs with the folders above it resolved as far
// as they exist (no link left in that part), for mkdirNoFollow.
func resolveAbove(abs string) (string, error) {
	parent, err := walkChecked(abs, filepath.Dir(abs), 0)
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(abs)), nil
}

// maxLinks is how many links walkChecked follows in one path, as the system's ELOOP bound.
const maxLinks = 40

// walkChecked resolves path (absolute) a part at a time for checkAbove, checking each folder
// and link it meets, and returns where it leads, or where it stops: the first part that does
// not exist. abs is the path named in messages; links counts the links followed so far.
func walkChecked(abs, path string, links int) (string, error) {
	cur := "/"
	rest := strings.Split(path, string(filepath.Separator)) // not cleaned: ".." after a link is the system's
	for i, part := range rest {
		if part == "" || part == "." {
			continue
		}
		next := filepath.Join(cur, part)
		if part == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{cur}, rest[i:]...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", pathtext.Q(abs), err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return "", fmt.Errorf("%s is reached through %s, which belongs to user %d, who could swap it for a folder of their own; give a folder reached only through folders and links of this user or root", pathtext.Q(abs), pathtext.Q(next), st.Uid)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return "", fmt.Errorf("%s: too many links on the way", pathtext.Q(abs))
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", fmt.Errorf("%s: %w", pathtext.Q(abs), err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			if cur, err = walkChecked(abs, target, links); err != nil {
				return "", err
			}
			if _, err := os.Lstat(cur); errors.Is(err, fs.ErrNotExist) {
				// A link to what does not exist yet: the system makes nothing through it
				// here, and the check after making refuses what was made elsewhere.
				return filepath.Join(append([]string{cur}, rest[i+1:]...)...), nil
			}
			continue
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s: %s is not a folder", pathtext.Q(abs), pathtext.Q(next))
		}
		if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return "", fmt.Errorf("%s is reached through %s, which others can write (mode %04o), who could swap it for a folder of their own; give a folder reached only through folders this user and root can write (or run chmod go-w %s)", pathtext.Q(abs), pathtext.Q(next), fi.Mode().Perm(), pathtext.Q(next))
		}
		cur = next
	}
	return cur, nil
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

// mkdirNoFollow makes the folder abs and the folders missing above it, 0700, each made and
// entered without following a link, from the deepest folder of abs's path that exists. abs is
// resolveAbove's: no link is left in the part of it that existed when it was checked, so a link
// met now was put there since, by another user where a folder was to be made: it is refused,
// not followed.
func mkdirNoFollow(abs string) error {
	if _, err := os.Lstat(abs); err == nil {
		return nil // there: what it is, its caller checks
	}
	base := abs
	var missing []string
	for {
		if fi, err := os.Lstat(base); err == nil {
			if fi.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("%s is a link where a folder is to be made; trtbuild does not follow links it did not find when it checked the path: remove it", pathtext.Q(base))
			}
			break
		} else if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(base) == base {
			return err
		}
		missing = append([]string{filepath.Base(base)}, missing...)
		base = filepath.Dir(base)
	}
	if len(missing) == 0 {
		return nil
	}
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: base, Err: err}
	}
	at := base
	for _, part := range missing {
		at = filepath.Join(at, part)
		if err := unix.Mkdirat(fd, part, 0o700); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return &fs.PathError{Op: "mkdir", Path: at, Err: err}
		}
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return &fs.PathError{Op: "open", Path: at, Err: err}
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}

// checkOwnedFolder refuses abs (what names it) unless it is a folder, no link, of this user or
// root; others may write in it.
func checkOwnedFolder(abs, what string) error {
	fi, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, pathtext.Q(abs), err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a folder (a link or a file); give the folder itself", what, pathtext.Q(abs))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to user %d, who could swap it for a folder of their own while the server runs; give a folder of this user or root (shared with others if need be)", what, pathtext.Q(abs), st.Uid)
	}
	return nil
}
