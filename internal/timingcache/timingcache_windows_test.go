package timingcache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

// The Windows tests of the timing cache; they run on Windows and under Wine
// (scripts/wine.sh test ./internal/timingcache), and skip, naming the gap, where Wine lacks
// what they need.

// Two opens of the lock in one process exclude each other: LockFileEx locks belong to the
// handle.
func TestWindowsLockHandlesExclude(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "x.cache")
	for _, tc := range []struct {
		first, second bool // exclusive?
		excluded      bool
	}{
		{true, true, true},
		{true, false, true},
		{false, true, true},
		{false, false, false},
	} {
		l1, err := acquire(context.Background(), path, tc.first)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		l2, err := acquire(ctx, path, tc.second)
		cancel()
		if excluded := err != nil; excluded != tc.excluded {
			t.Errorf("lock %v then %v: second = %v, want excluded %v", tc.first, tc.second, err, tc.excluded)
		}
		if err == nil {
			l2.release()
		} else if !strings.Contains(err.Error(), "another build held") {
			t.Errorf("the wait ended with %v", err)
		}
		l1.release()
	}
}

func TestWindowsStampSeesARewrite(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "x.cache")
	if _, err := saveBytes(context.Background(), path, union("a")); err != nil {
		t.Fatal(err)
	}
	stamp := func() Stamp {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := stampOf(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := stamp()
	if before.none || before.file.Ino == 0 || before.file.Size == 0 {
		t.Fatalf("stamp of a cache file: %+v", before)
	}
	if again := stamp(); again != before {
		t.Fatalf("two stamps of an unchanged file differ: %+v, %+v", before, again)
	}
	if _, err := saveBytes(context.Background(), path, union("b")); err != nil {
		t.Fatal(err)
	}
	if after := stamp(); after == before {
		t.Fatal("the stamp did not change when the file was replaced")
	}
}

func TestWindowsOwnCacheMayHaveALock(t *testing.T) {
	dir := winetest.TempDir(t)
	path := filepath.Join(dir, "x.cache")
	if !mayCreateLock(path) {
		t.Error("no lock may be made beside a cache about to be created")
	}
	if err := os.WriteFile(path, []byte("CACHE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mayCreateLock(path) {
		t.Error("no lock may be made beside this user's own cache")
	}
	if err := writable(dir); err != nil {
		t.Errorf("writable(%s) = %v", dir, err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("the writable check left files behind: %v", names)
	}
	if err := writable(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing folder is writable")
	}
}

func TestWindowsLockPlantedAsLinkOrFolder(t *testing.T) {
	dir := winetest.TempDir(t)
	asDir := filepath.Join(dir, "d.cache")
	if err := os.Mkdir(lockPath(asDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := saveBytes(context.Background(), asDir, union("x")); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Errorf("Save with a folder as the lock = %v, want the lock refused", err)
	}
	if _, err := acquire(context.Background(), asDir, true); err == nil || !strings.Contains(err.Error(), "not a regular file; remove it") {
		t.Errorf("acquire with a folder as the lock = %v", err)
	}
	linked := filepath.Join(dir, "l.cache")
	victim := filepath.Join(winetest.TempDir(t), "victim")
	if err := os.Symlink(victim, lockPath(linked)); err != nil {
		if winetest.Wine() {
			t.Skipf("Wine cannot make a symbolic link here (%v): a Wine gap, the refusal is tested on Windows", err)
		}
		if errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) {
			t.Skipf("making a symbolic link needs Developer Mode or SeCreateSymbolicLinkPrivilege: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := os.Lstat(lockPath(linked)); err != nil && winetest.Wine() {
		t.Skipf("Wine reported the symbolic link made, but no link can be opened there (%v): a Wine gap", err)
	}
	if _, err := acquire(context.Background(), linked, true); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("acquire with a linked lock = %v, want it refused as a link", err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Error("the link's target was created")
	}
}

const helperEnv = "TRTBUILD_TIMINGCACHE_HELPER"

func TestWindowsHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run by the other tests as a second process")
	}
	if _, err := acquire(context.Background(), path, true); err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("locked")
	time.Sleep(10 * time.Minute)
	os.Exit(0)
}

func TestWindowsLockIsReleasedWhenItsHolderIsKilled(t *testing.T) {
	path := filepath.Join(winetest.TempDir(t), "x.cache")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		if l != "locked" {
			t.Fatalf("the helper said %q", l)
		}
	case <-time.After(time.Minute):
		t.Fatal("the helper did not take the lock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if _, err := saveBytes(ctx, path, union("x")); err == nil || !strings.Contains(err.Error(), "held") {
		t.Fatalf("Save while another process holds the lock = %v, want a wait", err)
	}
	cancel()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := saveBytes(ctx, path, union("x")); err != nil {
		t.Fatalf("the lock of a killed process was not released: %v", err)
	}
}

func TestWindowsAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "write", Path: "x", Err: windows.ERROR_DISK_FULL}, "disk is full"},
		{&os.PathError{Op: "write", Path: "x", Err: windows.ERROR_HANDLE_DISK_FULL}, "disk is full"},
		{&os.PathError{Op: "write", Path: "x", Err: windows.ERROR_NOT_ENOUGH_QUOTA}, "quota"},
		{&os.PathError{Op: "open", Path: "x", Err: windows.ERROR_WRITE_PROTECT}, "read-only"},
		{&os.PathError{Op: "open", Path: "x", Err: windows.ERROR_ACCESS_DENIED}, "make its folder writable"},
	} {
		if got := Advice(tc.err, "make its folder writable"); !strings.Contains(got, tc.want) {
			t.Errorf("Advice(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
