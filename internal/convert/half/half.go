// Package half converts IEEE 754 single-precision values to the two 16-bit
// floating-point formats TensorRT computes in: binary16 ("float16", FP16)
// and bfloat16 (BF16), rounding to the nearest value with ties to even, as
// NumPy, PyTorch and ONNX Runtime do.
//
// Buffers are little-endian, as ONNX stores tensor data.
//
// Format.Scan and Format.ConvertSlice, which handle whole buffers, run on
// AVX2 and F16C on amd64 processors that have them and in plain Go elsewhere
// (and with the purego build tag); both give the same results bit for bit,
// NaNs included.
package half

import (
	"fmt"
	"math"
)

// Format is a 16-bit floating-point format.
type Format int

// The formats. The values are the ONNX TensorProto.DataType numbers.
const (
	FP16 Format = 10 // IEEE 754 binary16: 5 exponent bits, 10 mantissa bits
	BF16 Format = 16 // bfloat16: 8 exponent bits, 7 mantissa bits
)

// String returns "float16" or "bfloat16".
func (f Format) String() string {
	switch f {
	case FP16:
		return "float16"
	case BF16:
		return "bfloat16"
	default:
		return fmt.Sprintf("Format(%d)", int(f))
	}
}

// MaxFinite returns the largest finite value of the format.
func (f Format) MaxFinite() float32 {
	if f == BF16 {
		return math.Float32frombits(0x7f7f0000) // 3.3895314e38
	}
	return 65504
}

// overflowBits is the bit pattern of the smallest positive float32 that
// rounds to infinity; underflowBits of the largest positive float32 that
// rounds to zero.
func (f Format) overflowBits() uint32 {
	if f == BF16 {
		return 0x7f7f8000 // halfway between the largest bfloat16 and 2^128: a tie, to even (infinity)
	}
	return 0x477ff000 // 65520, halfway between 65504 and 2^16
}

func (f Format) underflowBits() uint32 {
	if f == BF16 {
		return 0x00008000 // half of bfloat16's smallest subnormal, 2^-133
	}
	return 0x33000000 // 2^-25, half of binary16's smallest subnormal
}

// Convert returns the 16-bit pattern of the value of the format nearest to v.
func (f Format) Convert(v float32) uint16 {
	if f == BF16 {
		return FromFloat32BF16(v)
	}
	return FromFloat32(v)
}

// FromFloat32 returns the binary16 pattern nearest to v, ties to even. Values
// beyond the largest binary16 become infinities, values too small become
// signed zeros or subnormals, NaNs stay NaNs (quiet, sign and top payload
// bits kept).
//
// The method is F. Giesen's (float_to_half_fast3_rtne): normal results round
// with an integer bias, subnormal ones by a float addition that aligns the
// ten result bits at the bottom of a float32's mantissa.
func FromFloat32(v float32) uint16 {
	bits := math.Float32bits(v)
	sign := uint16(bits>>16) & 0x8000
	a := bits & 0x7fffffff
	switch {
	case a >= 0x47800000: // 2^16 and beyond: infinity, or NaN
		if a > 0x7f800000 {
			return sign | 0x7e00 | uint16(a>>13)&0x3ff
		}
		return sign | 0x7c00
	case a < 0x38800000: // below 2^-14: a subnormal result, or zero
		const magic = 0x3f000000 // 0.5: its unit in the last place is 2^-24
		f := math.Float32frombits(a) + math.Float32frombits(magic)
		return sign | uint16(math.Float32bits(f)-magic)
	default:
		odd := (a >> 13) & 1
		a += 0xc8000fff + odd // rebias the exponent (-112 << 23) and round half to even
		return sign | uint16(a>>13)
	}
}

// FromFloat32BF16 returns the bfloat16 pattern nearest to v, ties to even;
// NaNs stay NaNs (quiet).
func FromFloat32BF16(v float32) uint16 {
	bits := math.Float32bits(v)
	if bits&0x7fffffff > 0x7f800000 {
		return uint16(bits>>16) | 0x40
	}
	bits += 0x7fff + (bits>>16)&1
	return uint16(bits >> 16)
}

// Stats describes float32 values with respect to a 16-bit format.
type Stats struct {
	Count     int64   // values scanned
	MaxAbs    float32 // the largest magnitude among the finite values
	Overflow  int64   // finite values that become infinities
	Underflow int64   // nonzero values that become zeros
	NaN       int64
	Inf       int64
}

// Add merges the statistics of another part of the same data.
func (s *Stats) Add(o Stats) {
	s.Count += o.Count
	if o.MaxAbs > s.MaxAbs {
		s.MaxAbs = o.MaxAbs
	}
	s.Overflow += o.Overflow
	s.Underflow += o.Underflow
	s.NaN += o.NaN
	s.Inf += o.Inf
}

// Scan computes the statistics of src, little-endian float32 values; a
// trailing partial value is ignored.
func (f Format) Scan(src []byte) Stats {
	return active.scan(f, src)
}

// ConvertSlice writes the 16-bit patterns of src's little-endian float32
// values to dst, little-endian. dst must hold len(src)/2 bytes.
func (f Format) ConvertSlice(dst, src []byte) {
	n := len(src) / 4
	if len(dst) < 2*n {
		panic(fmt.Sprintf("half: destination holds %d bytes, need %d", len(dst), 2*n))
	}
	active.convert(f, dst[:2*n], src[:4*n])
}
