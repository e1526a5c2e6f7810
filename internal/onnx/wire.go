package onnx

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Limits that keep a damaged or hostile file from costing more than a small,
// fixed amount of memory and time.
const (
	// MaxDepth bounds the nesting of messages, and of protobuf groups
	// within them, for the readers of a model's wire format that walk it
	// with a Walker: ReadMetadata (inspect, preflight), the build key's
	// hasher in package buildkey, and modelio's Load for the levels it
	// reads from the file (it takes subgraphs apart in memory with Fields,
	// one level at a time, under protobuf's own limit). The model is level
	// 0, its graph level 1, a node 2, an attribute 3 and a subgraph in it
	// 4: each subgraph adds three levels. It is the default recursion limit
	// of the C++ protobuf parser that TensorRT and the onnx Python package
	// use, so no model they can load is refused.
	MaxDepth = 100
	// maxString bounds one string field that ReadMetadata keeps (names, op
	// types, domains, dimension names, external data keys and values).
	// Strings it does not keep, such as doc_string, are skipped unread.
	maxString = 1 << 20
	// bufSize is the read buffer. Payloads larger than what is buffered are
	// skipped with a seek.
	bufSize = 64 << 10
	// seekReadSize is the first read after a seek. Reads double from there
	// up to bufSize while the reading stays sequential, so that hopping from
	// one tensor header to the next reads little more than the headers.
	seekReadSize = 4 << 10
)

// wireReader reads protobuf wire data from a file through a buffer, keeps
// track of the absolute offset and skips large fields by seeking. It checks
// every length against the file's size before trusting it. A wireReader
// over bytes in memory (newBytesReader) has no src: all of the data is in
// buf, so it never reads nor seeks, and a value's bytes are buf's.
type wireReader struct {
	src  io.ReadSeeker // nil over bytes in memory
	size int64         // file size
	buf  []byte
	r, w int   // unread window of buf
	base int64 // file offset of buf[0]
	// ok is set once the file has started like an ONNX model, so that a
	// later end of file is reported as truncation rather than as garbage.
	ok bool
	// startsLike, when set, decides ok from the file's first tag, before
	// the tag's length is checked.
	startsLike func(f field) bool
	sawTag     bool
	// readSize is the size of the next read from src.
	readSize int
}

// wireError is a decoding failure at a byte offset; decode turns it into a
// *FormatError.
type wireError struct {
	offset    int64
	reason    string
	truncated bool
}

// Error returns the reason, which includes the offset.
func (e *wireError) Error() string { return e.reason }

// label names what is being read, for error messages. It is a value, not a
// string, so that the text is only built when an error needs it.
type label struct {
	what string
	num  protowire.Number
	kind uint8
}

// Kinds of label.
const (
	plainLabel    uint8 = iota // what is the whole text
	tagLabel                   // a field tag of the message what
	groupTagLabel              // a field tag in a group of the message what
	fieldLabel                 // field num of the message what
)

// text returns a label whose text is s.
func text(s string) label { return label{what: s} }

// String returns the label's text.
func (l label) String() string {
	switch l.kind {
	case tagLabel:
		return "a field tag of " + l.what
	case groupTagLabel:
		return "a group tag in " + l.what
	case fieldLabel:
		return fieldName(l.what, l.num)
	}
	return l.what
}

func newWireReader(src io.ReadSeeker, size int64) *wireReader {
	return &wireReader{src: src, size: size, buf: make([]byte, bufSize), readSize: seekReadSize}
}

// newBytesReader returns a wireReader over b, which it does not copy.
func newBytesReader(b []byte) wireReader {
	return wireReader{size: int64(len(b)), buf: b, w: len(b)}
}

// pos returns the absolute offset of the next unread byte.
func (r *wireReader) pos() int64 { return r.base + int64(r.r) }

// window returns the unread bytes of the buffer that lie before end.
func (r *wireReader) window(end int64) []byte {
	if left := end - r.pos(); left < int64(r.w-r.r) {
		return r.buf[r.r : r.r+int(max(left, 0))]
	}
	return r.buf[r.r:r.w]
}

// corrupt returns an error for malformed data at offset.
func (r *wireReader) corrupt(offset int64, format string, args ...any) error {
	return &wireError{offset: offset, reason: fmt.Sprintf(format, args...) + fmt.Sprintf(" at byte %d", offset)}
}

// eof returns the error for data that runs past the end of the file.
func (r *wireReader) eof(offset int64, what label) error {
	reason := fmt.Sprintf("the file ends inside %s at byte %d", what, offset)
	return &wireError{offset: offset, reason: reason, truncated: r.ok}
}

// eofLength returns the error for a length prefix that claims more bytes than
// the file has left.
func (r *wireReader) eofLength(offset int64, what label, claimed uint64, left int64) error {
	reason := fmt.Sprintf("%s at byte %d claims %d bytes but the file has %d left", what, offset, claimed, left)
	return &wireError{offset: offset, reason: reason, truncated: r.ok}
}

// fill makes at least one unread byte available, reading from the file.
// It returns io.EOF at the end of the file.
func (r *wireReader) fill() error {
	if r.r < r.w {
		return nil
	}
	if r.src == nil {
		return io.EOF // over bytes: buf holds all there is
	}
	r.base += int64(r.r)
	r.r, r.w = 0, 0
	n, err := r.src.Read(r.buf[:r.readSize])
	r.w = n
	r.readSize = min(2*r.readSize, bufSize)
	if n > 0 {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.EOF
	}
	return err
}

// varint reads a base-128 varint that must end before end.
func (r *wireReader) varint(end int64, what label) (uint64, error) {
	start := r.pos()
	// Fast path: the whole varint is in the buffer, before end. Anything
	// else, errors included, is for the loop below.
	if v, n := protowire.ConsumeVarint(r.window(end)); n > 0 {
		r.r += n
		return v, nil
	}
	var v uint64
	for i := 0; ; i++ {
		if r.pos() >= end {
			if end >= r.size {
				return 0, r.eof(start, what)
			}
			return 0, r.corrupt(start, "%s runs past the end of its message", what)
		}
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return 0, r.eof(start, what)
			}
			return 0, err
		}
		b := r.buf[r.r]
		r.r++
		if i == 9 && b > 1 {
			return 0, r.corrupt(start, "invalid varint in %s", what)
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
}

// length reads a length prefix and checks that that many bytes follow before
// end. It returns the absolute end offset of the field's payload.
func (r *wireReader) length(end int64, what label) (int64, error) {
	start := r.pos()
	l, err := r.varint(end, what)
	if err != nil {
		return 0, err
	}
	payload := r.pos()
	if l > uint64(r.size-payload) {
		return 0, r.eofLength(start, what, l, r.size-payload)
	}
	if l > uint64(end-payload) {
		return 0, r.corrupt(start, "%s claims %d bytes but its message has %d left", what, l, end-payload)
	}
	return payload + int64(l), nil
}

// skipTo moves to the absolute offset to, which must not be before pos and
// not past the file's end. Small skips move within the buffer; larger ones
// seek and drop the buffer, so skipped payloads are never read.
func (r *wireReader) skipTo(to int64) error {
	n := to - r.pos()
	if n < 0 || to > r.size {
		return r.corrupt(r.pos(), "bad skip to byte %d", to)
	}
	if n <= int64(r.w-r.r) {
		r.r += int(n)
		return nil
	}
	return r.seek(to)
}

// seek moves the file to the absolute offset to and drops the buffer.
func (r *wireReader) seek(to int64) error {
	if _, err := r.src.Seek(to, io.SeekStart); err != nil {
		return fmt.Errorf("seeking to byte %d: %w", to, err)
	}
	r.base, r.r, r.w = to, 0, 0
	r.readSize = seekReadSize
	return nil
}

// seekBack moves back to the absolute offset to, which must not be after
// pos, for a second pass over data already read.
func (r *wireReader) seekBack(to int64) error {
	if to > r.pos() || to < 0 {
		return r.corrupt(r.pos(), "bad seek back to byte %d", to)
	}
	if to >= r.base {
		r.r = int(to - r.base)
		return nil
	}
	return r.seek(to)
}

// bytes reads the payload [pos, end) into a new slice. The caller has
// bounded end - pos.
func (r *wireReader) bytes(end int64, what string) ([]byte, error) {
	n := end - r.pos()
	if n > maxString {
		return nil, r.corrupt(r.pos(), "%s is %d bytes long, more than the %d this reader accepts", what, n, maxString)
	}
	out := make([]byte, 0, n)
	for int64(len(out)) < n {
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return nil, r.eof(r.pos(), text(what))
			}
			return nil, err
		}
		k := min(int(n)-len(out), r.w-r.r)
		out = append(out, r.buf[r.r:r.r+k]...)
		r.r += k
	}
	return out, nil
}

// str reads a string payload ending at end.
func (r *wireReader) str(end int64, what string) (string, error) {
	b, err := r.bytes(end, what)
	return string(b), err
}

// field is one decoded tag, read at offset tag. For BytesType, end is the
// payload's end.
type field struct {
	num protowire.Number
	typ protowire.Type
	tag int64
	end int64
}

// tag reads a field tag of the message what, which ends at end, and checks
// its field number: 1 to protowire.MaxValidNumber, as protobuf allows (a
// tag with a larger number does not fit the 32 bits the C++ parser reads).
// kind is tagLabel or groupTagLabel.
func (r *wireReader) tag(end int64, what string, kind uint8) (field, error) {
	at := r.pos()
	tag, err := r.varint(end, label{what: what, kind: kind})
	if err != nil {
		return field{}, err
	}
	if !validNumber(tag >> 3) {
		return field{}, r.corrupt(at, "invalid field number %d in %s", tag>>3, what)
	}
	return field{num: protowire.Number(tag >> 3), typ: protowire.Type(tag & 7), tag: at}, nil
}

// validNumber reports whether n is a field number protobuf allows.
func validNumber(n uint64) bool { return n != 0 && n <= uint64(protowire.MaxValidNumber) }

// next reads the tag of the next field of the message what, which ends at
// end, and the length of a length-delimited field.
func (r *wireReader) next(end int64, what string) (field, error) {
	// Fast path: the tag and the length are in the buffer and valid, as in
	// nearly every field. What it cannot take goes the long way, which
	// names what is wrong.
	if r.sawTag {
		b := r.window(end)
		tag, n := protowire.ConsumeVarint(b)
		if n > 0 && validNumber(tag>>3) {
			f := field{num: protowire.Number(tag >> 3), typ: protowire.Type(tag & 7), tag: r.pos()}
			if f.typ != protowire.BytesType {
				r.r += n
				return f, nil
			}
			l, m := protowire.ConsumeVarint(b[n:])
			// end is at most the file's size, so a length within end is
			// within the file.
			if m > 0 && l <= uint64(end-r.pos()-int64(n+m)) {
				f.end = r.pos() + int64(n+m) + int64(l)
				r.r += n + m
				return f, nil
			}
		}
	}
	f, err := r.tag(end, what, tagLabel)
	if err != nil {
		return f, err
	}
	if !r.sawTag {
		r.sawTag = true
		r.ok = r.startsLike != nil && r.startsLike(f)
	}
	if f.typ == protowire.BytesType {
		f.end, err = r.length(end, label{what: what, num: f.num, kind: fieldLabel})
	}
	return f, err
}

// message walks the fields of a message that ends at end. For each field it
// calls fn, which either consumes the value (reading exactly up to f.end for
// BytesType) and returns true, or returns false to have it skipped. depth is
// the message's nesting level.
func (r *wireReader) message(end int64, depth int, what string, fn func(f field) (bool, error)) error {
	if depth > MaxDepth {
		return r.corrupt(r.pos(), "%s is nested more than %d messages deep", what, MaxDepth)
	}
	for r.pos() < end {
		f, err := r.next(end, what)
		if err != nil {
			return err
		}
		handled, err := fn(f)
		if err != nil {
			return err
		}
		if handled {
			if f.typ == protowire.BytesType && r.pos() != f.end {
				return r.corrupt(f.tag, "field %d of %s was not read to its end", f.num, what)
			}
			continue
		}
		if err := r.skip(f, end, depth, what); err != nil {
			return err
		}
	}
	if r.pos() != end {
		return r.corrupt(r.pos(), "%s overruns its length", what)
	}
	return nil
}

// unusedType returns the error for field f, whose wire type no ONNX message
// uses (a group), from a reader that copies fields and cannot skip it.
func (r *wireReader) unusedType(f field) error {
	return r.corrupt(f.tag, "field %d has wire type %d, which no ONNX message uses", f.num, f.typ)
}

// skip moves past the value of field f, which has not been read.
func (r *wireReader) skip(f field, end int64, depth int, what string) error {
	at := r.pos()
	switch f.typ {
	case protowire.VarintType:
		_, err := r.varint(end, label{what: what, num: f.num, kind: fieldLabel})
		return err
	case protowire.Fixed32Type, protowire.Fixed64Type:
		n := int64(4)
		if f.typ == protowire.Fixed64Type {
			n = 8
		}
		if at+n > r.size {
			return r.eof(at, label{what: what, num: f.num, kind: fieldLabel})
		}
		if at+n > end {
			return r.corrupt(at, "field %d of %s runs past the end of its message", f.num, what)
		}
		return r.skipTo(at + n)
	case protowire.BytesType:
		return r.skipTo(f.end)
	case protowire.StartGroupType:
		return r.skipGroup(f.num, end, depth+1, what)
	default:
		return r.corrupt(at, "invalid wire type %d for field %d of %s", f.typ, f.num, what)
	}
}

// skipGroup skips a deprecated protobuf group up to its end tag.
func (r *wireReader) skipGroup(num protowire.Number, end int64, depth int, what string) error {
	if depth > MaxDepth {
		return r.corrupt(r.pos(), "groups in %s are nested more than %d deep", what, MaxDepth)
	}
	for {
		if r.pos() >= end {
			return r.corrupt(r.pos(), "group %d of %s has no end", num, what)
		}
		f, err := r.tag(end, what, groupTagLabel)
		if err != nil {
			return err
		}
		if f.typ == protowire.EndGroupType {
			if f.num != num {
				return r.corrupt(f.tag, "group %d of %s ends with the tag of group %d", num, what, f.num)
			}
			return nil
		}
		if f.typ == protowire.BytesType {
			if f.end, err = r.length(end, label{what: what, num: f.num, kind: fieldLabel}); err != nil {
				return err
			}
		}
		if err := r.skip(f, end, depth, what); err != nil {
			return err
		}
	}
}

// fieldNames names the fields of the top-level messages in errors.
var fieldNames = map[string]map[protowire.Number]string{
	"the model": {FieldModelProducerName: "producer_name", FieldModelProducerVersion: "producer_version",
		FieldModelDomain: "domain", FieldModelDocString: "doc_string", FieldModelGraph: "the graph",
		FieldModelOpsetImport: "an opset_import", FieldModelMetadataProps: "metadata_props",
		FieldModelTrainingInfo: "training_info", FieldModelFunctions: "a function"},
	"the graph": {FieldGraphNode: "a node", FieldGraphName: "the graph name", FieldGraphInitializer: "an initializer",
		FieldGraphDocString: "doc_string", FieldGraphInput: "a graph input", FieldGraphOutput: "a graph output",
		FieldGraphValueInfo: "value_info", FieldGraphSparseInitializer: "a sparse initializer"},
}

// fieldName describes field num of the message what for errors.
func fieldName(what string, num protowire.Number) string {
	if name, ok := fieldNames[what][num]; ok {
		return fmt.Sprintf("%s (field %d of %s)", name, num, what)
	}
	return fmt.Sprintf("field %d of %s", num, what)
}
