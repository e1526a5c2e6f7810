package buildkey

import (
	"crypto/sha256"
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
// left out, and the tensor data (weights) as a reader takes it: a tensor's inline data, or,
// when its data_location is EXTERNAL, the bytes its external_data entries name in a data file
// instead. Both are "sha256:" and 64 lowercase hex digits. The model's file name and folder
// are in neither, so renaming or moving a model changes nothing; changing one weight changes
// only Weights.
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

	functionNode           = 7
	functionAttributeProto = 11 // attribute defaults, which may hold tensors

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

	// TensorProto.DataLocation
	locationDefault  = 0
	locationExternal = 1
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
		switch field {
		case functionNode:
			return kindNode
		case functionAttributeProto:
			return kindAttribute
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
// Each hash sees a stream of records. A record starts with a byte that says what it is, and
// carries its field's number, wire type and length, so a stream reads back one way only: no
// two different models run together into the same bytes, whatever their fields hold.
//
//	graph:   'f' number type len value   a field, in file order
//	         '{' number kind              a message the hasher walks into (its length counts
//	         records… '}'                 the data left out), its fields, and its end
//	weights: 't' ordinal                  a tensor, numbered in walk order from 1
//	         'd' number type len value    one of its data fields
//
// Numbers, lengths and ordinals are unsigned varints, type and kind one byte. A value is a
// length-delimited field's payload, the bytes of a varint or fixed-width field as stored, or a
// group's body and end tag.
//
// A tensor is a '{' record in the graph with its fields other than its data and where the
// data lives; its data goes to the weights, as a reader takes it: the inline data fields
// (raw_data and the typed ones) when data_location is DEFAULT or absent, the external bytes
// when it is EXTERNAL, recorded as raw_data would be, so the same bytes hash alike inline or
// in a data file. Neither hash sees the other kind of data, nor the external_data entries.
type hasher struct {
	graph, weights hash.Hash
	root           *os.Root
	tensors        uint64
	external       int64
	buf            []byte
}

// record writes a record of kind c for field num to w: c, num, typ and the length-prefixed
// value (for '{', value is nil and typ is the message's kind).
func (h *hasher) record(w io.Writer, c byte, num protowire.Number, typ byte, value []byte, framed bool) {
	b := append(h.buf[:0], c)
	b = protowire.AppendVarint(b, uint64(num))
	b = append(b, typ)
	if framed {
		b = protowire.AppendVarint(b, uint64(len(value)))
	}
	h.buf = b
	w.Write(b)
	w.Write(value)
}

// value returns the value of a field whose tag and value are field, the tag n bytes long: a
// length-delimited field's payload, else the bytes after the tag.
func value(field []byte, n int, typ protowire.Type) []byte {
	if typ == protowire.BytesType {
		v, _ := protowire.ConsumeBytes(field[n:])
		return v
	}
	return field[n:]
}

// fields calls fn for each field of message b, with the field's number, wire type, tag and
// value bytes, and the tag's length; it stops at the first error.
func fields(b []byte, what string, fn func(num protowire.Number, typ protowire.Type, field []byte, n int) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed %s: %w", what, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("malformed %s field %d: %w", what, num, protowire.ParseError(m))
		}
		if err := fn(num, typ, b[:n+m], n); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

func (h *hasher) message(b []byte, k kind, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("subgraphs nest more than %d deep", maxDepth)
	}
	if k == kindTensor {
		return h.tensor(b)
	}
	return fields(b, "protobuf", func(num protowire.Number, typ protowire.Type, field []byte, n int) error {
		v := value(field, n, typ)
		if c := child(k, num); c != kindOther && typ == protowire.BytesType {
			h.record(h.graph, '{', num, byte(c), nil, false)
			if err := h.message(v, c, depth+1); err != nil {
				return err
			}
			h.graph.Write([]byte{'}'})
			return nil
		}
		h.record(h.graph, 'f', num, byte(typ), v, true)
		return nil
	})
}

// dataField reports whether a tensor field of number num and wire type typ holds inline data:
// raw_data, string_data, or a typed field packed or not. A protobuf reader takes a field of
// another wire type as an unknown field, not as data.
func dataField(num protowire.Number, typ protowire.Type) bool {
	switch num {
	case tensorRawData, tensorStringData:
		return typ == protowire.BytesType
	case tensorFloatData:
		return typ == protowire.BytesType || typ == protowire.Fixed32Type
	case tensorDoubleData:
		return typ == protowire.BytesType || typ == protowire.Fixed64Type
	case tensorInt32Data, tensorInt64Data, tensorUint64Data:
		return typ == protowire.BytesType || typ == protowire.VarintType
	}
	return false
}

// placement says which of a tensor's data a reader takes, from its data_location: the last
// such field, an enum that protobuf decodes as an int32.
type placement struct {
	inline, external bool
	// recorded is set for a value no writer produces (neither DEFAULT nor EXTERNAL as
	// written): the field goes to the graph hash, and the data of every reading is hashed,
	// since a reader that decodes the enum as protobuf does and one that compares the varint
	// take different data for 1<<32|1.
	recorded bool
}

func placementOf(loc uint64, set bool) placement {
	switch {
	case !set || loc == locationDefault:
		return placement{inline: true}
	case loc == locationExternal:
		return placement{external: true}
	default:
		return placement{inline: true, external: int32(loc) == locationExternal, recorded: true}
	}
}

// tensor splits one TensorProto between the two hashes (see hasher).
func (h *hasher) tensor(b []byte) error {
	var name string
	var loc uint64
	var set bool
	if err := fields(b, "tensor", func(num protowire.Number, typ protowire.Type, field []byte, n int) error {
		switch {
		case num == tensorName && typ == protowire.BytesType:
			name = string(value(field, n, typ))
		case num == tensorDataLocation && typ == protowire.VarintType:
			loc, _ = protowire.ConsumeVarint(field[n:])
			set = true
		}
		return nil
	}); err != nil {
		return err
	}
	p := placementOf(loc, set)

	h.tensors++
	h.weights.Write(protowire.AppendVarint([]byte{'t'}, h.tensors))
	var ext [][]byte // the external_data entries, in order
	err := fields(b, "tensor", func(num protowire.Number, typ protowire.Type, field []byte, n int) error {
		v := value(field, n, typ)
		switch {
		case dataField(num, typ):
			if p.inline {
				h.record(h.weights, 'd', num, byte(typ), v, true)
			} else if !validPacked(num, typ, v) {
				return fmt.Errorf("tensor %q: malformed packed field %d", name, num)
			}
		case num == tensorExternalData && typ == protowire.BytesType:
			if _, _, err := entry(v); err != nil {
				return fmt.Errorf("tensor %q: %w", name, err)
			}
			ext = append(ext, v)
		case num == tensorDataLocation && typ == protowire.VarintType:
			if p.recorded {
				h.record(h.graph, 'f', num, byte(typ), v, true)
			}
		default:
			h.record(h.graph, 'f', num, byte(typ), v, true)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.external {
		return h.externalData(name, ext)
	}
	return nil // a DEFAULT tensor's external_data entries are not read: no file is opened
}

// validPacked reports whether the payload v of a packed numeric field is whole values, as a
// protobuf reader requires; other fields are valid as their wire format is.
func validPacked(num protowire.Number, typ protowire.Type, v []byte) bool {
	if typ != protowire.BytesType {
		return true
	}
	switch num {
	case tensorFloatData:
		return len(v)%4 == 0
	case tensorDoubleData:
		return len(v)%8 == 0
	case tensorInt32Data, tensorInt64Data, tensorUint64Data:
		for len(v) > 0 {
			_, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return false
			}
			v = v[n:]
		}
	}
	return true
}

// externalData hashes the bytes a tensor's external_data entries point at, as raw_data.
func (h *hasher) externalData(tensor string, entries [][]byte) error {
	var location string
	offset, length := int64(0), int64(-1)
	for _, e := range entries {
		key, value, err := entry(e)
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
	// the record of a raw_data field of length bytes, its value streamed from the file
	b := append(h.buf[:0], 'd')
	b = protowire.AppendVarint(b, tensorRawData)
	b = append(b, byte(protowire.BytesType))
	b = protowire.AppendVarint(b, uint64(length))
	h.buf = b
	h.weights.Write(b)
	n, err := io.Copy(h.weights, io.NewSectionReader(f, offset, length))
	if err != nil {
		return fmt.Errorf("tensor %q: reading external data %q: %w", tensor, location, err)
	}
	if n != length {
		return fmt.Errorf("tensor %q: external data %q ended after %d of %d bytes; it changed while it was read", tensor, location, n, length)
	}
	h.external += n
	return nil
}

// entry decodes one StringStringEntryProto; other fields are skipped, as protobuf readers do.
func entry(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", errors.New("malformed external_data entry")
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", "", errors.New("malformed external_data entry")
		}
		if typ == protowire.BytesType && (num == entryKey || num == entryValue) {
			v, _ := protowire.ConsumeBytes(b[n:])
			if num == entryKey {
				key = string(v)
			} else {
				value = string(v)
			}
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
