//go:build unix

package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// TestForeignFolderInStateDir: a folder inside a private state dir that another user owns (a
// state dir whose owner changed with a chown that was not recursive, or a folder planted before
// the state dir was private) is refused when the server starts, exit status 2, in one line that
// names it and what to do. Its owner could otherwise swap builds/ID for a folder of its own,
// whose engine the server would serve, or for a link, through which the server would write its
// files outside the state dir; making the folder 0700, as the old code did, leaves it its
// owner's.
func TestForeignFolderInStateDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder to another user takes root")
	}
	const other = 65534 // nobody
	for _, sub := range []string{"builds", "runs", "engines", toolModels, "converted"} {
		t.Run(sub, func(t *testing.T) {
			e := newEnv(t)
			if err := os.MkdirAll(filepath.Join(e.state, sub), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(filepath.Join(e.state, sub), other, other); err != nil {
				t.Fatal(err)
			}
			m, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true,
				EngineCache: builder.EngineCache{Dir: filepath.Join(e.state, "engines"), Size: "1G", Trust: "self"}})
			if err == nil {
				m.Close()
				t.Fatalf("the server started on a state dir whose %s is user %d's", sub, other)
			}
			var fe *ForeignFolderError
			msg := err.Error()
			if !errors.As(err, &fe) || exitcode.Of(err) != exitcode.Usage || strings.Contains(msg, "\n") ||
				!strings.Contains(msg, filepath.Join(e.state, sub)) || !strings.Contains(msg, "user 65534") || !strings.Contains(msg, "chown -R") {
				t.Fatalf("start: %v (exit %v), want one line, exit 2, naming %s, its owner and chown -R", err, exitcode.Of(err), sub)
			}
		})
	}
}

// TestForeignBuildFolderNotServed: a build's folder that another user owns (one a chown that
// was not recursive left, whose owner kept a way in, such as a working folder inside it) is
// not served from: its engine, report and events are refused, and the server's log says why.
// The old code served whatever its owner put there.
func TestForeignBuildFolderNotServed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder to another user takes root")
	}
	e := newEnv(t)
	m := e.manager(t, nil)
	s := built(t, m, "1")
	if f, err := m.File(s.ID, "engine"); err != nil {
		t.Fatalf("the engine of its own folder: %v", err)
	} else {
		f.Close()
	}
	if err := os.Chown(filepath.Join(e.state, "builds", s.ID), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"engine", "report", "trace"} {
		if f, err := m.File(s.ID, kind); err == nil {
			f.Close()
			t.Errorf("the %s of a folder user 65534 owns was served", kind)
		}
	}
}

// TestStateDirBelowAFolderOthersCanChange: a state dir in a folder another user owns, or may
// write without the sticky bit, is refused at start in one line that names that folder: its
// owner could swap the state dir for a folder of their own while the server runs, and the
// server, reaching its state dir by path, would write its files there. Below a sticky folder
// such as /tmp, where only an entry's owner may rename it, the state dir is accepted.
func TestStateDirBelowAFolderOthersCanChange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  os.FileMode
		owner int // -1: this user
		want  string
	}{
		{"written by others", 0o777, -1, "which others can write (mode 0777)"},
		{"written by its group", 0o775, -1, "which others can write (mode 0775)"},
		{"sticky and written by all", 0o777 | os.ModeSticky, -1, ""},
		{"another user's", 0o755, 65534, "which belongs to user 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a folder to another user takes root")
			}
			e := newEnv(t)
			above := filepath.Join(t.TempDir(), "shared")
			if err := os.Mkdir(above, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(above, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if err := os.Chown(above, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			state := filepath.Join(above, "state")
			if err := os.Mkdir(state, 0o700); err != nil {
				t.Fatal(err)
			}
			m, err := New(Config{StateDir: state, ModelRoot: e.models, KeepHistory: true})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused below a sticky folder: %v", err)
				}
				m.Close()
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("the server started on a state dir in %s (%v)", above, tc.mode)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, above) || !strings.Contains(msg, tc.want) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("start: %v (exit %v); want one line naming %s with %q, exit 2", err, exitcode.Of(err), above, tc.want)
			}
		})
	}
}

// TestStateDirThroughALinkOfAnotherUser: the state dir's path as given is checked, links and
// all, not only the folder it leads to: a link on the way that another user owns, or that
// lies in a folder of theirs, is refused at start, before anything is made through it. Its
// owner could point it elsewhere once the server runs, which would then make its engine cache
// and write its files there.
func TestStateDirThroughALinkOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder or link to another user takes root")
	}
	for _, tc := range []struct{ name, linkOwner, folderOwner string }{
		{"a link of theirs", "other", "self"},
		{"a link in a folder of theirs", "self", "other"},
		{"a link of theirs behind a link of ours", "other", "self"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			target := filepath.Join(t.TempDir(), "target")
			if err := os.Mkdir(target, 0o700); err != nil {
				t.Fatal(err)
			}
			folder := filepath.Join(t.TempDir(), "theirs")
			if err := os.Mkdir(folder, 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(folder, "via")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			if tc.linkOwner == "other" {
				if err := os.Lchown(link, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if tc.folderOwner == "other" {
				if err := os.Chown(folder, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			given := link
			if strings.HasSuffix(tc.name, "behind a link of ours") {
				// Ours leads to theirs, which leads to the target: only a walk that follows
				// each link meets theirs.
				given = filepath.Join(t.TempDir(), "ours")
				if err := os.Symlink(link, given); err != nil {
					t.Fatal(err)
				}
			}
			m, err := New(Config{StateDir: filepath.Join(given, "state"), ModelRoot: e.models, KeepHistory: true})
			if err == nil {
				m.Close()
				t.Fatal("the server started on a state dir reached through a link another user may change")
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "which belongs to user 65534") || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("start: %v; want one line naming user 65534's link or folder", err)
			}
			if _, err := os.Lstat(filepath.Join(target, "state")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the state dir was made through the link before it was refused: %v", err)
			}
		})
	}
}

// TestTimingCacheFolderOthersCanChange: the builds' timing caches live in the user cache
// folder (a HOME or XDG_CACHE_HOME the server was started with), which the server reads and
// writes as long as it runs: a path there that others may change is refused at start, in one
// line, as the state dir's is. The old code wrote root's timing cache through another user's
// link.
func TestTimingCacheFolderOthersCanChange(t *testing.T) {
	e := newEnv(t)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", shared)
	m, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true})
	if err == nil {
		m.Close()
		t.Fatal("the server started with its timing caches in a folder anyone may write")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "timing cache folder ") || !strings.Contains(msg, shared) || !strings.Contains(msg, "which others can write (mode 0777)") {
		t.Fatalf("start: %v; want one line naming the timing cache folder and %s", err, shared)
	}
	if exitcode.Of(err) != exitcode.Usage {
		t.Errorf("exit %v, want 2", exitcode.Of(err))
	}
}

// TestMkdirNoFollow: the folders a state dir's path lacks are made without following a link:
// one put where a folder is to be made (between the check of the path and the making, by
// another user in a sticky folder) is refused, and nothing is made where it leads; a link the
// check found was resolved before (resolveAbove), and is followed.
func TestMkdirNoFollow(t *testing.T) {
	base := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(base, "a")); err != nil {
		t.Fatal(err)
	}
	if err := mkdirNoFollow(filepath.Join(base, "a", "b", "state")); err == nil {
		t.Fatal("made through a link")
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder was made where the link leads: %v", err)
	}
	made := filepath.Join(base, "c", "d", "state")
	if err := mkdirNoFollow(made); err != nil {
		t.Fatal(err)
	}
	resolved, err := resolveAbove(filepath.Join(base, "a", "e", "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mkdirNoFollow(resolved); err != nil {
		t.Fatalf("the folders below a link found when checked: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(elsewhere, "e", "state")); err != nil || !fi.IsDir() {
		t.Errorf("the state dir below a link found when checked: %v %v", fi, err)
	}
	for _, dir := range []string{filepath.Join(base, "c"), filepath.Join(base, "c", "d"), made} {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a folder, 0700", dir, fi, err)
		}
	}
}

// TestEngineCacheOutsideTheStateDir: an engine cache outside the state dir is opened by its path
// by every build, which also removes what killed builds left in its tmp/: a cache folder another
// user owns, or a link of theirs on its path, is refused at start in one line, exit 2 (its owner
// could rename it and put a link to a folder of root's in its place, whose files the next build's
// cleanup would remove). A shared cache folder of root's that anyone may write is accepted.
func TestEngineCacheOutsideTheStateDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder or link to another user takes root")
	}
	for _, tc := range []struct{ name, want string }{
		{"a folder of theirs", "belongs to user 65534"},
		{"a link of theirs on the way", "which belongs to user 65534"},
		{"a shared folder of root's", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			top := t.TempDir()
			cache := filepath.Join(top, "cache")
			if err := os.Mkdir(cache, 0o700); err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "a folder of theirs":
				if err := os.Chown(cache, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			case "a link of theirs on the way":
				link := filepath.Join(top, "via")
				if err := os.Symlink(top, link); err != nil {
					t.Fatal(err)
				}
				if err := os.Lchown(link, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				cache = filepath.Join(link, "cache")
			case "a shared folder of root's":
				if err := os.Chmod(cache, 0o777|os.ModeSticky); err != nil {
					t.Fatal(err)
				}
			}
			m, err := New(Config{StateDir: e.state, ModelRoot: e.models, KeepHistory: true,
				EngineCache: builder.EngineCache{Dir: cache, Size: "1G", Trust: "self"}})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				m.Close()
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("the server started with its engine cache at %s (%s)", cache, tc.name)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("start: %v (exit %v); want one line with %q, exit 2", err, exitcode.Of(err), tc.want)
			}
		})
	}
}
