package onnx

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotONNX is matched (with errors.Is) by the errors ReadMetadata returns
// for files that are not ONNX models or are damaged.
var ErrNotONNX = errors.New("not an ONNX model")

// ErrTruncated is matched (with errors.Is) by the errors returned for ONNX
// files that end early, as an interrupted download or copy leaves them.
var ErrTruncated = errors.New("truncated ONNX model")

// FormatError says why a file could not be read as an ONNX model. Its
// message is one line that names the file, the problem and the fix.
type FormatError struct {
	// Path is the file as given by the caller.
	Path string
	// Truncated is true when the file is an ONNX model that ends early.
	Truncated bool
	// Offset is the byte offset where the problem was found (-1: none).
	Offset int64
	// Reason describes the problem, with its offset when there is one ("it
	// is a ZIP archive ...", "the graph ... at byte 35 claims ...").
	Reason string
}

// Error implements error.
func (e *FormatError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("%s is truncated (%s); download or export the model again", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s is not an ONNX model (%s); pass the .onnx file your framework exported", e.Path, e.Reason)
}

// Is reports whether target is ErrNotONNX or, for a truncated file,
// ErrTruncated.
func (e *FormatError) Is(target error) bool {
	if target == ErrTruncated {
		return e.Truncated
	}
	return target == ErrNotONNX
}

// signatures are the starts of files often passed by mistake. A file that
// starts like one of them is reported as that format instead of with the
// protobuf decoder's complaint.
var signatures = []struct {
	offset int
	magic  []byte
	what   string
}{
	{0, []byte("\x89PNG\r\n\x1a\n"), "it is a PNG image"},
	{0, []byte("\xff\xd8\xff"), "it is a JPEG image"},
	{0, []byte("PK\x03\x04"), "it is a ZIP archive, like a PyTorch checkpoint; export the model with torch.onnx.export"},
	{0, []byte("\x1f\x8b"), "it is gzip-compressed; decompress it first"},
	{0, []byte("\x28\xb5\x2f\xfd"), "it is zstd-compressed; decompress it first"},
	{0, []byte("\x7fELF"), "it is an ELF executable or library"},
	{0, []byte("%PDF"), "it is a PDF document"},
	{0, []byte("\x89HDF\r\n\x1a\n"), "it is an HDF5 file, like a Keras .h5 model; convert it with tf2onnx"},
	{0, []byte("version https://git-lfs.github.com/spec/"), "it is a Git LFS pointer; fetch the real file with git lfs pull"},
	{0, []byte("ir_version:"), "it is an ONNX model in protobuf text format; convert it to the binary format"},
	{4, []byte("TFL3"), "it is a TensorFlow Lite model; convert it with tf2onnx"},
}

// sniff returns a description of head's format when it is one that is often
// mistaken for ONNX, or "" otherwise. A file that began like an ONNX model
// (onnxStart) is never called a text file.
func sniff(head []byte, onnxStart bool) string {
	for _, s := range signatures {
		if len(head) >= s.offset+len(s.magic) && bytes.Equal(head[s.offset:s.offset+len(s.magic)], s.magic) {
			return s.what
		}
	}
	// safetensors: an 8-byte little-endian header length, then a JSON object.
	if len(head) >= 10 && head[8] == '{' && head[9] == '"' && head[6] == 0 && head[7] == 0 {
		return "it is a safetensors file of weights, not a model graph"
	}
	if !onnxStart && len(head) > 0 && isText(head) {
		return "it is a text file"
	}
	return ""
}

// isText reports whether b looks like UTF-8 text: valid UTF-8 (a character
// cut off at the end of b is allowed) without control characters other than
// tab, CR and LF.
func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f {
			return false
		}
	}
	for cut := 0; cut < utf8.UTFMax && cut < len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return true
		}
	}
	return false
}
