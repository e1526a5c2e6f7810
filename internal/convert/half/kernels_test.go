package half

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

// accel returns the accelerated kernels, or skips the test on processors
// (and builds) that have none: there only the portable kernels exist.
func accel(t testing.TB) kernels {
	t.Helper()
	if accelerated == nil {
		t.Skip("no accelerated kernels on this processor or build; Scan and ConvertSlice use the portable ones")
	}
	return *accelerated
}

var formats = []Format{FP16, BF16}

func wordsToBytes(ws []uint32) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// patternWords are every float32 sign, exponent and top 7 mantissa bits (the
// high 16 bits, every bfloat16 pattern), each with low 16 bits that put a 0,
// a 1 or all ones below every choice of bits 12 to 15: the bits where
// float16 (normal results round at bit 12, subnormal ones above) and
// bfloat16 (bit 15) round, their ties and their neighbours.
func patternWords() []uint32 {
	var lows []uint32
	for b := uint32(0); b < 16; b++ {
		lows = append(lows, b<<12, b<<12|1, b<<12|0xfff)
	}
	ws := make([]uint32, 0, len(lows)<<16)
	for hi := uint32(0); hi < 1<<16; hi++ {
		for _, lo := range lows {
			ws = append(ws, hi<<16|lo)
		}
	}
	return ws
}

// boundaryWords are boundaryValues of both formats, both signs.
func boundaryWords() []uint32 {
	var ws []uint32
	for _, vs := range [][]float32{boundaryValues(fp16Value, 0x7bff), boundaryValues(bf16Value, 0x7f7f)} {
		for _, v := range vs {
			ws = append(ws, math.Float32bits(v), math.Float32bits(v)|0x80000000)
		}
	}
	return ws
}

// randomWords are n seeded random words, every fourth one a NaN with a
// random payload and sign.
func randomWords(n int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ws := make([]uint32, n)
	for i := range ws {
		w := r.Uint32()
		if i%4 == 3 {
			w |= 0x7f800000
			if w&0x7fffff == 0 {
				w |= 1
			}
		}
		ws[i] = w
	}
	return ws
}

// compareKernels checks that k gives exactly the portable results for src:
// the same Stats over windows of the given number of values (so MaxAbs and
// the counts are checked locally, not only over the whole; 0: one window of
// all), and the same
// 16-bit patterns, writing nothing past the end of dst.
func compareKernels(t *testing.T, k kernels, f Format, src []byte, window int) {
	t.Helper()
	n := len(src) / 4
	if window <= 0 {
		window = n
	}
	for lo := 0; ; lo += window {
		hi := min(lo+window, n)
		w := src[4*lo : 4*hi]
		if hi == n {
			w = src[4*lo:] // with the trailing partial value, if any
		}
		if got, want := k.scan(f, w), portable.scan(f, w); got != want {
			t.Fatalf("%v: %s Scan of values %d..%d = %+v, portable = %+v", f, k.name, lo, hi, got, want)
		}
		if hi == n {
			break
		}
	}
	const canary = 16
	got := bytes.Repeat([]byte{0xa5}, 2*n+canary)
	want := bytes.Repeat([]byte{0xa5}, 2*n+canary)
	k.convert(f, got[:2*n], src[:4*n])
	portable.convert(f, want[:2*n], src[:4*n])
	if !bytes.Equal(got, want) {
		for i := 0; i < n+canary/2; i++ {
			g, w := binary.LittleEndian.Uint16(got[2*i:]), binary.LittleEndian.Uint16(want[2*i:])
			if g != w {
				if i >= n {
					t.Fatalf("%v: %s ConvertSlice of %d values wrote past the end (half-word %d = %#04x)", f, k.name, n, i, g)
				}
				t.Fatalf("%v: %s ConvertSlice of %#08x = %#04x, portable = %#04x", f, k.name, binary.LittleEndian.Uint32(src[4*i:]), g, w)
			}
		}
	}
}

// TestKernelsMatchPortable runs both implementations on this machine and
// compares them on every pattern of the high 16 bits with the low bits that
// decide rounding, the rounding boundaries of both formats, and random words.
func TestKernelsMatchPortable(t *testing.T) {
	k := accel(t)
	inputs := []struct {
		name string
		src  []byte
	}{
		{"patterns", wordsToBytes(patternWords())},
		{"boundaries", wordsToBytes(boundaryWords())},
		{"random", wordsToBytes(randomWords(1<<18, 1))},
	}
	for _, in := range inputs {
		for _, f := range formats {
			t.Run(in.name+"/"+f.String(), func(t *testing.T) {
				compareKernels(t, k, f, in.src, 1000)
				compareKernels(t, k, f, in.src, 0) // the whole, across scan blocks
			})
		}
	}
}

// TestKernelsTailsAndAlignment compares the implementations on every length
// from 0 to 64 values plus 0 to 3 trailing bytes, at every byte offset
// from 0 to 7, on values that mix every kind Stats counts.
func TestKernelsTailsAndAlignment(t *testing.T) {
	k := accel(t)
	special := []uint32{
		0, 0x80000000, 0x3f800000, 0x477fefff, 0x477ff000, 0x7f7fffff, 0x7f7f8000, 0x7f800000,
		0xff800000, 0x7fc00000, 0xff800001, 0x7f800001, 0x00000001, 0x33000000, 0x33000001,
		0x387fc000, 0x00008000, 0x00008001, 0xc77ff000, 0x7fffffff,
	}
	ws := randomWords(80, 2)
	for i := range ws {
		if i%3 == 0 {
			ws[i] = special[(i/3)%len(special)]
		}
	}
	base := wordsToBytes(ws)
	for off := 0; off < 8; off++ {
		for size := 0; size <= 4*64+3; size++ {
			src := base[off : off+size]
			for _, f := range formats {
				compareKernels(t, k, f, src, 0)
			}
		}
	}
}

// TestKernelsExhaustive compares the implementations on all 2^32 float32
// patterns. It takes tens of seconds, so it runs only when
// TRTBUILD_HALF_EXHAUSTIVE=1.
func TestKernelsExhaustive(t *testing.T) {
	if os.Getenv("TRTBUILD_HALF_EXHAUSTIVE") != "1" {
		t.Skip("set TRTBUILD_HALF_EXHAUSTIVE=1 to compare all 2^32 inputs")
	}
	k := accel(t)
	ws := make([]uint32, 1<<16)
	for hi := uint32(0); hi < 1<<16; hi++ {
		for lo := range ws {
			ws[lo] = hi<<16 | uint32(lo)
		}
		src := wordsToBytes(ws)
		for _, f := range formats {
			compareKernels(t, k, f, src, 4096)
		}
	}
}

// TestGODEBUGSelectsPortable checks the documented switch to the portable
// kernels, in a child process (the choice is made at start-up).
func TestGODEBUGSelectsPortable(t *testing.T) {
	if want := os.Getenv("TRTBUILD_HALF_WANT_KERNELS"); want != "" {
		if got := Kernels(); got != want {
			t.Fatalf("Kernels() = %q, want %q", got, want)
		}
		return
	}
	accel(t)
	if Kernels() != accelerated.name {
		t.Fatalf("Kernels() = %q, want the accelerated %q on this processor", Kernels(), accelerated.name)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGODEBUGSelectsPortable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.avx2=off", "TRTBUILD_HALF_WANT_KERNELS=portable")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with GODEBUG=cpu.avx2=off: %v\n%s", err, out)
	}
}

// FuzzKernels compares the accelerated kernels with the portable ones on
// arbitrary bytes at any alignment.
func FuzzKernels(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add(wordsToBytes([]uint32{0x7f800001, 0xffc00001, 0x477ff000, 0x33000000, 0x7f7f8000, 0x3f800000, 0x00008000, 0x387fc000, 0x3f808000, 0x3f818000}), uint8(1))
	f.Add(wordsToBytes(randomWords(40, 3)), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		k := accel(t)
		src := data[min(int(off%8), len(data)):]
		for _, f := range formats {
			compareKernels(t, k, f, src, 17)
		}
	})
}

// benchData is 4 MiB of float32 values (a weight chunk), in [-900, 950).
func benchData() []byte {
	src := make([]byte, 4<<20)
	for i := 0; i < len(src)/4; i++ {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(float32(i%5000)*0.37-900))
	}
	return src
}

func benchKernels(b *testing.B, run func(b *testing.B, k kernels, f Format)) {
	impls := []kernels{portable}
	if accelerated != nil {
		impls = append(impls, *accelerated)
	}
	for _, f := range formats {
		for _, k := range impls {
			b.Run(f.String()+"/"+k.name, func(b *testing.B) { run(b, k, f) })
		}
	}
}

// BenchmarkScan measures each implementation's Scan of a 4 MiB chunk in
// cache-warm memory (MB/s of float32 input).
func BenchmarkScan(b *testing.B) {
	src := benchData()
	benchKernels(b, func(b *testing.B, k kernels, f Format) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			k.scan(f, src)
		}
	})
}

// BenchmarkConvertSlice measures each implementation's conversion of a 4 MiB
// chunk (MB/s of float32 input).
func BenchmarkConvertSlice(b *testing.B) {
	src := benchData()
	dst := make([]byte, len(src)/2)
	benchKernels(b, func(b *testing.B, k kernels, f Format) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			k.convert(f, dst, src)
		}
	})
}
