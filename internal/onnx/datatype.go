package onnx

import "fmt"

// DataType is an ONNX tensor element type (TensorProto.DataType).
type DataType int32

// The ONNX element types, numbered as in the specification.
const (
	Undefined      DataType = 0
	Float          DataType = 1
	Uint8          DataType = 2
	Int8           DataType = 3
	Uint16         DataType = 4
	Int16          DataType = 5
	Int32          DataType = 6
	Int64          DataType = 7
	String         DataType = 8
	Bool           DataType = 9
	Float16        DataType = 10
	Double         DataType = 11
	Uint32         DataType = 12
	Uint64         DataType = 13
	Complex64      DataType = 14
	Complex128     DataType = 15
	BFloat16       DataType = 16
	Float8E4M3FN   DataType = 17
	Float8E4M3FNUZ DataType = 18
	Float8E5M2     DataType = 19
	Float8E5M2FNUZ DataType = 20
	Uint4          DataType = 21
	Int4           DataType = 22
	Float4E2M1     DataType = 23
	Float8E8M0     DataType = 24
	Uint2          DataType = 25
	Int2           DataType = 26
)

// dataTypes holds each known type's display name and its width in bits
// (0 for STRING, whose elements have no fixed width).
var dataTypes = [...]struct {
	name string
	bits int64
}{
	Undefined:      {"undefined", 0},
	Float:          {"float32", 32},
	Uint8:          {"uint8", 8},
	Int8:           {"int8", 8},
	Uint16:         {"uint16", 16},
	Int16:          {"int16", 16},
	Int32:          {"int32", 32},
	Int64:          {"int64", 64},
	String:         {"string", 0},
	Bool:           {"bool", 8},
	Float16:        {"float16", 16},
	Double:         {"float64", 64},
	Uint32:         {"uint32", 32},
	Uint64:         {"uint64", 64},
	Complex64:      {"complex64", 64},
	Complex128:     {"complex128", 128},
	BFloat16:       {"bfloat16", 16},
	Float8E4M3FN:   {"float8e4m3fn", 8},
	Float8E4M3FNUZ: {"float8e4m3fnuz", 8},
	Float8E5M2:     {"float8e5m2", 8},
	Float8E5M2FNUZ: {"float8e5m2fnuz", 8},
	Uint4:          {"uint4", 4},
	Int4:           {"int4", 4},
	Float4E2M1:     {"float4e2m1", 4},
	Float8E8M0:     {"float8e8m0", 8},
	Uint2:          {"uint2", 2},
	Int2:           {"int2", 2},
}

// String returns the type's lower-case name (float32, int64, bfloat16 ...),
// or "type(N)" for a number this version does not know.
func (t DataType) String() string {
	if t >= 0 && int(t) < len(dataTypes) {
		return dataTypes[t].name
	}
	return fmt.Sprintf("type(%d)", int32(t))
}

// Bits returns the width of one element in bits, or 0 when the type has no
// fixed width (STRING, UNDEFINED, unknown numbers).
func (t DataType) Bits() int64 {
	if t >= 0 && int(t) < len(dataTypes) {
		return dataTypes[t].bits
	}
	return 0
}

// Known reports whether t is a defined element type other than UNDEFINED.
func (t DataType) Known() bool {
	return t > 0 && int(t) < len(dataTypes)
}
