package outpath

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// tempInfix and tempSuffix make the names of trtbuild's named temporary files:
// ".<target name>.trtbuild-<random>.tmp" in the target's folder. Stale ones (their writer was
// killed) are removed by the next Create for the same target (CleanStale).
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
	target  Target
	perm    os.FileMode
	dir     string // the folder the file is renamed into; "" for a device
	named   string // the temporary name, when the file has one
	done    bool
	closed  bool
	cleaned bool
}

// Create starts writing target (from Inspect), which must be Missing, Regular or a
// CharDevice (a FIFO is a Stream's: see OpenStream). For a file, the temporary file is in the
// target's folder, so the final rename never crosses a file system, and never in $TMPDIR; for
// a device it is an unnamed file in $TMPDIR, copied to the device on CloseAtomicallyReplace.
func Create(t Target) (*Pending, error) { return create(t, defaultPerm) }

// create is Create with newPerm (less the umask) for a file that does not exist yet.
func create(t Target, newPerm os.FileMode) (*Pending, error) {
	switch t.Kind {
	case Missing, Regular:
		dir := filepath.Dir(t.Final)
		CleanStale(dir, filepath.Base(t.Final))
		perm := os.FileMode(0)
		if t.Kind == Regular {
			perm = t.Info.Mode().Perm()
		}
		f, named, err := createTemp(dir, filepath.Base(t.Final))
		if err != nil {
			return nil, fmt.Errorf("creating a temporary file in %s: %w", pathtext.Q(dir), unwrapPath(err))
		}
		if perm == 0 {
			perm = newPerm &^ umask()
		}
		return &Pending{File: f, target: t, perm: perm, dir: dir, named: named}, nil
	case CharDevice:
		f, named, err := createTemp(os.TempDir(), "device-output")
		if named != "" {
			// A named fallback file in $TMPDIR: unlink it at once, the descriptor is enough.
			os.Remove(named)
		}
		if err != nil {
			return nil, fmt.Errorf("creating a temporary file for %s: %w", pathtext.Q(t.Path), unwrapPath(err))
		}
		return &Pending{File: f, target: t}, nil
	}
	return nil, fmt.Errorf("%s %s", pathtext.Q(t.Path), t.Refusal(WholeFile))
}

// createTemp makes a file in dir that only this process can reach: without a name
// (O_TMPFILE) where the file system allows it, else a 0600 file named after base, locked
// with flock(2) so that CleanStale leaves it alone while its writer lives. named is the
// temporary name, "" for an unnamed file. The returned file's Name is "" when it is unnamed.
func createTemp(dir, base string) (f *os.File, named string, err error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
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
		return nil, "", &os.PathError{Op: "create", Path: dir, Err: err}
	}
	f, err = os.CreateTemp(dir, "."+base+tempInfix+"*"+tempSuffix)
	if err != nil {
		return nil, "", err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", fmt.Errorf("locking the temporary file: %w", err)
	}
	return f, f.Name(), nil
}

// CloseAtomicallyReplace makes the written content the target's: for a file, it is synced,
// given its permissions and renamed over the target (the folder is synced too); for a
// character device it is copied to the device. The file is closed in every case.
func (p *Pending) CloseAtomicallyReplace() error {
	if p.done {
		return errors.New("output already committed")
	}
	if p.dir == "" {
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
	name := p.named
	if name == "" {
		var err error
		if name, err = p.link(); err != nil {
			return p.fail("naming", err)
		}
		p.named = name
	}
	if err := os.Rename(name, p.target.Final); err != nil {
		return p.fail("renaming into place", err)
	}
	p.named = ""
	p.done = true
	p.closeFile()
	if d, err := os.Open(p.dir); err == nil {
		d.Sync() //nolint:errcheck // durability of the rename; the file is in place either way
		d.Close()
	}
	return nil
}

func (p *Pending) fail(what string, err error) error {
	return fmt.Errorf("%s %s: %w", what, pathtext.Q(p.target.Final), unwrapPath(err))
}

// link gives the unnamed file a temporary name in its folder, so that rename(2) can put it in
// place: linkat(2) with AT_EMPTY_PATH where allowed, else through /proc/self/fd.
func (p *Pending) link() (string, error) {
	fd := int(p.Fd())
	for range 100 {
		name := filepath.Join(p.dir, "."+filepath.Base(p.target.Final)+tempInfix+strconv.FormatUint(rand.Uint64(), 36)+tempSuffix)
		err := unix.Linkat(fd, "", unix.AT_FDCWD, name, unix.AT_EMPTY_PATH)
		if err == unix.ENOENT || err == unix.EPERM || err == unix.EINVAL {
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
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

// Cleanup drops an output that was not committed: the file is closed and any temporary name
// removed. It is a no-op after CloseAtomicallyReplace succeeded.
func (p *Pending) Cleanup() error {
	if p.done || p.cleaned {
		return nil
	}
	p.cleaned = true
	var err error
	if p.named != "" {
		err = os.Remove(p.named)
	}
	p.closeFile()
	return err
}

// Target returns the target the file is written for.
func (p *Pending) Target() Target { return p.target }

// staleAge is how old an unlocked temporary file must be before CleanStale removes it: older
// than the moment between creating a named temporary file and locking it.
const staleAge = 2 * time.Second

// CleanStale removes temporary files of trtbuild's naming for target name base in dir that no
// living process holds (their writer was killed before it could remove them): regular files
// owned by this user, not locked, older than a few seconds. It returns the names removed.
func CleanStale(dir, base string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape("."+base+tempInfix)+"*"+tempSuffix))
	var removed []string
	for _, m := range matches {
		if removeIfStale(m) {
			removed = append(removed, m)
		}
	}
	return removed
}

func removeIfStale(name string) bool {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
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
	if unix.Lstat(name, &now) != nil || now.Ino != st.Ino || now.Dev != st.Dev {
		return false
	}
	return os.Remove(name) == nil
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
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
