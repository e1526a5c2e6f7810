package convert

import (
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// vtype is a value's type written as ONNX operator schemas write types:
// "tensor(float)", "seq(tensor(float16))", "optional(tensor(int64))". The
// empty string means the type is not known.
type vtype string

const floatTensor = "tensor(float)"

// elemName returns the schema spelling of a tensor element type: "float",
// "float16", "int64", ...; "" for UNDEFINED or an unknown number.
func elemName(dt int32) string {
	if dt == int32(onnxpb.TensorProto_UNDEFINED) {
		return ""
	}
	n, ok := onnxpb.TensorProto_DataType_name[dt]
	if !ok {
		return ""
	}
	return strings.ToLower(n)
}

// tensorTypes holds tensorType's answers for every data type ONNX defines,
// so that naming a type costs no allocation.
var tensorTypes = func() map[int32]vtype {
	m := make(map[int32]vtype, len(onnxpb.TensorProto_DataType_name))
	for dt := range onnxpb.TensorProto_DataType_name {
		if n := elemName(dt); n != "" {
			m[dt] = vtype("tensor(" + n + ")")
		}
	}
	return m
}()

func tensorType(dt int32) vtype {
	return tensorTypes[dt]
}

// typeOf converts a TypeProto to a vtype; "" when any part is missing.
func typeOf(tp *onnxpb.TypeProto) vtype {
	if tp == nil {
		return ""
	}
	switch v := tp.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		return tensorType(v.TensorType.GetElemType())
	case *onnxpb.TypeProto_SparseTensorType:
		if n := elemName(v.SparseTensorType.GetElemType()); n != "" {
			return vtype("sparse_tensor(" + n + ")")
		}
	case *onnxpb.TypeProto_SequenceType:
		if e := typeOf(v.SequenceType.GetElemType()); e != "" {
			return "seq(" + e + ")"
		}
	case *onnxpb.TypeProto_OptionalType:
		if e := typeOf(v.OptionalType.GetElemType()); e != "" {
			return "optional(" + e + ")"
		}
	case *onnxpb.TypeProto_MapType:
		k := elemName(v.MapType.GetKeyType())
		val := v.MapType.GetValueType()
		var vs string
		if tt, ok := val.GetValue().(*onnxpb.TypeProto_TensorType); ok {
			vs = elemName(tt.TensorType.GetElemType()) // schemas write map(int64, float)
		} else {
			vs = string(typeOf(val))
		}
		if k != "" && vs != "" {
			return vtype("map(" + k + ", " + vs + ")")
		}
	case *onnxpb.TypeProto_OpaqueType:
		return vtype("opaque(" + v.OpaqueType.GetDomain() + "," + v.OpaqueType.GetName() + ")")
	}
	return ""
}

// isFloat reports whether t holds float32 tensors, alone or inside a
// sequence or an optional.
func (t vtype) isFloat() bool {
	return strings.Contains(strings.ReplaceAll(string(t), "sparse_"+floatTensor, ""), floatTensor)
}

// lower returns t with its float32 tensors changed to the target's.
func (t vtype) lower(target Target) vtype {
	return vtype(strings.ReplaceAll(string(t), floatTensor, "tensor("+target.elemName()+")"))
}

// elem returns the element type of a sequence or optional type, or t
// itself for other types.
func (t vtype) elem() vtype {
	s := string(t)
	for _, p := range []string{"seq(", "optional("} {
		if strings.HasPrefix(s, p) && strings.HasSuffix(s, ")") {
			return vtype(s[len(p) : len(s)-1])
		}
	}
	return t
}

// lowerTypeProto changes the float32 tensor element types inside tp to the
// target's, in place.
func lowerTypeProto(tp *onnxpb.TypeProto, target Target) {
	if tp == nil {
		return
	}
	fix := func(dt *int32) {
		if *dt == int32(onnxpb.TensorProto_FLOAT) {
			*dt = int32(target.dataType())
		}
	}
	switch v := tp.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		fix(&v.TensorType.ElemType)
	case *onnxpb.TypeProto_SequenceType:
		lowerTypeProto(v.SequenceType.ElemType, target)
	case *onnxpb.TypeProto_OptionalType:
		lowerTypeProto(v.OptionalType.ElemType, target)
	}
}
