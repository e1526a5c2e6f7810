package testmodels

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// Field numbers the scale writers encode by hand (onnx.proto).
const (
	fModelGraph  = 7
	fGraphNode   = 1
	fGraphName   = 2
	fGraphInit   = 5
	fGraphInput  = 11
	fGraphOutput = 12
	fNodeInput   = 1
	fNodeOutput  = 2
	fNodeName    = 3
	fNodeOpType  = 4
	fTensorDims  = 1
	fTensorType  = 2
	fTensorName  = 8
	fTensorRaw   = 9
	fTensorExt   = 13
	fTensorLoc   = 14
	fEntryKey    = 1
	fEntryValue  = 2
)

// SmallWeights is the number of float32 values in each weight of
// WriteManyNodes's model.
const SmallWeights = 16

// WriteManyNodes writes a valid ONNX model of n small nodes to w: a chain
// y_i = Add(y_{i-1}, w_i) over an input of shape [1, 16], each w_i a float32
// initializer of 16 values stored as raw_data. About 130 bytes per node: the
// shape of a large exported transformer's many small layers, and the model
// of the convert and inspect scale benchmarks. The file is deterministic.
func WriteManyNodes(w io.Writer, n int) error {
	g := graphHead("many_nodes")
	r := NewRand(1)
	raw := make([]byte, 4*SmallWeights)
	var node, tensor []byte
	for i := 0; i < n; i++ {
		in, wt, out := chainName(i), "w"+strconv.Itoa(i), chainName(i+1)
		node = appendNode(node[:0], "add"+strconv.Itoa(i), "Add", []string{in, wt}, out)
		g = appendBytes(g, fGraphNode, node)
		for j := 0; j < SmallWeights; j++ {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(r.Float(1)))
		}
		tensor = appendTensorHead(tensor[:0], wt, []int64{1, SmallWeights}, F32)
		tensor = appendBytes(tensor, fTensorRaw, raw)
		g = appendBytes(g, fGraphInit, tensor)
	}
	return finishChain(w, g, n)
}

// WriteIdentityChain writes a valid ONNX model of n Identity nodes in a
// chain over an input of shape [1, 16], with no weights: the smallest node
// ONNX has, about 38 bytes each. The file is deterministic.
func WriteIdentityChain(w io.Writer, n int) error {
	g := graphHead("identity_chain")
	var node []byte
	for i := 0; i < n; i++ {
		node = appendNode(node[:0], "id"+strconv.Itoa(i), "Identity", []string{chainName(i)}, chainName(i+1))
		g = appendBytes(g, fGraphNode, node)
	}
	return finishChain(w, g, n)
}

// WriteExternalChain writes a model of layers MatMul nodes over an input of
// shape [batch, 1024], each multiplying by its own 1024x1024 float32 weight
// whose data (4 MiB each, values in [-0.5, 0.5)) is in the external data
// file dataName next to modelPath. It streams the data, so a model of
// several GiB is written with little memory. The files are deterministic.
func WriteExternalChain(modelPath, dataName string, layers int) error {
	const n = 1024
	const dataLen = 4 * n * n
	data, err := os.Create(filepath.Join(filepath.Dir(modelPath), dataName))
	if err != nil {
		return fmt.Errorf("writing the external data: %w", err)
	}
	defer data.Close()
	bw := bufio.NewWriterSize(data, 1<<20)
	g := graphHead("external_chain")
	buf := make([]byte, dataLen)
	var node, tensor []byte
	for i := 0; i < layers; i++ {
		wt := "layer" + strconv.Itoa(i) + ".weight"
		node = appendNode(node[:0], "layer"+strconv.Itoa(i), "MatMul", []string{chainName(i), wt}, chainName(i+1))
		g = appendBytes(g, fGraphNode, node)
		tensor = appendTensorHead(tensor[:0], wt, []int64{n, n}, F32)
		tensor = appendEntry(tensor, "location", dataName)
		tensor = appendEntry(tensor, "offset", strconv.FormatInt(int64(i)*dataLen, 10))
		tensor = appendEntry(tensor, "length", strconv.Itoa(dataLen))
		tensor = protowire.AppendTag(tensor, fTensorLoc, protowire.VarintType)
		tensor = protowire.AppendVarint(tensor, 1) // EXTERNAL
		g = appendBytes(g, fGraphInit, tensor)
		r := NewRand(uint64(i + 1))
		for j := 0; j < n*n; j++ {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(r.Float(0.5)))
		}
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("writing the external data: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the external data: %w", err)
	}
	if err := data.Close(); err != nil {
		return fmt.Errorf("writing the external data: %w", err)
	}
	f, err := os.Create(modelPath)
	if err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	defer f.Close()
	if err := finishChainBatch(f, g, layers, "batch", n); err != nil {
		return err
	}
	return f.Close()
}

func chainName(i int) string {
	if i == 0 {
		return "x"
	}
	return "y" + strconv.Itoa(i)
}

func graphHead(name string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, fGraphName, protowire.BytesType), name)
}

// finishChain adds the input x [1, 16] and the output y_n to the graph g and
// writes the model.
func finishChain(w io.Writer, g []byte, n int) error {
	return finishChain2(w, g, n, Value("x", F32, 1, SmallWeights), Value(chainName(n), F32, 1, SmallWeights))
}

func finishChainBatch(w io.Writer, g []byte, n int, batch string, width int) error {
	return finishChain2(w, g, n, Value("x", F32, batch, width), Value(chainName(n), F32, batch, width))
}

func finishChain2(w io.Writer, g []byte, n int, in, out *onnxpb.ValueInfoProto) error {
	io2, err := proto.MarshalOptions{Deterministic: true}.Marshal(&onnxpb.GraphProto{
		Input: []*onnxpb.ValueInfoProto{in}, Output: []*onnxpb.ValueInfoProto{out}})
	if err != nil {
		return fmt.Errorf("encoding the model: %w", err)
	}
	g = append(g, io2...)
	head, err := Marshal(Model(nil))
	if err != nil {
		return err
	}
	head = appendBytes(head, fModelGraph, g)
	if _, err := w.Write(head); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func appendString(b []byte, num protowire.Number, v string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func appendNode(b []byte, name, op string, in []string, out string) []byte {
	for _, s := range in {
		b = appendString(b, fNodeInput, s)
	}
	b = appendString(b, fNodeOutput, out)
	b = appendString(b, fNodeName, name)
	return appendString(b, fNodeOpType, op)
}

func appendTensorHead(b []byte, name string, dims []int64, dt onnxpb.TensorProto_DataType) []byte {
	for _, d := range dims {
		b = protowire.AppendTag(b, fTensorDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, fTensorType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(dt))
	return appendString(b, fTensorName, name)
}

func appendEntry(b []byte, key, value string) []byte {
	e := appendString(appendString(nil, fEntryKey, key), fEntryValue, value)
	return appendBytes(b, fTensorExt, e)
}
