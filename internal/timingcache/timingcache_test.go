//go:build !windows

package timingcache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func FuzzKeyName(f *testing.F) {
	f.Add("tensorrt", 100800, "NVIDIA H100", 9, 0)
	f.Add("x", 0, "../..", 0, 0)
	f.Add("tensorrt", -1, strings.Repeat("é/", 200), -3, 99)
	f.Fuzz(func(t *testing.T, backend string, version int, gpu string, major, minor int) {
		name := Key{Backend: backend, TensorRT: version, GPU: gpu, ComputeMajor: major, ComputeMinor: minor}.Name()
		if name == "" || len(name) > maxName || strings.HasPrefix(name, ".") {
			t.Fatalf("bad file name %q", name)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				t.Fatalf("file name %q has %q", name, r)
			}
		}
		if filepath.Base(name) != name {
			t.Fatalf("file name %q is not one path element", name)
		}
	})
}

func TestDefaultPath(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir())
	key := Key{Backend: "tensorrt", TensorRT: 100800, GPU: "NVIDIA A100-SXM4-40GB", ComputeMajor: 8}
	got, err := DefaultPath(key)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "trtbuild", "timing-cache", "trt-10.8.0_NVIDIA-A100-SXM4-40GB_sm80.cache")
	if got != want {
		t.Errorf("DefaultPath = %s, want %s", got, want)
	}
}

func TestSaveLeavesRejectedFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	garbage := []byte("\x00\x01 not a cache at all")
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := saveBytes(context.Background(), path, union("l1"))
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("Save over a foreign file: %v, want ErrRejected", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, garbage) {
		t.Errorf("the foreign file was changed to %q", got)
	}
}

func TestSaveUnwritableFolder(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "sub", "x.cache")
	if data, err := loadBytes(context.Background(), path); data != nil || err != nil {
		t.Errorf("Load under a file = %q, %v; want no cache and no error (Save reports the folder)", data, err)
	}
	_, err := saveBytes(context.Background(), path, union("l1"))
	if err == nil || !strings.Contains(err.Error(), "creating the timing cache folder") || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("Save under a file: %v", err)
	}
}

// TestLinksAreNotFollowed plants what an attacker could in a shared cache folder: a cache
// path that links to a file elsewhere (/etc/passwd in the field), a dangling link, and a lock
// that links elsewhere. Nothing outside the folder may change or appear.
func TestLinksAreNotFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "passwd")
	os.WriteFile(victim, []byte("root:x:0:0\n"), 0o644)
	link := filepath.Join(dir, "link.cache")
	os.Symlink(victim, link)
	dangling := filepath.Join(dir, "dangling.cache")
	os.Symlink(filepath.Join(outside, "created"), dangling)
	lockLinked := filepath.Join(dir, "l.cache")
	os.Symlink(filepath.Join(outside, "lock-target"), lockLinked+".lock")

	ctx := context.Background()
	for _, p := range []string{link, dangling} {
		if _, err := loadBytes(ctx, p); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("loadBytes(%s) = %v, want a symbolic link refusal", filepath.Base(p), err)
		}
		if _, err := saveBytes(ctx, p, union("l1")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("saveBytes(%s) = %v, want a symbolic link refusal", filepath.Base(p), err)
		}
		if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s was replaced", p)
		}
	}
	if _, err := saveBytes(ctx, lockLinked, union("l1")); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Errorf("Save with a linked lock = %v, want the lock refused", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "root:x:0:0\n" {
		t.Errorf("the link's target changed: %q", got)
	}
	for _, name := range []string{"passwd.lock", "created", "created.lock", "lock-target"} {
		if _, err := os.Lstat(filepath.Join(outside, name)); err == nil {
			t.Errorf("%s appeared outside the cache folder", name)
		}
	}
}

func TestNonRegularCacheNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.cache")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	lockFifo := filepath.Join(dir, "x.cache")
	if err := syscall.Mkfifo(lockFifo+".lock", 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan [3]error, 1)
	go func() {
		_, e1 := loadBytes(context.Background(), fifo)
		_, e2 := saveBytes(context.Background(), fifo, union("x"))
		_, e3 := loadBytes(context.Background(), lockFifo)
		done <- [3]error{e1, e2, e3}
	}()
	select {
	case errs := <-done:
		for i, want := range []string{"FIFO", "FIFO", "lock file"} {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), want) {
				t.Errorf("case %d: %v, want an error naming %q", i, errs[i], want)
			}
		}
	case <-time.After(time.Minute):
		t.Fatal("a FIFO blocked Load or Save")
	}
}

func TestEmptyCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	os.WriteFile(path, nil, 0o644)
	var p *Problem
	if err := Check(path, false); !errors.As(err, &p) || !p.Empty || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("Check(empty) = %v", err)
	}
	if data, err := loadBytes(context.Background(), path); data != nil || err != nil {
		t.Errorf("loadBytes(empty) = %q, %v; want no cache", data, err)
	}
	var seen []byte = []byte("unset")
	if _, err := saveBytes(context.Background(), path, func(disk []byte) ([]byte, error) { seen = disk; return union("a")(disk) }); err != nil {
		t.Fatal(err)
	}
	if seen != nil {
		t.Errorf("the merge saw %q for an empty file, want nil", seen)
	}
}

// TestLockExcludesTrtexec holds the lock trtexec takes (a POSIX record lock on "<file>.lock",
// lockf(3) in TensorRT's fileLock.cpp) and checks that Save waits for it.
func TestLockExcludesTrtexec(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := saveBytes(ctx, path, union("x")); err == nil || !strings.Contains(err.Error(), "held") {
		t.Fatalf("Save while trtexec holds the lock = %v, want it to wait", err)
	}
	lk.Type = syscall.F_UNLCK
	syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	if _, err := saveBytes(context.Background(), path, union("x")); err != nil {
		t.Fatal(err)
	}
}

// TestNoLockBesideAnotherUsersFile needs root to give the cache to another user.
func TestNoLockBesideAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a file to another user")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.cache")
	os.WriteFile(path, []byte("CACHE\na\n"), 0o666)
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if data, err := loadBytes(context.Background(), path); err != nil || len(data) == 0 {
		t.Fatalf("Load = %q, %v", data, err)
	}
	if _, err := os.Lstat(path + ".lock"); err == nil {
		t.Error("a lock file was created beside another user's cache")
	}
	if _, err := saveBytes(context.Background(), path, union("b")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + ".lock"); err == nil {
		t.Error("a lock file was created beside another user's cache by Save")
	}
	if got := strings.Join(entries(t, path), ","); got != "a,b" {
		t.Errorf("entries %s", got)
	}
}

func TestNothingNewNeedsNoWrite(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only folders")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.cache")
	os.WriteFile(path, []byte("CACHE\na\n"), 0o444)
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if _, err := saveBytes(context.Background(), path, union("a")); err != nil {
		t.Errorf("a read-only cache with nothing new: %v", err)
	}
	if _, err := saveBytes(context.Background(), path, union("b")); err == nil {
		t.Errorf("a read-only cache with something new saved")
	}
	if err := Check(path, true); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Errorf("Check(read-only, write) = %v", err)
	}
}

func TestSaveWaitsForLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	ctx := context.Background()
	release := make(chan struct{})
	inside := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := saveBytes(ctx, path, func(disk []byte) ([]byte, error) {
			close(inside)
			<-release
			return union("first")(disk)
		})
		done <- err
	}()
	<-inside
	second := make(chan error)
	go func() {
		_, err := saveBytes(ctx, path, union("second"))
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("the second save did not wait for the first's lock: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entries(t, path), ","); got != "first,second" {
		t.Errorf("entries %s, want first,second", got)
	}
}

func TestSaveGivesUpWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cache")
	release := make(chan struct{})
	inside := make(chan struct{})
	go saveBytes(context.Background(), path, func(disk []byte) ([]byte, error) { //nolint:errcheck
		close(inside)
		<-release
		return nil, nil
	})
	<-inside
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := saveBytes(ctx, path, union("x")); err == nil || !strings.Contains(err.Error(), "locking") {
		t.Fatalf("Save with a cancelled context while another holds the lock: %v", err)
	}
}

func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, "disk is full"},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, "quota"},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, "read-only"},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EISDIR}, "folder"},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, "make its folder writable"},
	} {
		if got := Advice(tc.err, "make its folder writable"); !strings.Contains(got, tc.want) {
			t.Errorf("Advice(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
	}
}

// TestSaveWithKnowsAnUnchangedFile checks the stamp LoadWith returns: SaveWith says a file
// still in that state is unchanged (so a large cache is not read again), and says otherwise
// once another program replaced it, rewrote it or removed it.
func TestSaveWithKnowsAnUnchangedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.cache")
	if err := os.WriteFile(path, []byte("CACHE\nl1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var read []byte
	stamp, err := LoadWith(ctx, path, func(f *os.File, size int64) error {
		read = make([]byte, size)
		_, err := io.ReadFull(f, read)
		return err
	})
	if err != nil || string(read) != "CACHE\nl1\n" {
		t.Fatalf("LoadWith read %q, %v", read, err)
	}
	seen := func(since Stamp) Disk {
		t.Helper()
		var got Disk
		_, err := SaveWith(ctx, path, since, func(disk Disk, out *os.File) (bool, error) {
			got = disk
			if disk.File != nil {
				data, err := io.ReadAll(disk.File)
				if err != nil || int64(len(data)) != disk.Size {
					t.Errorf("the file read %d bytes, %v; its size is %d", len(data), err, disk.Size)
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if d := seen(stamp); !d.Unchanged {
		t.Error("a file nobody touched is not seen as unchanged")
	}
	if d := seen(Stamp{}); d.Unchanged || d.File == nil {
		t.Errorf("with no stamp: %+v; want the file to read", d)
	}
	// Replaced by another program (a new file renamed over it).
	if err := os.WriteFile(path+".new", []byte("CACHE\nl1\nl2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if d := seen(stamp); d.Unchanged || d.File == nil || d.Size != int64(len("CACHE\nl1\nl2\n")) {
		t.Errorf("after a replacement: %+v; want the new file to read", d)
	}
	// Rewritten in place, as trtexec writes its cache.
	stamp, err = LoadWith(ctx, path, func(*os.File, int64) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("CACHE\nl3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := seen(stamp); d.Unchanged {
		t.Error("a file rewritten in place is seen as unchanged")
	}
	// Removed: unchanged only for a caller that loaded no file either.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if d := seen(stamp); d.Unchanged || d.File != nil {
		t.Errorf("after removal: %+v", d)
	}
	none, err := LoadWith(ctx, path, func(*os.File, int64) error { t.Error("read called for no file"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if d := seen(none); !d.Unchanged || d.File != nil {
		t.Errorf("no file then and now: %+v; want unchanged", d)
	}
}

// Helpers over LoadWith and SaveWith with the cache in Go memory, as the tests use it.
