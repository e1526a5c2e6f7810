package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

func TestWindowsOpen(t *testing.T) {
	dir := winetest.TempDir(t)
	reg := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(reg, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := dir
	for len(long) < 300 {
		long = filepath.Join(long, strings.Repeat("d", 60))
	}
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	longFile := filepath.Join(long, "m.onnx")
	if err := os.WriteFile(longFile, []byte("long"), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf(`\\.\pipe\trtbuild-regfile-%d`, os.Getpid())
	n16, _ := windows.UTF16PtrFromString(pipe)
	srv, err := windows.CreateNamedPipe(n16, windows.PIPE_ACCESS_OUTBOUND, windows.PIPE_TYPE_BYTE|windows.PIPE_WAIT, 4, 4096, 4096, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(srv)

	for _, path := range []string{reg, strings.ReplaceAll(reg, `\`, "/"), longFile} {
		f, st, err := Open(path)
		if err != nil {
			t.Errorf("Open(%q) = %v", path, err)
			continue
		}
		if !st.Mode().IsRegular() || st.Size() == 0 {
			t.Errorf("Open(%q) says %v", path, st.Mode())
		}
		f.Close()
	}
	for _, tc := range []struct {
		path string
		kind outpath.Kind
	}{
		{dir, outpath.Dir},
		{"NUL", outpath.CharDevice},
		{`\\.\NUL`, outpath.CharDevice},
		{"CON", outpath.CharDevice},
		{filepath.Join(dir, "aux.onnx"), outpath.CharDevice},
		{filepath.Join(dir, "con .onnx"), outpath.CharDevice},
		{pipe, outpath.FIFO},
	} {
		_, _, err := Open(tc.path)
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Kind != tc.kind {
			t.Errorf("Open(%q) = %v, want it refused as %v", tc.path, err, tc.kind)
		}
		if err := CheckInput("model", tc.path); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckInput(%q) = %v, want a one-line refusal", tc.path, err)
		}
	}
	if err := Check(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check(missing) = %v", err)
	}
	if f, _, err := OpenNoFollow(reg); err != nil {
		t.Errorf("OpenNoFollow(regular) = %v", err)
	} else {
		f.Close()
	}
}

// TestWindowsOpenNoFollowLink: OpenNoFollow refuses a symbolic link, Open follows it.
func TestWindowsOpenNoFollowLink(t *testing.T) {
	dir := winetest.TempDir(t)
	reg := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(reg, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.onnx")
	if err := os.Symlink(reg, link); err != nil {
		t.Skipf("no symbolic link made (%v; creating one needs Developer Mode or the privilege)", err)
	}
	if _, err := os.Lstat(link); err != nil && winetest.Wine() {
		t.Skipf("Wine gap: CreateSymbolicLinkW reported success and made nothing (Lstat: %v): not exercised", err)
	}
	if _, _, err := OpenNoFollow(link); !IsLink(err) {
		t.Errorf("OpenNoFollow(link) = %v, want a refused link", err)
	}
	if f, _, err := Open(link); err != nil {
		t.Errorf("Open(link) = %v, want the link followed", err)
	} else {
		f.Close()
	}
}
