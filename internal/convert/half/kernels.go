package half

import (
	"encoding/binary"
	"math"
)

// kernels is one implementation of the bulk operations behind Format.Scan
// and Format.ConvertSlice. Every implementation gives the same results, bit
// for bit, as the portable one, which is defined by FromFloat32 and
// FromFloat32BF16.
type kernels struct {
	name string
	// scan is Format.Scan.
	scan func(f Format, src []byte) Stats
	// convert is Format.ConvertSlice for len(src) a multiple of 4 and
	// len(dst) == len(src)/2.
	convert func(f Format, dst, src []byte)
}

// portable is the implementation in plain Go, for every architecture.
var portable = kernels{name: "portable", scan: scanPortable, convert: convertPortable}

// active is the implementation Scan and ConvertSlice use: the accelerated
// one where this processor has one, else the portable one. It is chosen once,
// when the program starts.
var active = chooseKernels()

func chooseKernels() kernels {
	if accelerated != nil {
		return *accelerated
	}
	return portable
}

func scanPortable(f Format, src []byte) Stats {
	over, under := f.overflowBits(), f.underflowBits()
	var s Stats
	var maxBits uint32
	n := len(src) / 4
	s.Count = int64(n)
	for i := 0; i < n; i++ {
		a := binary.LittleEndian.Uint32(src[4*i:]) & 0x7fffffff
		if a < over {
			if a > maxBits {
				maxBits = a
			}
			if a <= under && a != 0 {
				s.Underflow++
			}
			continue
		}
		switch {
		case a > 0x7f800000:
			s.NaN++
		case a == 0x7f800000:
			s.Inf++
		default:
			s.Overflow++
			if a > maxBits {
				maxBits = a
			}
		}
	}
	s.MaxAbs = math.Float32frombits(maxBits)
	return s
}

func convertPortable(f Format, dst, src []byte) {
	n := len(src) / 4
	if f == BF16 {
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(dst[2*i:], FromFloat32BF16(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))))
		}
		return
	}
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], FromFloat32(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))))
	}
}
