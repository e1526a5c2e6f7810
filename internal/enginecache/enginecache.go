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
// What a hit can be trusted for (docs/engine-cache.md has the whole threat model):
//   - Every file and folder is opened from the open cache folder (the *at system calls on
//     Unix, NtCreateFile with a root folder handle on Windows), never through a symbolic link
//     or, on Windows, any reparse point, never blocking on a FIFO, and read only when it is of
//     the expected kind (see fsat.go).
//   - An entry is served only when its folder, engine and manifest are owned by a trusted user
//     and writable by no one else (Trust; on Windows, by owner SID and ACL), the manifest names the key looked up, and the engine
//     has the size and SHA-256 the manifest records: the hash is computed while the engine is
//     copied out, and a mismatch is not a hit.
//   - An entry that fails these checks by being broken (a file where a folder should be, a
//     missing or unreadable engine or manifest, a wrong hash) is removed, under the exclusive
//     lock and only if it is still the entry that was checked, and the build goes on as a miss;
//     one owned by an untrusted user is skipped (and replaced when this user may remove it).
//
// Entries are never half-written: Put writes a new entry in tmp/ (a private 0700 folder; on
// Windows one with an ACL of its own, see mkdirTempAt), syncs it, and renames the whole folder
// into entries/ in one step (relative to the held folders on both systems, never replacing an
// entry: the first rename wins). Put and eviction hold an
// exclusive lock on "lock" (flock(2) on Unix, LockFileEx on Windows; see lock.go); on NFS,
// flock is emulated with fcntl locks on Linux 2.6.12 and later clients. While Put holds the exclusive
// lock no other writer is in tmp/, so whatever this user owns there is left by a killed build
// and is removed (Stored.Stale). When two builds store the same key, the first rename wins and
// the second build's copy is dropped.
//
// The size limit counts the engines' bytes. After each Put, the least recently used entries
// (by the modification time of their folder, which Get refreshes) are removed until the rest
// fit, never the entry just stored.
package enginecache

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/fserr"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/pathtext"
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

// maxManifest bounds the manifest read from an entry; a larger one is broken.
const maxManifest = 1 << 20

// maxDepth bounds the folders removed below an entry: entries hold files only, and a tree
// deeper than this (planted) stays where it is.
const maxDepth = 16

// copyChunk is how much is copied between two looks at the context.
const copyChunk = 1 << 20

// DefaultDir is the cache folder when --engine-cache is given without one:
// os.UserCacheDir()/trtbuild/engines ($XDG_CACHE_HOME/trtbuild/engines or
// ~/.cache/trtbuild/engines on Linux, %LOCALAPPDATA%\trtbuild\engines on Windows).
func DefaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache folder for the engine cache: %w; give --engine-cache DIR", err)
	}
	return filepath.Join(dir, "trtbuild", "engines"), nil
}

// Cache is one cache folder, held open. Its methods may be called from several goroutines
// and processes. Close releases the folder.
type Cache struct {
	dir     string
	root    *os.File // the cache folder
	entries *os.File // entries/
	tmp     *os.File // tmp/
	limit   int64
	trust   *trustCheck
	now     func() time.Time
}

// Open returns the cache in dir, creating the folder when needed. dir is the user's: its
// links are followed; nothing inside it is. limit is the size limit in bytes; 0 means
// DefaultLimit. trust says whose entries are served.
func Open(dir string, limit int64, trust Trust) (*Cache, error) {
	if limit < 0 {
		return nil, fmt.Errorf("engine cache size limit %d is negative", limit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the engine cache folder: %w", err)
	}
	root, st, err := openCacheDir(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the engine cache folder: %w", err)
	}
	c := &Cache{dir: dir, root: root, limit: limit, now: time.Now}
	if c.trust, err = newTrustCheck(trust, dir, st); err != nil {
		c.Close()
		return nil, err
	}
	for _, sub := range []struct {
		name string
		to   **os.File
	}{{entriesDir, &c.entries}, {tmpDir, &c.tmp}} {
		// 0777 less the umask: a group-shared cache's members need to write these too.
		f, _, err := mkdirAt(root, sub.name, 0o777)
		if fserr.Is(err, fserr.Denied) || fserr.Is(err, fserr.ReadOnly) {
			// A read-only cache still serves what it has; storing will say why it cannot.
			if f, _, err = openDirAt(root, sub.name); fserr.Is(err, fserr.Missing) {
				continue
			}
		}
		if err != nil {
			c.Close()
			if fserr.Is(err, fserr.Link) || fserr.Is(err, fserr.NotDir) {
				return nil, &UnusableError{fmt.Sprintf("%s is not a folder (a file or a link is there); trtbuild does not follow links in the engine cache: remove it", pathtext.Q(c.path(sub.name)))}
			}
			return nil, fmt.Errorf("opening %s: %w", pathtext.Q(c.path(sub.name)), err)
		}
		*sub.to = f
	}
	if lst, err := statAt(root, lockName); err == nil && !lst.regular() {
		c.Close()
		return nil, &UnusableError{fmt.Sprintf("the lock file %s is %s, not a regular file; trtbuild does not follow links or open FIFOs in the engine cache: remove it", pathtext.Q(c.path(lockName)), outpathKind(lst))}
	}
	return c, nil
}

// UnusableError is a cache folder with something inside it that is not what the cache puts
// there (a link, a FIFO, a file for a folder), planted or left: the build goes on without
// the cache, and says so.
type UnusableError struct{ Why string }

func (e *UnusableError) Error() string { return e.Why }

// Close releases the cache folder.
func (c *Cache) Close() error {
	for _, f := range []*os.File{c.entries, c.tmp, c.root} {
		if f != nil {
			f.Close()
		}
	}
	return nil
}

// Dir returns the cache folder.
func (c *Cache) Dir() string { return c.dir }

// Entry is the folder of key, for messages.
func (c *Cache) Entry(key string) string { return filepath.Join(c.dir, entriesDir, key) }

func (c *Cache) path(name string) string { return filepath.Join(c.dir, name) }

// Lookup is what Get found.
type Lookup struct {
	Hit      bool
	Bytes    int64  // the engine's size, on a hit
	Manifest []byte // the stored manifest, on a hit
	// Skipped, on a miss, says why an entry for the key was not used ("its engine's SHA-256
	// differs from its manifest's"); Repaired that the broken entry was removed.
	Skipped  string
	Repaired bool
}

// entryFault is an entry that cannot be served; untrusted ones are not removed by Get.
type entryFault struct {
	why       string
	untrusted bool
	id        fileID // the entry's folder as checked, when it is one
}

func (e *entryFault) Error() string { return e.why }

// Get copies the engine of key to dst when the cache has a trustworthy entry whose engine
// matches its manifest. Whatever Get wrote to dst is to be discarded unless Hit is set (it
// writes while it verifies). A broken entry is removed and reported in Skipped and Repaired.
func (c *Cache) Get(ctx context.Context, key string, dst io.Writer) (Lookup, error) {
	l, engine, err := c.verified(ctx, key, dst)
	if engine != nil {
		engine.Close()
	}
	return l, err
}

// ErrNoLink is the error of a link the file system cannot make: the engine cache and the
// destination are on two file systems, or the file system has no hard links.
var ErrNoLink = errors.New("the engine cannot be linked from the engine cache (another file system, or one without hard links)")

// Link puts key's engine at dst, a path that must not exist yet, as a hard link to the
// entry's engine, once that is verified as Get verifies what it copies (a trusted entry, its
// manifest's key, the engine's size and SHA-256): the engine costs no second copy. On a hit
// it returns the engine open, at its start, and the file at dst is that file (checked after
// the link: a file put in the entry's place meanwhile is not kept). When no link can be made
// (ErrNoLink, wrapped) the hit is verified all the same: Hit is set, and nothing is written.
//
// The link shares its bytes with the entry: what writes to one writes to the other (a changed
// entry is then not served: Get and Link verify it, and remove it). Link is for trtbuild's own
// folders, whose files nobody writes.
func (c *Cache) Link(ctx context.Context, key, dst string) (Lookup, *os.File, error) {
	l, engine, err := c.verified(ctx, key, io.Discard)
	if err != nil || engine == nil {
		return l, nil, err
	}
	if err := os.Link(filepath.Join(c.Entry(key), EngineName), dst); err != nil {
		engine.Close()
		if noLink(err) {
			return l, nil, fmt.Errorf("linking %s: %w", pathtext.Q(dst), ErrNoLink)
		}
		return Lookup{}, nil, fmt.Errorf("linking the engine cache's engine at %s: %w", pathtext.Q(dst), err)
	}
	held, err := engine.Stat()
	linked, lerr := os.Lstat(dst)
	if err != nil || lerr != nil || !os.SameFile(held, linked) {
		// The entry's engine was replaced between its check and the link: what was linked
		// is not the file verified.
		os.Remove(dst) //nolint:errcheck // it is not ours to keep either way
		engine.Close()
		return Lookup{Skipped: "its engine changed while it was linked"}, nil, nil
	}
	if _, err := engine.Seek(0, io.SeekStart); err != nil {
		os.Remove(dst) //nolint:errcheck // as above
		engine.Close()
		return Lookup{}, nil, err
	}
	return l, engine, nil
}

// Open opens key's engine for reading when the cache has a trustworthy entry whose engine
// matches its manifest, verified as Get verifies it, and positioned at its start: for a
// caller that serves the engine from the cache. Without such an entry it returns a nil file.
func (c *Cache) Open(ctx context.Context, key string) (*os.File, Lookup, error) {
	l, engine, err := c.verified(ctx, key, io.Discard)
	if err != nil || engine == nil {
		return nil, l, err
	}
	if _, err := engine.Seek(0, io.SeekStart); err != nil {
		engine.Close()
		return nil, Lookup{}, err
	}
	return engine, l, nil
}

// Has reports whether the cache has an entry for key (not whether it can be served: Get,
// Link and Open verify that).
func (c *Cache) Has(key string) bool {
	if !buildkey.Valid(key) || c.entries == nil {
		return false
	}
	_, err := statAt(c.entries, key)
	return err == nil
}

// verified looks key's entry up and verifies it, copying its engine to dst as it reads it.
// On a hit it returns the engine file, still open; Get's rules otherwise.
func (c *Cache) verified(ctx context.Context, key string, dst io.Writer) (Lookup, *os.File, error) {
	if !buildkey.Valid(key) {
		return Lookup{}, nil, fmt.Errorf("invalid build key %q", key)
	}
	if c.entries == nil {
		return Lookup{}, nil, nil // a read-only cache that has no entries yet
	}
	// No lock: entries appear and disappear whole (renamed), and are read from descriptors, so
	// a lookup needs none, and nobody holding the lock can delay it.
	entry, engine, mdata, fault := c.openEntry(key)
	if fault == nil && engine == nil {
		return Lookup{}, nil, nil // no entry
	}
	if fault == nil {
		var m *manifest.Manifest
		if m, fault = checkManifest(mdata, key); fault == nil {
			var n int64
			var err error
			n, fault, err = copyVerified(ctx, dst, engine, m.Engine)
			if err != nil {
				engine.Close()
				entry.Close()
				return Lookup{}, nil, err
			}
			if fault == nil {
				// Recently used: a read-only cache still serves.
				_ = touchAt(c.entries, key, c.now())
				entry.Close()
				return Lookup{Hit: true, Bytes: n, Manifest: mdata}, engine, nil
			}
		}
		if st, err := statFile(entry); err == nil {
			fault.id = st.id()
		}
		// Closed before the repair: on Windows an open folder cannot be renamed away.
		engine.Close()
		entry.Close()
	}
	if fault.id.known() && !c.stillThere(key, fault) {
		return Lookup{}, nil, nil // evicted or replaced while it was read: no entry to speak of
	}
	l := Lookup{Skipped: fault.why}
	if !fault.untrusted {
		l.Repaired = c.repair(key, fault) == nil
	}
	return l, nil, nil
}

// stillThere reports whether key's entry is still the folder f was found in.
func (c *Cache) stillThere(key string, f *entryFault) bool {
	st, err := statAt(c.entries, key)
	return err == nil && st.id() == f.id
}

// openEntry opens key's entry: its folder, its engine and its manifest's bytes. All nil
// without an entry; fault when the entry cannot be served.
func (c *Cache) openEntry(key string) (entry, engine *os.File, mdata []byte, fault *entryFault) {
	entry, st, err := openDirAt(c.entries, key)
	switch {
	case fserr.Is(err, fserr.Missing):
		return nil, nil, nil, nil
	case fserr.Is(err, fserr.Link) || fserr.Is(err, fserr.NotDir):
		return nil, nil, nil, &entryFault{why: "the entry is not a folder (a file or a link is there)"}
	case err != nil:
		return nil, nil, nil, &entryFault{why: fmt.Sprintf("the entry cannot be opened: %v", err)}
	}
	fail := func(f *entryFault) (*os.File, *os.File, []byte, *entryFault) {
		f.id = st.id()
		entry.Close()
		if engine != nil {
			engine.Close()
		}
		return nil, nil, nil, f
	}
	if why := c.trust.why(st); why != "" {
		return fail(&entryFault{why: "the entry's folder cannot be trusted: " + why, untrusted: true})
	}
	mf, mst, err := openFileAt(entry, ManifestName)
	if err != nil {
		return fail(&entryFault{why: "its manifest " + describeOpen(err)})
	}
	if why := c.trust.why(mst); why != "" {
		mf.Close()
		return fail(&entryFault{why: "its manifest cannot be trusted: " + why, untrusted: true})
	}
	mdata, err = io.ReadAll(io.LimitReader(mf, maxManifest+1))
	mf.Close()
	if err != nil || len(mdata) > maxManifest {
		return fail(&entryFault{why: "its manifest cannot be read"})
	}
	engine, est, err := openFileAt(entry, EngineName)
	if err != nil {
		return fail(&entryFault{why: "its engine " + describeOpen(err)})
	}
	if why := c.trust.why(est); why != "" {
		return fail(&entryFault{why: "its engine cannot be trusted: " + why, untrusted: true})
	}
	return entry, engine, mdata, nil
}

func describeOpen(err error) string {
	switch {
	case fserr.Is(err, fserr.Missing):
		return "is missing"
	case errors.Is(err, errNotRegular):
		return "is not a regular file"
	}
	return fmt.Sprintf("cannot be opened (%v)", err)
}

// checkManifest parses an entry's manifest and checks that it is for key.
func checkManifest(data []byte, key string) (*manifest.Manifest, *entryFault) {
	m, err := manifest.Parse(data)
	if err != nil {
		return nil, &entryFault{why: fmt.Sprintf("its manifest is unreadable (%v)", err)}
	}
	if m.Key != key {
		return nil, &entryFault{why: "its manifest is for another key"}
	}
	if m.Engine.SHA256 == "" {
		return nil, &entryFault{why: "its manifest has no SHA-256 of the engine"}
	}
	return m, nil
}

// copyVerified copies the engine to dst while hashing it, and says whether it is the engine
// the manifest describes. err is only a failure to write dst or a cancel.
func copyVerified(ctx context.Context, dst io.Writer, engine *os.File, want manifest.Engine) (int64, *entryFault, error) {
	h := sha256.New()
	var n int64
	buf := make([]byte, copyChunk)
	for {
		if err := ctx.Err(); err != nil {
			return n, nil, fmt.Errorf("copying the cached engine: %w", context.Cause(ctx))
		}
		r, rerr := engine.Read(buf)
		if r > 0 {
			h.Write(buf[:r])
			if _, err := dst.Write(buf[:r]); err != nil {
				return n, nil, fmt.Errorf("copying the cached engine: %w", err)
			}
			n += int64(r)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, &entryFault{why: fmt.Sprintf("its engine cannot be read (%v)", rerr)}, nil
		}
	}
	if n != want.Bytes {
		return n, &entryFault{why: fmt.Sprintf("its engine has %d bytes, its manifest says %d", n, want.Bytes)}, nil
	}
	if got := buildkey.Sum(h); got != want.SHA256 {
		return n, &entryFault{why: "its engine's SHA-256 differs from its manifest's (the entry is corrupt)"}, nil
	}
	return n, nil, nil
}

// repairWait is how long a lookup waits for the lock to remove a broken entry; past it the
// entry stays, and the store after the build replaces it.
const repairWait = time.Second

// repair removes a broken entry under the exclusive lock, if it is still the entry checked.
func (c *Cache) repair(key string, f *entryFault) error {
	ctx, cancel := context.WithTimeout(context.Background(), repairWait)
	defer cancel()
	unlock, err := c.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := statAt(c.entries, key)
	if err != nil {
		return err
	}
	if f.id.known() && st.id() != f.id {
		return errors.New("replaced since it was checked")
	}
	return c.removeLocked(key)
}

// Stored is what Put did.
type Stored struct {
	Existed bool     // another build had stored the key already; nothing was written
	Evicted []string // keys removed to keep the size limit
	// Replaced says why an entry that was in the way (broken, or not trusted and removable)
	// was removed first.
	Replaced string
	// Stale counts the temporary entries of killed builds removed from tmp/, and their bytes.
	Stale      int
	StaleBytes int64
}

// Engine is what Put stores: the file the build wrote, read through its own descriptor (never
// by a path that someone could replace meanwhile), with its size and "sha256:" hash.
type Engine struct {
	File   io.ReaderAt
	Bytes  int64
	SHA256 string
	Perm   os.FileMode // the engine's permissions; the entry's files get no more
}

// Put stores the engine under key, with its manifest, then evicts the least recently used
// entries beyond the size limit.
func (c *Cache) Put(ctx context.Context, key string, e Engine, manifestData []byte) (Stored, error) {
	if !buildkey.Valid(key) {
		return Stored{}, fmt.Errorf("invalid build key %q", key)
	}
	var st Stored
	err := c.put(ctx, key, e, manifestData, &st)
	if err != nil {
		return st, fmt.Errorf("storing the engine in the cache %s: %w", pathtext.Q(c.dir), err)
	}
	return st, nil
}

func (c *Cache) put(ctx context.Context, key string, e Engine, manifestData []byte, st *Stored) error {
	if c.tmp == nil || c.entries == nil {
		return errors.New("the cache folder is not writable")
	}
	unlock, err := c.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	st.Stale, st.StaleBytes = c.cleanTmpLocked()

	entry, engine, mdata, fault := c.openEntry(key)
	if fault == nil && engine != nil {
		entry.Close()
		engine.Close()
		if _, fault = checkManifest(mdata, key); fault == nil {
			st.Existed = true
			_ = touchAt(c.entries, key, c.now())
			return nil
		}
	}
	if fault != nil {
		if err := c.removeLocked(key); err != nil {
			return fmt.Errorf("an entry for this key is in the way (%s) and cannot be removed: %w", fault.why, err)
		}
		st.Replaced = fault.why
	}

	name, err := c.tempName()
	if err != nil {
		return err
	}
	perm := uint32(e.Perm.Perm() & 0o644)
	if perm == 0 {
		perm = 0o600
	}
	if err := mkdirTempAt(c.tmp, name, perm); err != nil {
		return fmt.Errorf("creating a temporary entry: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			removeTreeAt(c.tmp, name, maxDepth) //nolint:errcheck // best effort; a later Put cleans tmp/
		}
	}()
	dir, _, err := openDirAt(c.tmp, name)
	if err != nil {
		return fmt.Errorf("creating a temporary entry: %w", err)
	}
	dirOpen := true
	defer func() {
		if dirOpen {
			dir.Close()
		}
	}()
	h := sha256.New()
	if err := writeAt(ctx, dir, EngineName, io.TeeReader(io.NewSectionReader(e.File, 0, e.Bytes), h), perm); err != nil {
		return fmt.Errorf("copying the engine into the cache: %w", err)
	}
	if got := buildkey.Sum(h); got != e.SHA256 {
		// The file changed after the build hashed it (another user can write it?): store
		// nothing rather than an engine its manifest does not describe.
		return errors.New("the engine changed after it was built (its SHA-256 differs); nothing was stored")
	}
	if err := writeAt(ctx, dir, ManifestName, bytes.NewReader(manifestData), perm); err != nil {
		return fmt.Errorf("writing the manifest into the cache: %w", err)
	}
	// The folder can be read as far as the engine can.
	dirPerm := uint32(0o700) | (perm&0o044)>>2 | perm&0o044
	if err := setDirPerm(dir, dirPerm); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing the entry: %w", err)
	}
	// Closed before the rename: on Windows an open folder cannot be renamed.
	dirOpen = false
	dir.Close()
	if err := renameAt(c.tmp, name, c.entries, key); err != nil {
		if fserr.Is(err, fserr.Exists) {
			st.Existed = true // a writer that holds no lock got there first
			return nil
		}
		return fmt.Errorf("adding the entry to the cache: %w", err)
	}
	committed = true
	_ = touchAt(c.entries, key, c.now())
	if err := syncDir(c.entries); err != nil {
		return fmt.Errorf("syncing the cache: %w", err)
	}
	st.Evicted, err = c.evictLocked(key)
	return err
}

// writeAt writes r to a new file name in dir, synced, with perm.
func writeAt(ctx context.Context, dir *os.File, name string, r io.Reader, perm uint32) error {
	f, err := createAt(dir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, copyChunk)
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if err := f.Chmod(os.FileMode(perm)); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// cleanTmpLocked removes what this user left in tmp/: with the exclusive lock held, no Put
// or eviction is writing there, so every entry is a killed build's. It returns their count and
// bytes.
func (c *Cache) cleanTmpLocked() (int, int64) {
	names, err := readNames(c.tmp)
	if err != nil {
		return 0, 0
	}
	var count int
	var size int64
	for _, n := range names {
		if st, err := statAt(c.tmp, n); err != nil || !st.mine() {
			continue
		}
		b := treeBytes(c.tmp, n)
		if removeTreeAt(c.tmp, n, maxDepth) == nil {
			count++
			size += b
		}
	}
	return count, size
}

// treeBytes adds up the regular files directly in the folder name (or name itself).
func treeBytes(parent *os.File, name string) int64 {
	st, err := statAt(parent, name)
	if err != nil {
		return 0
	}
	if st.regular() {
		return st.size()
	}
	d, _, err := openDirAt(parent, name)
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := readNames(d)
	var total int64
	for _, n := range names {
		if st, err := statAt(d, n); err == nil && st.regular() {
			total += st.size()
		}
	}
	return total
}

// readNames lists an open folder from a descriptor of its own, so the folder's offset is not
// shared between callers.
func readNames(dir *os.File) ([]string, error) {
	d, err := reopenDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return listNames(d)
}

// Entries lists the entries, the least recently used first.
func (c *Cache) Entries() ([]EntryInfo, error) {
	names, err := readNames(c.entries)
	if err != nil {
		return nil, fmt.Errorf("listing the engine cache: %w", err)
	}
	var out []EntryInfo
	for _, name := range names {
		if !buildkey.Valid(name) {
			continue
		}
		st, err := statAt(c.entries, name)
		if err != nil {
			continue // removed meanwhile
		}
		size := c.engineBytes(name)
		out = append(out, EntryInfo{Key: name, Bytes: size, Used: st.mtime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Used.Equal(out[j].Used) {
			return out[i].Used.Before(out[j].Used)
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// engineBytes is the size of the engine in the entry key, 0 when it has none.
func (c *Cache) engineBytes(key string) int64 {
	d, _, err := openDirAt(c.entries, key)
	if err != nil {
		return 0
	}
	defer d.Close()
	st, err := statAt(d, EngineName)
	if err != nil || !st.regular() {
		return 0
	}
	return st.size()
}

// EntryInfo describes one entry.
type EntryInfo struct {
	Key   string
	Bytes int64 // its engine's bytes
	Used  time.Time
}

// evictLocked removes the least recently used entries until the rest fit the limit; keep is
// never removed. Entries this user may not remove are skipped. The caller holds the exclusive
// lock.
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
		if err := c.removeLocked(e.Key); err != nil {
			continue // another user's entry in a shared cache
		}
		total -= e.Bytes
		evicted = append(evicted, e.Key)
	}
	return evicted, nil
}

// removeLocked takes an entry out of entries/ in one rename, then deletes it.
func (c *Cache) removeLocked(key string) error {
	if c.tmp == nil {
		return errors.New("the cache folder is not writable")
	}
	trash, err := c.tempName()
	if err != nil {
		return err
	}
	if err := renameAt(c.entries, key, c.tmp, trash); err != nil {
		if fserr.Is(err, fserr.Missing) {
			return nil
		}
		return fmt.Errorf("removing the entry %s: %w", key, err)
	}
	return removeTreeAt(c.tmp, trash, maxDepth)
}

func (c *Cache) tempName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
