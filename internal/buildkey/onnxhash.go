package buildkey

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// ModelHashes are the two content hashes of an ONNX model: the graph with every tensor's data
// left out, and the tensor data (weights), external data included. Both are "sha256:" and 64
// lowercase hex digits. The model's file name and folder are in neither, so renaming or moving
// a model changes nothing; changing one weight changes only Weights.
type ModelHashes struct {
	Graph   string `json:"graph"`
	Weights string `json:"weights"`
	// Bytes is the size of the model file; ExternalBytes the external data read.
	Bytes         int64 `json:"model_bytes"`
	ExternalBytes int64 `json:"external_bytes,omitempty"`
}

// maxDepth bounds how deep subgraphs may nest (If inside Loop inside …), so a hostile file
// cannot exhaust the stack.
const maxDepth = 64

// Field numbers of onnx.proto3 that the hasher needs.
const (
	modelGraph     = 7
	modelFunctions = 25

	graphNode              = 1
	graphInitializer       = 5
	graphSparseInitializer = 15

	functionNode = 4

	nodeAttribute = 5

	attrT             = 5
	attrG             = 6
	attrTensors       = 10
	attrGraphs        = 11
	attrSparseTensor  = 22
	attrSparseTensors = 23

	sparseValues  = 1
	sparseIndices = 2

	tensorFloatData    = 4
	tensorInt32Data    = 5
	tensorStringData   = 6
	tensorInt64Data    = 7
	tensorName         = 8
	tensorRawData      = 9
	tensorDoubleData   = 10
	tensorUint64Data   = 11
	tensorExternalData = 13
	tensorDataLocation = 14

	entryKey   = 1
	entryValue = 2
)

// HashModel hashes the ONNX model at path (see ModelHashes). External data files are read
// relative to the model's folder and may not lie outside it.
func HashModel(path string) (ModelHashes, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return ModelHashes{}, fmt.Errorf("reading model %s: %w", path, err)
	}
	defer release()
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return ModelHashes{}, fmt.Errorf("opening the folder of model %s: %w", path, err)
	}
	defer root.Close()
	hashes, err := hashBytes(data, root)
	if err != nil {
		return ModelHashes{}, fmt.Errorf("hashing model %s: %w", path, err)
	}
	return hashes, nil
}

// hashBytes hashes a model's bytes; external data is read from root.
func hashBytes(data []byte, root *os.Root) (ModelHashes, error) {
	h := &hasher{graph: sha256.New(), weights: sha256.New(), root: root}
	if err := h.message(data, kindModel, 0); err != nil {
		return ModelHashes{}, err
	}
	return ModelHashes{
		Graph:         "sha256:" + fmt.Sprintf("%x", h.graph.Sum(nil)),
		Weights:       "sha256:" + fmt.Sprintf("%x", h.weights.Sum(nil)),
		Bytes:         int64(len(data)),
		ExternalBytes: h.external,
	}, nil
}

// kind is a message type of onnx.proto3 the hasher walks into.
type kind int

const (
	kindOther kind = iota // hashed as bytes
	kindModel
	kindGraph
	kindFunction
	kindNode
	kindAttribute
	kindSparse
	kindTensor
)

// child says which message a length-delimited field of a parent kind holds, when the hasher
// must walk into it.
func child(parent kind, field protowire.Number) kind {
	switch parent {
	case kindModel:
		switch field {
		case modelGraph:
			return kindGraph
		case modelFunctions:
			return kindFunction
		}
	case kindGraph:
		switch field {
		case graphNode:
			return kindNode
		case graphInitializer:
			return kindTensor
		case graphSparseInitializer:
			return kindSparse
		}
	case kindFunction:
		if field == functionNode {
			return kindNode
		}
	case kindNode:
		if field == nodeAttribute {
			return kindAttribute
		}
	case kindAttribute:
		switch field {
		case attrT, attrTensors:
			return kindTensor
		case attrG, attrGraphs:
			return kindGraph
		case attrSparseTensor, attrSparseTensors:
			return kindSparse
		}
	case kindSparse:
		if field == sparseValues || field == sparseIndices {
			return kindTensor
		}
	}
	return kindOther
}

// hasher feeds one model into the graph and weights hashes.
//
// The graph hash sees every field in file order, tag first; a message it walks into is framed
// by markers instead of its length (the length includes the data left out). A tensor's data
// fields, and where its external data lives, go to the weights hash instead: the tensor's
// ordinal, then each data field's number and length-prefixed bytes; external data counts as
// raw_data.
type hasher struct {
	graph, weights hash.Hash
	root           *os.Root
	tensors        uint64
	external       int64
}

var (
	openMark  = []byte{'{'}
	closeMark = []byte{'}'}
)

func (h *hasher) message(b []byte, k kind, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("subgraphs nest more than %d deep", maxDepth)
	}
	if k == kindTensor {
		return h.tensor(b)
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		tag := b[:n]
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("malformed protobuf field %d: %w", num, protowire.ParseError(m))
		}
		if c := child(k, num); c != kindOther && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			h.graph.Write(tag)
			h.graph.Write(openMark)
			if err := h.message(v, c, depth+1); err != nil {
				return err
			}
			h.graph.Write(closeMark)
		} else {
			h.graph.Write(b[:n+m])
		}
		b = b[n+m:]
	}
	return nil
}

// tensor splits one TensorProto between the two hashes.
func (h *hasher) tensor(b []byte) error {
	h.tensors++
	var ord [binary.MaxVarintLen64]byte
	h.weights.Write([]byte("tensor"))
	h.weights.Write(ord[:binary.PutUvarint(ord[:], h.tensors)])
	var ext []byte // the external_data entries, in order
	var name string
	h.graph.Write([]byte("tensor{"))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed tensor: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("malformed tensor field %d: %w", num, protowire.ParseError(m))
		}
		field := b[:n+m]
		switch num {
		case tensorFloatData, tensorInt32Data, tensorStringData, tensorInt64Data, tensorRawData, tensorDoubleData, tensorUint64Data:
			h.weightsField(num, field[n:])
		case tensorExternalData:
			ext = append(ext, field...)
		case tensorDataLocation:
			// where the data lives is no part of the graph; the bytes are in the weights hash
		default:
			if num == tensorName && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(b[n:])
				name = string(v)
			}
			h.graph.Write(field)
		}
		b = b[n+m:]
	}
	h.graph.Write(closeMark)
	if len(ext) > 0 {
		return h.externalData(name, ext)
	}
	return nil
}

func (h *hasher) weightsField(num protowire.Number, value []byte) {
	var buf [2 * binary.MaxVarintLen64]byte
	k := binary.PutUvarint(buf[:], uint64(num))
	k += binary.PutUvarint(buf[k:], uint64(len(value)))
	h.weights.Write(buf[:k])
	h.weights.Write(value)
}

// externalData hashes the bytes a tensor's external_data entries point at, as raw_data.
func (h *hasher) externalData(tensor string, entries []byte) error {
	var location string
	offset, length := int64(0), int64(-1)
	for len(entries) > 0 {
		_, _, n := protowire.ConsumeTag(entries)
		if n < 0 {
			return fmt.Errorf("tensor %q: malformed external_data", tensor)
		}
		v, m := protowire.ConsumeBytes(entries[n:])
		if m < 0 {
			return fmt.Errorf("tensor %q: malformed external_data", tensor)
		}
		entries = entries[n+m:]
		key, value, err := entry(v)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", tensor, err)
		}
		switch key {
		case "location":
			location = value
		case "offset", "length":
			x, err := strconv.ParseInt(value, 10, 64)
			if err != nil || x < 0 {
				return fmt.Errorf("tensor %q: external data %s %q is not a byte count", tensor, key, value)
			}
			if key == "offset" {
				offset = x
			} else {
				length = x
			}
		}
	}
	if location == "" {
		return fmt.Errorf("tensor %q: external data without a location", tensor)
	}
	f, err := h.root.Open(location)
	if err != nil {
		return fmt.Errorf("tensor %q: external data file %q: %w (it must be a file in the model's folder)", tensor, location, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("tensor %q: external data file %q: %w", tensor, location, err)
	}
	if length < 0 {
		length = st.Size() - offset
	}
	if offset > st.Size() || length < 0 || offset+length > st.Size() {
		return fmt.Errorf("tensor %q: external data %q has %d bytes, but the model reads %d at offset %d; the model and its data file do not match", tensor, location, st.Size(), length, offset)
	}
	var buf [2 * binary.MaxVarintLen64]byte
	k := binary.PutUvarint(buf[:], tensorRawData)
	k += binary.PutUvarint(buf[k:], uint64(length))
	h.weights.Write(buf[:k])
	n, err := io.Copy(h.weights, io.NewSectionReader(f, offset, length))
	if err != nil {
		return fmt.Errorf("tensor %q: reading external data %q: %w", tensor, location, err)
	}
	h.external += n
	return nil
}

// entry decodes one StringStringEntryProto.
func entry(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return "", "", errors.New("malformed external_data entry")
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return "", "", errors.New("malformed external_data entry")
		}
		switch num {
		case entryKey:
			key = string(v)
		case entryValue:
			value = string(v)
		}
		b = b[n+m:]
	}
	return key, value, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
