//go:build !windows

package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "m.onnx")
	os.WriteFile(reg, []byte("data"), 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink("m.onnx", link)

	f, st, err := Open(reg)
	if err != nil || st.Size() != 4 {
		t.Fatalf("Open(regular) = %v, %v", st, err)
	}
	f.Close()
	// A FIFO with no writer: open(2) without O_NONBLOCK would block this test forever.
	for _, p := range []string{fifo, dir, "/dev/null"} {
		if _, _, err := Open(p); !IsNotRegular(err) {
			t.Errorf("Open(%s) = %v, want NotRegularError", p, err)
		}
	}
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("Open(folder) says %v", err)
	}
	if _, _, err := Open(fifo); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Open(FIFO) says %v", err)
	}
	if f, _, err := Open(link); err != nil {
		t.Errorf("Open(link) = %v", err)
	} else {
		f.Close()
	}
	if _, _, err := OpenNoFollow(link); err == nil {
		t.Errorf("OpenNoFollow(link) succeeded")
	}
	if err := Check(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("Check(missing) = %v", err)
	}
}
