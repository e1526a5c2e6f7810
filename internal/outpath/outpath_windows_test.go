package outpath

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

func writeW(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readW(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.Readdirnames(-1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range n {
		if name != folderLockName {
			out = append(out, name)
		}
	}
	return out
}

func attrs(t *testing.T, path string) uint32 {
	t.Helper()
	p, _ := windows.UTF16PtrFromString(LongPath(path))
	a, err := windows.GetFileAttributes(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWindowsCreateReplacesAtomically(t *testing.T) {
	dir := winetest.TempDir(t)
	target := filepath.Join(dir, "m.engine")
	writeW(t, target, "old")
	tg, err := Check("-o", target, WholeFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Create(tg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	p.WriteString("a first, abandoned try")
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	p.WriteString("new")
	if got := readW(t, target); got != "old" {
		t.Fatalf("the target changed before the commit: %q", got)
	}
	n := names(t, dir)
	if len(n) != 2 {
		t.Fatalf("folder while pending = %v, want the target and one temporary file", n)
	}
	var tmp string
	for _, name := range n {
		if name != "m.engine" {
			tmp = name
		}
	}
	if !strings.HasPrefix(tmp, ".m.engine"+tempInfix) || !strings.HasSuffix(tmp, tempSuffix) {
		t.Errorf("temporary file %q, want .m.engine%s*%s", tmp, tempInfix, tempSuffix)
	}
	a := attrs(t, filepath.Join(dir, tmp))
	if a&windows.FILE_ATTRIBUTE_HIDDEN == 0 {
		t.Errorf("temporary file's attributes %#x, want hidden", a)
	}
	if a&windows.FILE_ATTRIBUTE_TEMPORARY == 0 {
		if winetest.Wine() {
			t.Logf("Wine gap: NtCreateFile does not keep FILE_ATTRIBUTE_TEMPORARY (attributes %#x); not checked", a)
		} else {
			t.Errorf("temporary file's attributes %#x, want temporary", a)
		}
	}
	// No sharing: no other process, a cleaner or a reader of a partial engine, can open it.
	if f, err := os.Open(filepath.Join(dir, tmp)); err == nil {
		f.Close()
		t.Errorf("the pending file could be opened by another")
	} else if !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
		t.Errorf("opening the pending file: %v, want a sharing violation", err)
	}
	if got := CleanStale(dir, "m.engine"); len(got) != 0 {
		t.Errorf("CleanStale removed the live writer's file: %v", got)
	}
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	if got := readW(t, target); got != "new" {
		t.Errorf("target = %q, want new", got)
	}
	if a := attrs(t, target); a&(windows.FILE_ATTRIBUTE_HIDDEN|windows.FILE_ATTRIBUTE_TEMPORARY|windows.FILE_ATTRIBUTE_READONLY) != 0 {
		t.Errorf("the committed file's attributes %#x keep hidden, temporary or read-only", a)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the folder: %v", n)
	}
}

func TestWindowsCleanupLeavesTheOldFile(t *testing.T) {
	dir := winetest.TempDir(t)
	target := filepath.Join(dir, "m.engine")
	writeW(t, target, "old")
	p, err := CreatePath(target)
	if err != nil {
		t.Fatal(err)
	}
	p.WriteString("half an engine")
	if err := p.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := readW(t, target); got != "old" {
		t.Errorf("target = %q after Cleanup, want old", got)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the folder: %v", n)
	}
}

// TestWindowsCleanStale: a temporary file whose writer died is removed, a living writer's
// (held open unshared) is kept, and so are other targets' and other names.
func TestWindowsCleanStale(t *testing.T) {
	dir := winetest.TempDir(t)
	live, err := CreatePath(filepath.Join(dir, "m.engine"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Cleanup()
	liveName := live.Name()
	stale := filepath.Join(dir, ".m.engine"+tempInfix+"abc"+tempSuffix)
	writeW(t, stale, "killed build")
	other := filepath.Join(dir, ".x.engine"+tempInfix+"abc"+tempSuffix)
	writeW(t, other, "x")
	foreign := filepath.Join(dir, ".m.engine12345")
	writeW(t, foreign, "not ours")

	removed := CleanStale(dir, "m.engine")
	if len(removed) != 1 || !strings.EqualFold(removed[0], stale) {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, keep := range []string{other, foreign, liveName} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}

// TestWindowsFolderHeldWhilePending: the folder cannot be renamed away (and another put in its
// place) while an output into it is pending; once committed it can.
func TestWindowsFolderHeldWhilePending(t *testing.T) {
	base := winetest.TempDir(t)
	dir := filepath.Join(base, "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := CreatePath(filepath.Join(dir, "m.engine"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	err = os.Rename(dir, filepath.Join(base, "moved"))
	if err == nil {
		if winetest.Wine() {
			t.Skip("Wine gap: MoveFileEx renamed a folder held open without FILE_SHARE_DELETE (Wine does not apply share modes to renames of a directory)")
		}
		t.Fatal("the folder was renamed while an output into it was pending")
	}
	p.WriteString("new")
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	if got := readW(t, filepath.Join(dir, "m.engine")); got != "new" {
		t.Errorf("target = %q", got)
	}
	if err := os.Rename(dir, filepath.Join(base, "moved")); err != nil {
		t.Errorf("the folder is still held after the commit: %v", err)
	}
}

// TestWindowsFolderReplacedBeforeCreate: a folder swapped between Inspect and Create is refused.
func TestWindowsFolderReplacedBeforeCreate(t *testing.T) {
	base := winetest.TempDir(t)
	dir := filepath.Join(base, "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tg, err := Inspect(filepath.Join(dir, "m.engine"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := Create(tg)
	if err == nil {
		p.Cleanup()
		t.Fatal("Create wrote into a folder put in the inspected one's place")
	}
	if !strings.Contains(err.Error(), "was replaced") {
		t.Errorf("error %q, want it to say the folder was replaced", err)
	}
}

func TestWindowsNamesRefused(t *testing.T) {
	dir := winetest.TempDir(t)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "con.engine"), "device CON"},
		{filepath.Join(dir, "AUX"), "device AUX"},
		{filepath.Join(dir, "nul.engine"), "device NUL"},
		{filepath.Join(dir, "com1.onnx"), "device COM1"},
		{filepath.Join(dir, "lpt9 .txt"), "device LPT9"},
		{filepath.Join(dir, "m.engine."), "ends with a dot"},
		{filepath.Join(dir, "m.engine "), "ends with a dot or a space"},
		{filepath.Join(dir, "m.engine:stream"), "alternate data stream"},
		{filepath.Join(dir, "a?b"), `'?'`},
		{filepath.Join(dir, "prn", "m.engine"), "device PRN"},
		{`\\.\COM1`, "names a device"},
		{`\\?\GLOBALROOT\Device\Null`, "names a device"},
	} {
		for _, use := range []Use{WholeFile, Own} {
			_, err := Check("-o", tc.path, use)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check(%q, %v) = %v, want it to say %q", tc.path, use, err, tc.want)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("Check(%q) is more than one line: %q", tc.path, err)
			}
		}
		if err := WriteFile(tc.path, []byte("x")); err == nil {
			t.Errorf("WriteFile(%q) succeeded", tc.path)
		}
	}
	if n := names(t, dir); len(n) != 0 {
		t.Errorf("refused names left files: %v", n)
	}
}

// TestWindowsNameMessage: a refused name names its part once, and the path only when the part
// is not the whole of it.
func TestWindowsNameMessage(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"con.engine", `con.engine is a name Windows reserves for the device CON in every folder; choose another name`},
		{`prn\m.engine`, `prn in prn\m.engine is a name Windows reserves`},
	} {
		err := checkNames(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("checkNames(%q) = %v, want %s", tc.path, err, tc.want)
		}
	}
}

// TestWindowsNULDiscards: -o NUL (any case, and \\.\NUL) is the null device: the output is
// built and kept nowhere, as -o /dev/null on Linux.
func TestWindowsNULDiscards(t *testing.T) {
	tmp := winetest.TempDir(t)
	t.Setenv("TMP", tmp)
	t.Setenv("TEMP", tmp)
	// What the os package says of the null device, for the record: Inspect does not rely on
	// it, it opens NUL and asks the handle.
	for _, path := range []string{"NUL", `\\.\NUL`} {
		st, err := os.Stat(path)
		lst, lerr := os.Lstat(path)
		t.Logf("os.Stat(%q) = %v, %v; os.Lstat = %v, %v", path, modeOf(st), err, modeOf(lst), lerr)
	}
	for _, path := range []string{"NUL", "nul", `\\.\NUL`, "//./nul"} {
		tg, err := Check("-o", path, WholeFile)
		if err != nil {
			t.Fatalf("Check(%q): %v", path, err)
		}
		if tg.Kind != CharDevice {
			t.Errorf("%q is %v, want a character device", path, tg.Kind)
		}
		p, err := Create(tg)
		if err != nil {
			t.Fatal(err)
		}
		p.WriteString("an engine")
		if err := p.CloseAtomicallyReplace(); err != nil {
			t.Errorf("committing to %q: %v", path, err)
		}
		if err := WriteFile(path, []byte("a report")); err != nil {
			t.Errorf("WriteFile(%q): %v", path, err)
		}
		s, err := OpenStream(tg)
		if err != nil {
			t.Fatalf("OpenStream(%q): %v", path, err)
		}
		if s.ToFile() {
			t.Errorf("a stream to %q goes to a file", path)
		}
		fmt.Fprintln(s, "a trace line")
		if err := s.Commit(); err != nil {
			t.Errorf("stream to %q: %v", path, err)
		}
	}
	a, _ := Check("-o", "NUL", WholeFile)
	b, _ := Check("--report", `\\.\nul`, WholeFile)
	if err := Conflicts([]Named{{"-o", a}, {"--report", b}}, nil); err != nil {
		t.Errorf("two outputs to NUL conflict: %v", err)
	}
	if n := names(t, tmp); len(n) != 0 {
		t.Errorf("left in TEMP: %v", n)
	}
	if n := names(t, "."); contains(n, "NUL") {
		t.Errorf("a file named NUL was made")
	}
}

func modeOf(st os.FileInfo) string {
	if st == nil {
		return "nil"
	}
	return st.Mode().String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// TestWindowsLongPath: a target whose path is longer than MAX_PATH (260) is written and
// replaced.
func TestWindowsLongPath(t *testing.T) {
	dir := winetest.TempDir(t)
	for len(dir) < 300 {
		dir = filepath.Join(dir, strings.Repeat("d", 50))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, strings.Repeat("e", 40)+".engine")
	if len(target) <= 300 {
		t.Fatalf("path of %d characters", len(target))
	}
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(target, []byte(content)); err != nil {
			t.Fatalf("writing %d characters' path: %v", len(target), err)
		}
		if got := readW(t, target); got != content {
			t.Errorf("target = %q, want %q", got, content)
		}
	}
	if err := MkdirOwn(dir, filepath.Join("a", strings.Repeat("b", 100))); err != nil {
		t.Errorf("MkdirOwn under a long path: %v", err)
	}
	if n := names(t, dir); len(n) != 2 {
		t.Errorf("left in the folder: %v", n)
	}
}

// TestWindowsConcurrentWriters: builds writing one target at once each put a complete file in
// place; the last complete one wins, never a mix or a partial one.
func TestWindowsConcurrentWriters(t *testing.T) {
	dir := winetest.TempDir(t)
	target := filepath.Join(dir, "m.engine")
	const writers = 6
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 1<<20)
	}
	// A reader reads the target all along: it must only ever see one writer's whole content.
	stop := make(chan struct{})
	readerDone := make(chan error, 1)
	reads := 0
	go func() {
		for {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			got, err := os.ReadFile(target)
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
				continue // not written yet, or being replaced this instant
			}
			if err != nil {
				readerDone <- err
				return
			}
			whole := false
			for _, c := range contents {
				whole = whole || bytes.Equal(got, c)
			}
			if !whole {
				readerDone <- fmt.Errorf("a reader saw %d bytes that are no writer's whole content", len(got))
				return
			}
			reads++
		}
	}()
	defer func() {
		close(stop)
		if err := <-readerDone; err != nil {
			t.Error(err)
		}
		t.Logf("the reader read the whole target %d times", reads)
	}()
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = WriteFile(target, contents[i])
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			if err != nil {
				t.Logf("round %d writer %d: %v", round, i, err)
				continue
			}
			ok++
		}
		if ok == 0 {
			t.Fatalf("round %d: no writer committed", round)
		}
		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		whole := false
		for _, c := range contents {
			whole = whole || bytes.Equal(got, c)
		}
		if !whole {
			t.Fatalf("round %d: the target is no writer's complete content (%d bytes)", round, len(got))
		}
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the folder: %v", n)
	}
}

// mkJunction makes a junction (a mount point reparse point) at link to the folder dest.
func mkJunction(link, dest string) error {
	if err := os.Mkdir(link, 0o700); err != nil {
		return err
	}
	h, err := createFile(link, windows.GENERIC_WRITE, 0, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	sub, _ := windows.UTF16FromString(`\??\` + dest)
	sub = sub[:len(sub)-1]
	// REPARSE_DATA_BUFFER for IO_REPARSE_TAG_MOUNT_POINT: substitute name, then an empty
	// print name.
	pathBuf := append(append(sub, 0), 0)
	data := make([]byte, 8+8+2*len(pathBuf))
	le := func(off int, v uint16) { data[off], data[off+1] = byte(v), byte(v>>8) }
	le(0, uint16(windows.IO_REPARSE_TAG_MOUNT_POINT&0xffff))
	le(2, uint16((windows.IO_REPARSE_TAG_MOUNT_POINT>>16)&0xffff))
	le(4, uint16(8+2*len(pathBuf)))
	le(8, 0)
	le(10, uint16(2*len(sub)))
	le(12, uint16(2*len(sub)+2))
	le(14, 0)
	for i, c := range pathBuf {
		le(16+2*i, c)
	}
	var n uint32
	return windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &data[0], uint32(len(data)), nil, 0, &n, nil)
}

// TestWindowsOwnFollowsNoLink: a symbolic link or a junction planted at a file or folder
// trtbuild names on its own is refused, never followed.
func TestWindowsOwnFollowsNoLink(t *testing.T) {
	dir := winetest.TempDir(t)
	elsewhere := winetest.TempDir(t)
	victim := filepath.Join(elsewhere, "victim")
	writeW(t, victim, "precious")

	link := filepath.Join(dir, "m.engine.manifest.json")
	err := os.Symlink(victim, link)
	if err == nil {
		if _, lerr := os.Lstat(link); lerr != nil && winetest.Wine() {
			err = fmt.Errorf("Wine gap: CreateSymbolicLinkW reported success and made nothing (Lstat: %v)", lerr)
		}
	}
	if err != nil {
		t.Logf("no symbolic link made (%v): the link case is not exercised", err)
	} else {
		tg, err := InspectOwn(link)
		if err != nil {
			t.Fatal(err)
		}
		if tg.Kind != Symlink || tg.Refusal(Own) == "" {
			t.Errorf("a link at an own file is %v, refusal %q", tg.Kind, tg.Refusal(Own))
		}
		if err := WriteOwn(link, []byte("planted"), 0o644); err == nil {
			t.Error("WriteOwn wrote through a link")
		}
		if got := readW(t, victim); got != "precious" {
			t.Errorf("the link's target was written: %q", got)
		}
	}

	junction := filepath.Join(dir, "target")
	if err := mkJunction(junction, elsewhere); err != nil {
		if winetest.Wine() {
			t.Skipf("Wine gap: FSCTL_SET_REPARSE_POINT of a mount point failed (%v): junctions are not exercised", err)
		}
		t.Fatal(err)
	}
	if st, err := os.Lstat(junction); err == nil && st.Mode().IsDir() {
		t.Errorf("Lstat says the junction is a plain folder: %v", st.Mode())
	}
	err = MkdirOwn(dir, filepath.Join("target", "model"))
	if err == nil || !strings.Contains(err.Error(), "link or junction") {
		t.Errorf("MkdirOwn through a junction = %v, want a refusal", err)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "model")); err == nil {
		t.Error("MkdirOwn made a folder through the junction")
	}
	tg, err := InspectOwn(junction)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Refusal(Own) == "" {
		t.Errorf("a junction at an own file is accepted (%v)", tg.Kind)
	}
}

func TestWindowsMkdirOwn(t *testing.T) {
	dir := winetest.TempDir(t)
	if err := MkdirOwn(dir, `a\b/c`); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a", "b", "c")); err != nil || !st.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	if err := MkdirOwn(dir, `a\b/c`); err != nil {
		t.Errorf("again: %v", err)
	}
	writeW(t, filepath.Join(dir, "file"), "x")
	if err := MkdirOwn(dir, `file\x`); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a file in the way: %v", err)
	}
	if err := MkdirOwn(dir, `..\x`); err == nil {
		t.Error("MkdirOwn left base")
	}
	if err := MkdirOwn(dir, `a\con`); err == nil || !strings.Contains(err.Error(), "device CON") {
		t.Errorf("a reserved name: %v", err)
	}
}

func TestWindowsReadOnlyTargetRefused(t *testing.T) {
	dir := winetest.TempDir(t)
	target := filepath.Join(dir, "m.engine")
	writeW(t, target, "old")
	if err := os.Chmod(target, 0o444); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(target, 0o644)
	_, err := Check("-o", target, WholeFile)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Check(read-only) = %v", err)
	}
}

func TestWindowsFolderLockHoldsAndReadBack(t *testing.T) {
	dir := winetest.TempDir(t)
	target, err := Inspect(filepath.Join(dir, "e"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	folder, err := p.Folder()
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	back, err := p.ReadBack()
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if folder.Holds("e", back) {
		t.Fatal("holds before the commit")
	}
	p.WriteString("mine")
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := back.ReadAt(buf, 0); err != nil || string(buf) != "mine" {
		t.Errorf("ReadBack after the commit: %q %v", buf, err)
	}
	if !folder.Holds("e", back) {
		t.Fatal("does not hold the committed file")
	}
	// Windows cannot replace a file that is open: another build's commit waits while this
	// build still reads its engine back, and goes ahead once the handle is closed.
	other := make(chan error, 1)
	go func() { other <- WriteFile(filepath.Join(dir, "e"), []byte("another build's")) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-other:
		t.Fatalf("another build replaced a file this build holds open (%v)", err)
	default:
	}
	back.Close()
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("another build's commit, once the file was closed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("another build's commit never returned")
	}
	if got := readW(t, filepath.Join(dir, "e")); got != "another build's" {
		t.Fatalf("target = %q", got)
	}
	now, err := os.Open(filepath.Join(dir, "e"))
	if err != nil {
		t.Fatal(err)
	}
	if !folder.Holds("e", now) {
		t.Error("does not hold the file now at the name")
	}
	now.Close()
	foreign, err := os.Create(filepath.Join(dir, "g"))
	if err != nil {
		t.Fatal(err)
	}
	if folder.Holds("e", foreign) {
		t.Error("holds another file")
	}
	foreign.Close()

	unlock, held := folder.Lock()
	if !held {
		t.Fatal("the folder lock was not had")
	}
	p2, err := CreatePath(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Cleanup()
	otherFolder, err := p2.Folder()
	if err != nil {
		t.Fatal(err)
	}
	defer otherFolder.Close()
	got := make(chan bool, 1)
	go func() {
		u, h := otherFolder.Lock()
		got <- h
		u()
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("a second commit took the folder lock while the first held it")
	default:
	}
	unlock()
	select {
	case h := <-got:
		if !h {
			t.Error("the second commit did not get the lock once it was released")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second Lock never returned")
	}

	// RemoveTarget removes the file at the name, through the folder handle.
	p3, err := CreatePath(filepath.Join(dir, "e"))
	if err != nil {
		t.Fatal(err)
	}
	defer p3.Cleanup()
	if err := p3.RemoveTarget(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "e")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveTarget left the file: %v", err)
	}
	if err := p3.RemoveTarget(); err != nil {
		t.Errorf("RemoveTarget of a missing file: %v", err)
	}
}

// TestWindowsStreamToPipe: --trace to a named pipe is written through when a server serves
// it, and refused at once when none does.
func TestWindowsStreamToPipe(t *testing.T) {
	name := fmt.Sprintf(`\\.\pipe\trtbuild-test-%d`, os.Getpid())
	missing, err := Check("--trace", name+"-none", LiveStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStream(missing); err == nil || !strings.Contains(err.Error(), "no process is serving") {
		t.Errorf("OpenStream(no server) = %v", err)
	}
	if _, err := Check("-o", name, WholeFile); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("a pipe as -o = %v, want a refusal", err)
	}
	n16, _ := windows.UTF16PtrFromString(name)
	srv, err := windows.CreateNamedPipe(n16, windows.PIPE_ACCESS_INBOUND, windows.PIPE_TYPE_BYTE|windows.PIPE_WAIT, 1, 4096, 4096, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(srv)
	tg, err := Check("--trace", name, LiveStream)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStream(tg)
	if err != nil {
		t.Fatal(err)
	}
	if s.ToFile() {
		t.Error("a stream to a pipe goes to a file")
	}
	if _, err := s.WriteString("trace line\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	var n uint32
	if err := windows.ReadFile(srv, buf, &n, nil); err != nil {
		t.Fatal(err)
	}
	if string(buf[:n]) != "trace line\n" {
		t.Errorf("the pipe's server read %q", buf[:n])
	}
	if err := s.Commit(); err != nil {
		t.Error(err)
	}
}

// TestWindowsPathSpellings: a drive-relative path (C:name, relative to the drive's current
// folder), the \\?\ long form and forward slashes all name the file Windows names, and are
// written there.
func TestWindowsPathSpellings(t *testing.T) {
	dir := winetest.TempDir(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	drive := filepath.VolumeName(dir)
	for i, path := range []string{
		drive + "rel.engine",
		`\\?\` + filepath.Join(dir, "long-form.engine"),
		strings.ReplaceAll(filepath.Join(dir, "slashes.engine"), `\`, "/"),
		filepath.Join(dir, "sub", "..", "dots.engine"),
	} {
		tg, err := Check("-o", path, WholeFile)
		if err != nil {
			t.Errorf("Check(%q): %v", path, err)
			continue
		}
		content := fmt.Sprintf("engine %d", i)
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Errorf("WriteFile(%q): %v", path, err)
			continue
		}
		if got := readW(t, tg.Final); got != content {
			t.Errorf("%q: %s holds %q, want %q", path, tg.Final, got, content)
		}
	}
	want := []string{"dots.engine", "long-form.engine", "rel.engine", "slashes.engine"}
	got := names(t, dir)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the folder holds %v, want %v", got, want)
	}
}

// TestWindowsFolderLockRefusesAPlantedFolder: a folder (or anything but a plain file) planted at
// the lock file's name is not locked through: the commit goes on without the lock.
func TestWindowsFolderLockRefusesAPlantedFolder(t *testing.T) {
	dir := winetest.TempDir(t)
	if err := os.Mkdir(filepath.Join(dir, folderLockName), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := CreatePath(filepath.Join(dir, "m.engine"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	folder, err := p.Folder()
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	unlock, held := folder.Lock()
	unlock()
	if held {
		t.Error("the lock was taken through a folder planted at its name")
	}
	p.WriteString("engine")
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
}

// childWriterEnv names the folder a child test process writes a pending engine into, before
// it is killed.
const childWriterEnv = "TRTBUILD_OUTPATH_TEST_CHILD_WRITER"

// TestWindowsChildWriter is the child of TestWindowsKilledWriter: it starts an output, writes
// part of it, says so, and waits to be killed.
func TestWindowsChildWriter(t *testing.T) {
	dir := os.Getenv(childWriterEnv)
	if dir == "" {
		t.Skip("the child of TestWindowsKilledWriter")
	}
	p, err := CreatePath(filepath.Join(dir, "m.engine"))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	p.WriteString("half an engine")
	fmt.Println("ready")
	time.Sleep(10 * time.Minute)
	os.Exit(1)
}

// TestWindowsKilledWriter: a build killed while writing leaves the old engine as it was; its
// temporary file stays, and the next output to the same target removes it.
func TestWindowsKilledWriter(t *testing.T) {
	dir := winetest.TempDir(t)
	target := filepath.Join(dir, "m.engine")
	writeW(t, target, "old")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsChildWriter$")
	cmd.Env = append(os.Environ(), childWriterEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if txt := s.Text(); txt == "ready" || strings.HasPrefix(txt, "error:") {
				line <- txt
				return
			}
		}
		line <- "no ready line"
	}()
	select {
	case l := <-line:
		if l != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child writer: %s", l)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child writer never started")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := readW(t, target); got != "old" {
		t.Fatalf("the killed build changed the target: %q", got)
	}
	left := names(t, dir)
	if len(left) != 2 {
		t.Fatalf("after the kill the folder holds %v, want the target and the dead writer's temporary file", left)
	}
	if err := WriteFile(target, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readW(t, target); got != "new" {
		t.Errorf("target = %q", got)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("the dead writer's temporary file was not removed: %v", n)
	}
}
