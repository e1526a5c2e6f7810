package filestamp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

// TestStampOnWindows: the stamp read through a handle names the file (volume serial number and
// file index) and moves when the file is written to; another file renamed over the name has
// another identity.
func TestStampOnWindows(t *testing.T) {
	dir := winetest.TempDir(t)
	path := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(path, []byte("model"), 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := func() Stamp {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := Of(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := stamp()
	if before.Ino == 0 || before.Size != 5 {
		t.Fatalf("stamp of a 5-byte file: %+v", before)
	}
	if again := stamp(); again != before {
		t.Fatalf("two stamps of an unchanged file differ: %+v, %+v", before, again)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("!"))
	f.Close()
	written := stamp()
	if written == before || !written.SameFile(before) {
		t.Errorf("after a write: %+v, before %+v; want the same file with another stamp", written, before)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if replaced := stamp(); replaced.SameFile(before) {
		t.Errorf("another file renamed over the name has the same identity: %+v", replaced)
	}
}
