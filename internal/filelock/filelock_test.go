package filelock

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

func TestConflicts(t *testing.T) {
	for _, tt := range []struct {
		name          string
		first, second bool // exclusive
		held          bool
	}{
		{"exclusive then exclusive", true, true, false},
		{"exclusive then shared", true, false, false},
		{"shared then exclusive", false, true, false},
		{"shared then shared", false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			a, held, err := TryLock(path, tt.first)
			if err != nil || !held {
				t.Fatalf("first lock: %v %v", held, err)
			}
			b, held, err := TryLock(path, tt.second)
			if err != nil || held != tt.held {
				t.Fatalf("second lock: held %v (%v), want %v", held, err, tt.held)
			}
			b.Release()
			if err := a.Release(); err != nil {
				t.Fatal(err)
			}
			c, held, err := TryLock(path, true)
			if err != nil || !held {
				t.Fatalf("after both were released: %v %v", held, err)
			}
			c.Release()
		})
	}
}

func TestRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	for name, want := range map[string]string{"folder": "", "link": "symbolic link"} {
		_, held, err := TryLock(filepath.Join(dir, name), true)
		if err == nil || held || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: held %v, %v; want a one-line error with %q", name, held, err, want)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was created: %v", err)
	}
}

// TestDirLockHoldsWithoutItsFile: a folder's lock holds when its lock file is removed (or, on
// Windows, cannot be removed while it is held): a second TryLockDir of the folder is refused,
// exclusive or shared, until the first is released.
func TestDirLockHoldsWithoutItsFile(t *testing.T) {
	dir := winetest.TempDir(t)
	a, held, err := TryLockDir(dir, "lock", true)
	if err != nil || !held {
		t.Fatalf("first lock: %v %v", held, err)
	}
	if err := os.Remove(filepath.Join(dir, "lock")); err == nil && runtime.GOOS == "windows" {
		t.Error("a held lock file was removed")
	}
	for _, exclusive := range []bool{true, false} {
		if b, held, err := TryLockDir(dir, "lock", exclusive); held || err != nil {
			b.Release()
			t.Fatalf("a second lock (exclusive %v) after the lock file was removed: held %v, %v", exclusive, held, err)
		}
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	c, held, err := TryLockDir(dir, "lock", true)
	if err != nil || !held {
		t.Fatalf("after the first was released: %v %v", held, err)
	}
	c.Release()
}

// TestDirLockShared: shared locks of a folder go together, and exclude an exclusive one.
func TestDirLockShared(t *testing.T) {
	dir := winetest.TempDir(t)
	a, held, err := TryLockDir(dir, "lock", false)
	if err != nil || !held {
		t.Fatalf("first shared lock: %v %v", held, err)
	}
	defer a.Release()
	b, held, err := TryLockDir(dir, "lock", false)
	if err != nil || !held {
		t.Fatalf("second shared lock: %v %v", held, err)
	}
	defer b.Release()
	if c, held, err := TryLockDir(dir, "lock", true); held || err != nil {
		c.Release()
		t.Fatalf("an exclusive lock while two shared are held: %v %v", held, err)
	}
}
