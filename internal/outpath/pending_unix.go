//go:build !windows

package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trtbuild/trtbuild/internal/pathtext"
	"golang.org/x/sys/unix"
)

// inheritedPerm is the permission a file replacing old gets: old's, but never writable by
// every user, nor by its group when old is another user's (a file planted 0666 at -o would
// otherwise let its planter rewrite the new engine after it is in place).
func inheritedPerm(old fs.FileInfo) os.FileMode {
	perm := old.Mode().Perm() &^ 0o002
	if st, ok := old.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		perm &^= 0o020
	}
	return perm
}

// openFolder opens the folder name for *at calls. When want is not nil (the folder as Inspect
// saw it), the folder opened must be that one: a folder replaced since (by a link elsewhere)
// is refused.
func openFolder(name string, want fs.FileInfo) (*os.File, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the folder %s: %w", pathtext.Q(name), err)
	}
	dir := os.NewFile(uintptr(fd), name)
	if want != nil {
		st, err := dir.Stat()
		if err != nil || !os.SameFile(st, want) {
			dir.Close()
			return nil, fmt.Errorf("the folder %s was replaced while trtbuild was starting; check it and try again", pathtext.Q(name))
		}
	}
	return dir, nil
}

// createTemp makes a file in the open folder dir that only this process can reach: without a
// name (O_TMPFILE) where the file system allows it, else a 0600 file named after base, locked
// with flock(2) so that cleanStaleAt leaves it alone while its writer lives. named is the
// temporary name in dir, "" for an unnamed file.
func createTemp(dir *os.File, base string) (f *os.File, named string, err error) {
	dfd := int(dir.Fd())
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		f := os.NewFile(uintptr(fd), "")
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, "", fmt.Errorf("locking the temporary file: %w", err)
		}
		return f, "", nil
	}
	switch err {
	case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL, unix.ENOSYS:
		// The file system has no unnamed files: fall back to a named one.
	default:
		return nil, "", &os.PathError{Op: "create", Path: dir.Name(), Err: err}
	}
	for range 100 {
		name := tempName(base)
		fd, err := unix.Openat(dfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, "", &os.PathError{Op: "create", Path: filepath.Join(dir.Name(), name), Err: err}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name))
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			unix.Unlinkat(dfd, name, 0) //nolint:errcheck // best effort
			return nil, "", fmt.Errorf("locking the temporary file: %w", err)
		}
		return f, name, nil
	}
	return nil, "", errors.New("no free temporary name")
}

// Folder returns the pending file's folder, held open until Close; nil for a device. Call it
// before the commit.
func (p *Pending) Folder() (*Folder, error) {
	if p.dir == nil {
		return nil, nil
	}
	fd, err := unix.FcntlInt(p.dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("holding the folder of %s: %w", pathtext.Q(p.target.Path), err)
	}
	return &Folder{f: os.NewFile(uintptr(fd), p.dir.Name())}, nil
}

// Lock takes an exclusive flock(2) on the folder, and returns its release. Other trtbuild
// processes committing into the same folder wait; nothing else is blocked. held is false when
// the lock could not be had within FolderLockWait (someone else holds it): the caller goes on
// without it.
func (d *Folder) Lock() (unlock func(), held bool) {
	fd := int(d.f.Fd())
	deadline := time.Now().Add(FolderLockWait)
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(fd, unix.LOCK_UN) }, true //nolint:errcheck // closing releases it too
		}
		if (err != unix.EWOULDBLOCK && err != unix.EINTR) || time.Now().After(deadline) {
			return func() {}, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Holds reports whether name in the folder is the file f (not a link to it).
func (d *Folder) Holds(name string, f *os.File) bool {
	var at, want unix.Stat_t
	if unix.Fstatat(int(d.f.Fd()), name, &at, unix.AT_SYMLINK_NOFOLLOW) != nil || unix.Fstat(int(f.Fd()), &want) != nil {
		return false
	}
	return at.Dev == want.Dev && at.Ino == want.Ino
}

// RemoveTarget removes the regular file now at the target's name (an old manifest that would
// describe a file no longer there), in the folder opened by Create; no link is followed, and a
// missing file is no error.
func (p *Pending) RemoveTarget() error {
	if p.dir == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(p.dir.Fd()), p.base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if err := unix.Unlinkat(int(p.dir.Fd()), p.base, 0); err != nil && err != unix.ENOENT {
		return p.fail("removing", err)
	}
	return nil
}

// ReadBack returns a second descriptor of the file being written, for reading it with ReadAt
// (its offset is shared with the writer): the content the build wrote, whatever happens to the
// target's path later. The caller closes it; it stays valid after the commit.
func (p *Pending) ReadBack() (*os.File, error) {
	fd, err := unix.FcntlInt(p.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicating the descriptor of %s: %w", pathtext.Q(p.target.Path), err)
	}
	return os.NewFile(uintptr(fd), p.target.Final), nil
}

// link gives the unnamed file a temporary name in its folder, so that rename(2) can put it in
// place: linkat(2) with AT_EMPTY_PATH where allowed, else through /proc/self/fd.
func (p *Pending) link() (string, error) {
	fd := int(p.Fd())
	dfd := int(p.dir.Fd())
	for range 100 {
		name := tempName(p.base)
		err := unix.Linkat(fd, "", dfd, name, unix.AT_EMPTY_PATH)
		if err == unix.ENOENT || err == unix.EPERM || err == unix.EINVAL {
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dfd, name, unix.AT_SYMLINK_FOLLOW)
		}
		switch err {
		case nil:
			return name, nil
		case unix.EEXIST:
			continue
		default:
			return "", err
		}
	}
	return "", errors.New("no free temporary name")
}

// readNames lists an open folder without moving its own offset.
func readNames(dir *os.File) ([]string, error) {
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), dir.Name())
	defer d.Close()
	return d.Readdirnames(-1)
}

func removeIfStale(dir *os.File, name string) bool {
	dfd := int(dir.Fd())
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		return false
	}
	if time.Since(time.Unix(st.Mtim.Unix())) < staleAge {
		return false
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // its writer is alive
	}
	// Remove the name only if it still names the file checked.
	var now unix.Stat_t
	if unix.Fstatat(dfd, name, &now, unix.AT_SYMLINK_NOFOLLOW) != nil || now.Ino != st.Ino || now.Dev != st.Dev {
		return false
	}
	return unix.Unlinkat(dfd, name, 0) == nil
}

// umask returns the process's file mode creation mask, read from /proc/self/status (Linux 4.7
// and newer) without changing it; 022 when it cannot be read.
func umask() os.FileMode {
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(n) & os.ModePerm
				}
			}
		}
	}
	return 0o022
}

// commit syncs the file, gives it its permissions and renames it over the target inside the
// folder opened by Create.
func (p *Pending) commit() error {
	if err := p.Sync(); err != nil {
		return p.fail("syncing", err)
	}
	if err := p.Chmod(p.perm); err != nil {
		return p.fail("setting the permissions of", err)
	}
	if p.named == "" {
		name, err := p.link()
		if err != nil {
			return p.fail("naming", err)
		}
		p.named = name
	}
	dfd := int(p.dir.Fd())
	if err := unix.Renameat(dfd, p.named, dfd, p.base); err != nil {
		return p.fail("renaming into place", err)
	}
	return nil
}

// createDeviceTemp makes the unnamed file in $TMPDIR that an output to the character device
// t is written to before it is copied there.
func createDeviceTemp(t Target) (*os.File, error) {
	tmp, err := openFolder(os.TempDir(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s is written through a temporary file in $TMPDIR, and %s cannot be opened (%v); set TMPDIR to a writable folder", pathtext.Q(t.Path), pathtext.Q(os.TempDir()), unwrapPath(errors.Unwrap(err)))
	}
	defer tmp.Close()
	f, named, err := createTemp(tmp, "device-output")
	if named != "" {
		// A named fallback file in $TMPDIR: unlink it at once, the descriptor is enough.
		unix.Unlinkat(int(tmp.Fd()), named, 0) //nolint:errcheck // best effort
	}
	if err != nil {
		return nil, fmt.Errorf("%s is written through a temporary file in $TMPDIR, and none can be made in %s (%v); set TMPDIR to a writable folder", pathtext.Q(t.Path), pathtext.Q(os.TempDir()), unwrapPath(err))
	}
	return f, nil
}

// openThrough opens the character device or FIFO t for writing through, without blocking on
// a FIFO that has no reader.
func openThrough(t Target) (*os.File, error) {
	fd, err := unix.Open(t.Final, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == unix.ENXIO {
		return nil, fmt.Errorf("%s is a FIFO that no process is reading; start its reader first", pathtext.Q(t.Path))
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", pathtext.Q(t.Path), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || (st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFCHR) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s changed while it was opened; try again", pathtext.Q(t.Path))
	}
	// Writes go through an asynchronous writer (internal/outstream); plain blocking writes
	// keep them simple.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening %s: %w", pathtext.Q(t.Path), err)
	}
	return os.NewFile(uintptr(fd), t.Final), nil
}

// removeTemp removes the pending file's temporary name from its folder.
func (p *Pending) removeTemp() error {
	return unix.Unlinkat(int(p.dir.Fd()), p.named, 0)
}
