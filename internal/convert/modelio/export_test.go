package modelio

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// FromProto wraps an in-memory model, all of whose data is inline: it
// encodes it and reads it back.
func FromProto(p *onnxpb.ModelProto) (*Model, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the model: %w", err)
	}
	return Parse(b)
}
