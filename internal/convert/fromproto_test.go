package convert

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// fromProto wraps an in-memory model, all of whose data is inline, as modelio reads models:
// it encodes it and parses it back.
func fromProto(p *onnxpb.ModelProto) (*modelio.Model, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the model: %w", err)
	}
	return modelio.Parse(b)
}
