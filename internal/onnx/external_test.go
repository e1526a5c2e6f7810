package onnx

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
	"github.com/trtbuild/trtbuild/internal/winetest"
)

func TestUnsafeLocation(t *testing.T) {
	tests := []struct {
		loc  string
		want string
	}{
		{"weights.bin", ""},
		{"data/weights.bin", ""},
		{"./weights.bin", ""},
		{"..weights.bin", ""},
		{"weights..bin", ""},
		{"", "it is empty"},
		{"../weights.bin", `it climbs out of the model's folder with ".."`},
		{"data/../../weights.bin", `it climbs out of the model's folder with ".."`},
		{"data/..", `it climbs out of the model's folder with ".."`},
		{"a/../b.bin", `it climbs out of the model's folder with ".."`},
		{"/etc/passwd", "it is an absolute path"},
		{"//server/share/w.bin", "it is an absolute path"},
		{`..\..\secret`, "it contains a backslash; locations are relative paths with '/'"},
		{"w\x00.bin", "it contains a NUL byte"},
	}
	for _, tt := range tests {
		if got := UnsafeLocation(tt.loc); got != tt.want {
			t.Errorf("UnsafeLocation(%q) = %q, want %q", tt.loc, got, tt.want)
		}
	}
}

func TestExternalFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string, size int) {
		t.Helper()
		if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "ok.bin"), 100)
	write(filepath.Join(dir, "small.bin"), 10)
	write(filepath.Join(dir, "sub", "nested.bin"), 8)
	write(filepath.Join(root, "secret.bin"), 100)
	if err := os.Symlink(filepath.Join(root, "secret.bin"), filepath.Join(dir, "escape.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.bin", filepath.Join(dir, "inside.bin")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "inside.bin")); err != nil && winetest.Wine() {
		t.Skipf("Wine gap: CreateSymbolicLinkW reported success and made no link (Lstat: %v)", err)
	}
	m := &Model{External: []ExternalRef{
		{Tensor: "a", Location: "ok.bin", Offset: 0, Length: 60, HasLength: true},
		{Tensor: "b", Location: "ok.bin", Offset: 60, Length: 40, HasLength: true},
		{Tensor: "c", Location: "small.bin", Offset: 4, Length: 8, HasLength: true},
		{Tensor: "d", Location: "missing.bin", Length: 4},
		{Tensor: "e", Location: "../secret.bin", Length: 4},
		{Tensor: "f", Location: "escape.bin", Length: 4},
		{Tensor: "g", Location: "inside.bin", Length: 100, HasLength: true},
		{Tensor: "h", Location: "sub/nested.bin", Length: 8, HasLength: true},
		{Tensor: "i", Location: "sub", Length: 1},
		{Tensor: "j", Problem: "it has no location"},
		{Tensor: "k", Location: filepath.Join(root, "secret.bin"), Length: 4},
	}}
	got := m.ExternalFiles(dir)
	want := []ExternalFile{
		{Location: "ok.bin", Path: filepath.Join(dir, "ok.bin"), Tensors: 2, Needed: 100, Exists: true, Regular: true, Size: 100},
		{Location: "small.bin", Path: filepath.Join(dir, "small.bin"), Tensors: 1, Needed: 12, Exists: true, Regular: true, Size: 10},
		{Location: "missing.bin", Path: filepath.Join(dir, "missing.bin"), Tensors: 1, Needed: 4},
		{Location: "../secret.bin", Unsafe: `it climbs out of the model's folder with ".."`, Tensors: 1, Needed: 4},
		{Location: "escape.bin", Unsafe: "it is a link that leads out of the model's folder", Tensors: 1, Needed: 4},
		{Location: "inside.bin", Path: filepath.Join(dir, "inside.bin"), Tensors: 1, Needed: 100, Exists: true, Regular: true, Size: 100},
		{Location: "sub/nested.bin", Path: filepath.Join(dir, "sub", "nested.bin"), Tensors: 1, Needed: 8, Exists: true, Regular: true, Size: 8},
		{Location: "sub", Path: filepath.Join(dir, "sub"), Tensors: 1, Needed: 1, Exists: true, Regular: false, Size: got[7].Size},
		{Location: filepath.Join(root, "secret.bin"), Unsafe: "it is an absolute path", Tensors: 1, Needed: 4},
	}
	for i := range got {
		// Info is what the file system said of a file that is there.
		if (got[i].Info != nil) != got[i].Exists {
			t.Errorf("file %d (%s): Info %v with Exists %v", i, got[i].Location, got[i].Info, got[i].Exists)
		}
		got[i].Info = nil
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("file %d:\n got %+v\nwant %+v", i, got[min(i, len(got)-1)], want[min(i, len(want)-1)])
			}
		}
	}
	oks := map[string]bool{}
	for _, f := range got {
		oks[f.Location] = f.OK()
	}
	wantOK := map[string]bool{"ok.bin": true, "inside.bin": true, "sub/nested.bin": true}
	for loc, ok := range oks {
		if ok != wantOK[loc] {
			t.Errorf("%s: OK() = %v", loc, ok)
		}
	}
}

func TestExternalDataBundled(t *testing.T) {
	m, err := ReadMetadata(testmodels.Bundled(t, "external_data.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	files := m.ExternalFiles(testmodels.BundledDir(t))
	if len(files) != 1 || !files[0].OK() || files[0].Needed != 16640 || files[0].Size != 16640 || files[0].Tensors != 2 {
		t.Fatalf("external files %+v", files)
	}
}
