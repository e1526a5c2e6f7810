// Package enginecache keeps built engines in a folder, by build key (internal/buildkey), so a
// build whose key was built before copies the engine instead of building it.
//
// Layout, under the cache folder:
//
//	entries/<key>/engine         the plan, as the builder wrote it
//	entries/<key>/manifest.json  the manifest of the build that stored it (internal/manifest)
//	tmp/                         entries being written, and entries being removed
//	lock                         the lock file
//
// Entries are never half-written: Put writes a new entry in tmp/, syncs it, and renames the
// whole folder into entries/ in one step; a reader sees the entry complete or not at all. An
// entry is removed by first renaming it out of entries/. Put and eviction hold an exclusive
// flock(2) on "lock" (github.com/gofrs/flock), Get a shared one while it opens the entry, so
// builds on one machine can share a cache; on NFS, flock is emulated with fcntl locks only on
// Linux 2.6.12 and later clients. When two builds store the same key, the first rename wins
// and the second build's copy is dropped (the two are the same build).
//
// The size limit counts the engines' bytes. After each Put, the least recently used entries
// (by the modification time of their folder, which Get refreshes) are removed until the rest
// fit, never the entry just stored.
package enginecache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/outpath"
)

// File names inside the cache folder and an entry.
const (
	entriesDir   = "entries"
	tmpDir       = "tmp"
	lockName     = "lock"
	EngineName   = "engine"
	ManifestName = "manifest.json"
)

// DefaultLimit is the size limit when none is given: 20 GiB of engines.
const DefaultLimit int64 = 20 << 30

// LockWait is how long Get and Put wait for another build's lock.
const LockWait = 2 * time.Minute

const lockRetry = 20 * time.Millisecond

// DefaultDir is the cache folder when --engine-cache is given without one:
// os.UserCacheDir()/trtbuild/engines ($XDG_CACHE_HOME/trtbuild/engines or
// ~/.cache/trtbuild/engines on Linux).
func DefaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder for the engine cache: %w; give --engine-cache DIR", err)
	}
	return filepath.Join(dir, "trtbuild", "engines"), nil
}

// Cache is one cache folder. Its methods may be called from several goroutines and processes.
type Cache struct {
	dir   string
	limit int64
	now   func() time.Time
}

// Open returns the cache in dir, creating the folder when needed. limit is the size limit in
// bytes; 0 means DefaultLimit.
func Open(dir string, limit int64) (*Cache, error) {
	if limit < 0 {
		return nil, fmt.Errorf("engine cache size limit %d is negative", limit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	for _, d := range []string{dir, filepath.Join(dir, entriesDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("creating the engine cache folder: %w", err)
		}
	}
	return &Cache{dir: dir, limit: limit, now: time.Now}, nil
}

// Dir returns the cache folder.
func (c *Cache) Dir() string { return c.dir }

// Entry is the folder of key.
func (c *Cache) Entry(key string) string { return filepath.Join(c.dir, entriesDir, key) }

// Hit is what Get found.
type Hit struct {
	Key      string
	Bytes    int64  // the engine's size
	Manifest []byte // the stored manifest, nil when the entry has none
}

// Get copies the engine of key to dst, replacing dst atomically (a failed copy leaves dst as
// it was), and returns ok false when the cache has no such entry.
func (c *Cache) Get(ctx context.Context, key, dst string) (hit Hit, ok bool, err error) {
	if !buildkey.Valid(key) {
		return Hit{}, false, fmt.Errorf("invalid build key %q", key)
	}
	entry := c.Entry(key)
	var engine *os.File
	err = c.withLock(ctx, false, func() error {
		f, err := os.Open(filepath.Join(entry, EngineName))
		if err != nil {
			return err
		}
		engine = f
		now := c.now()
		_ = os.Chtimes(entry, now, now) // recently used; a read-only cache still serves
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return Hit{}, false, nil
	}
	if err != nil {
		return Hit{}, false, fmt.Errorf("reading the engine cache: %w", err)
	}
	// The open file stays readable even if the entry is evicted meanwhile.
	defer engine.Close()
	pending, err := outpath.CreatePath(dst)
	if err != nil {
		return Hit{}, false, fmt.Errorf("writing the engine %s: %w", dst, err)
	}
	defer pending.Cleanup() //nolint:errcheck // a no-op once committed
	n, err := io.Copy(pending, engine)
	if err != nil {
		return Hit{}, false, fmt.Errorf("copying the cached engine to %s: %w", dst, err)
	}
	if err := pending.CloseAtomicallyReplace(); err != nil {
		return Hit{}, false, fmt.Errorf("writing the engine %s: %w", dst, err)
	}
	manifest, err := os.ReadFile(filepath.Join(entry, ManifestName))
	if err != nil {
		manifest = nil // evicted since, or stored without one: the engine is what matters
	}
	return Hit{Key: key, Bytes: n, Manifest: manifest}, true, nil
}

// Has reports whether key has an entry.
func (c *Cache) Has(key string) bool {
	if !buildkey.Valid(key) {
		return false
	}
	st, err := os.Stat(filepath.Join(c.Entry(key), EngineName))
	return err == nil && st.Mode().IsRegular()
}

// Stored is what Put did.
type Stored struct {
	Entry   string   // the entry's folder
	Existed bool     // another build had stored the key already; nothing was written
	Evicted []string // keys removed to keep the size limit
}

// Put stores the engine file under key, with manifest (may be nil), then evicts the least
// recently used entries beyond the size limit.
func (c *Cache) Put(ctx context.Context, key, engine string, manifest []byte) (Stored, error) {
	if !buildkey.Valid(key) {
		return Stored{}, fmt.Errorf("invalid build key %q", key)
	}
	var st Stored
	err := c.withLock(ctx, true, func() error {
		st.Entry = c.Entry(key)
		if _, err := os.Stat(st.Entry); err == nil {
			st.Existed = true
			now := c.now()
			_ = os.Chtimes(st.Entry, now, now)
			return nil
		}
		tmp, err := c.tempDir()
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp) // gone after the rename; cleans up after a failure
		if err := copyFile(engine, filepath.Join(tmp, EngineName)); err != nil {
			return fmt.Errorf("copying the engine into the cache: %w", err)
		}
		if manifest != nil {
			if err := writeFile(filepath.Join(tmp, ManifestName), manifest); err != nil {
				return fmt.Errorf("writing the manifest into the cache: %w", err)
			}
		}
		if err := syncDir(tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, st.Entry); err != nil {
			if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist) {
				st.Existed = true // a writer that holds no lock (another tool) got there first
				return nil
			}
			return fmt.Errorf("adding the entry to the cache: %w", err)
		}
		now := c.now()
		_ = os.Chtimes(st.Entry, now, now)
		if err := syncDir(filepath.Join(c.dir, entriesDir)); err != nil {
			return err
		}
		evicted, err := c.evictLocked(key)
		st.Evicted = evicted
		return err
	})
	if err != nil {
		return st, fmt.Errorf("storing the engine in the cache %s: %w", c.dir, err)
	}
	return st, nil
}

// Entries lists the entries, the least recently used first.
func (c *Cache) Entries() ([]EntryInfo, error) {
	dirents, err := os.ReadDir(filepath.Join(c.dir, entriesDir))
	if err != nil {
		return nil, fmt.Errorf("listing the engine cache: %w", err)
	}
	var out []EntryInfo
	for _, d := range dirents {
		if !d.IsDir() || !buildkey.Valid(d.Name()) {
			continue
		}
		entry := filepath.Join(c.dir, entriesDir, d.Name())
		di, err := os.Stat(entry)
		if err != nil {
			continue // removed meanwhile
		}
		var size int64
		if fi, err := os.Stat(filepath.Join(entry, EngineName)); err == nil {
			size = fi.Size()
		}
		out = append(out, EntryInfo{Key: d.Name(), Bytes: size, Used: di.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Used.Equal(out[j].Used) {
			return out[i].Used.Before(out[j].Used)
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// EntryInfo describes one entry.
type EntryInfo struct {
	Key   string
	Bytes int64
	Used  time.Time
}

// evictLocked removes the least recently used entries until the rest fit the limit; keep is
// never removed. The caller holds the exclusive lock.
func (c *Cache) evictLocked(keep string) ([]string, error) {
	entries, err := c.Entries()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range entries {
		total += e.Bytes
	}
	var evicted []string
	for _, e := range entries {
		if total <= c.limit {
			break
		}
		if e.Key == keep {
			continue
		}
		if err := c.remove(e.Key); err != nil {
			return evicted, err
		}
		total -= e.Bytes
		evicted = append(evicted, e.Key)
	}
	return evicted, nil
}

// remove takes an entry out of entries/ in one rename, then deletes it.
func (c *Cache) remove(key string) error {
	trash, err := c.tempDir()
	if err != nil {
		return err
	}
	if err := os.Remove(trash); err != nil {
		return err
	}
	if err := os.Rename(c.Entry(key), trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("evicting %s: %w", key, err)
	}
	return os.RemoveAll(trash)
}

func (c *Cache) tempDir() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	dir := filepath.Join(c.dir, tmpDir, hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating a temporary entry: %w", err)
	}
	return dir, nil
}

// withLock runs fn holding the cache's lock, exclusive or shared. A shared lock that cannot be
// had (a read-only cache folder) is skipped: entries only ever appear and disappear whole.
func (c *Cache) withLock(ctx context.Context, exclusive bool, fn func() error) error {
	lock := flock.New(filepath.Join(c.dir, lockName), flock.SetPermissions(0o644))
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	var locked bool
	var err error
	if exclusive {
		locked, err = lock.TryLockContext(ctx, lockRetry)
		if err != nil || !locked {
			return fmt.Errorf("locking %s: %w", lock.Path(), errOr(err, ctx.Err()))
		}
	} else {
		locked, _ = lock.TryRLockContext(ctx, lockRetry)
	}
	if locked {
		defer lock.Unlock() //nolint:errcheck // closing releases it too
	}
	return fn()
}

func errOr(a, b error) error {
	if a != nil {
		return a
	}
	if b != nil {
		return b
	}
	return errors.New("not acquired")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
