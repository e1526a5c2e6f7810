//go:build amd64 && !purego

package half

import (
	"math"

	"golang.org/x/sys/cpu"
)

// accelerated are the AVX2 kernels, with F16C's VCVTPS2PH for float16; nil
// on processors without both (or with AVX2 turned off: GODEBUG=cpu.avx2=off).
var accelerated = func() *kernels {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasF16C {
		return nil
	}
	return &kernels{name: "avx2+f16c", scan: scanAVX2, convert: convertAVX2}
}()

// scanLanes are the per-lane results of scanBlocksAVX2: lane i of each
// counts the values at positions i mod 8.
type scanLanes struct {
	underflow [8]uint32 // nonzero magnitudes at or below the underflow bound
	atLeast   [8]uint32 // magnitudes at or above the overflow bound, infinities and NaNs included
	nan       [8]uint32
	inf       [8]uint32
	maxFinite [8]uint32 // the largest finite magnitude's bits (0 if none)
}

// scanBlock bounds the values one scanBlocksAVX2 call reads, so that no lane
// counter (one count per 8 values) can wrap.
const scanBlock = 1 << 16

// scanBlocksAVX2 scans n float32 values at p, n a positive multiple of 8,
// into lanes, which it overwrites. over is the smallest magnitude (bits) that
// rounds to infinity, under the largest that rounds to zero.
//
//go:noescape
func scanBlocksAVX2(p *byte, n int, over, under uint32, lanes *scanLanes)

// convertFP16F16C converts n float32 values at src to float16 at dst with
// VCVTPS2PH, rounding to nearest even; n is a positive multiple of 8.
//
//go:noescape
func convertFP16F16C(dst, src *byte, n int)

// convertBF16AVX2 converts n float32 values at src to bfloat16 at dst, n a
// positive multiple of 16.
//
//go:noescape
func convertBF16AVX2(dst, src *byte, n int)

func scanAVX2(f Format, src []byte) Stats {
	n := len(src) / 4
	body := n &^ 7
	over, under := f.overflowBits(), f.underflowBits()
	var s Stats
	for off := 0; off < body; off += scanBlock {
		m := min(scanBlock, body-off)
		var l scanLanes
		scanBlocksAVX2(&src[4*off], m, over, under, &l)
		var b Stats
		b.Count = int64(m)
		var maxBits uint32
		var atLeast int64
		for i := range 8 {
			b.Underflow += int64(l.underflow[i])
			atLeast += int64(l.atLeast[i])
			b.NaN += int64(l.nan[i])
			b.Inf += int64(l.inf[i])
			maxBits = max(maxBits, l.maxFinite[i])
		}
		b.Overflow = atLeast - b.NaN - b.Inf
		b.MaxAbs = math.Float32frombits(maxBits)
		s.Add(b)
	}
	if body < n {
		s.Add(scanPortable(f, src[4*body:4*n]))
	}
	return s
}

func convertAVX2(f Format, dst, src []byte) {
	n := len(src) / 4
	block := 8
	if f == BF16 {
		block = 16
	}
	body := n - n%block
	if body > 0 {
		if f == BF16 {
			convertBF16AVX2(&dst[0], &src[0], body)
		} else {
			convertFP16F16C(&dst[0], &src[0], body)
		}
	}
	if body < n {
		convertPortable(f, dst[2*body:2*n], src[4*body:4*n])
	}
}
