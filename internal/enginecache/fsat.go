package enginecache

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Every file and folder of the cache is reached from an open folder with the *at system calls,
// never through a symbolic link (O_NOFOLLOW) and never blocking on a FIFO (O_NONBLOCK); what
// is not of the expected kind is refused by fstat before it is read.

// openDirAt opens the folder name in dirfd, refusing a link or anything but a folder.
func openDirAt(dirfd int, name string) (*os.File, *unix.Stat_t, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), name), &st, nil
}

// errNotRegular marks a name that is there but is not a regular file (a FIFO, a device, a
// folder or a link).
var errNotRegular = errors.New("not a regular file")

// openFileAt opens name in dirfd for reading when it is a regular file.
func openFileAt(dirfd int, name string) (*os.File, *unix.Stat_t, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err == unix.ELOOP || err == unix.EISDIR || err == unix.ENXIO {
		return nil, nil, errNotRegular
	}
	if err != nil {
		return nil, nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, nil, errNotRegular
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), name), &st, nil
}

// mkdirAt makes the folder name in dirfd if it is missing and opens it.
func mkdirAt(dirfd int, name string, perm uint32) (*os.File, *unix.Stat_t, error) {
	if err := unix.Mkdirat(dirfd, name, perm); err != nil && err != unix.EEXIST {
		return nil, nil, err
	}
	return openDirAt(dirfd, name)
}

// removeTreeAt removes name in dirfd: a file or link by unlinkat, a folder with what is in it
// (entries hold files only; depth bounds what a planted tree could make it do).
func removeTreeAt(dirfd int, name string, depth int) error {
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
	d, _, err := openDirAt(dirfd, name)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeTreeAt(int(d.Fd()), n, depth-1); err != nil {
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
