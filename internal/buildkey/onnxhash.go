package buildkey

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/trtbuild/trtbuild/internal/onnx"
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

// HashModel hashes the ONNX model at path (see ModelHashes). The file is read with package
// onnx's Walker, so it is held to the limits of every other reader of a model (field numbers,
// lengths, nesting at most onnx.MaxDepth deep). External data files are opened with
// onnx.OpenExternal: relative to the model's folder and never outside it, regular files only.
func HashModel(path string) (ModelHashes, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return ModelHashes{}, fmt.Errorf("reading model %s: %w", path, err)
	}
	defer release()
	dir := filepath.Dir(path)
	hashes, err := hashMapped(data, func(loc string) (*os.File, os.FileInfo, error) { return onnx.OpenExternal(dir, loc) })
	if err != nil {
		return ModelHashes{}, fmt.Errorf("hashing model %s: %w", path, err)
	}
	return hashes, nil
}

// HashSource hashes the model src holds (see ModelHashes), as HashModel hashes a path: the
// model's bytes are read from the held file, its external data through the held folder.
func HashSource(src *onnx.Source) (ModelHashes, error) {
	data, release, err := mapOpen(src.File())
	if err != nil {
		return ModelHashes{}, fmt.Errorf("reading model %s: %w", src.Path(), err)
	}
	defer release()
	hashes, err := hashMapped(data, src.OpenExternal)
	if err != nil {
		return ModelHashes{}, fmt.Errorf("hashing model %s: %w", src.Path(), err)
	}
	return hashes, nil
}

// ErrCutShort is HashModel's and HashSource's error when the model file was cut short while it
// was read: its mapped pages past the new end fault (SIGBUS), which becomes this error instead
// of a crash.
var ErrCutShort = errors.New("the model was cut short while it was read: build again once it is written in full")

// hashMapped is hashBytes of a file's mapped bytes, turning a fault on them (the file was
// truncated meanwhile) into ErrCutShort.
func hashMapped(data []byte, open func(loc string) (*os.File, os.FileInfo, error)) (hashes ModelHashes, err error) {
	was := debug.SetPanicOnFault(true) // this goroutine's alone
	defer func() {
		debug.SetPanicOnFault(was)
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			hashes, err = ModelHashes{}, ErrCutShort
		}
	}()
	return hashBytes(data, open)
}

// hashBytes hashes a model's bytes; external data files are opened with open (by location,
// relative to the model's folder).
func hashBytes(data []byte, open func(loc string) (*os.File, os.FileInfo, error)) (ModelHashes, error) {
	w := onnx.NewBytesWalker(data, "the model")
	h := &hasher{w: w, graph: sha256.New(), weights: sha256.New(), open: open}
	if err := h.message(w.Size(), kindModel, 0); err != nil {
		var fe *onnx.FormatError
		if errors.As(w.Error(err), &fe) {
			return ModelHashes{}, fmt.Errorf("malformed protobuf: %s", fe.Reason)
		}
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

// kindNames name the kinds in errors.
var kindNames = [...]string{
	kindModel: "the model", kindGraph: "a graph", kindFunction: "a function", kindNode: "a node",
	kindAttribute: "a node attribute", kindSparse: "a sparse tensor", kindTensor: "a tensor",
}

// child says which message a length-delimited field of a parent kind holds, when the hasher
// must walk into it.
func child(parent kind, field protowire.Number) kind {
	switch parent {
	case kindModel:
		switch field {
		case onnx.FieldModelGraph:
			return kindGraph
		case onnx.FieldModelFunctions:
			return kindFunction
		}
	case kindGraph:
		switch field {
		case onnx.FieldGraphNode:
			return kindNode
		case onnx.FieldGraphInitializer:
			return kindTensor
		case onnx.FieldGraphSparseInitializer:
			return kindSparse
		}
	case kindFunction:
		switch field {
		case onnx.FieldFuncNode:
			return kindNode
		case onnx.FieldFuncAttributeProto:
			return kindAttribute
		}
	case kindNode:
		if field == onnx.FieldNodeAttribute {
			return kindAttribute
		}
	case kindAttribute:
		switch field {
		case onnx.FieldAttrT, onnx.FieldAttrTensors:
			return kindTensor
		case onnx.FieldAttrG, onnx.FieldAttrGraphs:
			return kindGraph
		case onnx.FieldAttrSparseTensor, onnx.FieldAttrSparseTensors:
			return kindSparse
		}
	case kindSparse:
		if field == onnx.FieldSparseValues || field == onnx.FieldSparseIndices {
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
	w              *onnx.Walker // over the model's bytes
	graph, weights hash.Hash
	open           func(loc string) (*os.File, os.FileInfo, error) // an external data file, by location
	tensors        uint64
	external       int64
	buf            []byte
	fields         []tensorField // a tensor's fields, scratch
}

// tensorField is a field of a tensor other than an external_data entry, with its value.
type tensorField struct {
	num   protowire.Number
	typ   protowire.Type
	value []byte
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

// message hashes the message of kind k that ends at end, at nesting level depth.
func (h *hasher) message(end int64, k kind, depth int) error {
	if k == kindTensor {
		return h.tensor(end, depth)
	}
	w := h.w
	return w.Message(end, depth, kindNames[k], func(f onnx.Field) (bool, error) {
		if c := child(k, f.Num); c != kindOther && f.Type == protowire.BytesType {
			h.record(h.graph, '{', f.Num, byte(c), nil, false)
			if err := h.message(f.End, c, depth+1); err != nil {
				return true, err
			}
			h.graph.Write([]byte{'}'})
			return true, nil
		}
		v, err := w.Value(f)
		if err != nil {
			return true, err
		}
		h.record(h.graph, 'f', f.Num, byte(f.Type), v, true)
		return true, nil
	})
}

// dataField reports whether a tensor field of number num and wire type typ holds inline data:
// raw_data, string_data, or a typed field packed or not. A protobuf reader takes a field of
// another wire type as an unknown field, not as data.
func dataField(num protowire.Number, typ protowire.Type) bool {
	switch num {
	case onnx.FieldTensorRawData, onnx.FieldTensorStringData:
		return typ == protowire.BytesType
	case onnx.FieldTensorFloatData:
		return typ == protowire.BytesType || typ == protowire.Fixed32Type
	case onnx.FieldTensorDoubleData:
		return typ == protowire.BytesType || typ == protowire.Fixed64Type
	case onnx.FieldTensorInt32Data, onnx.FieldTensorInt64Data, onnx.FieldTensorUint64Data:
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
	case !set || loc == onnx.DataLocationDefault:
		return placement{inline: true}
	case loc == onnx.DataLocationExternal:
		return placement{external: true}
	default:
		return placement{inline: true, external: int32(loc) == onnx.DataLocationExternal, recorded: true}
	}
}

// tensor splits the TensorProto that ends at end between the two hashes (see hasher). Its
// fields are read first, since where its data lives may be said by its last field.
func (h *hasher) tensor(end int64, depth int) error {
	w := h.w
	fields := h.fields[:0]
	var ext [][2]string // the external_data entries, in order
	err := w.Message(end, depth, kindNames[kindTensor], func(f onnx.Field) (bool, error) {
		if f.Num == onnx.FieldTensorExternalData && f.Type == protowire.BytesType {
			kv, err := h.entry(f.End, depth+1)
			ext = append(ext, kv)
			return true, err
		}
		v, err := w.Value(f)
		fields = append(fields, tensorField{f.Num, f.Type, v})
		return true, err
	})
	h.fields = fields[:0]
	if err != nil {
		return err
	}
	var name string
	var loc uint64
	var set bool
	for _, f := range fields {
		switch {
		case f.num == onnx.FieldTensorName && f.typ == protowire.BytesType:
			name = string(f.value)
		case f.num == onnx.FieldTensorDataLocation && f.typ == protowire.VarintType:
			loc, _ = protowire.ConsumeVarint(f.value)
			set = true
		}
	}
	p := placementOf(loc, set)

	h.tensors++
	h.weights.Write(protowire.AppendVarint([]byte{'t'}, h.tensors))
	for _, f := range fields {
		switch {
		case dataField(f.num, f.typ):
			if p.inline {
				h.record(h.weights, 'd', f.num, byte(f.typ), f.value, true)
			} else if !validPacked(f.num, f.typ, f.value) {
				return fmt.Errorf("tensor %q: malformed packed field %d", name, f.num)
			}
		case f.num == onnx.FieldTensorDataLocation && f.typ == protowire.VarintType:
			if p.recorded {
				h.record(h.graph, 'f', f.num, byte(f.typ), f.value, true)
			}
		default:
			h.record(h.graph, 'f', f.num, byte(f.typ), f.value, true)
		}
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
	case onnx.FieldTensorFloatData:
		return len(v)%4 == 0
	case onnx.FieldTensorDoubleData:
		return len(v)%8 == 0
	case onnx.FieldTensorInt32Data, onnx.FieldTensorInt64Data, onnx.FieldTensorUint64Data:
		return onnx.PackedVarints(v, nil)
	}
	return true
}

// entry reads the StringStringEntryProto that ends at end: its key and value. Other fields
// are skipped, as protobuf readers do.
func (h *hasher) entry(end int64, depth int) ([2]string, error) {
	var kv [2]string
	w := h.w
	err := w.Message(end, depth, "an external_data entry", func(f onnx.Field) (bool, error) {
		if f.Type != protowire.BytesType || (f.Num != onnx.FieldEntryKey && f.Num != onnx.FieldEntryValue) {
			return false, nil
		}
		v, err := w.Value(f)
		if f.Num == onnx.FieldEntryKey {
			kv[0] = string(v)
		} else {
			kv[1] = string(v)
		}
		return true, err
	})
	return kv, err
}

// externalData hashes the bytes a tensor's external_data entries point at, as raw_data.
func (h *hasher) externalData(tensor string, entries [][2]string) error {
	var location string
	offset, length := int64(0), int64(-1)
	for _, e := range entries {
		key, value := e[0], e[1]
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
	f, st, err := h.open(location)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", tensor, err)
	}
	defer f.Close()
	if length < 0 {
		length = st.Size() - offset
	}
	if offset > st.Size() || length < 0 || offset+length > st.Size() {
		return fmt.Errorf("tensor %q: external data %q has %d bytes, but the model reads %d at offset %d; the model and its data file do not match", tensor, location, st.Size(), length, offset)
	}
	// the record of a raw_data field of length bytes, its value streamed from the file
	b := append(h.buf[:0], 'd')
	b = protowire.AppendVarint(b, uint64(onnx.FieldTensorRawData))
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

// Memo hashes each model file once for several builds of it (a matrix's cells, a service's
// checks): by the identity of the file a build opened (onnx.Source.Identity), so a file that
// changed in between is hashed again. It is safe for concurrent use; the zero Memo is ready.
type Memo struct {
	mu   sync.Mutex
	done map[string]*memoEntry
}

type memoEntry struct {
	once   sync.Once
	hashes ModelHashes
	err    error
}

// Hash is HashSource of src, hashed once per file identity.
func (m *Memo) Hash(src *onnx.Source) (ModelHashes, error) {
	id := src.Identity()
	m.mu.Lock()
	if m.done == nil {
		m.done = map[string]*memoEntry{}
	}
	e := m.done[id]
	if e == nil {
		e = &memoEntry{}
		m.done[id] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.hashes, e.err = HashSource(src) })
	return e.hashes, e.err
}
