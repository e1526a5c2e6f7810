package testmodels

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// IRVersion and Opset are what the builders below write: ONNX IR version 8
// and opset 17, the newest that the onnx 1.12 Python package (Debian 12's
// python3-onnx, used to cross-check the bundled models) accepts.
const (
	IRVersion = 8
	Opset     = 17
)

// Producer is the producer_name of models made here.
const Producer = "trtbuild testdata generator"

// Dtype shortcuts for the builders.
const (
	F32 = onnxpb.TensorProto_FLOAT
	F16 = onnxpb.TensorProto_FLOAT16
	I64 = onnxpb.TensorProto_INT64
)

// Model wraps a graph in a ModelProto importing the standard opset plus
// any extra opsets given.
func Model(g *onnxpb.GraphProto, extra ...*onnxpb.OperatorSetIdProto) *onnxpb.ModelProto {
	return &onnxpb.ModelProto{
		IrVersion:       IRVersion,
		ProducerName:    Producer,
		ProducerVersion: "1",
		OpsetImport:     append([]*onnxpb.OperatorSetIdProto{{Domain: "", Version: Opset}}, extra...),
		Graph:           g,
	}
}

// Marshal encodes m deterministically, so generated files are byte-identical
// from run to run.
func Marshal(m *onnxpb.ModelProto) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding model: %w", err)
	}
	return b, nil
}

// Value returns a tensor ValueInfoProto. Each dim is an int (a fixed size), a
// string (a named dynamic dimension) or nil (an unknown dimension).
func Value(name string, elem onnxpb.TensorProto_DataType, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		switch v := d.(type) {
		case int:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}
		case string:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: v}
		case nil:
		default:
			panic(fmt.Sprintf("testmodels.Value: dim %v of type %T", d, d))
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{
		Name: name,
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: int32(elem),
			Shape:    shape,
		}}},
	}
}

// Node returns a node of the standard domain.
func Node(name, op string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{Name: name, OpType: op, Input: in, Output: out, Attribute: attrs}
}

// AttrInt returns an INT attribute.
func AttrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_INT, I: v}
}

// AttrFloat returns a FLOAT attribute.
func AttrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_FLOAT, F: v}
}

// AttrInts returns an INTS attribute.
func AttrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_INTS, Ints: v}
}

// AttrGraph returns a GRAPH attribute.
func AttrGraph(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_GRAPH, G: g}
}

// AttrTensor returns a TENSOR attribute.
func AttrTensor(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_TENSOR, T: t}
}

// Floats returns a FLOAT tensor whose data is vals, stored as raw_data.
func Floats(name string, dims []int64, vals []float32) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: name, Dims: dims, DataType: int32(F32), RawData: raw}
}

// Halves returns a FLOAT16 tensor whose data is vals rounded to half
// precision, stored as raw_data.
func Halves(name string, dims []int64, vals []float32) *onnxpb.TensorProto {
	raw := make([]byte, 2*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint16(raw[2*i:], Float16Bits(v))
	}
	return &onnxpb.TensorProto{Name: name, Dims: dims, DataType: int32(F16), RawData: raw}
}

// Int64s returns an INT64 tensor stored in int64_data.
func Int64s(name string, dims []int64, vals ...int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: name, Dims: dims, DataType: int32(I64), Int64Data: vals}
}

// External returns a FLOAT tensor of shape dims whose data is in the file
// location at offset, length bytes long.
func External(name string, dims []int64, location string, offset, length int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{
		Name:         name,
		Dims:         dims,
		DataType:     int32(F32),
		DataLocation: onnxpb.TensorProto_EXTERNAL,
		ExternalData: []*onnxpb.StringStringEntryProto{
			{Key: "location", Value: location},
			{Key: "offset", Value: fmt.Sprint(offset)},
			{Key: "length", Value: fmt.Sprint(length)},
		},
	}
}

// Float16Bits converts f to IEEE 754 half precision, rounding to nearest
// even; values too large become infinity.
func Float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 31:
		if b&0x7fffffff > 0x7f800000 {
			return sign | 0x7e00 // NaN
		}
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is correct
	}
	return sign | uint16(half)
}

// Rand is a small deterministic generator (xorshift64*) for weights, so the
// generated files never change.
type Rand struct{ state uint64 }

// NewRand returns a generator seeded with seed (0 is replaced by 1).
func NewRand(seed uint64) *Rand {
	if seed == 0 {
		seed = 1
	}
	return &Rand{state: seed}
}

// Uint64 returns the next value.
func (r *Rand) Uint64() uint64 {
	r.state ^= r.state >> 12
	r.state ^= r.state << 25
	r.state ^= r.state >> 27
	return r.state * 2685821657736338717
}

// Float returns a value uniform in [-scale, scale).
func (r *Rand) Float(scale float32) float32 {
	u := float32(r.Uint64()>>40) / float32(1<<24)
	return (2*u - 1) * scale
}

// Floats returns n values uniform in [-scale, scale).
func (r *Rand) Floats(n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = r.Float(scale)
	}
	return out
}
