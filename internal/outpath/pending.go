package outpath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// tempInfix and tempSuffix make the names of trtbuild's named temporary files:
// ".<target name>.trtbuild-<random>.tmp" in the target's folder. Stale ones (their writer was
// killed) are removed by the next Create for the same target (cleanStaleAt).
const (
	tempInfix  = ".trtbuild-"
	tempSuffix = ".tmp"
)

// defaultPerm is the permission of a new output file, less the umask, as for a file a shell
// redirection creates without execute bits.
const defaultPerm = 0o644

// Pending is an output being written. Write to File (or hand it to another process); then
// either CloseAtomicallyReplace puts it in place, or Cleanup drops it. Not safe for concurrent
// use. Call Cleanup in a defer: it is a no-op after a successful CloseAtomicallyReplace.
type Pending struct {
	*os.File
	target Target
	perm   os.FileMode
	// dir is the target's folder, opened when the output was created: the file is named and
	// renamed inside it (linkat, renameat), so a folder swapped for a link while the build runs
	// cannot redirect the output. nil for a device.
	dir     *os.File
	base    string // the target's name in dir
	named   string // the temporary name in dir, when the file has one
	done    bool
	closed  bool
	cleaned bool
}

// Create starts writing target (from Inspect or InspectOwn), which must be Missing, Regular or
// a CharDevice (a FIFO is a Stream's: see OpenStream). For a file, the target's folder is
// opened now and the temporary file made in it, so the final rename never crosses a file
// system, never lands in $TMPDIR, and happens in the folder as it was when the output was
// created; for a device it is an unnamed file in $TMPDIR, copied to the device on
// CloseAtomicallyReplace.
func Create(t Target) (*Pending, error) { return create(t, defaultPerm) }

// create is Create with newPerm (less the umask) for a file that does not exist yet.
func create(t Target, newPerm os.FileMode) (*Pending, error) {
	switch t.Kind {
	case Missing, Regular:
		dirName := filepath.Dir(t.Final)
		base := filepath.Base(t.Final)
		dir, err := openFolder(dirName, t.dirInfo)
		if err != nil {
			return nil, err
		}
		cleanStaleAt(dir, base)
		perm := os.FileMode(0)
		if t.Kind == Regular {
			perm = inheritedPerm(t.Info)
		}
		f, named, err := createTemp(dir, base)
		if err != nil {
			dir.Close()
			return nil, fmt.Errorf("creating a temporary file in %s: %w", pathtext.Q(dirName), unwrapPath(err))
		}
		if perm == 0 {
			perm = newPerm &^ umask()
		}
		return &Pending{File: f, target: t, perm: perm, dir: dir, base: base, named: named}, nil
	case CharDevice:
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
		return &Pending{File: f, target: t}, nil
	}
	return nil, fmt.Errorf("%s %s", pathtext.Q(t.Path), t.Refusal(WholeFile))
}

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

// tempName is a fresh temporary name for a file that will be renamed to base.
func tempName(base string) string {
	return "." + base + tempInfix + strconv.FormatUint(rand.Uint64(), 36) + tempSuffix
}

// CloseAtomicallyReplace makes the written content the target's: for a file, it is synced,
// given its permissions and renamed over the target inside the folder opened by Create (the
// folder is synced too); rename(2) replaces whatever has the name then, a link included,
// without following it. For a character device the content is copied to the device. The file
// is closed in every case.
func (p *Pending) CloseAtomicallyReplace() error {
	if p.done {
		return errors.New("output already committed")
	}
	if p.dir == nil {
		err := p.copyToDevice()
		p.closeFile()
		if err == nil {
			p.done = true
		}
		return err
	}
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
	p.named = ""
	p.done = true
	p.closeFile()
	p.dir.Sync() //nolint:errcheck // durability of the rename; the file is in place either way
	p.closeDir()
	return nil
}

// Folder is the folder an output is renamed into, held open: Lock serializes the commits of
// builds that write the same output (an engine and its manifest go in place together), Holds
// tells whether a name there still is a given file.
type Folder struct{ f *os.File }

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

// FolderLockWait bounds how long Lock waits: the folder may be one other users can read (and
// so lock), and a commit must not hang on them.
const FolderLockWait = 5 * time.Second

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

// Close releases the folder.
func (d *Folder) Close() error {
	if d == nil {
		return nil
	}
	return d.f.Close()
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

// Reset empties the file, to be written again from the start.
func (p *Pending) Reset() error {
	if err := p.Truncate(0); err != nil {
		return err
	}
	_, err := p.Seek(0, io.SeekStart)
	return err
}

func (p *Pending) fail(what string, err error) error {
	return fmt.Errorf("%s %s: %w", what, pathtext.Q(p.target.Final), unwrapPath(err))
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

func (p *Pending) copyToDevice() error {
	dev, err := os.OpenFile(p.target.Final, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", pathtext.Q(p.target.Path), unwrapPath(err))
	}
	st, err := dev.Stat()
	if err == nil && KindOf(st.Mode()) != CharDevice {
		err = fmt.Errorf("%s is no longer a character device", pathtext.Q(p.target.Path))
	}
	if err == nil {
		_, err = p.Seek(0, io.SeekStart)
	}
	if err == nil {
		_, err = io.Copy(dev, p.File)
	}
	if cerr := dev.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing to %s: %w", pathtext.Q(p.target.Path), unwrapPath(err))
	}
	return nil
}

func (p *Pending) closeFile() {
	if !p.closed {
		p.closed = true
		p.File.Close()
	}
}

func (p *Pending) closeDir() {
	if p.dir != nil {
		p.dir.Close()
		p.dir = nil
	}
}

// Cleanup drops an output that was not committed: the file is closed and any temporary name
// removed. It is a no-op after CloseAtomicallyReplace succeeded.
func (p *Pending) Cleanup() error {
	if p.done || p.cleaned {
		return nil
	}
	p.cleaned = true
	var err error
	if p.named != "" && p.dir != nil {
		err = unix.Unlinkat(int(p.dir.Fd()), p.named, 0)
	}
	p.closeFile()
	p.closeDir()
	return err
}

// Target returns the target the file is written for.
func (p *Pending) Target() Target { return p.target }

// staleAge is how old an unlocked temporary file must be before cleanStaleAt removes it: older
// than the moment between creating a named temporary file and locking it.
const staleAge = 2 * time.Second

// cleanStaleAt removes temporary files of trtbuild's naming for target name base in the open
// folder dir that no living process holds (their writer was killed before it could remove
// them): regular files owned by this user, not locked, older than a few seconds. It returns
// the names removed.
func cleanStaleAt(dir *os.File, base string) []string {
	names, err := readNames(dir)
	if err != nil {
		return nil
	}
	prefix := "." + base + tempInfix
	var removed []string
	for _, name := range names {
		if strings.HasPrefix(name, prefix) && strings.HasSuffix(name, tempSuffix) && removeIfStale(dir, name) {
			removed = append(removed, filepath.Join(dir.Name(), name))
		}
	}
	return removed
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

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// WriteOwn writes data to path, a file trtbuild names on its own (InspectOwn, Own): a new or
// regular file is replaced atomically, anything else (a symbolic link, a FIFO, a device, a
// folder) refused. A new file gets perm less the umask.
func WriteOwn(path string, data []byte, perm os.FileMode) error {
	t, err := InspectOwn(path)
	if err != nil {
		return err
	}
	if why := t.Refusal(Own); why != "" {
		return fmt.Errorf("%s %s", pathtext.Q(path), why)
	}
	return writeTarget(t, data, perm)
}

// WriteFile writes data to path by the package's rules: a new or regular file (a symbolic
// link's target) is replaced atomically, a character device is written through, anything
// else is refused. The caller should check Refusal first for a better message.
func WriteFile(path string, data []byte) error { return WriteFilePerm(path, data, defaultPerm) }

// WriteFilePerm is WriteFile that gives a new file perm, less the umask (an existing file keeps
// its permissions).
func WriteFilePerm(path string, data []byte, perm os.FileMode) error {
	t, err := Inspect(path)
	if err != nil {
		return err
	}
	if why := t.Refusal(WholeFile); why != "" {
		return fmt.Errorf("%s %s", pathtext.Q(path), why)
	}
	return writeTarget(t, data, perm)
}

// writeTarget writes data to the checked target t.
func writeTarget(t Target, data []byte, perm os.FileMode) error {
	path := t.Path
	p, err := create(t, perm)
	if err != nil {
		return err
	}
	defer p.Cleanup() //nolint:errcheck // a no-op after the commit
	if _, err := p.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", pathtext.Q(path), unwrapPath(err))
	}
	return p.CloseAtomicallyReplace()
}

// Stream is an output written while the build runs (--trace): a new or regular file is
// written to a pending file and put in place by Commit; a character device or a FIFO is
// written through at once.
type Stream struct {
	*os.File
	pending *Pending
}

// OpenStream opens target for a Stream use. A FIFO without a reader is refused at once
// rather than waited for: opening it never blocks.
func OpenStream(t Target) (*Stream, error) {
	switch t.Kind {
	case Missing, Regular:
		p, err := Create(t)
		if err != nil {
			return nil, err
		}
		return &Stream{File: p.File, pending: p}, nil
	case CharDevice, FIFO:
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
		return &Stream{File: os.NewFile(uintptr(fd), t.Final)}, nil
	}
	return nil, fmt.Errorf("%s %s", pathtext.Q(t.Path), t.Refusal(LiveStream))
}

// ToFile reports whether the stream goes to a file put in place by Commit (its writes never
// wait for a reader), rather than to a device or FIFO.
func (s *Stream) ToFile() bool { return s.pending != nil }

// Commit ends the stream: a file is put in place (see Pending.CloseAtomicallyReplace), a
// device or FIFO closed.
func (s *Stream) Commit() error {
	if s.pending != nil {
		return s.pending.CloseAtomicallyReplace()
	}
	return s.File.Close()
}

// Cleanup drops a stream that was not committed: a pending file is removed, a device or FIFO
// closed. A no-op after Commit.
func (s *Stream) Cleanup() error {
	if s.pending != nil {
		return s.pending.Cleanup()
	}
	s.File.Close()
	return nil
}

// CreatePath is Inspect and Create for a WholeFile output: it refuses what Refusal refuses.
func CreatePath(path string) (*Pending, error) {
	t, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	if why := t.Refusal(WholeFile); why != "" {
		return nil, fmt.Errorf("%s %s", pathtext.Q(path), why)
	}
	return Create(t)
}
