package enginecache

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

// The Windows tests of the engine cache; they run on Windows and under Wine
// (scripts/wine.sh test ./internal/enginecache), and skip, naming the gap, where Wine lacks
// what they need.

func wkey(i int) string { return buildkey.Parts{Graph: fmt.Sprint(i)}.Key() }

func wsum(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// wengine writes an engine file of size bytes of fill and its manifest for k.
func wengine(t *testing.T, k string, size int, fill byte) (Engine, []byte, []byte) {
	t.Helper()
	data := bytes.Repeat([]byte{fill}, size)
	p := filepath.Join(winetest.TempDir(t), "src.engine")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := manifest.Marshal(&manifest.Manifest{Key: k, Engine: manifest.Engine{File: "src.engine", Bytes: int64(size), SHA256: wsum(data)}})
	if err != nil {
		t.Fatal(err)
	}
	return Engine{File: f, Bytes: int64(size), SHA256: wsum(data), Perm: 0o644}, m, data
}

func wopen(t *testing.T, dir string) *Cache {
	t.Helper()
	c, err := Open(dir, 0, Trust{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wget(t *testing.T, c *Cache, k string) (Lookup, []byte) {
	t.Helper()
	var buf bytes.Buffer
	l, err := c.Get(context.Background(), k, &buf)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return l, buf.Bytes()
}

func TestWindowsHitAndMiss(t *testing.T) {
	c := wopen(t, filepath.Join(winetest.TempDir(t), "cache"))
	k := wkey(1)
	if l, _ := wget(t, c, k); l.Hit || l.Skipped != "" {
		t.Fatalf("Get on an empty cache = %+v, want a plain miss", l)
	}
	e, m, data := wengine(t, k, 3<<20+17, 'a')
	st, err := c.Put(context.Background(), k, e, m)
	if err != nil || st.Existed {
		t.Fatalf("Put = %+v, %v", st, err)
	}
	l, got := wget(t, c, k)
	if !l.Hit || !bytes.Equal(got, data) || l.Bytes != int64(len(data)) {
		t.Fatalf("Get after Put = %+v with %d bytes, want a hit with the %d bytes stored", l, len(got), len(data))
	}
	if l, _ := wget(t, c, wkey(2)); l.Hit {
		t.Fatal("another key hit")
	}
	if st, err := c.Put(context.Background(), k, e, m); err != nil || !st.Existed {
		t.Fatalf("a second Put = %+v, %v; want Existed", st, err)
	}
	entries, err := c.Entries()
	if err != nil || len(entries) != 1 || entries[0].Key != k || entries[0].Bytes != int64(len(data)) {
		t.Fatalf("Entries = %+v, %v", entries, err)
	}
	// The cache holds its folders without FILE_SHARE_DELETE: nobody can rename them away.
	if err := os.Rename(filepath.Join(c.Dir(), entriesDir), filepath.Join(c.Dir(), "moved")); err == nil {
		t.Error("entries/ could be renamed while the cache held it")
	}
}

func TestWindowsCorruptEntryIsRefusedAndRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(entry string) error
		want    string
	}{
		{"flipped bytes", func(entry string) error {
			return os.WriteFile(filepath.Join(entry, EngineName), bytes.Repeat([]byte{'b'}, 4096), 0o644)
		}, "SHA-256"},
		{"truncated engine", func(entry string) error {
			return os.WriteFile(filepath.Join(entry, EngineName), []byte("short"), 0o644)
		}, "bytes, its manifest says"},
		{"manifest of another key", func(entry string) error {
			m, _ := manifest.Marshal(&manifest.Manifest{Key: wkey(99), Engine: manifest.Engine{Bytes: 4096, SHA256: wsum(bytes.Repeat([]byte{'a'}, 4096))}})
			return os.WriteFile(filepath.Join(entry, ManifestName), m, 0o644)
		}, "another key"},
		{"engine removed", func(entry string) error { return os.Remove(filepath.Join(entry, EngineName)) }, "missing"},
		{"a file for the entry", func(entry string) error {
			if err := winetest.RemoveTree(entry); err != nil {
				return err
			}
			return os.WriteFile(entry, []byte("x"), 0o644)
		}, "not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wopen(t, filepath.Join(winetest.TempDir(t), "cache"))
			k := wkey(3)
			e, m, data := wengine(t, k, 4096, 'a')
			if _, err := c.Put(context.Background(), k, e, m); err != nil {
				t.Fatal(err)
			}
			if err := tc.corrupt(c.Entry(k)); err != nil {
				t.Fatal(err)
			}
			l, _ := wget(t, c, k)
			if l.Hit || !strings.Contains(l.Skipped, tc.want) || !l.Repaired {
				t.Fatalf("Get of a corrupt entry = %+v, want a repaired miss naming %q", l, tc.want)
			}
			if _, err := os.Lstat(c.Entry(k)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the corrupt entry is still there: %v", err)
			}
			if _, err := c.Put(context.Background(), k, e, m); err != nil {
				t.Fatal(err)
			}
			if l, got := wget(t, c, k); !l.Hit || !bytes.Equal(got, data) {
				t.Fatalf("Get after the rebuild = %+v", l)
			}
		})
	}
}

// plantLink makes a symbolic link (kind "symlink") or junction (kind "junction") to target at
// link, or skips the test naming what Wine or the account lacks.
func plantLink(t *testing.T, kind, target, link string) {
	t.Helper()
	var err error
	switch kind {
	case "symlink":
		err = os.Symlink(target, link)
	case "junction":
		err = makeJunction(target, link)
	}
	if err != nil {
		if winetest.Wine() {
			t.Skipf("Wine cannot make a %s here (%v): a Wine gap, the refusal is tested on Windows", kind, err)
		}
		if kind == "symlink" && errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) {
			t.Skipf("making a symbolic link needs Developer Mode or SeCreateSymbolicLinkPrivilege: %v", err)
		}
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil && winetest.Wine() {
		t.Skipf("Wine reported the %s made, but no link can be opened there (%v): a Wine gap, the refusal is tested on Windows", kind, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&(os.ModeSymlink|os.ModeIrregular) == 0 {
		if winetest.Wine() {
			t.Skipf("Wine made the %s as a plain %v, not a reparse point: a Wine gap", kind, st.Mode())
		}
		t.Fatalf("the %s is %v", kind, st.Mode())
	}
}

// makeJunction makes an NTFS junction (a mount-point reparse point) at link to the folder target.
func makeJunction(target, link string) error {
	abs, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if err := os.Mkdir(link, 0o755); err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(link)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	subst, _ := windows.UTF16FromString(`\??\` + abs)
	print, _ := windows.UTF16FromString(abs)
	sl, pl := (len(subst)-1)*2, (len(print)-1)*2
	// REPARSE_DATA_BUFFER for IO_REPARSE_TAG_MOUNT_POINT.
	buf := make([]byte, 8+8+sl+2+pl+2)
	le := func(off int, v uint32, n int) {
		for i := 0; i < n; i++ {
			buf[off+i] = byte(v >> (8 * i))
		}
	}
	le(0, windows.IO_REPARSE_TAG_MOUNT_POINT, 4)
	le(4, uint32(len(buf)-8), 2)
	le(8, 0, 2)
	le(10, uint32(sl), 2)
	le(12, uint32(sl+2), 2)
	le(14, uint32(pl), 2)
	copy(unsafe.Slice((*uint16)(unsafe.Pointer(&buf[16])), len(subst)), subst)
	copy(unsafe.Slice((*uint16)(unsafe.Pointer(&buf[16+sl+2])), len(print)), print)
	var n uint32
	return windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &n, nil)
}

func TestWindowsPlantedLinksAreRefused(t *testing.T) {
	for _, kind := range []string{"symlink", "junction"} {
		t.Run(kind+" as an entry", func(t *testing.T) {
			dir := filepath.Join(winetest.TempDir(t), "cache")
			c := wopen(t, dir)
			k := wkey(4)
			// A good entry elsewhere, which a link in entries/ would make the cache serve.
			elsewhere := wopen(t, filepath.Join(winetest.TempDir(t), "other"))
			e, m, _ := wengine(t, k, 4096, 'a')
			if _, err := elsewhere.Put(context.Background(), k, e, m); err != nil {
				t.Fatal(err)
			}
			plantLink(t, kind, elsewhere.Entry(k), c.Entry(k))
			l, _ := wget(t, c, k)
			if l.Hit || !strings.Contains(l.Skipped, "not a folder (a file or a link is there)") {
				t.Fatalf("Get through a planted %s = %+v, want it refused as a link", kind, l)
			}
			if _, err := os.Stat(filepath.Join(elsewhere.Entry(k), EngineName)); err != nil {
				t.Fatalf("removing the planted %s removed its target's engine: %v", kind, err)
			}
		})
		t.Run(kind+" as entries", func(t *testing.T) {
			dir := filepath.Join(winetest.TempDir(t), "cache")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			plantLink(t, kind, winetest.TempDir(t), filepath.Join(dir, entriesDir))
			_, err := Open(dir, 0, Trust{})
			var u *UnusableError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "trtbuild does not follow links in the engine cache: remove it") {
				t.Fatalf("Open with a planted %s = %v, want it unusable, with the fix", kind, err)
			}
		})
	}
	t.Run("symlink as the lock", func(t *testing.T) {
		dir := filepath.Join(winetest.TempDir(t), "cache")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(winetest.TempDir(t), "victim")
		plantLink(t, "symlink", victim, filepath.Join(dir, lockName))
		_, err := Open(dir, 0, Trust{})
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link, not a regular file") {
			t.Fatalf("Open with a linked lock = %v", err)
		}
		if _, err := os.Lstat(victim); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the lock link's target was created")
		}
	})
}

func TestWindowsKilledWritersLeftoverIsRemoved(t *testing.T) {
	c := wopen(t, filepath.Join(winetest.TempDir(t), "cache"))
	left := filepath.Join(c.Dir(), tmpDir, "0123456789abcdef")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, EngineName), make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	k := wkey(5)
	e, m, _ := wengine(t, k, 10, 'a')
	st, err := c.Put(context.Background(), k, e, m)
	if err != nil || st.Stale != 1 || st.StaleBytes != 100 {
		t.Fatalf("Put = %+v, %v; want the leftover (1 entry, 100 bytes) removed", st, err)
	}
	if _, err := os.Lstat(left); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the leftover is still there: %v", err)
	}
}

func TestWindowsEntryACLIsTrusted(t *testing.T) {
	c := wopen(t, filepath.Join(winetest.TempDir(t), "cache"))
	k := wkey(6)
	e, m, _ := wengine(t, k, 10, 'a')
	if _, err := c.Put(context.Background(), k, e, m); err != nil {
		t.Fatal(err)
	}
	engine := filepath.Join(c.Entry(k), EngineName)
	// Grant Everyone write access to the engine: it must no longer be served.
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(engine, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	got, err := windows.GetNamedSecurityInfo(engine, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.String(), "WD") {
		if winetest.Wine() {
			t.Skipf("Wine did not keep the ACL set on the file (it reads back %s): a Wine gap", got)
		}
		t.Fatalf("the ACL reads back as %s", got)
	}
	l, _ := wget(t, c, k)
	if l.Hit || !strings.Contains(l.Skipped, "its engine cannot be trusted: it is writable by") {
		t.Fatalf("Get of an engine everyone may write = %+v", l)
	}
}

func TestWindowsParseTrust(t *testing.T) {
	self, err := windowsSelf()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in      string
		sids    []string
		wantErr string
	}{
		{in: "self"},
		{in: "self," + self, sids: []string{self}},
		{in: "group", wantErr: "Windows does not have"},
		{in: "S-1-bogus", wantErr: "not a valid SID"},
		{in: "no-such-user-here", wantErr: `unknown user "no-such-user-here"`},
	} {
		got, err := ParseTrust(tc.in)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseTrust(%q) = %v, want an error with %q", tc.in, err, tc.wantErr)
			}
		case err != nil || strings.Join(got.SIDs, ",") != strings.Join(tc.sids, ","):
			t.Errorf("ParseTrust(%q) = %+v, %v; want SIDs %v", tc.in, got, err, tc.sids)
		}
	}
}

func windowsSelf() (string, error) {
	tok := windows.GetCurrentProcessToken()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String(), nil
}

// The helper process: TRTBUILD_ENGINECACHE_HELPER names what it does in the cache folder
// TRTBUILD_ENGINECACHE_DIR.
const helperEnv = "TRTBUILD_ENGINECACHE_HELPER"

func TestWindowsHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("run by the other tests as a second process")
	}
	c, err := Open(os.Getenv("TRTBUILD_ENGINECACHE_DIR"), 0, Trust{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	switch mode {
	case "hold-lock":
		if _, err := c.lock(context.Background(), true); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("locked")
		time.Sleep(10 * time.Minute)
	case "race":
		// Store and read the same key again and again; every hit must be the whole engine.
		k := wkey(7)
		e, m, data := wengine(t, k, 1<<20, 'r')
		for i := 0; i < 20; i++ {
			var buf bytes.Buffer
			l, err := c.Get(context.Background(), k, &buf)
			if err != nil {
				fmt.Println("error:", err)
				os.Exit(2)
			}
			if l.Hit && !bytes.Equal(buf.Bytes(), data) {
				fmt.Println("error: a hit with", buf.Len(), "bytes that are not the engine")
				os.Exit(2)
			}
			if l.Hit {
				fmt.Println("hit")
			}
			st, err := c.Put(context.Background(), k, e, m)
			if err != nil {
				fmt.Println("error:", err)
				os.Exit(2)
			}
			if st.Existed {
				fmt.Println("existed")
			} else {
				fmt.Println("stored")
			}
		}
	}
	os.Exit(0)
}

func helper(t *testing.T, mode, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "TRTBUILD_ENGINECACHE_DIR="+dir)
	return cmd
}

func TestWindowsTwoProcessesRaceForOneEntry(t *testing.T) {
	dir := filepath.Join(winetest.TempDir(t), "cache")
	wopen(t, dir)
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 2; i++ {
		cmd := helper(t, "race", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	stored := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		stored += strings.Count(outs[i].String(), "stored")
		if strings.Count(outs[i].String(), "hit") < 19 {
			t.Errorf("process %d hit fewer than 19 times of 20:\n%s", i, outs[i])
		}
	}
	if stored != 1 {
		t.Fatalf("the entry was stored %d times, want once (the other process hits)", stored)
	}
}

func TestWindowsLockIsReleasedWhenItsHolderIsKilled(t *testing.T) {
	dir := filepath.Join(winetest.TempDir(t), "cache")
	c := wopen(t, dir)
	cmd := helper(t, "hold-lock", dir)
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
	_, err = c.lock(ctx, false)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "waiting for the lock") {
		t.Fatalf("a shared lock while another process holds it exclusively = %v, want a wait", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unlock, err := c.lock(ctx, true)
	if err != nil {
		t.Fatalf("the lock of a killed process was not released: %v", err)
	}
	unlock()
}

func TestWindowsTwoOpensInOneProcessExclude(t *testing.T) {
	dir := filepath.Join(winetest.TempDir(t), "cache")
	a, b := wopen(t, dir), wopen(t, dir)
	unlock, err := a.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.lock(ctx, false); err == nil {
		t.Fatal("a second handle of this process got the lock another holds")
	}
	unlock()
	unlock2, err := b.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}
