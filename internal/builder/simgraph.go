package builder

import (
	"strings"

	"github.com/trtbuild/trtbuild/internal/onnx"
)

// simGraph returns what the simulated builder needs besides the node names to time the graph
// TensorRT would: each main-graph node's op type (in the order of NodeNames), and the model's
// inputs as text ("images:float32[1x3x224x224]"), part of every simulated layer's signature.
func simGraph(m *onnx.Model) (ops []string, inputs string) {
	ops = make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		ops[i] = n.OpType
	}
	var b strings.Builder
	for i, in := range m.Inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(in.Name)
		b.WriteByte(':')
		b.WriteString(in.ElemType.String())
		b.WriteByte('[')
		for j, d := range in.Shape {
			if j > 0 {
				b.WriteByte('x')
			}
			b.WriteString(d.String())
		}
		b.WriteByte(']')
	}
	return ops, b.String()
}
