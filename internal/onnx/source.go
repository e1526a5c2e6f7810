package onnx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/filestamp"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// Source is a model opened once: its file and its folder, both held open. Everything a build
// reads of a model — its structure, the preflight's external data checks, the build key's
// hashes, a private copy — is read through one Source, so that a file renamed over the model,
// or a link planted at its name or at an external data file's, after it was opened changes
// nothing that is read. External data files are opened through the held folder, relative to
// it, never through a link that leads out of it; each one read is remembered as it was, for
// Changed.
//
// A Source is safe for concurrent use. Close releases it.
type Source struct {
	path   string // the model's path as given (messages name it)
	file   *os.File
	st     stamp
	folder *os.Root // the folder that holds the file
	dir    string   // its path
	base   string   // the file's name in it
	// restat opens the model by its name in the held folder again, as the build's worker
	// does (WorkIn), for Changed.
	restat func() (*os.File, error)

	mu       sync.Mutex
	meta     *Model
	metaErr  error
	external map[string]stamp // external data files read, by location
	holds    int              // Hold's releases not yet called
	closing  bool             // Close was called: the last release closes
}

// OpenSource opens the model at path, the caller's own path (links at it are followed, as the
// caller asked), and the folder the file is in, found from the file opened (its links
// resolved, so that a link swapped afterwards leads nowhere that matters). Anything but a
// regular file is refused without blocking; the error is regfile.Open's, for
// regfile.InputError to describe.
func OpenSource(path string) (*Source, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Source, error) {
		f.Close()
		return nil, fmt.Errorf("reading model: %s: %w", pathtext.Q(path), err)
	}
	st, err := stampFile(f)
	if err != nil {
		return fail(err)
	}
	real, err := openedPath(f, path)
	if err != nil {
		return fail(err)
	}
	dir, base := filepath.Split(real)
	folder, err := os.OpenRoot(dir)
	if err != nil {
		return fail(fmt.Errorf("its folder: %w", err))
	}
	// The name in the folder must be the file opened: a swap in between is refused.
	if named, err := folder.Lstat(base); err != nil || !os.SameFile(named, st.info) {
		folder.Close()
		return fail(errors.New("it was replaced while it was opened; open it again"))
	}
	held := folder
	return &Source{path: path, file: f, st: st, folder: folder, dir: filepath.Clean(dir), base: base,
		restat: func() (*os.File, error) {
			f, _, err := openRegular(func() (*os.File, error) { return held.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0) })
			return f, err
		}}, nil
}

// ErrLinkedModel is OpenSourceIn's error for a name that is a symbolic link: inside a model
// root only the file itself may be named.
var ErrLinkedModel = errors.New("it is a symbolic link")

// OpenSourceIn opens the model name, a slash-separated path relative to root, and its folder,
// inside root: no part of name leads out of root, and its last part is no link
// (ErrLinkedModel). The file opened is the file examined: a name swapped between the two is
// refused. The Source's Path is name below rootDir ("": name itself, relative to the root, as
// the caller's clients know it). Errors are *fs.PathError values naming name; a file that is
// not regular is a *regfile.NotRegularError inside it.
func OpenSourceIn(root *os.Root, rootDir, name string) (*Source, error) {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	folder := root
	var err error
	if dir != "" {
		if folder, err = root.OpenRoot(filepath.FromSlash(dir)); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	fail := func(err error) (*Source, error) {
		if folder != root {
			folder.Close()
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	lst, err := folder.Lstat(base)
	if err != nil {
		return fail(unwrapPathError(err))
	}
	if lst.Mode()&fs.ModeSymlink != 0 {
		return fail(ErrLinkedModel)
	}
	if !lst.Mode().IsRegular() {
		return fail(&regfile.NotRegularError{Path: name, Kind: outpath.KindOf(lst.Mode())})
	}
	f, st, err := openRegular(func() (*os.File, error) {
		return folder.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	var nr *notRegularError
	if errors.As(err, &nr) {
		return fail(&regfile.NotRegularError{Path: name, Kind: outpath.KindOf(nr.mode)})
	}
	if err != nil {
		return fail(unwrapPathError(err))
	}
	if !os.SameFile(lst, st) {
		f.Close()
		return fail(errors.New("it was replaced while it was opened"))
	}
	stamped, err := stampFile(f)
	if err != nil {
		f.Close()
		return fail(err)
	}
	if folder == root {
		// The Source closes its folder: hold one of its own.
		if folder, err = root.OpenRoot("."); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	held := folder
	return &Source{path: filepath.Join(rootDir, filepath.FromSlash(name)), file: f, st: stamped, folder: folder,
		dir: filepath.Join(rootDir, filepath.FromSlash(dir)), base: base, restat: func() (*os.File, error) {
			if lst, err := held.Lstat(base); err != nil || lst.Mode()&fs.ModeSymlink != 0 {
				return nil, cmpErr(err, ErrLinkedModel)
			}
			f, _, err := openRegular(func() (*os.File, error) { return held.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0) })
			return f, err
		}}, nil
}

// cmpErr is err, or other when err is nil.
func cmpErr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path is the model's path as given (for a Source opened in a root, below the root's folder).
func (s *Source) Path() string { return s.path }

// Dir is the folder that holds the model file (for a Source opened by path, with the links
// of the path resolved): its external data are relative to it.
func (s *Source) Dir() string { return s.dir }

// Base is the model file's name in Dir.
func (s *Source) Base() string { return s.base }

// OpenFolder opens the held folder itself, for a worker that works in it (see Changed): the
// caller closes it.
func (s *Source) OpenFolder() (*os.File, error) { return s.folder.Open(".") }

// Info is what the file system said of the model when it was opened.
func (s *Source) Info() os.FileInfo { return s.st.info }

// Identity is a text that changes whenever the model file does (another file, another size,
// modification or change time): a memo of what was read from a Source may be kept under it.
func (s *Source) Identity() string { return s.st.String() }

// ReaderAt reads the model's bytes from the held file; it holds Size bytes.
func (s *Source) ReaderAt() io.ReaderAt { return s.file }

// File is the held model file (for mapping it into memory); the Source owns it.
func (s *Source) File() *os.File { return s.file }

// Size is the model file's size when it was opened.
func (s *Source) Size() int64 { return s.st.Size }

// Metadata is the model's structure (ReadMetadata), read once from the held file.
func (s *Source) Metadata() (*Model, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta == nil && s.metaErr == nil {
		s.meta, s.metaErr = decode(io.NewSectionReader(s.file, 0, s.st.Size), s.st.Size, s.path)
	}
	return s.meta, s.metaErr
}

// OpenExternal opens the external data file loc through the held folder, with OpenExternal's
// checks, and remembers it as it is now for Changed.
func (s *Source) OpenExternal(loc string) (*os.File, os.FileInfo, error) {
	if why := UnsafeLocation(loc); why != "" {
		return nil, nil, &ExternalError{Location: loc, Problem: ExternalUnsafe, Reason: why}
	}
	f, st, err := openRegular(func() (*os.File, error) {
		return s.folder.OpenFile(filepath.FromSlash(loc), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, nil, externalError(s.dir, loc, err)
	}
	stamped, err := stampFile(f)
	if err != nil {
		f.Close()
		return nil, nil, externalError(s.dir, loc, err)
	}
	s.mu.Lock()
	if s.external == nil {
		s.external = map[string]stamp{}
	}
	s.external[loc] = stamped
	s.mu.Unlock()
	return f, st, nil
}

// StatExternal examines the external data file loc through the held folder, with
// StatExternal's checks.
func (s *Source) StatExternal(loc string) (os.FileInfo, error) {
	return statExternalIn(s.folder, s.dir, loc)
}

// ExternalFiles is Model.ExternalFiles for m, the Source's model, examined through the held
// folder.
func (s *Source) ExternalFiles(m *Model) []ExternalFile {
	return m.externalFiles(s.dir, s.StatExternal)
}

// Changed says whether the model a reader opening it by its name in the held folder would read
// now (as the build's worker does, working in that folder) is not the one this Source read:
// the name leads to another file, or the file (or an external data file this Source read)
// was written to, renamed or linked since it was opened — every such change moves a file's
// change time, which no one can set back. What happens on the way to the folder (a folder or a
// link of the path swapped) cannot reach a reader that works in the folder it holds. nil means
// unchanged.
func (s *Source) Changed() error {
	err := sameAs(s.st, s.restat)
	if err != nil {
		return fmt.Errorf("the model %s changed while it was being built (%s)", pathtext.Q(s.path), pathtext.Line(unwrapPathError(err).Error()))
	}
	s.mu.Lock()
	locs := make([]string, 0, len(s.external))
	for loc := range s.external {
		locs = append(locs, loc)
	}
	s.mu.Unlock()
	sort.Strings(locs)
	for _, loc := range locs {
		s.mu.Lock()
		was := s.external[loc]
		s.mu.Unlock()
		// By its name in the held folder, as the worker working there opens it (TensorRT
		// resolves a location against the model's folder).
		err := sameAs(was, func() (*os.File, error) {
			f, _, err := openRegular(func() (*os.File, error) {
				return s.folder.OpenFile(filepath.FromSlash(loc), os.O_RDONLY|syscall.O_NONBLOCK, 0)
			})
			return f, err
		})
		if err != nil {
			return fmt.Errorf("the external data file %q of %s changed while the model was being built (%s)", loc, pathtext.Q(s.path), pathtext.Line(unwrapPathError(err).Error()))
		}
	}
	return nil
}

// sameAs opens a file with open and says how it differs from was, or nil when it is the same
// file, unchanged.
func sameAs(was stamp, open func() (*os.File, error)) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	now, err := stampFile(f)
	switch {
	case err != nil:
		return err
	case !was.SameFile(now.Stamp):
		return errors.New("its name leads to another file now")
	case !was.same(now):
		return errors.New("it was written to, renamed or linked since it was opened")
	}
	return nil
}

// Hold keeps the Source open until release is called, even when Close is called first: work
// that a caller may abandon (hashing a large model when a signal comes) holds it, and the files
// are closed when the last holder is done.
func (s *Source) Hold() (release func()) {
	s.mu.Lock()
	s.holds++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.holds--
			last := s.holds == 0 && s.closing
			s.mu.Unlock()
			if last {
				s.close()
			}
		})
	}
}

// Close releases the model and its folder, once no Hold is left.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	held := s.holds > 0
	s.mu.Unlock()
	if held {
		return nil
	}
	return s.close()
}

func (s *Source) close() error {
	err := s.file.Close()
	if cerr := s.folder.Close(); err == nil {
		err = cerr
	}
	return err
}

// CopyTo writes a private copy of the model and of every external data file it names into the
// folder dir (made if missing; trtbuild's own: no link is followed there), each at its place
// relative to the model, through internal/outpath, and returns the copy's path. Everything is
// read from what the Source holds. The copy is what a build reads when the original's folder
// is one that others may write.
func (s *Source) CopyTo(dir string) (string, error) {
	m, err := s.Metadata()
	if err != nil {
		return "", err
	}
	base := filepath.Base(s.path)
	dst := filepath.Join(dir, base)
	// From the file itself (its offset is CopyTo's alone), so that the copy can be made by
	// copy_file_range, which shares the blocks where the file system can.
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("copying the model %s: %w", pathtext.Q(base), err)
	}
	if err := copyOwn(dst, s.file, s.st.Size); err != nil {
		return "", fmt.Errorf("copying the model %s: %w", pathtext.Q(base), err)
	}
	seen := map[string]bool{}
	for _, ref := range m.External {
		if ref.Location == "" || seen[ref.Location] {
			continue
		}
		seen[ref.Location] = true
		f, st, err := s.OpenExternal(ref.Location)
		if err != nil {
			return "", err
		}
		rel := filepath.FromSlash(ref.Location)
		if sub := filepath.Dir(rel); sub != "." {
			if err := outpath.MkdirOwn(dir, sub); err != nil {
				f.Close()
				return "", fmt.Errorf("copying external data %q: %w", ref.Location, err)
			}
		}
		err = copyOwn(filepath.Join(dir, rel), f, st.Size())
		f.Close()
		if err != nil {
			return "", fmt.Errorf("copying external data %q: %w", ref.Location, err)
		}
	}
	return dst, nil
}

// ErrCutShort is CopyTo's error when a file it copies ends before the size it had when it was
// opened: it was cut short meanwhile, and no copy is left.
var ErrCutShort = errors.New("it was cut short while it was copied: submit it again once it is written in full")

// copyOwn writes the size bytes src holds to path, a file trtbuild names itself (outpath.Own).
// A src that ends before size is ErrCutShort, and nothing is left at path.
func copyOwn(path string, src io.Reader, size int64) error {
	t, err := outpath.InspectOwn(path)
	if err != nil {
		return err
	}
	if why := t.Refusal(outpath.Own); why != "" {
		return fmt.Errorf("%s %s", pathtext.Q(path), why)
	}
	p, err := outpath.Create(t)
	if err != nil {
		return err
	}
	n, err := io.Copy(p.File, io.LimitReader(src, size))
	if err == nil && n != size {
		err = ErrCutShort
	}
	if err != nil {
		p.Cleanup() //nolint:errcheck // the copy's error is the one to report
		return err
	}
	return p.CloseAtomicallyReplace()
}

// stamp is what says a file is still the one that was read (internal/filestamp), with what the
// file system said of it.
type stamp struct {
	info os.FileInfo
	filestamp.Stamp
}

// stampFile is the stamp of an open file.
func stampFile(f *os.File) (stamp, error) {
	fi, err := f.Stat()
	if err != nil {
		return stamp{}, err
	}
	st, err := filestamp.Of(f)
	if err != nil {
		return stamp{}, err
	}
	return stamp{info: fi, Stamp: st}, nil
}

func (a stamp) same(b stamp) bool { return a.Stamp == b.Stamp }

func (a stamp) String() string {
	return fmt.Sprintf("%d:%d %d %d %d", a.Dev, a.Ino, a.Size, a.ModTime, a.ChangeTime)
}
