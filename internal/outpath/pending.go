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
		f, err := createDeviceTemp(t)
		if err != nil {
			return nil, err
		}
		return &Pending{File: f, target: t}, nil
	}
	return nil, fmt.Errorf("%s %s", pathtext.Q(t.Path), t.Refusal(WholeFile))
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
	if err := p.commit(); err != nil {
		return err
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

// FolderLockWait bounds how long Lock waits: the folder may be one other users can read (and
// so lock), and a commit must not hang on them.
const FolderLockWait = 5 * time.Second

// Close releases the folder.
func (d *Folder) Close() error {
	if d == nil {
		return nil
	}
	return d.f.Close()
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
		err = p.removeTemp()
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
		f, err := openThrough(t)
		if err != nil {
			return nil, err
		}
		return &Stream{File: f}, nil
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
func CreatePath(path string) (*Pending, error) { return CreateAs(path, WholeFile) }

// CreateAs is CreatePath for an output used as use: Own (a name trtbuild chose, inspected
// with InspectOwn) follows no link.
func CreateAs(path string, use Use) (*Pending, error) {
	inspect := Inspect
	if use == Own {
		inspect = InspectOwn
	}
	t, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if why := t.Refusal(use); why != "" {
		return nil, fmt.Errorf("%s %s", pathtext.Q(path), why)
	}
	return Create(t)
}
