package onnx

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the messages that other packages take apart with a
// Walker (see onnxpb/onnx.proto). They are the same constants ReadMetadata
// uses, so the two readers cannot disagree.
const (
	FieldModelGraph       protowire.Number = modelGraph       // ModelProto.graph
	FieldGraphInitializer protowire.Number = graphInitializer // GraphProto.initializer
	FieldTensorFloatData  protowire.Number = tensorFloatData  // TensorProto.float_data
	FieldTensorRawData    protowire.Number = tensorRawData    // TensorProto.raw_data
)

// Walker reads the protobuf wire format of a model file front to back
// through one buffer. It is the reader under ReadMetadata, exported for
// package modelio, which keeps large tensor payloads in the file and decodes
// the rest: both get the same limits (lengths checked against the file,
// nesting depth) and the same one-line *FormatError values.
//
// A Walker reads sequentially: skipping forward past a payload seeks, and
// nothing is read twice. It is not safe for concurrent use.
type Walker struct {
	r    *wireReader
	path string
}

// Field is one field of a message met by Walker.Message. For a
// length-delimited field (Type protowire.BytesType), Start is the offset of
// its payload and End the payload's end.
type Field struct {
	Num        protowire.Number
	Type       protowire.Type
	Start, End int64
}

// NewWalker returns a Walker over src, which holds size bytes of the model
// file path (named in errors). It starts at offset 0.
func NewWalker(src io.ReadSeeker, size int64, path string) *Walker {
	r := newWireReader(src, size)
	// A file whose first field is a ModelProto field of the right wire type
	// is taken to be ONNX, so that an early end of file is reported as
	// truncation.
	r.startsLike = isModelField
	return &Walker{r: r, path: path}
}

// Size returns the file's size.
func (w *Walker) Size() int64 { return w.r.size }

// Pos returns the offset of the next unread byte.
func (w *Walker) Pos() int64 { return w.r.pos() }

// Message calls fn for each field of the message that ends at end; what
// names the message in errors ("the model", "the graph") and depth is its
// nesting level (0 for the model). fn either consumes the field's value
// (reading exactly up to End for BytesType, for example with AppendField or
// SkipPayload) and returns true, or returns false to have it skipped.
func (w *Walker) Message(end int64, depth int, what string, fn func(Field) (bool, error)) error {
	return w.r.message(end, depth, what, func(f field) (bool, error) {
		fd := Field{Num: f.num, Type: f.typ, Start: w.r.pos(), End: f.end}
		return fn(fd)
	})
}

// AppendField appends field f, whose tag Message has just read, to dst in
// its wire encoding and consumes its value. Protobuf groups, which ONNX
// never uses, are refused.
func (w *Walker) AppendField(dst []byte, f Field) ([]byte, error) {
	r := w.r
	dst = protowire.AppendTag(dst, f.Num, f.Type)
	switch f.Type {
	case protowire.VarintType:
		v, err := r.varint(r.size, label{what: "a field", num: f.Num, kind: plainLabel})
		return protowire.AppendVarint(dst, v), err
	case protowire.Fixed32Type, protowire.Fixed64Type:
		n := int64(4)
		if f.Type == protowire.Fixed64Type {
			n = 8
		}
		return w.appendPayload(dst, r.pos()+n)
	case protowire.BytesType:
		dst = protowire.AppendVarint(dst, uint64(f.End-r.pos()))
		return w.appendPayload(dst, f.End)
	default:
		return dst, r.corrupt(r.pos(), "field %d has wire type %d, which no ONNX message uses", f.Num, f.Type)
	}
}

// appendPayload appends the bytes from the current position to end.
func (w *Walker) appendPayload(dst []byte, end int64) ([]byte, error) {
	r := w.r
	if end > r.size {
		return dst, r.eof(r.pos(), text("a field"))
	}
	for r.pos() < end {
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return dst, r.eof(r.pos(), text("a field"))
			}
			return dst, err
		}
		k := min(end-r.pos(), int64(r.w-r.r))
		dst = append(dst, r.buf[r.r:r.r+int(k)]...)
		r.r += int(k)
	}
	return dst, nil
}

// SkipPayload moves past the payload of the length-delimited field f
// without reading it.
func (w *Walker) SkipPayload(f Field) error { return w.r.skipTo(f.End) }

// Corrupt returns an error for malformed data at offset, which Error turns
// into a *FormatError.
func (w *Walker) Corrupt(offset int64, format string, args ...any) error {
	return w.r.corrupt(offset, format, args...)
}

// Error turns an error of the walk into the one-line *FormatError that
// ReadMetadata returns for the same file, naming the file; other errors
// (of the file system) are wrapped with the path. It returns nil for nil.
func (w *Walker) Error(err error) error {
	if err == nil {
		return nil
	}
	var we *wireError
	if !errors.As(err, &we) {
		return fmt.Errorf("reading %s: %w", w.path, err)
	}
	fe := &FormatError{Path: w.path, Truncated: we.truncated, Offset: we.offset, Reason: we.reason}
	if what := sniffFile(w.r.src, w.r.ok); what != "" {
		fe.Truncated, fe.Offset, fe.Reason = false, -1, what
	}
	return fe
}

// NoGraph returns the error for a model file without a graph.
func (w *Walker) NoGraph() error {
	return w.Error(&wireError{offset: -1, reason: "it has no graph"})
}
