package cgo

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVendoredTensorRTHeaders: each vendored TensorRT (third_party/tensorrt/vN) is the files
// its SHA256SUMS lists, byte for byte and no others, with its licence and its origin (the tag
// and commit of NVIDIA/TensorRT); scripts/make/vendor-tensorrt-headers.sh writes them.
func TestVendoredTensorRTHeaders(t *testing.T) {
	majors, err := filepath.Glob(filepath.Join("..", "..", "third_party", "tensorrt", "v*"))
	if err != nil || len(majors) != 2 {
		t.Fatalf("vendored TensorRT majors %v (%v), want v10 and v11", majors, err)
	}
	for _, dir := range majors {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			listed := map[string]string{}
			f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				sum, name, ok := strings.Cut(sc.Text(), "  ")
				if !ok {
					t.Fatalf("SHA256SUMS line %q is not \"SUM  FILE\"", sc.Text())
				}
				listed[name] = sum
			}
			found := map[string]bool{}
			err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(dir, path)
				rel = filepath.ToSlash(rel)
				if rel == "SHA256SUMS" || rel == "ORIGIN" {
					return nil
				}
				found[rel] = true
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				switch want, ok := listed[rel]; {
				case !ok:
					t.Errorf("%s is not in SHA256SUMS: vendor with scripts/make/vendor-tensorrt-headers.sh", rel)
				case hex.EncodeToString(sum[:]) != want:
					t.Errorf("%s differs from the file vendored (SHA-256 %s, listed %s): vendored headers are never edited", rel, hex.EncodeToString(sum[:]), want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for name := range listed {
				if !found[name] {
					t.Errorf("%s is listed but missing", name)
				}
			}
			if !found["LICENSE"] || !found["NOTICE"] || !found["include/NvInfer.h"] {
				t.Errorf("LICENSE, NOTICE or include/NvInfer.h missing: %v", found)
			}
			origin, err := os.ReadFile(filepath.Join(dir, "ORIGIN"))
			if err != nil || !strings.Contains(string(origin), "tag "+filepath.Base(dir)+".") || !strings.Contains(string(origin), "commit ") {
				t.Errorf("ORIGIN does not name a %s tag and its commit: %q %v", filepath.Base(dir), origin, err)
			}
		})
	}
}
