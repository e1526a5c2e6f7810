package cgo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/cgo/sourcedigest/digest"
)

// TestCXXSourcesDigestIsUpToDate: cxx_sources_gen.h holds the digest of every file the C++ of
// this package includes from outside its folder, so that a change to one of them is compiled
// by the next build (Go's cache sees only this folder's files).
func TestCXXSourcesDigestIsUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := digest.Header(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, digest.File))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: a file under %v changed; run go generate ./internal/cgo (go run ./internal/cgo/sourcedigest)", digest.File, digest.Folders)
	}
}
