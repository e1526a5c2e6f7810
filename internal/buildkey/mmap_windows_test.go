package buildkey

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/winetest"
)

func TestWindowsMapFile(t *testing.T) {
	dir := winetest.TempDir(t)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"small", []byte("graph bytes")},
		{"several pages", bytes.Repeat([]byte("0123456789abcdef"), 70000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".onnx")
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			data, release, err := mapFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, tc.data) {
				t.Errorf("mapped %d bytes that differ from the %d written", len(data), len(tc.data))
			}
			release()
			// Unmapped: the file can be replaced and removed again.
			if err := os.Remove(p); err != nil {
				t.Errorf("the file stays in use after release: %v", err)
			}
		})
	}
	if _, _, err := mapFile(dir); err == nil {
		t.Errorf("mapFile of a folder = %v, want an error", err)
	}
}
