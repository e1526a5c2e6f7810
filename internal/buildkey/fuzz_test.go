package buildkey

import (
	"os"
	"testing"

	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// FuzzHashBytes feeds arbitrary bytes to the hasher: it must return hashes or an error, never
// panic, and hash the same bytes alike.
func FuzzHashBytes(f *testing.F) {
	for _, name := range []string{"convnet.onnx", "control_flow.onnx", "external_data.onnx", "truncated.onnx", "nested_length_bomb.onnx"} {
		b, err := os.ReadFile(tm.Bundled(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	root, err := os.OpenRoot(tm.BundledDir(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { root.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		a, errA := hashBytes(data, root)
		b, errB := hashBytes(data, root)
		if (errA == nil) != (errB == nil) || a != b {
			t.Fatalf("two hashes of the same bytes differ: %+v %v / %+v %v", a, errA, b, errB)
		}
	})
}
