//go:build amd64 && !purego

#include "textflag.h"

// func scanBlocksAVX2(p *byte, n int, over, under uint32, lanes *scanLanes)
//
// Per 8 values, with a = x & 0x7fffffff (signed compares are exact: every a
// and every bound is below 2^31):
//   underflow += a > 0 && !(a > under)
//   atLeast   += a > over-1
//   nan       += a > 0x7f800000
//   inf       += a == 0x7f800000
//   maxFinite  = max(maxFinite, 0x7f800000 > a ? a : 0)
// Counters count down by adding the compare masks (-1), so they are negated
// once at the end.
TEXT ·scanBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL over+16(FP), AX
	MOVL under+20(FP), BX
	MOVQ lanes+24(FP), DI

	DECL AX
	MOVQ AX, X8
	VPBROADCASTD X8, Y8           // over - 1
	MOVQ BX, X11
	VPBROADCASTD X11, Y11         // under
	MOVL $0x7f800000, AX
	MOVQ AX, X9
	VPBROADCASTD X9, Y9           // infinity
	VPCMPEQD Y15, Y15, Y15
	VPSRLD $1, Y15, Y15           // 0x7fffffff
	VPXOR Y10, Y10, Y10           // zero
	VPXOR Y12, Y12, Y12           // -underflow
	VPXOR Y13, Y13, Y13           // -atLeast
	VPXOR Y14, Y14, Y14           // -nan
	VPXOR Y6, Y6, Y6              // -inf
	VPXOR Y7, Y7, Y7              // maxFinite

loop:
	VPAND (SI), Y15, Y0           // a
	VPCMPGTD Y10, Y0, Y1          // a > 0
	VPCMPGTD Y11, Y0, Y2          // a > under
	VPANDN Y1, Y2, Y1             // a > 0 && !(a > under)
	VPADDD Y1, Y12, Y12
	VPCMPGTD Y8, Y0, Y2           // a >= over
	VPADDD Y2, Y13, Y13
	VPCMPGTD Y9, Y0, Y3           // a > infinity: NaN
	VPADDD Y3, Y14, Y14
	VPCMPEQD Y9, Y0, Y4           // a == infinity
	VPADDD Y4, Y6, Y6
	VPCMPGTD Y0, Y9, Y5           // infinity > a: finite
	VPAND Y5, Y0, Y5
	VPMAXUD Y5, Y7, Y7
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ loop

	VPSUBD Y12, Y10, Y12
	VPSUBD Y13, Y10, Y13
	VPSUBD Y14, Y10, Y14
	VPSUBD Y6, Y10, Y6
	VMOVDQU Y12, 0(DI)
	VMOVDQU Y13, 32(DI)
	VMOVDQU Y14, 64(DI)
	VMOVDQU Y6, 96(DI)
	VMOVDQU Y7, 128(DI)
	VZEROUPPER
	RET

// func convertFP16F16C(dst, src *byte, n int)
//
// VCVTPS2PH with immediate 0 rounds to nearest even whatever MXCSR says. A
// NaN becomes a quiet NaN with the sign and the top ten payload bits kept,
// as FromFloat32 makes it.
TEXT ·convertFP16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	CMPQ CX, $32
	JB   tail

loop32:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y1, X1
	VCVTPS2PH $0, Y2, X2
	VCVTPS2PH $0, Y3, X3
	VMOVDQU X0, 0(DI)
	VMOVDQU X1, 16(DI)
	VMOVDQU X2, 32(DI)
	VMOVDQU X3, 48(DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

tail:
	TESTQ CX, CX
	JZ    done

loop8:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VMOVDQU X0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JNZ  loop8

done:
	VZEROUPPER
	RET

// func convertBF16AVX2(dst, src *byte, n int)
//
// For each value x, as FromFloat32BF16: (x + 0x7fff + (x>>16)&1) >> 16, or
// (x>>16) | 0x40 where x is a NaN. The 32-bit results (all below 2^16) are
// packed to 16 bits with unsigned saturation, which interleaves the 128-bit
// halves of the two registers; VPERMQ puts them back in order.
TEXT ·convertBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

	VPCMPEQD Y15, Y15, Y15
	VPSRLD $1, Y15, Y15           // 0x7fffffff
	MOVL $0x7f800000, AX
	MOVQ AX, X14
	VPBROADCASTD X14, Y14         // infinity
	VPSRLD $16, Y15, Y13          // 0x00007fff
	VPCMPEQD Y12, Y12, Y12
	VPSRLD $31, Y12, Y12          // 0x00000001
	MOVL $0x40, AX
	MOVQ AX, X11
	VPBROADCASTD X11, Y11         // the quiet bit of a bfloat16 NaN

loop:
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1

	VPSRLD $16, Y0, Y2            // x >> 16
	VPAND Y12, Y2, Y3             // its lowest bit
	VPADDD Y13, Y0, Y4
	VPADDD Y3, Y4, Y4
	VPSRLD $16, Y4, Y4            // rounded
	VPOR Y11, Y2, Y2              // NaN result
	VPAND Y15, Y0, Y5
	VPCMPGTD Y14, Y5, Y5          // NaN
	VPBLENDVB Y5, Y2, Y4, Y4

	VPSRLD $16, Y1, Y2
	VPAND Y12, Y2, Y3
	VPADDD Y13, Y1, Y6
	VPADDD Y3, Y6, Y6
	VPSRLD $16, Y6, Y6
	VPOR Y11, Y2, Y2
	VPAND Y15, Y1, Y5
	VPCMPGTD Y14, Y5, Y5
	VPBLENDVB Y5, Y2, Y6, Y6

	VPACKUSDW Y6, Y4, Y4          // x0-3 y0-3 x4-7 y4-7
	VPERMQ $0xd8, Y4, Y4          // x0-7 y0-7
	VMOVDQU Y4, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JNZ  loop

	VZEROUPPER
	RET
