package half

import (
	"encoding/binary"
	"math"
	"sort"
	"testing"
)

// fp16Value is an independent definition of a binary16 pattern's value.
func fp16Value(h uint16) float64 {
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	var v float64
	switch e {
	case 0:
		v = math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		v = math.Inf(1)
	default:
		v = math.Ldexp(1024+m, e-25)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func bf16Value(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// nearest is a slow reference: the pattern among the positive finite
// patterns 0..maxPat (ascending in value) nearest to a, ties to the even
// pattern, infinity (inf) at or past the tie above the largest.
func nearest(a float64, maxPat, inf uint16, value func(uint16) float64) uint16 {
	i := sort.Search(int(maxPat)+1, func(i int) bool { return value(uint16(i)) > a }) - 1
	if i == int(maxPat) {
		top := value(maxPat)
		ulp := top - value(maxPat-1)
		switch {
		case a < top+ulp/2:
			return maxPat
		default:
			return inf // a tie goes to the even pattern, which is infinity
		}
	}
	lo, hi := value(uint16(i)), value(uint16(i+1))
	switch {
	case a-lo < hi-a:
		return uint16(i)
	case a-lo > hi-a:
		return uint16(i + 1)
	case i%2 == 0:
		return uint16(i)
	default:
		return uint16(i + 1)
	}
}

func refFP16(v float32) uint16 {
	sign := uint16(0)
	if math.Signbit(float64(v)) {
		sign = 0x8000
	}
	return sign | nearest(math.Abs(float64(v)), 0x7bff, 0x7c00, fp16Value)
}

func refBF16(v float32) uint16 {
	sign := uint16(0)
	if math.Signbit(float64(v)) {
		sign = 0x8000
	}
	return sign | nearest(math.Abs(float64(v)), 0x7f7f, 0x7f80, bf16Value)
}

func TestToFloat32AllPatterns(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got, want := float64(ToFloat32(h)), fp16Value(h)
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("ToFloat32(%#04x) = %v, want NaN", h, got)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("ToFloat32(%#04x) = %v, want %v", h, got, want)
		}
		if back := FromFloat32(float32(got)); back != h {
			t.Fatalf("FromFloat32(ToFloat32(%#04x)) = %#04x", h, back)
		}
		if bf := FP16.ToFloat32(h); float64(bf) != want {
			t.Fatalf("FP16.ToFloat32(%#04x) = %v", h, bf)
		}
		if b := BF16.ToFloat32(h); !math.IsNaN(bf16Value(h)) && FromFloat32BF16(b) != h {
			t.Fatalf("bfloat16 %#04x does not round-trip", h)
		}
	}
}

// boundaryValues are the float32 values where rounding decides: every
// representable 16-bit value, the midpoints between neighbours, and the
// float32 neighbours of both.
func boundaryValues(value func(uint16) float64, maxPat uint16) []float32 {
	var vs []float32
	add := func(x float32) {
		vs = append(vs, x, math.Nextafter32(x, float32(math.Inf(1))), math.Nextafter32(x, float32(math.Inf(-1))))
	}
	for i := uint16(0); i <= maxPat; i++ {
		lo := value(i)
		add(float32(lo))
		var hi float64
		if i < maxPat {
			hi = value(i + 1)
		} else {
			hi = lo + (lo - value(i-1))
		}
		add(float32((lo + hi) / 2)) // exact: the midpoint needs one bit more than the format has
	}
	return vs
}

func TestFromFloat32Boundaries(t *testing.T) {
	for _, v := range boundaryValues(fp16Value, 0x7bff) {
		for _, x := range []float32{v, -v} {
			if got, want := FromFloat32(x), refFP16(x); got != want {
				t.Fatalf("FromFloat32(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
			}
		}
	}
}

func TestFromFloat32BF16Boundaries(t *testing.T) {
	vs := boundaryValues(bf16Value, 0x7f7f)
	for _, v := range vs {
		for _, x := range []float32{v, -v} {
			if math.IsInf(float64(x), 0) {
				continue
			}
			if got, want := FromFloat32BF16(x), refBF16(x); got != want {
				t.Fatalf("FromFloat32BF16(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
			}
		}
	}
}

func TestStridedFloat32(t *testing.T) {
	stride := uint32(4099)
	if testing.Short() {
		stride = 65521
	}
	for b := uint64(0); b < 1<<32; b += uint64(stride) {
		x := math.Float32frombits(uint32(b))
		if math.IsNaN(float64(x)) {
			if h := FromFloat32(x); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("FromFloat32(NaN %#08x) = %#04x, not a NaN", b, h)
			}
			if h := FromFloat32BF16(x); h&0x7f80 != 0x7f80 || h&0x7f == 0 {
				t.Fatalf("FromFloat32BF16(NaN %#08x) = %#04x, not a NaN", b, h)
			}
			continue
		}
		if got, want := FromFloat32(x), refFP16(x); got != want {
			t.Fatalf("FromFloat32(%g [%#08x]) = %#04x, want %#04x", x, b, got, want)
		}
		if math.IsInf(float64(x), 0) {
			continue
		}
		if got, want := FromFloat32BF16(x), refBF16(x); got != want {
			t.Fatalf("FromFloat32BF16(%g [%#08x]) = %#04x, want %#04x", x, b, got, want)
		}
	}
}

func TestKnownValues(t *testing.T) {
	tests := []struct {
		in       float32
		fp16     uint16
		bf16     uint16
		overflow bool // for FP16
	}{
		{0, 0x0000, 0x0000, false},
		{1, 0x3c00, 0x3f80, false},
		{-2, 0xc000, 0xc000, false},
		{65504, 0x7bff, 0x4780, false}, // bfloat16 has 8 bits of precision: 65536
		{65519.99, 0x7bff, 0x4780, false},
		{65520, 0x7c00, 0x4780, true},
		{1e5, 0x7c00, 0x47c3, true},
		{float32(math.Inf(-1)), 0xfc00, 0xff80, false},
		{5.9604645e-8, 0x0001, 0x3380, false}, // 2^-24, the smallest binary16 subnormal
		{2.9802322e-8, 0x0000, 0x3300, false}, // 2^-25: a tie, to even (zero)
		{6.1035156e-5, 0x0400, 0x3880, false}, // 2^-14, the smallest normal
		{math.MaxFloat32, 0x7c00, 0x7f80, true},
		{3.3895314e38, 0x7c00, 0x7f7f, true},
	}
	for _, tt := range tests {
		if got := FromFloat32(tt.in); got != tt.fp16 {
			t.Errorf("FromFloat32(%g) = %#04x, want %#04x", tt.in, got, tt.fp16)
		}
		if got := FromFloat32BF16(tt.in); got != tt.bf16 {
			t.Errorf("FromFloat32BF16(%g) = %#04x, want %#04x", tt.in, got, tt.bf16)
		}
		var buf [4]byte
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(tt.in))
		if s := FP16.Scan(buf[:]); (s.Overflow == 1) != tt.overflow {
			t.Errorf("FP16.Scan(%g).Overflow = %d, want overflow %v", tt.in, s.Overflow, tt.overflow)
		}
	}
}

func TestScanAndConvertSlice(t *testing.T) {
	vals := []float32{1.5, -70000, 3e-9, 0, float32(math.NaN()), float32(math.Inf(1)), 1e-30, -12, math.MaxFloat32}
	src := make([]byte, 4*len(vals)+3) // a trailing partial value is ignored
	for i, v := range vals {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
	}
	tests := []struct {
		f    Format
		want Stats
	}{
		{FP16, Stats{Count: 9, MaxAbs: math.MaxFloat32, Overflow: 2, Underflow: 2, NaN: 1, Inf: 1}},
		{BF16, Stats{Count: 9, MaxAbs: math.MaxFloat32, Overflow: 1, Underflow: 0, NaN: 1, Inf: 1}},
	}
	for _, tt := range tests {
		if got := tt.f.Scan(src); got != tt.want {
			t.Errorf("%v.Scan = %+v, want %+v", tt.f, got, tt.want)
		}
		dst := make([]byte, 2*len(vals))
		tt.f.ConvertSlice(dst, src)
		for i, v := range vals {
			got := binary.LittleEndian.Uint16(dst[2*i:])
			if want := tt.f.Convert(v); got != want {
				t.Errorf("%v.ConvertSlice[%d] = %#04x, want %#04x", tt.f, i, got, want)
			}
		}
	}
	var total Stats
	total.Add(Stats{Count: 2, MaxAbs: 3, Overflow: 1})
	total.Add(Stats{Count: 1, MaxAbs: 2, NaN: 1})
	if want := (Stats{Count: 3, MaxAbs: 3, Overflow: 1, NaN: 1}); total != want {
		t.Errorf("Add = %+v, want %+v", total, want)
	}
	if FP16.String() != "float16" || BF16.String() != "bfloat16" || FP16.MaxFinite() != 65504 {
		t.Error("format names or limits are wrong")
	}
}

func FuzzFromFloat32(f *testing.F) {
	for _, seed := range []uint32{0, 0x3f800000, 0x477ff000, 0x477fefff, 0x33000000, 0x33000001, 0x387fc000, 0x7f7f8000, 0x7fc00001} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		x := math.Float32frombits(bits)
		if math.IsNaN(float64(x)) {
			if !math.IsNaN(float64(ToFloat32(FromFloat32(x)))) || !math.IsNaN(float64(BF16.ToFloat32(FromFloat32BF16(x)))) {
				t.Fatalf("NaN %#08x lost", bits)
			}
			return
		}
		if got, want := FromFloat32(x), refFP16(x); got != want {
			t.Fatalf("FromFloat32(%#08x) = %#04x, want %#04x", bits, got, want)
		}
		if !math.IsInf(float64(x), 0) {
			if got, want := FromFloat32BF16(x), refBF16(x); got != want {
				t.Fatalf("FromFloat32BF16(%#08x) = %#04x, want %#04x", bits, got, want)
			}
		}
	})
}
