// Package timingcache keeps a builder's timing cache in a file that several builds may share.
//
// A timing cache records how long each tactic took, so the next build can skip timing it. The
// bytes are the builder's own format (TensorRT's serialized ITimingCache, or the simulated
// builder's text); only the builder can read or merge them, so this package never looks
// inside: it finds the default file (DefaultPath), reads a file (Load), and saves a new
// version (Save) by handing what is on disk at that moment to a merge function the caller
// provides.
//
// Concurrency: Save holds an exclusive lock on "<file>.lock" (flock(2), through
// github.com/gofrs/flock) from reading the current file until the merged one has replaced it,
// and replaces it atomically (github.com/google/renameio/v2), so builds that share one cache
// and save at the same time each merge into the other's result and no entry is lost; a reader
// never sees a half-written file. Load takes the same lock shared. The lock is advisory: it
// does not exclude trtexec, which locks with lockf(3).
package timingcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// Auto is the --timing-cache value that selects the default file for the builder (DefaultPath);
// any other value is a path (write ./auto for a file named "auto").
const Auto = "auto"

// ErrRejected marks a merge that refused the file on disk: it is corrupt, or a cache of another
// builder, TensorRT version or GPU. Save leaves such a file as it is.
var ErrRejected = errors.New("the cache file on disk is corrupt or belongs to another builder")

// Key identifies the builder a cache is good for: TensorRT refuses (or, worse, misuses) a
// cache made by another TensorRT version or on another GPU, so each gets its own file.
type Key struct {
	Backend  string // "sim" or "tensorrt"
	TensorRT int    // loaded TensorRT version, major*10000+minor*100+patch; 0 for sim
	GPU      string // the device's name, e.g. "NVIDIA H100 80GB HBM3"
	// ComputeMajor and ComputeMinor are the device's compute capability.
	ComputeMajor, ComputeMinor int
}

// maxName bounds the length of a key's file name.
const maxName = 120

// Name returns the key as a file name without extension: "sim" for the simulated builder, or
// e.g. "trt-10.8.0_NVIDIA-H100-80GB-HBM3_sm90". It holds only ASCII letters, digits, '.',
// '_' and '-', is never empty and never starts with '.'.
func (k Key) Name() string {
	if k.Backend == "" || k.Backend == "sim" {
		return "sim"
	}
	parts := []string{sanitize(k.Backend)}
	if k.Backend == "tensorrt" {
		parts[0] = fmt.Sprintf("trt-%d.%d.%d", k.TensorRT/10000, k.TensorRT/100%100, k.TensorRT%100)
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
// os.UserCacheDir()/trtbuild/timing-cache/<key>.cache ($XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultPath(key Key) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder for --timing-cache auto: %w; pass --timing-cache FILE", err)
	}
	return filepath.Join(dir, "trtbuild", "timing-cache", key.Name()+".cache"), nil
}

// LockWait is how long Load and Save wait for another build's lock before giving up.
const LockWait = 2 * time.Minute

// lockRetry is how often a waiting lock is tried again.
const lockRetry = 20 * time.Millisecond

// Load returns the cache file's bytes, or nil when it does not exist yet. It holds the shared
// lock while reading; when the lock file cannot be created (a read-only folder), it reads
// without it, which is safe because Save replaces the file atomically.
func Load(ctx context.Context, path string) ([]byte, error) {
	path = resolveLink(path)
	if _, err := os.Stat(path); missing(err) {
		return nil, nil
	}
	lock := flock.New(lockPath(path), flock.SetPermissions(0o644))
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	// A lock that cannot be had (a read-only folder, a writer stuck for LockWait) only means
	// reading without it: the file is always replaced whole, never written in place.
	if locked, _ := lock.TryRLockContext(ctx, lockRetry); locked {
		defer lock.Unlock() //nolint:errcheck // closing the descriptor releases the lock anyway
	}
	data, err := os.ReadFile(path)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading timing cache: %w", err)
	}
	return data, nil
}

// MergeFunc combines the cache now on disk (nil when there is none) with what a build learned
// and returns the bytes to save; nil means there is nothing to save. It returns an error that
// wraps ErrRejected when disk is not a cache it can read.
type MergeFunc func(disk []byte) ([]byte, error)

// Saved says what Save did.
type Saved struct {
	Path    string
	Bytes   int  // size of the file written
	Written bool // false when the merge left the file as it was
}

// Save updates the cache file: with the exclusive lock held it reads the file as it is now,
// merges it with merge, and replaces it atomically with the result. It creates the file's
// folder when missing. When merge fails (for example with ErrRejected) the file is left as it
// was and the error is returned, wrapped.
func Save(ctx context.Context, path string, merge MergeFunc) (Saved, error) {
	path = resolveLink(path)
	res := Saved{Path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, fmt.Errorf("creating the timing cache folder: %w", err)
	}
	lock := flock.New(lockPath(path), flock.SetPermissions(0o644))
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	locked, err := lock.TryLockContext(ctx, lockRetry)
	if err != nil {
		return res, fmt.Errorf("locking the timing cache: %w", err)
	}
	if !locked {
		return res, fmt.Errorf("locking the timing cache: another build held %s for %s", lockPath(path), LockWait)
	}
	defer lock.Unlock() //nolint:errcheck // closing the descriptor releases the lock anyway

	disk, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("reading the timing cache before merging: %w", err)
	}
	merged, err := merge(disk)
	if err != nil {
		return res, fmt.Errorf("merging the timing cache: %w", err)
	}
	if len(merged) == 0 || bytes.Equal(merged, disk) {
		res.Bytes = len(disk)
		return res, nil
	}
	if err := renameio.WriteFile(path, merged, 0o644); err != nil {
		return res, fmt.Errorf("writing the timing cache: %w", err)
	}
	res.Bytes, res.Written = len(merged), true
	return res, nil
}

func lockPath(path string) string { return path + ".lock" }

// missing says whether err means the file is not there: it does not exist, or a folder on its
// path is a file (then Save reports the folder).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// resolveLink follows symbolic links at path (also one whose target does not exist yet), so
// that saving replaces the file a link points to rather than the link.
func resolveLink(path string) string {
	for range 40 {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path
		}
		target, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return path
}
