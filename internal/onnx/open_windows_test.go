package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

// TestWindowsOpenModelRefuses: a folder, the null device, the console, a reserved name and a
// named pipe given as the model are refused with one line, without blocking.
func TestWindowsOpenModelRefuses(t *testing.T) {
	dir := winetest.TempDir(t)
	model := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(model, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf(`\\.\pipe\trtbuild-onnx-%d`, os.Getpid())
	n16, _ := windows.UTF16PtrFromString(pipe)
	srv, err := windows.CreateNamedPipe(n16, windows.PIPE_ACCESS_OUTBOUND, windows.PIPE_TYPE_BYTE|windows.PIPE_WAIT, 4, 4096, 4096, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(srv)
	f, _, err := OpenModel(model)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct{ path, want string }{
		{dir, "is a directory"},
		{"NUL", "is a character device"},
		{"CON", "is a character device"},
		{filepath.Join(dir, "aux.onnx"), "is a character device"},
		{pipe, "is a named pipe (FIFO)"},
	} {
		_, _, err := OpenModel(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("OpenModel(%q) = %v, want one line saying %q", tc.path, err, tc.want)
		}
	}
}

// TestWindowsOpenExternal: external data stays inside the model's folder whatever the Windows
// spelling, and a folder there is refused.
func TestWindowsOpenExternal(t *testing.T) {
	root := winetest.TempDir(t)
	dir := filepath.Join(root, "model")
	if err := os.MkdirAll(filepath.Join(dir, "sub", "folder.bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "w.bin"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret.bin"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, st, err := OpenExternal(dir, "sub/w.bin")
	if err != nil || st.Size() != 4 {
		t.Fatalf("OpenExternal(sub/w.bin) = %v, %v", st, err)
	}
	f.Close()
	drive := filepath.VolumeName(root)
	for _, tc := range []struct {
		loc  string
		want ExternalProblem
	}{
		{`..\secret.bin`, ExternalUnsafe},
		{"../secret.bin", ExternalUnsafe},
		{filepath.Join(root, "secret.bin"), ExternalUnsafe},
		{drive + "secret.bin", ExternalUnsafe},
		{strings.ReplaceAll(filepath.Join(root, "secret.bin"), `\`, "/"), ExternalUnsafe},
		{`\\?\` + filepath.Join(root, "secret.bin"), ExternalUnsafe},
		{"sub/w.bin:stream", ExternalUnsafe},
		{"sub/con.bin", ExternalUnsafe},
		{"sub/w.bin.", ExternalUnsafe},
		{"sub/folder.bin", ExternalNotRegular},
		{"sub/none.bin", ExternalMissing},
	} {
		_, _, err := OpenExternal(dir, tc.loc)
		var ee *ExternalError
		if !errors.As(err, &ee) || ee.Problem != tc.want {
			t.Errorf("OpenExternal(%q) = %v, want problem %d", tc.loc, err, tc.want)
		}
		if _, err := StatExternal(dir, tc.loc); !errors.As(err, &ee) || ee.Problem != tc.want {
			t.Errorf("StatExternal(%q) = %v, want problem %d", tc.loc, err, tc.want)
		}
	}
}
