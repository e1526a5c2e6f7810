package buildkey

import (
	"os"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
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
	// a tensor with both inline and external data, DEFAULT and EXTERNAL; a local function
	for _, m := range []*onnxpb.ModelProto{
		placed("initializer", func() *onnxpb.TensorProto {
			w := tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4})
			w.ExternalData = entries("external_data.bin", 0, 16)
			return w
		}()),
		placed("constant", func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "external_data.bin", 0, 16)
			w.RawData = f32(1, 2, 3, 4)
			return w
		}()),
		placed("function default", tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4})),
	} {
		b, err := tm.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := tm.BundledDir(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		open := func(loc string) (*os.File, os.FileInfo, error) { return onnx.OpenExternal(dir, loc) }
		a, errA := hashBytes(data, open)
		b, errB := hashBytes(data, open)
		if (errA == nil) != (errB == nil) || a != b {
			t.Fatalf("two hashes of the same bytes differ: %+v %v / %+v %v", a, errA, b, errB)
		}
	})
}
