package onnx

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// maxProtoSize is the largest model file proto.Unmarshal is asked to decode:
// protobuf messages are limited to 2 GiB, which is why larger ONNX models
// keep their weights in external data files.
const maxProtoSize = 2<<30 - 1

// ReadModel reads the whole ONNX model at path, tensor data included, into
// the generated protobuf types, for code that changes a model and writes it
// back with proto.Marshal. Fields unknown to onnxpb are kept and written back.
// External data files are not read; their references stay as they are.
//
// The file is first checked with ReadMetadata's decoder, so damaged files
// get the same one-line errors, and no field can make the decoder allocate
// more than the file's size.
func ReadModel(path string) (*onnxpb.ModelProto, error) {
	f, st, err := OpenModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > maxProtoSize {
		return nil, &FormatError{Path: path, Offset: -1,
			Reason: fmt.Sprintf("it is %d bytes, more than the 2 GiB a protobuf message may hold", st.Size())}
	}
	if _, err := decode(f, st.Size(), path); err != nil {
		return nil, err
	}
	// Read the file already open and checked, not the path again.
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("reading model %s: %w", path, err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, &FormatError{Path: path, Offset: -1, Reason: err.Error()}
	}
	return &m, nil
}
