//go:build !windows

package enginecache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/manifest"
)

func key(i int) string {
	return buildkey.Parts{Graph: fmt.Sprint(i)}.Key()
}

// engine is an engine file for Put, with the manifest that describes it.
type engine struct {
	data     []byte
	file     *os.File
	manifest []byte
}

func newEngine(t *testing.T, k string, size int, fill byte, perm os.FileMode) engine {
	t.Helper()
	data := bytes.Repeat([]byte{fill}, size)
	p := filepath.Join(t.TempDir(), "src.engine")
	if err := os.WriteFile(p, data, perm); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := manifest.Marshal(&manifest.Manifest{Key: k, Engine: manifest.Engine{File: "src.engine", Bytes: int64(size), SHA256: sum(data)}})
	if err != nil {
		t.Fatal(err)
	}
	return engine{data: data, file: f, manifest: m}
}

func sum(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func (e engine) put(t *testing.T, c *Cache, k string) Stored {
	t.Helper()
	st, err := c.Put(context.Background(), k, e.asEngine(), e.manifest)
	if err != nil {
		t.Fatalf("Put %s: %v", buildkey.Short(k), err)
	}
	return st
}

func (e engine) asEngine() Engine {
	return Engine{File: e.file, Bytes: int64(len(e.data)), SHA256: sum(e.data), Perm: 0o644}
}

func open(t *testing.T, dir string, limit int64, trust Trust) *Cache {
	t.Helper()
	c, err := Open(dir, limit, trust)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func get(t *testing.T, c *Cache, k string) (Lookup, []byte) {
	t.Helper()
	var buf bytes.Buffer
	l, err := c.Get(context.Background(), k, &buf)
	if err != nil {
		t.Fatalf("Get %s: %v", buildkey.Short(k), err)
	}
	return l, buf.Bytes()
}

func TestPutGet(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	if l, _ := get(t, c, key(1)); l.Hit || l.Skipped != "" {
		t.Fatalf("Get on an empty cache: %+v", l)
	}
	e := newEngine(t, key(1), 1000, 7, 0o644)
	if st := e.put(t, c, key(1)); st.Existed {
		t.Fatalf("first Put: %+v", st)
	}
	if !has(t, c, key(1)) || has(t, c, key(2)) {
		t.Fatal("Has disagrees with what was stored")
	}
	l, got := get(t, c, key(1))
	if !l.Hit || l.Bytes != 1000 || !bytes.Equal(l.Manifest, e.manifest) || !bytes.Equal(got, e.data) {
		t.Fatalf("Get: %+v, %d bytes", l, len(got))
	}
	other := newEngine(t, key(1), 10, 9, 0o644)
	if st := other.put(t, c, key(1)); !st.Existed {
		t.Fatalf("second Put of one key: %+v", st)
	}
	if _, got := get(t, c, key(1)); !bytes.Equal(got, e.data) {
		t.Fatal("a second Put replaced the stored engine")
	}
	if _, err := c.Get(context.Background(), "../../etc", &bytes.Buffer{}); err == nil {
		t.Fatal("Get took a key that is not one")
	}
	if _, err := c.Put(context.Background(), "x", e.asEngine(), e.manifest); err == nil {
		t.Fatal("Put took a key that is not one")
	}
	assertNoTemp(t, c)
}

func has(t *testing.T, c *Cache, k string) bool {
	t.Helper()
	l, _ := get(t, c, k)
	return l.Hit
}

func assertNoTemp(t *testing.T, c *Cache) {
	t.Helper()
	left, err := os.ReadDir(filepath.Join(c.Dir(), tmpDir))
	if err != nil || len(left) != 0 {
		t.Fatalf("temporary entries left: %v %v", left, err)
	}
}

// TestBrokenEntriesAreRepaired: an entry that does not hold what its manifest says, or is not
// made of what an entry is made of, is never served, never hangs the lookup, is removed, and
// a Put afterwards stores a good entry.
func TestBrokenEntriesAreRepaired(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("another user's 0600 file"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		break_ func(t *testing.T, entry string)
		want   string
	}{
		{"a flipped byte", func(t *testing.T, entry string) { flip(t, filepath.Join(entry, EngineName), 500) }, "SHA-256 differs"},
		{"truncated", func(t *testing.T, entry string) { must(t, os.Truncate(filepath.Join(entry, EngineName), 999)) }, "has 999 bytes"},
		{"zero bytes", func(t *testing.T, entry string) { must(t, os.Truncate(filepath.Join(entry, EngineName), 0)) }, "has 0 bytes"},
		{"engine missing", func(t *testing.T, entry string) { must(t, os.Remove(filepath.Join(entry, EngineName))) }, "engine is missing"},
		{"manifest missing", func(t *testing.T, entry string) { must(t, os.Remove(filepath.Join(entry, ManifestName))) }, "manifest is missing"},
		{"manifest not JSON", func(t *testing.T, entry string) {
			must(t, os.WriteFile(filepath.Join(entry, ManifestName), []byte("garbage"), 0o644))
		}, "manifest is unreadable"},
		{"manifest of another key", func(t *testing.T, entry string) {
			m, _ := manifest.Marshal(&manifest.Manifest{Key: key(99), Engine: manifest.Engine{Bytes: 1000, SHA256: "sha256:00"}})
			must(t, os.WriteFile(filepath.Join(entry, ManifestName), m, 0o644))
		}, "another key"},
		{"engine a folder", func(t *testing.T, entry string) {
			must(t, os.Remove(filepath.Join(entry, EngineName)))
			must(t, os.Mkdir(filepath.Join(entry, EngineName), 0o755))
		}, "not a regular file"},
		{"engine a FIFO", func(t *testing.T, entry string) {
			must(t, os.Remove(filepath.Join(entry, EngineName)))
			must(t, syscall.Mkfifo(filepath.Join(entry, EngineName), 0o644))
		}, "not a regular file"},
		{"manifest a FIFO", func(t *testing.T, entry string) {
			must(t, os.Remove(filepath.Join(entry, ManifestName)))
			must(t, syscall.Mkfifo(filepath.Join(entry, ManifestName), 0o644))
		}, "not a regular file"},
		{"engine a link to a secret", func(t *testing.T, entry string) {
			must(t, os.Remove(filepath.Join(entry, EngineName)))
			must(t, os.Symlink(secret, filepath.Join(entry, EngineName)))
		}, "not a regular file"},
		{"entry a file", func(t *testing.T, entry string) {
			must(t, os.RemoveAll(entry))
			must(t, os.WriteFile(entry, []byte("x"), 0o644))
		}, "not a folder"},
		{"entry a link", func(t *testing.T, entry string) {
			elsewhere := t.TempDir()
			must(t, os.RemoveAll(entry))
			must(t, os.Symlink(elsewhere, entry))
		}, "not a folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
			e := newEngine(t, key(1), 1000, 7, 0o644)
			e.put(t, c, key(1))
			tc.break_(t, c.Entry(key(1)))
			l, _ := get(t, c, key(1))
			if l.Hit || !l.Repaired || !contains(l.Skipped, tc.want) {
				t.Fatalf("Get of a broken entry: %+v, want a repaired miss saying %q", l, tc.want)
			}
			if _, err := os.Lstat(c.Entry(key(1))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the broken entry is still there: %v", err)
			}
			e.put(t, c, key(1))
			if l, got := get(t, c, key(1)); !l.Hit || !bytes.Equal(got, e.data) {
				t.Fatalf("after the repair the entry is not served: %+v", l)
			}
			if b, _ := os.ReadFile(secret); string(b) != "another user's 0600 file" {
				t.Fatal("the secret changed")
			}
			assertNoTemp(t, c)
		})
	}
}

// TestPutReplacesBroken: a Put finding a broken entry in the way replaces it and says so.
func TestPutReplacesBroken(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	must(t, os.WriteFile(c.Entry(key(1)), []byte("a file where a folder should be"), 0o644))
	e := newEngine(t, key(1), 100, 3, 0o644)
	st := e.put(t, c, key(1))
	if st.Existed || !contains(st.Replaced, "not a folder") {
		t.Fatalf("Put over a broken entry: %+v", st)
	}
	if l, got := get(t, c, key(1)); !l.Hit || !bytes.Equal(got, e.data) {
		t.Fatalf("not served after the Put: %+v", l)
	}
}

// TestPlantedByAnotherUser: an entry, engine or manifest owned by a user the cache does not
// trust, or writable by others, is not served; trusting the user serves it. Needs root to
// give files away.
func TestPlantedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files owned by another user")
	}
	const other = 54321
	for _, part := range []string{"", EngineName, ManifestName} {
		t.Run("owner of "+orEntry(part), func(t *testing.T) {
			c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
			e := newEngine(t, key(1), 100, 3, 0o644)
			e.put(t, c, key(1))
			must(t, os.Lchown(filepath.Join(c.Entry(key(1)), part), other, other))
			l, got := get(t, c, key(1))
			if l.Hit || l.Repaired || len(got) != 0 || !contains(l.Skipped, "uid 54321") {
				t.Fatalf("an entry planted by another user: %+v", l)
			}
			if _, err := os.Stat(c.Entry(key(1))); err != nil {
				t.Fatalf("Get removed another user's entry: %v", err)
			}
			trusting := open(t, c.Dir(), 0, Trust{UIDs: []int{other}})
			if l, _ := get(t, trusting, key(1)); !l.Hit {
				t.Fatalf("trusting the user does not serve the entry: %+v", l)
			}
			// This user (root) may remove it, so a Put replaces it.
			if st := e.put(t, c, key(1)); st.Existed || !contains(st.Replaced, "uid 54321") {
				t.Fatalf("Put over an untrusted entry: %+v", st)
			}
			if l, _ := get(t, c, key(1)); !l.Hit {
				t.Fatalf("not served after the Put: %+v", l)
			}
		})
	}
}

func orEntry(s string) string {
	if s == "" {
		return "the entry"
	}
	return s
}

// TestWritableByOthers: an entry another user could change is not trusted.
func TestWritableByOthers(t *testing.T) {
	for _, tc := range []struct {
		perm  os.FileMode
		trust Trust
		hit   bool
	}{
		{0o646, Trust{}, false},
		{0o664, Trust{}, false},
		{0o664, Trust{Group: true}, true},
		{0o646, Trust{Group: true}, false},
	} {
		t.Run(fmt.Sprintf("%o/%v", tc.perm, tc.trust.Group), func(t *testing.T) {
			c := open(t, filepath.Join(t.TempDir(), "cache"), 0, tc.trust)
			e := newEngine(t, key(1), 100, 3, 0o644)
			e.put(t, c, key(1))
			must(t, os.Chmod(filepath.Join(c.Entry(key(1)), EngineName), tc.perm))
			if l, _ := get(t, c, key(1)); l.Hit != tc.hit {
				t.Fatalf("engine %o, trust %+v: %+v", tc.perm, tc.trust, l)
			}
		})
	}
}

// TestEntryKeepsTheEnginesMode: a 0600 engine is stored 0600, and its folder readable by no one
// else either.
func TestEntryKeepsTheEnginesMode(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	e := newEngine(t, key(1), 100, 3, 0o600)
	en := e.asEngine()
	en.Perm = 0o600
	if _, err := c.Put(context.Background(), key(1), en, e.manifest); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", EngineName, ManifestName} {
		st, err := os.Stat(filepath.Join(c.Entry(key(1)), name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %o: readable by others though the engine is 0600", orEntry(name), st.Mode().Perm())
		}
	}
}

// TestLockFile: a FIFO or a link as the lock fails at once (no hang), and a link's target is
// never created.
func TestLockFile(t *testing.T) {
	t.Run("FIFO", func(t *testing.T) {
		c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
		must(t, syscall.Mkfifo(filepath.Join(c.Dir(), lockName), 0o644))
		e := newEngine(t, key(1), 10, 1, 0o644)
		if _, err := c.Put(context.Background(), key(1), e.asEngine(), e.manifest); err == nil || !contains(err.Error(), "not a regular file") {
			t.Fatalf("Put with a FIFO lock: %v", err)
		}
		if l, err := c.Get(context.Background(), key(1), &bytes.Buffer{}); err != nil || l.Hit {
			t.Fatalf("Get with a FIFO lock (it takes no lock): %+v %v", l, err)
		}
	})
	t.Run("link", func(t *testing.T) {
		c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
		target := filepath.Join(t.TempDir(), "created-by-trtbuild")
		must(t, os.Symlink(target, filepath.Join(c.Dir(), lockName)))
		e := newEngine(t, key(1), 10, 1, 0o644)
		if _, err := c.Put(context.Background(), key(1), e.asEngine(), e.manifest); err == nil || !contains(err.Error(), "symbolic link") {
			t.Fatalf("Put with a linked lock: %v", err)
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the link's target was created: %v", err)
		}
	})
}

// TestLockWaitEndsWithTheContext: a store waiting for another build's lock ends when its
// context does (a signal, a time budget); a lookup does not wait for the lock at all, so a
// user holding it cannot stall other users' builds.
func TestLockWaitEndsWithTheContext(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	e := newEngine(t, key(1), 10, 1, 0o644)
	e.put(t, c, key(1))
	unlock, err := c.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if l, _ := get(t, c, key(1)); !l.Hit {
		t.Fatalf("a lookup while another build holds the lock: %+v", l)
	}
	cause := errors.New("interrupted (SIGINT)")
	ctx, cancel := context.WithCancelCause(context.Background())
	putDone := make(chan error, 1)
	go func() {
		_, err := c.Put(ctx, key(2), e.asEngine(), e.manifest)
		putDone <- err
	}()
	cancel(cause)
	if err := <-putDone; !errors.Is(err, cause) {
		t.Fatalf("Put after the cancel: %v", err)
	}
}

// TestPutRefusesAChangedEngine: an engine whose bytes are not those the build hashed (another
// user rewrote it after it was put in place) is not stored.
func TestPutRefusesAChangedEngine(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	e := newEngine(t, key(1), 100, 3, 0o644)
	en := e.asEngine()
	en.SHA256 = sum([]byte("what the build wrote"))
	if _, err := c.Put(context.Background(), key(1), en, e.manifest); err == nil || !contains(err.Error(), "changed after it was built") {
		t.Fatalf("Put of a changed engine: %v", err)
	}
	if has(t, c, key(1)) {
		t.Fatal("a changed engine was stored")
	}
	assertNoTemp(t, c)
}

// TestPlantedCacheFolders: a lock that is a FIFO or a link, entries/ or tmp/ that are links or
// files: the cache cannot be used, and Open says so as an UnusableError.
func TestPlantedCacheFolders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(dir string) error
	}{
		{"lock a FIFO", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, lockName), 0o644) }},
		{"lock a dangling link", func(dir string) error { return os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, lockName)) }},
		{"entries a link", func(dir string) error { return os.Symlink(t.TempDir(), filepath.Join(dir, entriesDir)) }},
		{"tmp a file", func(dir string) error { return os.WriteFile(filepath.Join(dir, tmpDir), nil, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			must(t, os.Mkdir(dir, 0o755))
			must(t, tc.plant(dir))
			_, err := Open(dir, 0, Trust{})
			var u *UnusableError
			if !errors.As(err, &u) {
				t.Fatalf("Open: %v, want an UnusableError", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
				t.Fatal("a link's target was created")
			}
		})
	}
}

// TestReadOnlyCache: a cache folder this user cannot write serves its entries, and one with no
// entries yet is an empty cache, not an error. Root can write anywhere: skipped as root.
func TestReadOnlyCache(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only folders")
	}
	dir := filepath.Join(t.TempDir(), "cache")
	must(t, os.Mkdir(dir, 0o555))
	c := open(t, dir, 0, Trust{})
	if l, _ := get(t, c, key(1)); l.Hit {
		t.Fatal("a hit in an empty read-only cache")
	}
	e := newEngine(t, key(1), 10, 1, 0o644)
	if _, err := c.Put(context.Background(), key(1), e.asEngine(), e.manifest); err == nil {
		t.Fatal("a store into a read-only cache succeeded")
	}
}

// TestStaleTemporaryEntries: what a killed Put left in tmp/ is removed and counted by the next
// Put.
func TestStaleTemporaryEntries(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	for i, size := range []int{300, 200} {
		d := filepath.Join(c.Dir(), tmpDir, fmt.Sprintf("killed%d", i))
		must(t, os.Mkdir(d, 0o700))
		must(t, os.WriteFile(filepath.Join(d, EngineName), make([]byte, size), 0o600))
	}
	e := newEngine(t, key(1), 10, 1, 0o644)
	if st := e.put(t, c, key(1)); st.Stale != 2 || st.StaleBytes != 500 {
		t.Fatalf("Put after killed stores: %+v", st)
	}
	assertNoTemp(t, c)
}

// TestEvictLRU: with a fake clock, the entries used longest ago go first, and a Get counts as
// a use.
func TestEvictLRU(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 250, Trust{})
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	for i := 0; i < 2; i++ {
		if st := newEngine(t, key(i), 100, 1, 0o644).put(t, c, key(i)); len(st.Evicted) != 0 {
			t.Fatalf("Put %d: %+v", i, st)
		}
	}
	if l, _ := get(t, c, key(0)); !l.Hit {
		t.Fatalf("Get 0: %+v", l)
	}
	st := newEngine(t, key(2), 100, 1, 0o644).put(t, c, key(2)) // 300 bytes > 250: the least recently used (1) goes
	if len(st.Evicted) != 1 || st.Evicted[0] != key(1) {
		t.Fatalf("Put 2 evicted %v (want [%s])", st.Evicted, key(1))
	}
	if !has(t, c, key(0)) || has(t, c, key(1)) || !has(t, c, key(2)) {
		t.Fatal("wrong entries left after eviction")
	}
	// An engine larger than the limit is kept: it was just built and is about to be used.
	st = newEngine(t, key(3), 400, 2, 0o644).put(t, c, key(3))
	if len(st.Evicted) != 2 || !has(t, c, key(3)) {
		t.Fatalf("Put of an engine over the limit: %+v", st)
	}
	assertNoTemp(t, c)
}

// TestConcurrent: many goroutines store and read overlapping keys; every entry read is whole.
func TestConcurrent(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache")
	engines := make([]engine, 4)
	for i := range engines {
		engines[i] = newEngine(t, key(i), 64<<10+i, byte(i+1), 0o644)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(cacheDir, 0, Trust{}) // each its own Cache, as separate processes would
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := 0; i < 4; i++ {
				k := (g + i) % 4
				if _, err := c.Put(context.Background(), key(k), engines[k].asEngine(), engines[k].manifest); err != nil {
					errs <- err
					return
				}
				var buf bytes.Buffer
				l, err := c.Get(context.Background(), key(k), &buf)
				if err != nil || !l.Hit {
					errs <- fmt.Errorf("Get %d: %+v %v", k, l, err)
					return
				}
				if !bytes.Equal(buf.Bytes(), engines[k].data) {
					errs <- fmt.Errorf("entry %d read back wrong (%d bytes)", k, buf.Len())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c := open(t, cacheDir, 0, Trust{})
	entries, err := c.Entries()
	if err != nil || len(entries) != 4 {
		t.Fatalf("entries: %v %v", entries, err)
	}
	assertNoTemp(t, c)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	if _, err := Open(filepath.Join(file, "cache"), 0, Trust{}); err == nil {
		t.Error("Open under a file succeeded")
	}
	if _, err := Open(dir, -1, Trust{}); err == nil {
		t.Error("Open with a negative limit succeeded")
	}
	linked := filepath.Join(t.TempDir(), "cache")
	must(t, os.Mkdir(linked, 0o755))
	must(t, os.Symlink(t.TempDir(), filepath.Join(linked, entriesDir)))
	if _, err := Open(linked, 0, Trust{}); err == nil || !contains(err.Error(), "not a folder") {
		t.Errorf("Open with entries/ a link: %v", err)
	}
	shared := filepath.Join(t.TempDir(), "shared")
	must(t, os.Mkdir(shared, 0o777))
	must(t, os.Chmod(shared, 0o777))
	if _, err := Open(shared, 0, Trust{Group: true}); err == nil {
		t.Error("a group-shared cache writable by every user was accepted")
	}
}

func TestParseTrust(t *testing.T) {
	for _, tc := range []struct {
		in    string
		group bool
		uids  []int
		bad   bool
	}{
		{"self", false, nil, false},
		{"", false, nil, false},
		{"group", true, nil, false},
		{"self,group,1001", true, []int{1001}, false},
		{"root", false, []int{0}, false},
		{"no-such-user-here", false, nil, true},
		{"-5", false, nil, true},
	} {
		got, err := ParseTrust(tc.in)
		if (err != nil) != tc.bad || got.Group != tc.group || fmt.Sprint(got.UIDs) != fmt.Sprint(tc.uids) {
			t.Errorf("ParseTrust(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, at)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, at)
	must(t, err)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }
