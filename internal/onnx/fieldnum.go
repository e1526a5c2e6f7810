package onnx

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of the ONNX messages (onnxpb/onnx.proto) that trtbuild takes
// apart on the wire: ReadMetadata, the build key's hasher (package buildkey)
// and the converter's compact model (package modelio). This is the one table
// of them, so that no two readers can disagree on a number; TestFieldNumbers
// checks every entry against the generated onnxpb descriptors.
//
// Names are Field, the message (Model, Opset for OperatorSetIdProto, Graph,
// Node, Attr, Tensor, Sparse for SparseTensorProto, Entry for
// StringStringEntryProto, Value for ValueInfoProto, Type, TypeTensor for
// TypeProto.Tensor, Shape for TensorShapeProto, Dim for its Dimension, Func
// for FunctionProto) and the field.
const (
	FieldModelIRVersion       protowire.Number = 1  // ModelProto.ir_version
	FieldModelProducerName    protowire.Number = 2  // ModelProto.producer_name
	FieldModelProducerVersion protowire.Number = 3  // ModelProto.producer_version
	FieldModelDomain          protowire.Number = 4  // ModelProto.domain
	FieldModelModelVersion    protowire.Number = 5  // ModelProto.model_version
	FieldModelDocString       protowire.Number = 6  // ModelProto.doc_string
	FieldModelGraph           protowire.Number = 7  // ModelProto.graph
	FieldModelOpsetImport     protowire.Number = 8  // ModelProto.opset_import
	FieldModelMetadataProps   protowire.Number = 14 // ModelProto.metadata_props
	FieldModelTrainingInfo    protowire.Number = 20 // ModelProto.training_info
	FieldModelFunctions       protowire.Number = 25 // ModelProto.functions
	FieldModelConfiguration   protowire.Number = 26 // ModelProto.configuration

	FieldOpsetDomain  protowire.Number = 1 // OperatorSetIdProto.domain
	FieldOpsetVersion protowire.Number = 2 // OperatorSetIdProto.version

	FieldGraphNode              protowire.Number = 1  // GraphProto.node
	FieldGraphName              protowire.Number = 2  // GraphProto.name
	FieldGraphInitializer       protowire.Number = 5  // GraphProto.initializer
	FieldGraphDocString         protowire.Number = 10 // GraphProto.doc_string
	FieldGraphInput             protowire.Number = 11 // GraphProto.input
	FieldGraphOutput            protowire.Number = 12 // GraphProto.output
	FieldGraphValueInfo         protowire.Number = 13 // GraphProto.value_info
	FieldGraphSparseInitializer protowire.Number = 15 // GraphProto.sparse_initializer

	FieldNodeInput         protowire.Number = 1 // NodeProto.input
	FieldNodeOutput        protowire.Number = 2 // NodeProto.output
	FieldNodeName          protowire.Number = 3 // NodeProto.name
	FieldNodeOpType        protowire.Number = 4 // NodeProto.op_type
	FieldNodeAttribute     protowire.Number = 5 // NodeProto.attribute
	FieldNodeDocString     protowire.Number = 6 // NodeProto.doc_string
	FieldNodeDomain        protowire.Number = 7 // NodeProto.domain
	FieldNodeOverload      protowire.Number = 8 // NodeProto.overload
	FieldNodeMetadataProps protowire.Number = 9 // NodeProto.metadata_props

	FieldAttrName          protowire.Number = 1  // AttributeProto.name
	FieldAttrT             protowire.Number = 5  // AttributeProto.t
	FieldAttrG             protowire.Number = 6  // AttributeProto.g
	FieldAttrFloats        protowire.Number = 7  // AttributeProto.floats
	FieldAttrInts          protowire.Number = 8  // AttributeProto.ints
	FieldAttrTensors       protowire.Number = 10 // AttributeProto.tensors
	FieldAttrGraphs        protowire.Number = 11 // AttributeProto.graphs
	FieldAttrDocString     protowire.Number = 13 // AttributeProto.doc_string
	FieldAttrTP            protowire.Number = 14 // AttributeProto.tp
	FieldAttrTypeProtos    protowire.Number = 15 // AttributeProto.type_protos
	FieldAttrRefAttrName   protowire.Number = 21 // AttributeProto.ref_attr_name
	FieldAttrSparseTensor  protowire.Number = 22 // AttributeProto.sparse_tensor
	FieldAttrSparseTensors protowire.Number = 23 // AttributeProto.sparse_tensors

	FieldTensorDims          protowire.Number = 1  // TensorProto.dims
	FieldTensorDataType      protowire.Number = 2  // TensorProto.data_type
	FieldTensorSegment       protowire.Number = 3  // TensorProto.segment
	FieldTensorFloatData     protowire.Number = 4  // TensorProto.float_data
	FieldTensorInt32Data     protowire.Number = 5  // TensorProto.int32_data
	FieldTensorStringData    protowire.Number = 6  // TensorProto.string_data
	FieldTensorInt64Data     protowire.Number = 7  // TensorProto.int64_data
	FieldTensorName          protowire.Number = 8  // TensorProto.name
	FieldTensorRawData       protowire.Number = 9  // TensorProto.raw_data
	FieldTensorDoubleData    protowire.Number = 10 // TensorProto.double_data
	FieldTensorUint64Data    protowire.Number = 11 // TensorProto.uint64_data
	FieldTensorDocString     protowire.Number = 12 // TensorProto.doc_string
	FieldTensorExternalData  protowire.Number = 13 // TensorProto.external_data
	FieldTensorDataLocation  protowire.Number = 14 // TensorProto.data_location
	FieldTensorMetadataProps protowire.Number = 16 // TensorProto.metadata_props

	FieldSparseValues  protowire.Number = 1 // SparseTensorProto.values
	FieldSparseIndices protowire.Number = 2 // SparseTensorProto.indices
	FieldSparseDims    protowire.Number = 3 // SparseTensorProto.dims

	FieldEntryKey   protowire.Number = 1 // StringStringEntryProto.key
	FieldEntryValue protowire.Number = 2 // StringStringEntryProto.value

	FieldValueName protowire.Number = 1 // ValueInfoProto.name
	FieldValueType protowire.Number = 2 // ValueInfoProto.type

	FieldTypeTensor       protowire.Number = 1 // TypeProto.tensor_type
	FieldTypeSequence     protowire.Number = 4 // TypeProto.sequence_type
	FieldTypeMap          protowire.Number = 5 // TypeProto.map_type
	FieldTypeOpaque       protowire.Number = 7 // TypeProto.opaque_type
	FieldTypeSparseTensor protowire.Number = 8 // TypeProto.sparse_tensor_type
	FieldTypeOptional     protowire.Number = 9 // TypeProto.optional_type

	FieldTypeTensorElemType protowire.Number = 1 // TypeProto.Tensor.elem_type
	FieldTypeTensorShape    protowire.Number = 2 // TypeProto.Tensor.shape

	FieldShapeDim protowire.Number = 1 // TensorShapeProto.dim

	FieldDimValue protowire.Number = 1 // TensorShapeProto.Dimension.dim_value
	FieldDimParam protowire.Number = 2 // TensorShapeProto.Dimension.dim_param

	FieldFuncName           protowire.Number = 1  // FunctionProto.name
	FieldFuncNode           protowire.Number = 7  // FunctionProto.node
	FieldFuncDomain         protowire.Number = 10 // FunctionProto.domain
	FieldFuncAttributeProto protowire.Number = 11 // FunctionProto.attribute_proto (attribute defaults)
	FieldFuncOverload       protowire.Number = 13 // FunctionProto.overload
)

// Values of TensorProto.data_location, an enum that protobuf decodes as an
// int32: DataLocationExternal says the tensor's data is in the file its
// external_data entries name.
const (
	DataLocationDefault  = 0 // TensorProto.DEFAULT
	DataLocationExternal = 1 // TensorProto.EXTERNAL
)
