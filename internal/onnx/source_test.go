package onnx

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// modelDir is a folder with the bundled model with external data (ext.onnx, external_data.bin)
// and convnet.onnx.
func modelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for from, to := range map[string]string{"external_data.onnx": "ext.onnx", "external_data.bin": "external_data.bin", "convnet.onnx": "convnet.onnx"} {
		data, err := os.ReadFile(testmodels.Bundled(t, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenSourceIn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := modelDir(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.onnx"), []byte("secret"), 0o644)
	os.Symlink("convnet.onnx", filepath.Join(dir, "in.onnx"))
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(".", filepath.Join(dir, "here"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name string
		err  func(error) bool
	}{
		{"convnet.onnx", nil},
		{"here/convnet.onnx", nil}, // a folder link that stays inside the root
		{"in.onnx", func(err error) bool { return errors.Is(err, ErrLinkedModel) }},
		{"out/secret.onnx", func(err error) bool { return err != nil && !errors.Is(err, fs.ErrNotExist) }},
		{"sub", func(err error) bool { var nr *regfile.NotRegularError; return errors.As(err, &nr) }},
		{"missing.onnx", func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := OpenSourceIn(root, "", tc.name)
			if tc.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				if src.Path() != tc.name {
					t.Errorf("Path %q, want the name %q", src.Path(), tc.name)
				}
				if _, err := src.Metadata(); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil {
				src.Close()
			}
			if !tc.err(err) {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestSourceChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"unchanged", func(*testing.T, string) {}, ""},
		{"another file renamed over it", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "new"), []byte("other"), 0o644)
			if err := os.Rename(filepath.Join(dir, "ext.onnx"), filepath.Join(dir, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "new"), filepath.Join(dir, "ext.onnx")); err != nil {
				t.Fatal(err)
			}
		}, "its name leads to another file now"},
		{"written in place", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "ext.onnx"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{0})
			f.Close()
		}, "it was written to"},
		{"removed", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "ext.onnx")) }, "the model"},
		{"its external data replaced", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, "external_data.bin"))
			os.WriteFile(filepath.Join(dir, "new.bin"), data, 0o644)
			if err := os.Rename(filepath.Join(dir, "new.bin"), filepath.Join(dir, "external_data.bin")); err != nil {
				t.Fatal(err)
			}
		}, `the external data file "external_data.bin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := modelDir(t)
			src, err := OpenSource(filepath.Join(dir, "ext.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			m, err := src.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range src.ExternalFiles(m) {
				if g, _, err := src.OpenExternal(f.Location); err == nil {
					g.Close()
				}
			}
			tc.change(t, dir)
			err = src.Changed()
			if tc.want == "" {
				if err != nil {
					t.Errorf("Changed: %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Changed: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSourceCopyTo(t *testing.T) {
	dir := modelDir(t)
	src, err := OpenSource(filepath.Join(dir, "ext.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "copy")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	path, err := src.CopyTo(out)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(out, "ext.onnx") {
		t.Errorf("the copy is %s", path)
	}
	for _, name := range []string{"ext.onnx", "external_data.bin"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s was not copied whole: %v", name, err)
		}
	}
	// A second copy (a file of the same name there already) replaces the first.
	if _, err := src.CopyTo(out); err != nil {
		t.Errorf("copying again: %v", err)
	}
}

// TestSourceHeldPastClose: work holding a Source (hashing abandoned after a signal) reads on
// after Close; the files are closed when the last holder releases.
func TestSourceHeldPastClose(t *testing.T) {
	src, err := OpenSource(filepath.Join(modelDir(t), "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	release := src.Hold()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := src.ReaderAt().ReadAt(buf, 0); err != nil {
		t.Fatalf("reading a held Source after Close: %v", err)
	}
	release()
	release() // twice is once
	if _, err := src.ReaderAt().ReadAt(buf, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after the last release: %v, want the file closed", err)
	}
}

// TestSourceHoldsTheFolderItOpened: a model reached through links (a linked folder, a linked
// file) is held in the folder the file is in, under the file's own name; swapping the links
// afterwards changes nothing that the Source reads or pins.
func TestSourceHoldsTheFolderItOpened(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	real := modelDir(t)
	real, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	other := modelDir(t)
	links := t.TempDir()
	folderLink := filepath.Join(links, "models")
	if err := os.Symlink(real, folderLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ext.onnx", filepath.Join(real, "linked.onnx")); err != nil {
		t.Fatal(err)
	}
	src, err := OpenSource(filepath.Join(folderLink, "linked.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Dir() != real || src.Base() != "ext.onnx" {
		t.Errorf("Dir, Base = %s, %s; want %s, ext.onnx", src.Dir(), src.Base(), real)
	}
	if src.Path() != filepath.Join(folderLink, "linked.onnx") {
		t.Errorf("Path = %s, want the path as given", src.Path())
	}
	m, err := src.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if len(src.ExternalFiles(m)) == 0 {
		t.Fatal("no external data")
	}
	// The folder link now leads to another folder with the same files.
	if err := os.Remove(folderLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, folderLink); err != nil {
		t.Fatal(err)
	}
	if err := src.Changed(); err != nil {
		t.Errorf("Changed after the link was swapped: %v; the held folder did not change", err)
	}
	folder, err := src.OpenFolder()
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	held, err := folder.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.Stat(real); err != nil || !os.SameFile(held, want) {
		t.Errorf("OpenFolder is not the folder the model is in (%v)", err)
	}
}

// TestSourceCopyToCutShort: a model cut short after it was opened is not copied in part: the
// copy fails with ErrCutShort and leaves nothing at its name.
func TestSourceCopyToCutShort(t *testing.T) {
	dir := modelDir(t)
	src, err := OpenSource(filepath.Join(dir, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Metadata(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "convnet.onnx"), src.Size()/2); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := src.CopyTo(out); !errors.Is(err, ErrCutShort) {
		t.Errorf("CopyTo of a model cut short: %v, want ErrCutShort", err)
	}
	if _, err := os.Lstat(filepath.Join(out, "convnet.onnx")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a part copy was left: %v", err)
	}
}
