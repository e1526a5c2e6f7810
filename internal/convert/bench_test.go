package convert

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// writeLargeModel writes a chain of MatMul layers with 1024x1024 float32
// weights (4 MiB each, values in [-0.5, 0.5)), about mib MiB in all,
// without holding the weights in memory.
func writeLargeModel(tb testing.TB, path string, mib int) {
	tb.Helper()
	const n = 1024
	layers := max(1, mib/4)
	g := &onnxpb.GraphProto{Name: "large",
		Input: []*onnxpb.ValueInfoProto{tm.Value("x", f32, "batch", n)}}
	x := "x"
	m := modelio.FromProto(tm.Model(g))
	for i := 0; i < layers; i++ {
		w, y := fmt.Sprintf("layer%d.weight", i), fmt.Sprintf("layer%d.out", i)
		g.Node = append(g.Node, tm.Node(fmt.Sprintf("layer%d", i), "MatMul", []string{x, w}, []string{y}))
		t := &onnxpb.TensorProto{Name: w, Dims: []int64{n, n}, DataType: int32(f32)}
		g.Initializer = append(g.Initializer, t)
		seed := uint64(i + 1)
		m.Replace(t, modelio.Replacement{Size: 4 * n * n, WriteTo: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			r := tm.NewRand(seed)
			var b [4]byte
			for j := 0; j < n*n; j++ {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(r.Float(0.5)))
				if _, err := bw.Write(b[:]); err != nil {
					return err
				}
			}
			return bw.Flush()
		}})
		x = y
	}
	g.Output = []*onnxpb.ValueInfoProto{tm.Value(x, f32, "batch", n)}
	if _, err := m.Write(path, modelio.WriteOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// peakRSS returns the process's peak resident set size in bytes (Linux),
// and resetPeakRSS starts a new peak; both report false elsewhere.
func peakRSS() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// BenchmarkConvertFile converts a model of TRTBUILD_CONVERT_BENCH_MIB MiB
// (default 64; docs/benchmarks.md uses 1024) to float16 and writes it:
// ConvertFile, as `trtbuild convert` and the build worker run it. It
// reports the peak resident memory of the conversion and its ratio to the
// model's size.
func BenchmarkConvertFile(b *testing.B) {
	mib := 64
	if s := os.Getenv("TRTBUILD_CONVERT_BENCH_MIB"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 4 {
			b.Fatalf("TRTBUILD_CONVERT_BENCH_MIB=%q: want a number of MiB, at least 4", s)
		}
		mib = v
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "large.onnx")
	writeLargeModel(b, in, mib)
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var peak int64
	b.ResetTimer()
	for b.Loop() {
		measured := resetPeakRSS()
		if _, _, err := ConvertFile(in, out, Options{Target: FP16}); err != nil {
			b.Fatal(err)
		}
		if p, ok := peakRSS(); ok && measured {
			peak = max(peak, p)
		}
	}
	if peak > 0 {
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(peak)/float64(st.Size()), "peak-RSS/model")
	}
}

func TestLargeModelConverts(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "large.onnx")
	writeLargeModel(t, in, 8)
	_, s, err := ConvertFile(in, dir, Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes.Converted != 2 || s.Initializers.Converted != 2 || s.Initializers.BytesAfter != 4<<20 {
		t.Fatalf("summary %+v %+v", s.Nodes, s.Initializers)
	}
}
