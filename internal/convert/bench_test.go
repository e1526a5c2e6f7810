package convert

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// writeLargeModel writes a chain of MatMul layers with 1024x1024 float32
// weights (4 MiB each, values in [-0.5, 0.5)), about mib MiB in all,
// without holding the weights in memory: the graph is encoded without its
// initializers, which are streamed after it, each as its fields and then
// its raw_data.
func writeLargeModel(tb testing.TB, path string, mib int) {
	tb.Helper()
	const n = 1024
	layers := max(1, mib/4)
	g := &onnxpb.GraphProto{Name: "large",
		Input: []*onnxpb.ValueInfoProto{tm.Value("x", f32, "batch", n)}}
	x := "x"
	var heads [][]byte
	for i := 0; i < layers; i++ {
		w, y := fmt.Sprintf("layer%d.weight", i), fmt.Sprintf("layer%d.out", i)
		g.Node = append(g.Node, tm.Node(fmt.Sprintf("layer%d", i), "MatMul", []string{x, w}, []string{y}))
		h, err := proto.Marshal(&onnxpb.TensorProto{Name: w, Dims: []int64{n, n}, DataType: int32(f32)})
		if err != nil {
			tb.Fatal(err)
		}
		heads = append(heads, h)
		x = y
	}
	g.Output = []*onnxpb.ValueInfoProto{tm.Value(x, f32, "batch", n)}
	const size = 4 * n * n
	graphBytes, err := proto.Marshal(g)
	if err != nil {
		tb.Fatal(err)
	}
	model := tm.Model(nil) // its fields but the graph
	meta, err := proto.Marshal(model)
	if err != nil {
		tb.Fatal(err)
	}
	graphN := len(graphBytes)
	tensorN := make([]int, layers)
	for i, h := range heads {
		tensorN[i] = len(h) + protowire.SizeTag(9) + protowire.SizeVarint(size) + size
		graphN += protowire.SizeTag(5) + protowire.SizeVarint(uint64(tensorN[i])) + tensorN[i]
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	b := append([]byte(nil), meta...)
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(graphN))
	b = append(b, graphBytes...)
	bw.Write(b)
	var v [4]byte
	for i, h := range heads {
		b = protowire.AppendTag(b[:0], 5, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(tensorN[i]))
		b = append(b, h...)
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendVarint(b, size)
		bw.Write(b)
		r := tm.NewRand(uint64(i + 1))
		for j := 0; j < n*n; j++ {
			binary.LittleEndian.PutUint32(v[:], math.Float32bits(r.Float(0.5)))
			bw.Write(v[:])
		}
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
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
