package testmodels

import (
	"bufio"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// LargeTensorMiB is the size of each weight of WriteLarge's model.
const LargeTensorMiB = 4

// WriteLarge writes a valid ONNX model of about mib MiB to w without holding
// it in memory: a chain of MatMul nodes over an input x of shape [batch,
// 1024], each multiplying by its own 1024x1024 float32 weight stored inline
// as raw_data (4 MiB each). It is the model of the inspection benchmark.
// The weight bytes are a fixed pattern, so the file is deterministic.
func WriteLarge(w io.Writer, mib int) error {
	const n = 1024
	layers := max(1, mib/LargeTensorMiB)
	bw := bufio.NewWriterSize(w, 1<<20)

	// The graph is written as three concatenated GraphProto encodings (nodes
	// and name, then the initializers, then inputs and outputs), which
	// protobuf decodes as one message.
	head := &onnxpb.GraphProto{Name: "large"}
	x := "x"
	for i := 0; i < layers; i++ {
		y := fmt.Sprintf("layer%d/out", i)
		head.Node = append(head.Node, Node(fmt.Sprintf("layer%d/matmul", i), "MatMul",
			[]string{x, fmt.Sprintf("layer%d.weight", i)}, []string{y}))
		x = y
	}
	tail := &onnxpb.GraphProto{
		Input:  []*onnxpb.ValueInfoProto{Value("x", F32, "batch", n)},
		Output: []*onnxpb.ValueInfoProto{Value(x, F32, "batch", n)},
	}
	headBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(head)
	if err != nil {
		return fmt.Errorf("encoding the large model: %w", err)
	}
	tailBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(tail)
	if err != nil {
		return fmt.Errorf("encoding the large model: %w", err)
	}
	const dataLen = 4 * n * n
	tensorHeads := make([][]byte, layers)
	graphLen := len(headBytes) + len(tailBytes)
	for i := range tensorHeads {
		h, err := proto.MarshalOptions{Deterministic: true}.Marshal(&onnxpb.TensorProto{
			Name: fmt.Sprintf("layer%d.weight", i), Dims: []int64{n, n}, DataType: int32(F32),
		})
		if err != nil {
			return fmt.Errorf("encoding the large model: %w", err)
		}
		h = protowire.AppendTag(h, 9, protowire.BytesType) // raw_data
		h = protowire.AppendVarint(h, dataLen)
		tensorHeads[i] = h
		tensorLen := len(h) + dataLen
		graphLen += protowire.SizeTag(5) + protowire.SizeVarint(uint64(tensorLen)) + tensorLen
	}

	model, err := proto.MarshalOptions{Deterministic: true}.Marshal(&onnxpb.ModelProto{
		IrVersion: IRVersion, ProducerName: Producer, ProducerVersion: "1",
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: Opset}},
	})
	if err != nil {
		return fmt.Errorf("encoding the large model: %w", err)
	}
	model = protowire.AppendTag(model, 7, protowire.BytesType) // graph
	model = protowire.AppendVarint(model, uint64(graphLen))
	model = append(model, headBytes...)
	if _, err := bw.Write(model); err != nil {
		return fmt.Errorf("writing the large model: %w", err)
	}
	pattern := make([]byte, 1<<20)
	for i := range pattern {
		pattern[i] = byte(i * 7)
	}
	for _, h := range tensorHeads {
		b := protowire.AppendTag(nil, 5, protowire.BytesType) // initializer
		b = protowire.AppendVarint(b, uint64(len(h)+dataLen))
		b = append(b, h...)
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("writing the large model: %w", err)
		}
		for left := dataLen; left > 0; left -= len(pattern) {
			if _, err := bw.Write(pattern[:min(left, len(pattern))]); err != nil {
				return fmt.Errorf("writing the large model: %w", err)
			}
		}
	}
	if _, err := bw.Write(tailBytes); err != nil {
		return fmt.Errorf("writing the large model: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the large model: %w", err)
	}
	return nil
}
