//go:build !windows

package enginecache

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLink: a hit is linked, not copied: the file at the destination is the entry's; an entry
// whose engine does not match its manifest is neither linked nor kept; Open serves a verified
// engine; Has says whether there is an entry.
func TestLink(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "cache"), 0, Trust{})
	e := newEngine(t, key(1), 1000, 7, 0o644)
	e.put(t, c, key(1))
	dst := filepath.Join(t.TempDir(), "linked.engine")
	l, f, err := c.Link(context.Background(), key(1), dst)
	if err != nil || !l.Hit || l.Bytes != 1000 || f == nil {
		t.Fatalf("Link: %+v %v %v", l, f, err)
	}
	defer f.Close()
	entry, linked := stat(t, filepath.Join(c.Entry(key(1)), EngineName)), stat(t, dst)
	if !os.SameFile(entry, linked) {
		t.Fatal("the linked engine is a copy, not the entry's file")
	}
	if data, _ := io.ReadAll(f); string(data) != string(e.data) {
		t.Fatal("the returned file does not read the engine from its start")
	}
	if _, _, err := c.Link(context.Background(), key(1), dst); err == nil || errors.Is(err, ErrNoLink) {
		t.Fatalf("a link over an existing file: %v, want an error", err)
	}
	if l, f, err := c.Link(context.Background(), key(2), filepath.Join(t.TempDir(), "none")); l.Hit || f != nil || err != nil {
		t.Fatalf("Link of a key not there: %+v %v %v", l, f, err)
	}
	if !c.Has(key(1)) || c.Has(key(2)) || c.Has("../x") {
		t.Fatal("Has disagrees with what is stored")
	}
	if f, l, err := c.Open(context.Background(), key(1)); err != nil || !l.Hit || f == nil {
		t.Fatalf("Open: %+v %v", l, err)
	} else {
		f.Close()
	}

	broken := newEngine(t, key(3), 1000, 9, 0o644)
	broken.put(t, c, key(3))
	flip(t, filepath.Join(c.Entry(key(3)), EngineName), 10)
	dst3 := filepath.Join(t.TempDir(), "broken.engine")
	if l, f, err := c.Link(context.Background(), key(3), dst3); l.Hit || f != nil || err != nil || !l.Repaired {
		t.Fatalf("Link of a broken entry: %+v %v %v", l, f, err)
	}
	if _, err := os.Lstat(dst3); !os.IsNotExist(err) {
		t.Fatalf("a broken entry was linked: %v", err)
	}
	if f, l, _ := c.Open(context.Background(), key(3)); f != nil || l.Hit {
		t.Fatal("Open served a broken entry")
	}
}

// TestLinkAcrossFileSystems: where the destination is on another file system, the hit is
// verified and nothing is written (ErrNoLink): the caller serves the engine from the cache.
func TestLinkAcrossFileSystems(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache")
	other, err := os.MkdirTemp("/dev/shm", "enginecache-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(other)
	a, b := stat(t, filepath.Dir(cacheDir)), stat(t, other)
	if a.Sys().(*syscall.Stat_t).Dev == b.Sys().(*syscall.Stat_t).Dev {
		t.Skip("the temporary folder and /dev/shm are one file system")
	}
	c := open(t, cacheDir, 0, Trust{})
	newEngine(t, key(1), 100, 7, 0o644).put(t, c, key(1))
	dst := filepath.Join(other, "x.engine")
	l, f, err := c.Link(context.Background(), key(1), dst)
	if !errors.Is(err, ErrNoLink) || !l.Hit || f != nil {
		t.Fatalf("Link across file systems: %+v %v %v", l, f, err)
	}
	if _, err := os.Lstat(dst); !os.IsNotExist(err) {
		t.Fatalf("something was written: %v", err)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
