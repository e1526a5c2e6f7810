//go:build unix

package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/regfile"
)

// TestLoadOpensAsEveryInput: Load opens the matrix file as every input is opened: what is not
// a regular file is refused at once (a FIFO with no writer would block the open and the read
// for ever, so a missing check hangs this test; /dev/zero would be read until memory runs
// out), and a file larger than MaxFileSize is not read.
func TestLoadOpensAsEveryInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("testdata", "matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	// A matrix padded with a comment to n bytes.
	padded := func(n int) string {
		p := filepath.Join(dir, "padded.yaml")
		body := append(append([]byte{}, good...), '#')
		body = append(body, []byte(strings.Repeat("x", n-len(body)-1))...)
		body = append(body, '\n')
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path func() string
		kind outpath.Kind // the kind refused (Missing: none)
		big  bool         // refused as larger than MaxFileSize
	}{
		{name: "a FIFO", path: func() string { return fifo }, kind: outpath.FIFO},
		{name: "/dev/zero", path: func() string { return "/dev/zero" }, kind: outpath.CharDevice},
		{name: "a link to /dev/zero", path: func() string { return link }, kind: outpath.CharDevice},
		{name: "a folder", path: func() string { return dir }, kind: outpath.Dir},
		{name: "one byte over the limit", path: func() string { return padded(MaxFileSize + 1) }, big: true},
		{name: "a matrix", path: func() string { return filepath.Join("testdata", "matrix.yaml") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Load(tt.path())
			var nr *regfile.NotRegularError
			switch {
			case tt.big:
				if !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Load: %v, want one line wrapping ErrTooLarge", err)
				}
			case tt.kind != outpath.Missing:
				if !errors.As(err, &nr) || nr.Kind != tt.kind {
					t.Fatalf("Load: %v, want a refusal of %s", err, tt.kind)
				}
			default:
				if err != nil || len(f.Cells()) != 16 {
					t.Fatalf("Load: %v", err)
				}
			}
		})
	}
	// At the limit the file is read whole (parsing 16 MiB of comment is left out: it is slow
	// under the race detector and proves nothing more).
	if data, err := readFile(padded(MaxFileSize)); err != nil || len(data) != MaxFileSize {
		t.Errorf("a file of MaxFileSize bytes: %d bytes read, %v", len(data), err)
	}
}
