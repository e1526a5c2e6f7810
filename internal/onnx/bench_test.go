package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// BenchmarkReadMetadataLarge reads the metadata of a 1 GiB model (256
// weights of 4 MiB, written once into a temporary folder). With the file in
// the page cache this measures the reader, not the disk.
func BenchmarkReadMetadataLarge(b *testing.B) {
	path := filepath.Join(b.TempDir(), "large.onnx")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := testmodels.WriteLarge(f, 1024); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	// How much of the file one read takes in, reported as file-bytes/op.
	cf, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer cf.Close()
	st, err := cf.Stat()
	if err != nil {
		b.Fatal(err)
	}
	counter := &countingFile{File: cf}
	if _, err := decode(counter, st.Size(), path); err != nil {
		b.Fatal(err)
	}

	b.ReportAllocs()
	for b.Loop() {
		m, err := ReadMetadata(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Initializers) != 256 {
			b.Fatalf("%d initializers", len(m.Initializers))
		}
	}
	b.ReportMetric(float64(counter.n), "file-bytes/op")
}

// BenchmarkReadMetadataConvnet reads the bundled convnet.onnx.
func BenchmarkReadMetadataConvnet(b *testing.B) {
	path := testmodels.Bundled(b, "convnet.onnx")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadMetadata(path); err != nil {
			b.Fatal(err)
		}
	}
}
