//go:build !windows

package outpath

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entries lists a folder's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestInspectKinds(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	write(t, reg, "x")
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	os.Symlink("reg", link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("sub/../new", dangling)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)

	for _, tc := range []struct {
		path  string
		kind  Kind
		final string
		link  bool
		file  string // Refusal(WholeFile) contains this; "" means accepted
		store string
	}{
		{reg, Regular, reg, false, "", ""},
		{filepath.Join(dir, "missing"), Missing, filepath.Join(dir, "missing"), false, "", ""},
		{fifo, FIFO, fifo, false, "FIFO", "FIFO"},
		{sock, Socket, sock, false, "socket", "socket"},
		{dir, Dir, dir, false, "folder", "folder"},
		{"/dev/null", CharDevice, "/dev/null", false, "", "character device"},
		{link, Regular, reg, true, "", "symbolic link"},
		{dangling, Missing, filepath.Join(dir, "new"), true, "", "symbolic link"},
	} {
		got, err := Inspect(tc.path)
		if err != nil {
			t.Errorf("Inspect(%s): %v", tc.path, err)
			continue
		}
		if got.Kind != tc.kind || got.Final != tc.final || got.Link != tc.link {
			t.Errorf("Inspect(%s) = kind %v final %s link %v, want %v %s %v", tc.path, got.Kind, got.Final, got.Link, tc.kind, tc.final, tc.link)
		}
		for _, u := range []struct {
			use  Use
			want string
		}{{WholeFile, tc.file}, {Store, tc.store}} {
			r := got.Refusal(u.use)
			if (u.want == "") != (r == "") || !strings.Contains(r, u.want) {
				t.Errorf("Inspect(%s).Refusal(%v) = %q, want it to say %q", tc.path, u.use, r, u.want)
			}
		}
	}
	if got, _ := Inspect(fifo); got.Refusal(LiveStream) != "" {
		t.Errorf("a FIFO is refused for a stream: %s", got.Refusal(LiveStream))
	}
	if _, err := Inspect(loop); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("Inspect(a link loop) = %v, want a too-many-links error", err)
	}
	if _, err := Inspect(filepath.Join(dir, "nofolder", "x")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Inspect(in a missing folder) = %v, want the folder named", err)
	}
}

// TestInspectMagicLinks: /proc/self/fd/N of a pipe reads as a link to "pipe:[…]", which only
// the kernel can follow; it is a FIFO (this is what /dev/stdout and a shell's >(…) are).
func TestInspectMagicLinks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := "/proc/self/fd/" + strconv.Itoa(int(w.Fd()))
	got, err := Inspect(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != FIFO || got.Refusal(WholeFile) == "" || got.Refusal(LiveStream) != "" {
		t.Errorf("Inspect(%s) = %v: want a FIFO, refused for a file, accepted for a stream", p, got.Kind)
	}
	s, err := OpenStream(got)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteString("x")
	s.Commit()
	buf := make([]byte, 1)
	if _, err := r.Read(buf); err != nil || buf[0] != 'x' {
		t.Errorf("the stream did not reach the pipe: %q %v", buf, err)
	}
}

func TestConflicts(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.onnx")
	write(t, model, "model")
	hard := filepath.Join(dir, "hard.onnx")
	if err := os.Link(model, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft")
	os.Symlink("m.onnx", soft)
	inspect := func(p string) Target {
		tg, err := Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	in := []Named{{"the model", inspect(model)}}
	for _, tc := range []struct {
		name string
		outs []Named
		want string
	}{
		{"distinct", []Named{{"-o", inspect(filepath.Join(dir, "m.engine"))}, {"--trace", inspect(filepath.Join(dir, "t.jsonl"))}}, ""},
		{"trace is the model", []Named{{"--trace", inspect(model)}}, "--trace"},
		{"hard link to the model", []Named{{"-o", inspect(hard)}}, "is the model"},
		{"symlink to the model", []Named{{"--report", inspect(soft)}}, "is the model"},
		{"two new outputs", []Named{{"--timing-cache", inspect(filepath.Join(dir, "c"))}, {"-o", inspect(filepath.Join(dir, "sub", "..", "c"))}}, "same file"},
		{"devices may repeat", []Named{{"-o", inspect("/dev/null")}, {"--report", inspect("/dev/null")}}, ""},
	} {
		err := Conflicts(tc.outs, in)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Conflicts = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestCreateReplacesAtomicallyInTheTargetsFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "m.engine")
	write(t, target, "old")
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.engine")
	os.Symlink(target, link)

	tg, err := Inspect(link)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Create(tg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	p.WriteString("new")
	if got := read(t, target); got != "old" {
		t.Fatalf("the target changed before the commit: %q", got)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Fatalf("a temporary file is visible while writing: %v", n)
	}
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, target); got != "new" {
		t.Errorf("target = %q, want new", got)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want the old file's 0640", st.Mode().Perm())
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left in the folder: %v", n)
	}
	if n := entries(t, tmp); len(n) != 0 {
		t.Errorf("left in TMPDIR: %v", n)
	}
	if err := p.Cleanup(); err != nil || read(t, target) != "new" {
		t.Errorf("Cleanup after the commit: %v", err)
	}
}

func TestCleanupLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.engine")
	write(t, target, "old")
	tg, _ := Inspect(target)
	p, err := Create(tg)
	if err != nil {
		t.Fatal(err)
	}
	p.WriteString("partial")
	if err := p.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, target); got != "old" {
		t.Errorf("target = %q after Cleanup", got)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left: %v", n)
	}
}

func TestNewFileMode(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "r.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "r.json"))
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0644 less umask 027 = 0640", st.Mode().Perm())
	}
}

// TestDeviceWrittenThrough writes to a character device node: it must stay a device.
// /dev/null is the one every machine has and any user may write.
func TestDeviceWrittenThrough(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := WriteFile("/dev/null", []byte("engine")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat("/dev/null")
	if err != nil || KindOf(st.Mode()) != CharDevice {
		t.Fatalf("/dev/null is now %v (%v)", st.Mode(), err)
	}
	if n := entries(t, tmp); len(n) != 0 {
		t.Errorf("left in TMPDIR: %v", n)
	}
}

func TestWriteFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	unix.Mkfifo(fifo, 0o600)
	done := make(chan error, 1)
	go func() { done <- WriteFile(fifo, []byte("x")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("WriteFile(FIFO) = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WriteFile(FIFO) blocked")
	}
	if st, _ := os.Lstat(fifo); KindOf(st.Mode()) != FIFO {
		t.Errorf("the FIFO was replaced: %v", st.Mode())
	}
}

func TestOpenStreamFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	unix.Mkfifo(fifo, 0o600)
	tg, _ := Inspect(fifo)
	if _, err := OpenStream(tg); err == nil || !strings.Contains(err.Error(), "no process is reading") {
		t.Fatalf("OpenStream(FIFO without reader) = %v", err)
	}
	fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(fd), fifo)
	defer r.Close()
	s, err := OpenStream(tg)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteString("line\n")
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(fd, false)
	var buf bytes.Buffer
	buf.ReadFrom(r)
	if buf.String() != "line\n" {
		t.Errorf("read %q from the FIFO", buf.String())
	}
	if st, _ := os.Lstat(fifo); KindOf(st.Mode()) != FIFO {
		t.Errorf("the FIFO was replaced")
	}
}

func TestCleanStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	stale := filepath.Join(dir, ".m.engine"+tempInfix+"abc"+tempSuffix)
	write(t, stale, "killed build")
	os.Chtimes(stale, old, old)
	fresh := filepath.Join(dir, ".m.engine"+tempInfix+"new"+tempSuffix)
	write(t, fresh, "just created")
	held := filepath.Join(dir, ".m.engine"+tempInfix+"held"+tempSuffix)
	write(t, held, "a live writer")
	os.Chtimes(held, old, old)
	hf, _ := os.Open(held)
	defer hf.Close()
	if err := unix.Flock(int(hf.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// A file of another target and a file of another naming stay.
	other := filepath.Join(dir, ".x.engine"+tempInfix+"abc"+tempSuffix)
	write(t, other, "x")
	os.Chtimes(other, old, old)
	foreign := filepath.Join(dir, ".m.engine12345")
	write(t, foreign, "not ours")
	os.Chtimes(foreign, old, old)

	removed := CleanStale(dir, "m.engine")
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, keep := range []string{fresh, held, other, foreign} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s was removed", keep)
		}
	}
}

// TestReplacedFileNeverWritableByOthers: a file replaced at a path keeps its mode, less the
// write bit for every user, and less the group's when it was another user's: a 0666 file
// planted at -o does not make the new engine writable by its planter.
func TestReplacedFileNeverWritableByOthers(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode  os.FileMode
		other bool
		want  os.FileMode
	}{
		{0o644, false, 0o644},
		{0o600, false, 0o600},
		{0o666, false, 0o664},
		{0o666, true, 0o644},
		{0o660, true, 0o640},
	} {
		p := filepath.Join(dir, fmt.Sprintf("f-%o-%v", tc.mode, tc.other))
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		if tc.other {
			if os.Geteuid() != 0 {
				continue // giving a file away needs root
			}
			if err := os.Chown(p, 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteFile(p, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != tc.want {
			t.Errorf("a %o file (another user's: %v) replaced: mode %o, want %o", tc.mode, tc.other, st.Mode().Perm(), tc.want)
		}
	}
}

// TestMkdirOwn: trtbuild's own folders are made below the user's, and a link planted at any of
// them is refused, its target untouched.
func TestMkdirOwn(t *testing.T) {
	base := t.TempDir()
	if err := MkdirOwn(base, filepath.Join("a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(base, "a", "b", "c")); err != nil || !st.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(base, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := MkdirOwn(base, filepath.Join("a", "link", "x")); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("a planted link was followed: %v", err)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Fatalf("made in the link's target: %v", left)
	}
	if err := MkdirOwn(base, filepath.Join("..", "x")); err == nil {
		t.Fatal("a path leaving the base was made")
	}
}

// TestFolderHolds: the held folder tells whether a name still is the file committed.
func TestFolderHolds(t *testing.T) {
	dir := t.TempDir()
	target, err := Inspect(filepath.Join(dir, "e"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := p.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	if !folder.Holds("e", back) {
		t.Fatal("does not hold the committed file")
	}
	if err := WriteFile(filepath.Join(dir, "e"), []byte("another build's")); err != nil {
		t.Fatal(err)
	}
	if folder.Holds("e", back) {
		t.Fatal("holds a file another build put in place")
	}
	unlock, held := folder.Lock()
	if !held {
		t.Fatal("the folder lock was not had")
	}
	unlock()
}
