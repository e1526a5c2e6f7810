//go:build !windows

package buildkey

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestExternalDataIsOpenedWithOpenExternal: the hasher opens external data through
// onnx.OpenExternal, so it refuses what preflight's external data rule refuses: links planted
// to lead out of the model's folder, ".." and absolute locations, folders and FIFOs (which
// would block the hash forever); a link that stays in the folder is read, and keys as the file
// it points at.
func TestExternalDataIsOpenedWithOpenExternal(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	for _, d := range []string{filepath.Join(dir, "sub"), filepath.Join(root, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "w.bin"), filepath.Join(root, "secret.bin"), filepath.Join(root, "outside", "x.bin")} {
		if err := os.WriteFile(p, f32(1, 2, 3, 4), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"inside.bin":   "w.bin",
		"escape.bin":   filepath.Join(root, "secret.bin"),
		"up.bin":       "../secret.bin",
		"outdir":       filepath.Join(root, "outside"),
		"dangling.bin": filepath.Join(root, "nothing.bin"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.bin"), 0o644); err != nil {
		t.Fatal(err)
	}
	modelOf := func(loc string) string {
		return write(t, dir, strings.NewReplacer("/", "_", ".", "_").Replace(loc)+".onnx", placed("initializer", tm.External("W", []int64{4}, loc, 0, 16)))
	}
	base := hashOf(t, modelOf("w.bin"))
	if h := hashOf(t, modelOf("inside.bin")); key(h) != key(base) || h.ExternalBytes != 16 {
		t.Errorf("a link inside the folder: key %s, %d bytes read; want %s, 16", Short(key(h)), h.ExternalBytes, Short(key(base)))
	}
	for _, c := range []struct{ loc, want string }{
		{"escape.bin", "it is a link that leads out of the model's folder"},
		{"up.bin", "it is a link that leads out of the model's folder"},
		{"outdir/x.bin", "it is a link that leads out of the model's folder"},
		{"dangling.bin", "it is a link that leads out of the model's folder"},
		{"../secret.bin", `it climbs out of the model's folder with ".."`},
		{"sub/../w.bin", `it climbs out of the model's folder with ".."`},
		{filepath.Join(root, "secret.bin"), "it is an absolute path"},
		{"fifo.bin", "it is a named pipe (FIFO)"},
		{"sub", "it is a folder"},
		{"missing.bin", "it does not exist"},
	} {
		t.Run(c.loc, func(t *testing.T) {
			path := modelOf(c.loc)
			_, err := HashModel(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `tensor "W"`) {
				t.Fatalf("HashModel: %v, want an error about tensor \"W\" containing %q", err, c.want)
			}
			// Preflight's rule refuses the same files, but a missing one, which it reports apart.
			m, err := onnx.ReadMetadata(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CheckContained(dir); (err == nil) != (c.loc == "missing.bin") {
				t.Errorf("CheckContained: %v", err)
			}
		})
	}
}
