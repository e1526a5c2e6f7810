package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

// TestWindowsReadRefuses: beside an engine in a folder others may write, a folder, the null
// device or a reserved device name is not a manifest, and a symbolic link is not followed.
func TestWindowsReadRefuses(t *testing.T) {
	dir := winetest.TempDir(t)
	for _, path := range []string{dir, "NUL", filepath.Join(dir, "con.json")} {
		if _, err := Read(path); err == nil {
			t.Errorf("Read(%q) read a manifest", path)
		}
	}
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"manifest_version": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(secret); err != nil {
		t.Fatalf("Read(a manifest) = %v", err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Skipf("no symbolic link made (%v; creating one needs Developer Mode or the privilege)", err)
	}
	if _, err := os.Lstat(link); err != nil && winetest.Wine() {
		t.Skipf("Wine gap: CreateSymbolicLinkW reported success and made no link (Lstat: %v)", err)
	}
	if _, err := Read(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: %v", err)
	}
}
