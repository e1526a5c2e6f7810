package enginecache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/buildkey"
)

func key(i int) string {
	return buildkey.Parts{Graph: fmt.Sprint(i)}.Key()
}

func engineFile(t *testing.T, dir string, size int, fill byte) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("src-%d-%d.engine", size, fill))
	if err := os.WriteFile(p, bytes.Repeat([]byte{fill}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPutGet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Open(filepath.Join(dir, "cache"), 0)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "out.engine")
	if err := os.WriteFile(dst, []byte("the old engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(ctx, key(1), dst); ok || err != nil {
		t.Fatalf("Get on an empty cache: ok=%v err=%v", ok, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "the old engine" {
		t.Fatalf("a miss changed the output file: %q", b)
	}
	src := engineFile(t, dir, 1000, 7)
	st, err := c.Put(ctx, key(1), src, []byte(`{"m":1}`))
	if err != nil || st.Existed {
		t.Fatalf("Put: %+v, %v", st, err)
	}
	if !c.Has(key(1)) || c.Has(key(2)) {
		t.Fatal("Has disagrees with what was stored")
	}
	hit, ok, err := c.Get(ctx, key(1), dst)
	if err != nil || !ok || hit.Bytes != 1000 || string(hit.Manifest) != `{"m":1}` {
		t.Fatalf("Get: %+v ok=%v err=%v", hit, ok, err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, bytes.Repeat([]byte{7}, 1000)) {
		t.Fatal("the copied engine differs from the stored one")
	}
	st, err = c.Put(ctx, key(1), engineFile(t, dir, 10, 9), nil)
	if err != nil || !st.Existed {
		t.Fatalf("second Put of one key: %+v, %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.Entry(key(1)), EngineName)); len(b) != 1000 {
		t.Fatal("a second Put replaced the stored engine")
	}
	if _, _, err := c.Get(ctx, "../../etc", dst); err == nil {
		t.Fatal("Get took a key that is not one")
	}
	if _, err := c.Put(ctx, "x", src, nil); err == nil {
		t.Fatal("Put took a key that is not one")
	}
	if _, err := c.Put(ctx, key(3), filepath.Join(dir, "missing"), nil); err == nil {
		t.Fatal("Put of a missing engine succeeded")
	}
	if c.Has(key(3)) {
		t.Fatal("a failed Put left an entry")
	}
	assertNoTemp(t, c)
}

func assertNoTemp(t *testing.T, c *Cache) {
	t.Helper()
	left, err := os.ReadDir(filepath.Join(c.Dir(), tmpDir))
	if err != nil || len(left) != 0 {
		t.Fatalf("temporary entries left: %v %v", left, err)
	}
}

// TestEvictLRU: with a fake clock, the entries used longest ago go first, and a Get counts as
// a use.
func TestEvictLRU(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Open(filepath.Join(dir, "cache"), 250)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	src := engineFile(t, dir, 100, 1)
	for i := 0; i < 2; i++ {
		if st, err := c.Put(ctx, key(i), src, nil); err != nil || len(st.Evicted) != 0 {
			t.Fatalf("Put %d: %+v %v", i, st, err)
		}
	}
	if _, ok, err := c.Get(ctx, key(0), filepath.Join(dir, "o")); !ok || err != nil {
		t.Fatalf("Get 0: %v %v", ok, err)
	}
	st, err := c.Put(ctx, key(2), src, nil) // 300 bytes > 250: the least recently used (1) goes
	if err != nil || len(st.Evicted) != 1 || st.Evicted[0] != key(1) {
		t.Fatalf("Put 2 evicted %v (want [%s]), err %v", st.Evicted, key(1), err)
	}
	if !c.Has(key(0)) || c.Has(key(1)) || !c.Has(key(2)) {
		t.Fatal("wrong entries left after eviction")
	}
	// An engine larger than the limit is kept: it was just built and is about to be used.
	big := engineFile(t, dir, 400, 2)
	st, err = c.Put(ctx, key(3), big, nil)
	if err != nil || len(st.Evicted) != 2 || !c.Has(key(3)) {
		t.Fatalf("Put of an engine over the limit: %+v %v", st, err)
	}
	assertNoTemp(t, c)
}

// TestConcurrent: many goroutines store and read overlapping keys; every entry read is whole.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	srcs := make([]string, 4)
	for i := range srcs {
		srcs[i] = engineFile(t, dir, 64<<10+i, byte(i+1))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Open(cacheDir, 0) // each its own Cache, as separate processes would
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < 4; i++ {
				k := (g + i) % 4
				if _, err := c.Put(ctx, key(k), srcs[k], []byte(fmt.Sprint(k))); err != nil {
					errs <- err
					return
				}
				dst := filepath.Join(dir, fmt.Sprintf("out-%d-%d", g, i))
				hit, ok, err := c.Get(ctx, key(k), dst)
				if err != nil || !ok {
					errs <- fmt.Errorf("Get %d: ok=%v %v", k, ok, err)
					return
				}
				b, _ := os.ReadFile(dst)
				if !bytes.Equal(b, bytes.Repeat([]byte{byte(k + 1)}, 64<<10+k)) || string(hit.Manifest) != fmt.Sprint(k) {
					errs <- fmt.Errorf("entry %d read back wrong (%d bytes)", k, len(b))
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
	c, _ := Open(cacheDir, 0)
	entries, err := c.Entries()
	if err != nil || len(entries) != 4 {
		t.Fatalf("entries: %v %v", entries, err)
	}
	assertNoTemp(t, c)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "cache"), 0); err == nil {
		t.Error("Open under a file succeeded")
	}
	if _, err := Open(dir, -1); err == nil {
		t.Error("Open with a negative limit succeeded")
	}
}
