//go:build !windows

package service

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFoldersArePrivate: in a state dir others may read (made by mkdir: 0755), the folders
// that hold engines, reports and events are the server's alone (0700).
func TestFoldersArePrivate(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(e.state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.state, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	m := e.manager(t, nil)
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, `{"backend": "sim", "sim-speed": 50}`)})
	if err != nil {
		t.Fatal(err)
	}
	if end := wait(t, m, s.ID); end.State != StateSucceeded {
		t.Fatalf("%+v", end)
	}
	converted, err := m.OutputDir("converted")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"builds", filepath.Join("builds", s.ID), "engines", converted} {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.state, dir)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %04o: others may read what is in it", dir, fi.Mode().Perm())
		}
	}
}
