//go:build !windows

package enginecache

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// attr is what fstat says about a file.
type attr struct{ unix.Stat_t }

func (a *attr) regular() bool    { return a.Mode&unix.S_IFMT == unix.S_IFREG }
func (a *attr) size() int64      { return a.Size }
func (a *attr) mtime() time.Time { return time.Unix(a.Mtim.Unix()) }
func (a *attr) id() fileID       { return fileID{dev: uint64(a.Dev), ino: a.Ino} }
func (a *attr) mine() bool       { return int(a.Uid) == os.Geteuid() }
func (a *attr) kind() fs.FileMode {
	return modeOf(a.Mode)
}

func fdOf(f *os.File) int { return int(f.Fd()) }

// openCacheDir opens the cache folder, following links in dir (the user's path).
func openCacheDir(dir string) (*os.File, *attr, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var st attr
	if err := unix.Fstat(fd, &st.Stat_t); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), dir), &st, nil
}

// openDirAt opens the folder name in parent, refusing a link or anything but a folder.
func openDirAt(parent *os.File, name string) (*os.File, *attr, error) {
	fd, err := unix.Openat(fdOf(parent), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var st attr
	if err := unix.Fstat(fd, &st.Stat_t); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), name), &st, nil
}

// openFileAt opens name in parent for reading when it is a regular file.
func openFileAt(parent *os.File, name string) (*os.File, *attr, error) {
	fd, err := unix.Openat(fdOf(parent), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err == unix.ELOOP || err == unix.EISDIR || err == unix.ENXIO {
		return nil, nil, errNotRegular
	}
	if err != nil {
		return nil, nil, err
	}
	var st attr
	if err := unix.Fstat(fd, &st.Stat_t); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	if !st.regular() {
		unix.Close(fd)
		return nil, nil, errNotRegular
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), name), &st, nil
}

// mkdirAt makes the folder name in parent if it is missing and opens it.
func mkdirAt(parent *os.File, name string, perm uint32) (*os.File, *attr, error) {
	if err := unix.Mkdirat(fdOf(parent), name, perm); err != nil && err != unix.EEXIST {
		return nil, nil, err
	}
	return openDirAt(parent, name)
}

// mkdirTempAt makes the new folder name in parent for an entry being written, 0700 (perm is
// set by setDirPerm once the entry is written).
func mkdirTempAt(parent *os.File, name string, _ uint32) error {
	return unix.Mkdirat(fdOf(parent), name, 0o700)
}

// createAt creates the new file name in parent for writing, 0600; never through a link.
func createAt(parent *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(fdOf(parent), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// statAt says what name in parent is, not following a link.
func statAt(parent *os.File, name string) (*attr, error) {
	var st attr
	if err := unix.Fstatat(fdOf(parent), name, &st.Stat_t, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return &st, nil
}

// statFile says what the open file f is.
func statFile(f *os.File) (*attr, error) {
	var st attr
	if err := unix.Fstat(fdOf(f), &st.Stat_t); err != nil {
		return nil, err
	}
	return &st, nil
}

// touchAt sets the access and modification times of name in parent to t, not following a link.
func touchAt(parent *os.File, name string, t time.Time) error {
	now := unix.NsecToTimespec(t.UnixNano())
	return unix.UtimesNanoAt(fdOf(parent), name, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
}

// renameAt renames from in fromDir to to in toDir; renaming a folder onto a folder that is not
// empty fails with ENOTEMPTY or EEXIST.
func renameAt(fromDir *os.File, from string, toDir *os.File, to string) error {
	return unix.Renameat(fdOf(fromDir), from, fdOf(toDir), to)
}

// setDirPerm sets the permissions of the folder d.
func setDirPerm(d *os.File, perm uint32) error { return unix.Fchmod(fdOf(d), perm) }

// syncDir flushes the folder d's entries to disk.
func syncDir(d *os.File) error { return d.Sync() }

// reopenDir opens the folder d again, with an offset of its own.
func reopenDir(d *os.File) (*os.File, error) {
	f, _, err := openDirAt(d, ".")
	return f, err
}

// removeTreeAt removes name in parent: a file or link by unlinkat, a folder with what is in it
// (entries hold files only; depth bounds what a planted tree could make it do).
func removeTreeAt(parent *os.File, name string, depth int) error {
	dirfd := fdOf(parent)
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	if depth == 0 {
		return unix.ENOTEMPTY
	}
	d, _, err := openDirAt(parent, name)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeTreeAt(d, n, depth-1); err != nil {
				break
			}
		}
	}
	d.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// modeOf turns a stat mode into a FileMode's type bits, for messages.
func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
