package onnx

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// FuzzReadMetadata feeds arbitrary bytes to the streaming reader. It must
// never panic, must fail with a one-line *FormatError, and whenever both it
// and proto.Unmarshal accept the input they must agree on the graph's nodes,
// inputs and outputs. The seed corpus is every file in testdata/models.
func FuzzReadMetadata(f *testing.F) {
	for _, b := range bundledModels(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decode(bytes.NewReader(data), int64(len(data)), "fuzz.onnx")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		var full onnxpb.ModelProto
		if proto.Unmarshal(data, &full) != nil {
			return // invalid UTF-8 and the like, which ReadMetadata tolerates
		}
		var names, ops []string
		for _, n := range full.GetGraph().GetNode() {
			names = append(names, n.GetName())
			ops = append(ops, n.GetOpType())
		}
		var gotNames, gotOps []string
		for _, n := range m.Nodes {
			gotNames = append(gotNames, n.Name)
			gotOps = append(gotOps, n.OpType)
		}
		if !reflect.DeepEqual(gotNames, names) || !reflect.DeepEqual(gotOps, ops) {
			t.Fatalf("nodes %q %q, proto.Unmarshal gives %q %q", gotNames, gotOps, names, ops)
		}
		if m.IRVersion != full.GetIrVersion() || m.GraphName != full.GetGraph().GetName() {
			t.Fatalf("ir %d graph %q, proto.Unmarshal gives %d %q", m.IRVersion, m.GraphName, full.GetIrVersion(), full.GetGraph().GetName())
		}
		if len(m.Outputs) != len(full.GetGraph().GetOutput()) {
			t.Fatalf("%d outputs, proto.Unmarshal gives %d", len(m.Outputs), len(full.GetGraph().GetOutput()))
		}
	})
}
