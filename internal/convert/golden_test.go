package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

// dumpModel prints a model's graphs: types of inputs, outputs,
// initializers and value_info, and every node with the attributes that
// carry types.
func dumpModel(m *onnxpb.ModelProto) string {
	var b strings.Builder
	dumpGraph(&b, m.Graph, "")
	return b.String()
}

func typeText(tp *onnxpb.TypeProto) string {
	t := string(typeOf(tp))
	if tt, ok := tp.GetValue().(*onnxpb.TypeProto_TensorType); ok && tt.TensorType.Shape != nil {
		var dims []string
		for _, d := range tt.TensorType.Shape.Dim {
			switch v := d.Value.(type) {
			case *onnxpb.TensorShapeProto_Dimension_DimValue:
				dims = append(dims, fmt.Sprint(v.DimValue))
			case *onnxpb.TensorShapeProto_Dimension_DimParam:
				dims = append(dims, v.DimParam)
			default:
				dims = append(dims, "?")
			}
		}
		t += "[" + strings.Join(dims, ",") + "]"
	}
	return t
}

func tensorText(t *onnxpb.TensorProto) string {
	return fmt.Sprintf("%s%v", tensorType(t.GetDataType()), t.Dims)
}

func dumpGraph(b *strings.Builder, g *onnxpb.GraphProto, indent string) {
	fmt.Fprintf(b, "%sgraph %s\n", indent, g.GetName())
	in := indent + "  "
	for _, vi := range g.Input {
		fmt.Fprintf(b, "%sinput %s: %s\n", in, vi.GetName(), typeText(vi.Type))
	}
	for _, t := range g.Initializer {
		fmt.Fprintf(b, "%sinitializer %s: %s\n", in, t.GetName(), tensorText(t))
	}
	for _, n := range g.Node {
		op := n.GetOpType()
		if n.GetDomain() != "" {
			op = n.GetDomain() + "." + op
		}
		fmt.Fprintf(b, "%snode %s %q (%s) -> (%s)", in, op, n.GetName(), strings.Join(n.Input, ", "), strings.Join(n.Output, ", "))
		var subs []*onnxpb.AttributeProto
		for _, at := range n.Attribute {
			switch {
			case at.G != nil:
				subs = append(subs, at)
			case at.T != nil:
				fmt.Fprintf(b, " %s=%s", at.GetName(), tensorText(at.T))
			case at.GetName() == "to" || at.GetName() == "dtype" || at.GetName() == "output_datatype":
				fmt.Fprintf(b, " %s=%s", at.GetName(), elemName(int32(at.GetI())))
			case at.GetType() == onnxpb.AttributeProto_FLOAT:
				fmt.Fprintf(b, " %s=float:%g", at.GetName(), at.GetF())
			case at.GetType() == onnxpb.AttributeProto_FLOATS:
				fmt.Fprintf(b, " %s=floats:%v", at.GetName(), at.Floats)
			}
		}
		b.WriteString("\n")
		for _, at := range subs {
			fmt.Fprintf(b, "%s  %s:\n", in, at.GetName())
			dumpGraph(b, at.G, in+"    ")
		}
	}
	for _, vi := range g.Output {
		fmt.Fprintf(b, "%soutput %s: %s\n", in, vi.GetName(), typeText(vi.Type))
	}
	for _, vi := range g.ValueInfo {
		fmt.Fprintf(b, "%svalue_info %s: %s\n", in, vi.GetName(), typeText(vi.Type))
	}
}

// goldenCase is a model, conversion options and what must come out.
type goldenCase struct {
	name  string
	model func() *onnxpb.ModelProto
	opts  Options
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"mlp", mlpModel, Options{Target: FP16}},
		{"mlp_bf16", mlpModel, Options{Target: BF16}},
		{"mlp_convert_io", mlpModel, Options{Target: FP16, ConvertIO: true}},
		{"mlp_keep_flags", mlpModel, Options{Target: FP16, KeepOps: []string{"Relu"}, KeepNodes: []string{"mm2"}}},
		{"mlp_no_default_list", mlpModel, Options{Target: FP16, NoDefaultKeepOps: true}},
		{"cast_chain", castChainModel, Options{Target: FP16}},
		{"cast_chain_convert_io", castChainModel, Options{Target: FP16, ConvertIO: true}},
		{"sensitive", sensitiveModel, Options{Target: FP16}},
		{"overflow", overflowModel, Options{Target: FP16}},
		{"overflow_bf16", overflowModel, Options{Target: BF16}},
		{"if", ifModel, Options{Target: FP16}},
		{"if_kept", ifModel, Options{Target: FP16, KeepNodes: []string{"branch"}}},
		{"loop", loopModel, Options{Target: FP16}},
		{"loop_bf16", loopModel, Options{Target: BF16}},
		{"scan", scanModel, Options{Target: FP16}},
		{"constants", constantsModel, Options{Target: FP16}},
		{"custom_op", func() *onnxpb.ModelProto { return customOpModel(true) }, Options{Target: FP16}},
		{"conv", convModel, Options{Target: FP16}},
		{"conv_bf16", convModel, Options{Target: BF16}},
		{"mixed_readers", mixedReadersModel, Options{Target: FP16}},
		{"mixed_readers_convert_io", mixedReadersModel, Options{Target: FP16, ConvertIO: true}},
		{"ir3", ir3Model, Options{Target: FP16}},
		{"float_data", floatDataModel, Options{Target: FP16}},
		{"half_io", halfWithFloatIOModel, Options{Target: FP16}},
		{"half_io_convert_io", halfWithFloatIOModel, Options{Target: FP16, ConvertIO: true}},
		{"half_island", halfIslandModel, Options{Target: FP16}},
	}
}

// modelName is the file a case's input model is kept in: cases that share
// a model share the file.
func modelName(c goldenCase) string {
	for _, suffix := range []string{"_bf16", "_convert_io", "_keep_flags", "_no_default_list", "_kept"} {
		if name, ok := strings.CutSuffix(c.name, suffix); ok {
			return name
		}
	}
	return c.name
}

func summaryGolden(t *testing.T, s Summary) []byte {
	t.Helper()
	s.Files = nil
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Check(t, path, got)
}

// TestGolden converts each case in memory and compares the converted graph
// and the summary with testdata/golden. It also keeps each case's input
// model in testdata/models, for the numeric check script.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			orig := c.model()
			if goldenfile.Updating() {
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(orig)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join("testdata", "models"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("testdata", "models", modelName(c)+".onnx"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := fromProto(proto.Clone(orig).(*onnxpb.ModelProto))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Convert(m, c.opts)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			conv, err := m.Decode()
			if err != nil {
				t.Fatal(err)
			}
			got := "== summary\n" + string(summaryGolden(t, s)) + "== converted graph\n" + dumpModel(conv)
			checkGolden(t, filepath.Join("testdata", "golden", c.name+".txt"), []byte(got))
		})
	}
}
