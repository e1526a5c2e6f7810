package onnx

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Walker reads the protobuf wire format of a model front to back. It is the
// reader under ReadMetadata, exported for package modelio, which keeps large
// tensor payloads in the file and decodes the rest, and for package
// buildkey, which hashes a model mapped into memory (NewBytesWalker): all
// get the same limits (lengths checked against the file, field numbers,
// nesting depth up to MaxDepth) and the same one-line *FormatError values.
//
// A Walker over a file (NewWalker) reads sequentially through one buffer:
// skipping forward past a payload seeks, and nothing is read twice. It is
// not safe for concurrent use.
type Walker struct {
	r    *wireReader
	path string
}

// Field is one field of a message met by Walker.Message. For a
// length-delimited field (Type protowire.BytesType), Start is the offset of
// its payload and End the payload's end; for other types Start is the
// offset of the value and End is 0.
type Field struct {
	Num        protowire.Number
	Type       protowire.Type
	Start, End int64

	// The message the field is in, for Value: its end, depth and name.
	msgEnd int64
	depth  int
	what   string
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

// NewBytesWalker returns a Walker over data, a whole model file held in
// memory (mapped, for example) that it does not copy; path names it in
// errors. Value returns views of data.
func NewBytesWalker(data []byte, path string) *Walker {
	r := newBytesReader(data)
	r.startsLike = isModelField
	return &Walker{r: &r, path: path}
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
		fd := Field{Num: f.num, Type: f.typ, Start: w.r.pos(), End: f.end, msgEnd: end, depth: depth, what: what}
		return fn(fd)
	})
}

// Value consumes the value of field f, whose tag Message has just read, and
// returns its bytes as the file holds them: a length-delimited field's
// payload, a varint's or a fixed-width value's bytes, or a group's fields
// and end tag (a group is checked as Message skips it). It needs a Walker
// over bytes (NewBytesWalker): the slice is a view of its data.
func (w *Walker) Value(f Field) ([]byte, error) {
	r := w.r
	if r.src != nil {
		return nil, errors.New("onnx: Walker.Value needs a Walker over bytes")
	}
	start := r.pos()
	if err := r.skip(field{num: f.Num, typ: f.Type, end: f.End}, f.msgEnd, f.depth, f.what); err != nil {
		return nil, err
	}
	return r.buf[start:r.pos():r.pos()], nil
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
		return dst, r.unusedType(field{num: f.Num, typ: f.Type, tag: r.pos()})
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
	what := ""
	if w.r.src == nil {
		what = sniff(w.r.buf[:min(len(w.r.buf), sniffSize)], w.r.ok)
	} else {
		what = sniffFile(w.r.src, w.r.ok)
	}
	if what != "" {
		fe.Truncated, fe.Offset, fe.Reason = false, -1, what
	}
	return fe
}

// NoGraph returns the error for a model file without a graph.
func (w *Walker) NoGraph() error {
	return w.Error(&wireError{offset: -1, reason: "it has no graph"})
}

// WireField is one field of a protobuf message held in memory, as Fields
// meets it. Offsets are of the message's bytes b: b[Tag:End] is the whole
// field, b[Start:End] its value as stored.
type WireField struct {
	Num  protowire.Number
	Type protowire.Type
	// Value is the value of a varint, fixed32 or fixed64 field.
	Value uint64
	// Payload is the payload of a length-delimited field, b[Start:End];
	// nil for other types.
	Payload []byte
	// Tag, Start and End are the offsets of the field's tag, of its value
	// (a length-delimited field's payload) and of the byte after it.
	Tag, Start, End int
}

// Fields calls fn for each field of the protobuf message b, in order,
// until fn returns false. It reads b with the Walker's rules (field
// numbers, varints, lengths), for messages already in memory that are
// taken apart one level at a time and copied, as package modelio does; like
// Walker.AppendField it refuses a protobuf group, which no ONNX message
// uses. The offsets its errors give are of b.
func Fields(b []byte, fn func(WireField) bool) error {
	const what = "a message"
	r := newBytesReader(b)
	r.sawTag = true // no first field to tell a model by
	end := r.size
	for r.r < r.w { // over bytes, an offset is an index of buf
		f, err := r.next(end, what)
		if err != nil {
			return err
		}
		wf := WireField{Num: f.num, Type: f.typ, Tag: int(f.tag), Start: r.r}
		switch f.typ {
		case protowire.VarintType:
			if wf.Value, err = r.varint(end, label{what: what, num: f.num, kind: fieldLabel}); err != nil {
				return err
			}
		case protowire.BytesType:
			wf.Payload = b[wf.Start:f.end:f.end]
			r.r = int(f.end)
		case protowire.Fixed32Type, protowire.Fixed64Type:
			if err := r.skip(f, end, 0, what); err != nil {
				return err
			}
			if f.typ == protowire.Fixed32Type {
				v, _ := protowire.ConsumeFixed32(b[wf.Start:])
				wf.Value = uint64(v)
			} else {
				wf.Value, _ = protowire.ConsumeFixed64(b[wf.Start:])
			}
		default:
			return r.unusedType(f)
		}
		wf.End = r.r
		if !fn(wf) {
			return nil
		}
	}
	return nil
}

// PackedVarints calls fn, when not nil, for each varint of b, the payload
// of a packed repeated integer field, and reports whether b is a whole
// number of valid varints; fn has seen the values before a malformed one.
func PackedVarints(b []byte, fn func(uint64)) bool {
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return false
		}
		if fn != nil {
			fn(v)
		}
		b = b[n:]
	}
	return true
}
