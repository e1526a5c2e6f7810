// Package timingcache keeps a builder's timing cache in a file that several builds may share.
//
// A timing cache records how long each tactic took, so the next build can skip timing it. The
// bytes are the builder's own format (TensorRT's serialized ITimingCache, or the simulated
// builder's text); only the builder can read or merge them, so this package never looks
// inside: it finds the default file (DefaultPath), reads a file (LoadWith), and saves a new
// version (SaveWith) by handing what is on disk at that moment to a merge function the caller
// provides.
//
// Concurrency: SaveWith holds an exclusive lock on "<file>.lock" from reading the current file
// until the merged one has replaced it, and replaces it atomically (internal/outpath), so
// builds that share one cache and save at the same time each merge into the other's result and
// no entry is lost; a reader never sees a half-written file. LoadWith takes the same lock shared.
// On Unix the lock is two locks on the same file: flock(2), which earlier trtbuild releases
// take, and an open file description lock (fcntl F_OFD_SETLK), which conflicts with the POSIX
// record lock trtexec takes on the same "<file>.lock" with lockf(3) (TensorRT's
// shared/utils/fileLock.cpp), so trtexec and trtbuild exclude each other too. On Windows it is
// LockFileEx on the whole lock file (lock_windows.go). Either way the lock belongs to the open
// file, not the process, so two opens in one process exclude each other, and it is released
// when the file is closed or its process dies.
//
// Safety in a folder other users may write (a shared cache): the cache file and its lock are
// opened with O_NOFOLLOW (on Windows FILE_FLAG_OPEN_REPARSE_POINT, which refuses junctions
// too) and must be regular files, so a planted symbolic link, FIFO or device is refused, never
// followed, read or replaced; opening never blocks. The lock file is created only beside a
// cache file this user owns (on Windows: whose owner SID is this user's, internal/winowner) or
// one about to be created; beside another user's file an existing lock is used, and none is
// made.
package timingcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trtbuild/trtbuild/internal/filestamp"
	"github.com/trtbuild/trtbuild/internal/fserr"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// Auto is the --timing-cache value that selects the default file for the builder (DefaultPath);
// any other value is a path (write ./auto for a file named "auto").
const Auto = "auto"

// ErrRejected marks a merge that refused the file on disk: it is corrupt, or a cache of another
// builder, TensorRT version or GPU. SaveWith leaves such a file as it is.
var ErrRejected = errors.New("the cache file on disk is corrupt or belongs to another builder")

// Key identifies the builder a cache is good for: TensorRT refuses (or, worse, misuses) a
// cache made by another TensorRT version or on another GPU, so each gets its own file.
type Key struct {
	Backend  string // "sim" or "tensorrt"
	TensorRT int    // loaded TensorRT version, major*10000+minor*100+patch; for sim the major's (110000)
	GPU      string // the device's name, e.g. "NVIDIA H100 80GB HBM3"
	// ComputeMajor and ComputeMinor are the device's compute capability.
	ComputeMajor, ComputeMinor int
	// Build is TensorRT's build number (the fourth part of 10.8.0.43), 0 when unknown.
	Build int
}

// maxName bounds the length of a key's file name.
const maxName = 120

// Name returns the key as a file name without extension: "sim-trt11" for the simulated builder
// playing TensorRT 11 ("sim" when the key names no major), or
// e.g. "trt-10.8.0_NVIDIA-H100-80GB-HBM3_sm90". It holds only ASCII letters, digits, '.',
// '_' and '-', is never empty and never starts with '.'.
func (k Key) Name() string {
	if k.Backend == "" || k.Backend == "sim" {
		// The stand-in TensorRT of each major writes caches of its own.
		if k.TensorRT > 0 {
			return fmt.Sprintf("sim-trt%d", k.TensorRT/10000)
		}
		return "sim"
	}
	parts := []string{sanitize(k.Backend)}
	if k.Backend == "tensorrt" {
		parts[0] = k.versionName()
	}
	if gpu := sanitize(k.GPU); gpu != "" {
		parts = append(parts, gpu)
	} else {
		parts = append(parts, "nogpu")
	}
	parts = append(parts, fmt.Sprintf("sm%d%d", k.ComputeMajor, k.ComputeMinor))
	name := strings.Join(parts, "_")
	if len(name) > maxName {
		name = name[:maxName]
	}
	return name
}

// versionName is the TensorRT part of a cache's file name: "trt-10.8.0", or "trt-10.8.0.43"
// when the build number is known.
func (k Key) versionName() string {
	v := fmt.Sprintf("trt-%d.%d.%d", k.TensorRT/10000, k.TensorRT/100%100, k.TensorRT%100)
	if k.Build > 0 {
		v += fmt.Sprintf(".%d", k.Build)
	}
	return v
}

// sanitize keeps ASCII letters, digits, '.' and '-', turns every other run of characters into
// one '-', and trims '-' and '.' from both ends.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-')
		if ok && r != '-' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-.")
}

// DefaultPath returns the cache file for key under the user's cache folder:
// os.UserCacheDir()/trtbuild/timing-cache/<key>.cache ($XDG_CACHE_HOME or ~/.cache on Linux,
// %LOCALAPPDATA% on Windows).
func DefaultPath(key Key) (string, error) {
	dir, err := DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, key.Name()+".cache"), nil
}

// DefaultDir is the folder of the caches of --timing-cache auto: the user cache folder's
// trtbuild/timing-cache.
func DefaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder for --timing-cache auto: %w", err)
	}
	return filepath.Join(dir, "trtbuild", "timing-cache"), nil
}

// LockWait is how long LoadWith and SaveWith wait for another build's lock before giving up.
const LockWait = 2 * time.Minute

// lockRetry is how often a waiting lock is tried again.
const lockRetry = 20 * time.Millisecond

// Problem is a cache path that cannot be used as it is: a link, not a regular file, an
// unreadable or empty file. Its message completes "timing cache PATH ...".
type Problem struct {
	Path   string
	Reason string
	// Empty marks a zero-length file: without --strict-cache it is treated as no cache.
	Empty bool
	Err   error
}

func (p *Problem) Error() string { return "timing cache " + pathtext.Q(p.Path) + " " + p.Reason }
func (p *Problem) Unwrap() error { return p.Err }

// Check looks at a cache path without reading or changing anything and returns a *Problem
// when it cannot be used: a symbolic link (never followed: another user may have planted it),
// not a regular file, a lock file beside it that is not a regular file, a file that cannot be
// read, or an empty one (Problem.Empty). With write, it also fails when the cache could not be
// saved (its folder, or the nearest existing one, is not writable). A missing file is fine.
func Check(path string, write bool) error {
	st, err := os.Lstat(path)
	switch {
	case missing(err):
		st = nil
	case err != nil:
		return &Problem{Path: path, Reason: fmt.Sprintf("cannot be examined (%v)", unwrapPath(err)), Err: err}
	}
	if st != nil {
		t := outpath.Target{Path: path, Final: path, Kind: outpath.KindOf(st.Mode()), Info: st, Link: st.Mode()&fs.ModeSymlink != 0}
		if t.Link {
			if dest, err := os.Readlink(path); err == nil {
				t.Final = dest
			}
		}
		if why := t.Refusal(outpath.Store); why != "" {
			return &Problem{Path: path, Reason: why}
		}
		f, _, err := regfile.OpenNoFollow(path)
		switch {
		case err == nil:
			f.Close()
		case fserr.Of(err) == fserr.Busy:
			// Another build replaces the file this moment, which Windows answers with a
			// sharing violation: not a problem of the file. Check holds no lock; the reads
			// and saves that follow it open the file under the lock.
		default:
			return &Problem{Path: path, Reason: fmt.Sprintf("cannot be read (%v); %s", unwrapPath(err), advice(err, "fix its permissions")), Err: err}
		}
		if st.Size() == 0 {
			return &Problem{Path: path, Reason: "is empty (0 bytes); delete it, or let this build replace it without --strict-cache", Empty: true}
		}
	}
	if lst, err := os.Lstat(lockPath(path)); err == nil && !lst.Mode().IsRegular() {
		return &Problem{Path: path, Reason: fmt.Sprintf("has a lock file %s that is %s; remove it", pathtext.Q(lockPath(path)), describe(lst.Mode()))}
	}
	if write {
		dir := filepath.Dir(path)
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		if err := writable(dir); err != nil {
			return &Problem{Path: path, Reason: fmt.Sprintf("cannot be saved: %s is not writable (%v); make it writable, or drop --strict-cache to use the cache read-only", pathtext.Q(dir), err), Err: err}
		}
	}
	return nil
}

func describe(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "a symbolic link"
	}
	return outpath.KindOf(m).String()
}

// Stamp identifies one state of a cache file: its device, inode, size and modification and
// status-change times, or that there was no file (or an empty one). SaveWith compares the file's
// stamp under its lock with the one LoadWith saw, so that a file nobody replaced or rewrote since
// is not read again: a cache can be hundreds of MB.
type Stamp struct {
	known bool
	none  bool // no file, or an empty one
	file  filestamp.Stamp
}

// stampOf returns the stamp of the open file f (size 0 counts as no file).
func stampOf(f *os.File) (Stamp, error) {
	st, err := filestamp.Of(f)
	if err != nil {
		return Stamp{}, err
	}
	if st.Size == 0 {
		return Stamp{known: true, none: true}, nil
	}
	return Stamp{known: true, file: st}, nil
}

// LoadWith reads the cache file with read, which gets the open file and its size and is not
// called when the file does not exist yet or is empty, and returns the file's stamp for SaveWith.
// It refuses what Check refuses (but for an empty file) and holds the shared lock while
// reading; when no lock can be had (a read-only folder, another user's cache without a lock
// file) it reads without it, which is safe because SaveWith replaces the file atomically. It never
// blocks on a FIFO and never follows a link.
func LoadWith(ctx context.Context, path string, read func(f *os.File, size int64) error) (Stamp, error) {
	none := Stamp{known: true, none: true}
	if err := Check(path, false); err != nil {
		var p *Problem
		if errors.As(err, &p) && p.Empty {
			return none, nil
		}
		return Stamp{}, err
	}
	if _, err := os.Lstat(path); missing(err) {
		return none, nil
	}
	lock, err := acquire(ctx, path, false)
	if err != nil && !errors.Is(err, errNoLock) {
		return Stamp{}, err
	}
	defer lock.release()
	f, _, err := regfile.OpenNoFollow(path)
	if missing(err) {
		return none, nil
	}
	if err != nil {
		return Stamp{}, fmt.Errorf("reading timing cache: %w", err)
	}
	defer f.Close()
	stamp, err := stampOf(f)
	if err != nil {
		return Stamp{}, fmt.Errorf("reading timing cache: %w", err)
	}
	if stamp.none {
		return stamp, nil
	}
	if err := read(f, stamp.file.Size); err != nil {
		return Stamp{}, fmt.Errorf("reading timing cache: %w", err)
	}
	return stamp, nil
}

// Disk is the cache file as SaveWith found it, with the exclusive lock held.
type Disk struct {
	// Unchanged: the file is in the state the caller's Stamp describes (the one LoadWith
	// returned), so the caller knows what it holds without reading it.
	Unchanged bool
	// File is the file, open for reading from its start, when it exists and is not empty; it
	// is closed when the merge returns. Size is its size.
	File *os.File
	Size int64
}

// WriteMergeFunc merges what a build learned into disk and writes the result to out, only
// when it differs from what disk holds; it reports whether it did. With out nil it writes
// nothing and only tells whether there is something to save. It returns an error that wraps
// ErrRejected when the file is not a cache it can read.
type WriteMergeFunc func(disk Disk, out *os.File) (changed bool, err error)

// Saved says what Save did.
type Saved struct {
	Path    string
	Bytes   int64 // size of the file written, or of the file left as it was
	Written bool  // false when the merge left the file as it was
}

// SaveWith updates the cache file: with the exclusive lock held it opens the file as it is now
// and lets merge write the merged cache into a new file, which then replaces it atomically.
// since is the Stamp LoadWith returned (the zero Stamp for none): when the file is still in
// that state, Disk.Unchanged says so. It creates the file's folder when missing. When merge
// fails (for example with ErrRejected) the file is left as it was and the error is returned,
// wrapped. When there is nothing new to save, nothing is written and no lock is needed: a
// read-only cache is fine then.
func SaveWith(ctx context.Context, path string, since Stamp, merge WriteMergeFunc) (Saved, error) {
	res := Saved{Path: path}
	if err := Check(path, false); err != nil {
		var p *Problem
		if !errors.As(err, &p) || !p.Empty {
			return res, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		// A read-only place may still hold a cache with nothing new to add.
		if changed, size, rerr := mergeInto(path, since, merge, false); rerr == nil && !changed {
			res.Bytes = size
			return res, nil
		}
		return res, fmt.Errorf("creating the timing cache folder: %w", err)
	}
	lock, err := acquire(ctx, path, true)
	switch {
	case errors.Is(err, errNoLock) && lock.readOnly:
		changed, size, rerr := mergeInto(path, since, merge, false)
		if rerr != nil {
			return res, rerr
		}
		if !changed {
			res.Bytes = size
			return res, nil
		}
		return res, fmt.Errorf("locking the timing cache: %w", lock.err)
	case errors.Is(err, errNoLock):
		// Another user's cache without a lock file: replaced atomically, unlocked.
	case err != nil:
		return res, err
	}
	defer lock.release()

	changed, size, err := mergeInto(path, since, merge, true)
	if err != nil {
		return res, err
	}
	res.Bytes, res.Written = size, changed
	return res, nil
}

// mergeInto opens the file (none when missing or empty) and merges it: into a new file that
// replaces it when write is set and the merge changed something, or, without write, only to
// learn whether it would. It returns whether the merge changed something and the size of the
// file as it is afterwards.
func mergeInto(path string, since Stamp, merge WriteMergeFunc, write bool) (changed bool, size int64, err error) {
	var disk Disk
	f, _, err := regfile.OpenNoFollow(path)
	switch {
	case missing(err):
		disk.Unchanged = since.known && since.none
	case err != nil:
		return false, 0, fmt.Errorf("reading the timing cache before merging: %w", err)
	default:
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		now, err := stampOf(f)
		if err != nil {
			return false, 0, fmt.Errorf("reading the timing cache before merging: %w", err)
		}
		disk.Unchanged = since.known && now == since
		if !now.none {
			disk.File, disk.Size = f, now.file.Size
		}
	}
	if !write {
		changed, err = merge(disk, nil)
		if err != nil {
			return false, disk.Size, fmt.Errorf("merging the timing cache: %w", err)
		}
		return changed, disk.Size, nil
	}
	t := outpath.Target{Path: path, Final: path, Kind: outpath.Missing}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		t.Kind, t.Info = outpath.Regular, st
	}
	p, err := outpath.Create(t)
	if err != nil {
		return false, disk.Size, fmt.Errorf("writing the timing cache: %w", err)
	}
	defer p.Cleanup() //nolint:errcheck // a no-op after the commit
	changed, err = merge(disk, p.File)
	if err != nil {
		return false, disk.Size, fmt.Errorf("merging the timing cache: %w", err)
	}
	if !changed {
		return false, disk.Size, nil
	}
	st, err := p.File.Stat()
	if err != nil {
		return false, disk.Size, fmt.Errorf("writing the timing cache: %w", err)
	}
	// The file read is closed first: Windows does not replace a file this process holds open.
	if f != nil {
		f.Close()
		f = nil
	}
	// The path was checked under the lock not to be a link; rename(2) replaces whatever name
	// is there and never follows a link, so a link planted since is replaced, not followed.
	if err := p.CloseAtomicallyReplace(); err != nil {
		return false, disk.Size, fmt.Errorf("writing the timing cache: %w", err)
	}
	return true, st.Size(), nil
}

func lockPath(path string) string { return path + ".lock" }

// errNoLock means no lock file could be opened or made; see fileLock.
var errNoLock = errors.New("no lock file")

// fileLock is a held lock on "<cache>.lock" (see the package comment).
type fileLock struct {
	f        *os.File
	readOnly bool  // the lock could not be made for lack of write permission
	err      error // why there is no lock
}

// acquire opens (or, beside a cache this user owns or is about to create, creates) the lock
// file without following links and takes the lock (see the package comment), shared or
// exclusive, waiting up to LockWait. It returns a usable *fileLock also with errNoLock
// (release is then a no-op).
func acquire(ctx context.Context, path string, exclusive bool) (*fileLock, error) {
	l := &fileLock{}
	lf, err := openLock(lockPath(path), mayCreateLock(path))
	if err != nil {
		l.err = &fs.PathError{Op: "open", Path: lockPath(path), Err: err}
		switch fserr.Of(err) {
		case fserr.Missing:
			return l, errNoLock
		case fserr.Denied, fserr.ReadOnly:
			l.readOnly = true
			return l, errNoLock
		case fserr.Link:
			return l, fmt.Errorf("timing cache lock %s is a symbolic link; remove it", pathtext.Q(lockPath(path)))
		}
		if errors.Is(err, errLockNotRegular) {
			return l, fmt.Errorf("timing cache lock %s is not a regular file; remove it", pathtext.Q(lockPath(path)))
		}
		return l, fmt.Errorf("opening the timing cache lock: %w", l.err)
	}
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	for {
		ok, err := lf.try(exclusive)
		if err != nil {
			lf.f.Close()
			return l, fmt.Errorf("locking the timing cache: %w", err)
		}
		if ok {
			l.f = lf.f
			return l, nil
		}
		select {
		case <-ctx.Done():
			lf.f.Close()
			return l, fmt.Errorf("locking the timing cache: another build held %s for %s", pathtext.Q(lockPath(path)), LockWait)
		case <-time.After(lockRetry):
		}
	}
}

// errLockNotRegular is a lock file that is there but is not a regular file.
var errLockNotRegular = errors.New("the lock file is not a regular file")

// mayCreateLock says whether a lock file may be created beside path: the cache does not exist
// yet (this build creates it), or it is a regular file this user owns.
func mayCreateLock(path string) bool {
	st, err := os.Lstat(path)
	if missing(err) {
		return true
	}
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return ownedBySelf(path, st)
}

// release drops the lock by closing the file.
func (l *fileLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// missing says whether err means the file is not there: it does not exist, or a folder on its
// path is a file (then Save reports the folder).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || fserr.Is(err, fserr.NotDir)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// advice returns what to do about an I/O error: the fix for its cause, or def.
func advice(err error, def string) string { return fserr.Advice(err, def) }

// Advice returns what to do about err, a failure to save a cache: the fix for its cause
// (a full disk, a read-only file system), or, for a permission problem and anything else,
// def.
func Advice(err error, def string) string { return advice(err, def) }
