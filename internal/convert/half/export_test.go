package half

// Test-only API of package half: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import "math"

// Kernels names the implementation Format.Scan and Format.ConvertSlice use
// on this processor: "portable" (plain Go), or "avx2+f16c" on amd64
// processors with AVX2 and F16C. GODEBUG=cpu.avx2=off selects the portable
// one; so does building with the purego tag.
func Kernels() string { return active.name }

// ToFloat32 returns the float32 value of the 16-bit pattern h, which is exact.
func (f Format) ToFloat32(h uint16) float32 {
	if f == BF16 {
		return math.Float32frombits(uint32(h) << 16)
	}
	return ToFloat32(h)
}

// ToFloat32 returns the float32 value of the binary16 pattern h.
func ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: mant × 2^-24.
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}
