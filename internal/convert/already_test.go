package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

const f16 = onnxpb.TensorProto_FLOAT16

// halfWithFloatIOModel is a model already in float16 inside, with a
// float32 input and output and Casts at the boundaries, as exporters and
// earlier conversions that keep the I/O types write it.
func halfWithFloatIOModel() *onnxpb.ModelProto {
	return tm.Model(graph("half_io",
		[]*onnxpb.NodeProto{
			tm.Node("in_cast", "Cast", []string{"x"}, []string{"xh"}, tm.AttrInt("to", int64(f16))),
			tm.Node("mm", "MatMul", []string{"xh", "W"}, []string{"h"}),
			tm.Node("relu", "Relu", []string{"h"}, []string{"hr"}),
			tm.Node("out_cast", "Cast", []string{"hr"}, []string{"y"}, tm.AttrInt("to", int64(f32))),
		},
		[]*onnxpb.TensorProto{tm.Halves("W", []int64{8, 4}, tm.NewRand(1).Floats(32, 0.5))},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, "batch", 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, "batch", 4)}))
}

// halfIslandModel is a float32 model with a float16 part in the middle:
// a Cast to float16, a float16 Relu, and a Cast back to float32 that float32
// nodes read, plus a Cast of float32 to float32.
func halfIslandModel() *onnxpb.ModelProto {
	return tm.Model(graph("half_island",
		[]*onnxpb.NodeProto{
			tm.Node("mm", "MatMul", []string{"x", "W"}, []string{"h"}),
			tm.Node("to_half", "Cast", []string{"h"}, []string{"hh"}, tm.AttrInt("to", int64(f16))),
			tm.Node("relu", "Relu", []string{"hh"}, []string{"rh"}),
			tm.Node("to_float", "Cast", []string{"rh"}, []string{"r"}, tm.AttrInt("to", int64(f32))),
			tm.Node("same", "Cast", []string{"r"}, []string{"r2"}, tm.AttrInt("to", int64(f32))),
			tm.Node("add", "Add", []string{"r2", "b"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{weights("W", 1, 0.5, 8, 4), weights("b", 2, 0.1, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, "batch", 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, "batch", 4)}))
}

// checkCasts fails the test for a Cast of a type to itself or a Cast that
// reads another Cast's output, in every graph of the converted model m.
func checkCasts(t *testing.T, m *onnxpb.ModelProto, target Target) {
	t.Helper()
	mm, err := fromProto(m)
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyse(mm, target, opschema.Default())
	if err != nil {
		t.Fatalf("analysing the converted model: %v", err)
	}
	for _, gc := range a.graphs {
		for n := gc.n0; n < gc.n0+gc.nn; n++ {
			ins, outs := a.ins(n), a.outs(n)
			if a.opOf(n) != "Cast" || len(ins) == 0 || ins[0] < 0 {
				continue
			}
			if a.vtyp(ins[0]) == a.vtyp(outs[0]) {
				t.Errorf("%s: %s casts %s to itself", a.where(gc), a.label(n), a.vtyp(ins[0]))
			}
			if in := a.values[ins[0]]; in.kind == kindNode && a.opOf(in.src) == "Cast" {
				t.Errorf("%s: %s reads the output of %s: a Cast-Cast pair", a.where(gc), a.label(n), a.label(in.src))
			}
		}
	}
}

func TestAlreadyConverted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		model *onnxpb.ModelProto
	}{
		{"float16 with float32 I/O", halfWithFloatIOModel()},
		{"float16 throughout", func() *onnxpb.ModelProto {
			m := halfWithFloatIOModel()
			g := m.Graph
			g.Node = g.Node[1:3]
			g.Node[0].Input[0], g.Node[1].Output[0] = "x", "y"
			g.Input[0], g.Output[0] = tm.Value("x", f16, "batch", 8), tm.Value("y", f16, "batch", 4)
			return m
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, s, err := convertProto(t, proto.Clone(tt.model).(*onnxpb.ModelProto), Options{Target: FP16})
			if err != nil {
				t.Fatal(err)
			}
			if !s.AlreadyTarget {
				t.Errorf("AlreadyTarget is false: %+v", s)
			}
			if !proto.Equal(got, tt.model) {
				t.Errorf("the model changed:\n%s", dumpModel(got))
			}
			if len(s.InsertedCasts)+len(s.RetargetedCasts) > 0 {
				t.Errorf("casts inserted or changed: %+v %+v", s.InsertedCasts, s.RetargetedCasts)
			}
		})
	}
	// A model that only needs converting is not "already" converted, nor
	// is one whose float32 nodes all stay.
	for _, m := range []*onnxpb.ModelProto{mlpModel(), halfIslandModel()} {
		if _, s, err := convertProto(t, m, Options{Target: FP16}); err != nil || s.AlreadyTarget {
			t.Errorf("%s: AlreadyTarget %v, err %v", m.Graph.Name, s.AlreadyTarget, err)
		}
	}
	soft := tm.Model(graph("soft", []*onnxpb.NodeProto{tm.Node("s", "Softmax", []string{"x"}, []string{"y"})}, nil,
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 4)}, []*onnxpb.ValueInfoProto{tm.Value("y", f32, 4)}))
	if _, s, err := convertProto(t, soft, Options{Target: FP16, ConvertIO: true}); err != nil || s.AlreadyTarget {
		t.Errorf("softmax only: AlreadyTarget %v, err %v", s.AlreadyTarget, err)
	}
}

// TestConvertFileOfConvertedModel checks that the build worker's
// conversion hands back the model itself when there is nothing to do.
func TestConvertFileOfConvertedModel(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "half.onnx")
	b, err := tm.Marshal(halfWithFloatIOModel())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	got, s, err := ConvertFile(in, out, Options{Target: FP16})
	if err != nil || got != in || !s.AlreadyTarget {
		t.Fatalf("ConvertFile = %q, %v, %v; want the input back", got, s.AlreadyTarget, err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("ConvertFile wrote %v", entries)
	}
}

// TestNoSelfCasts converts models with Casts around a float16 part and
// every golden case, and checks that no Cast casts a type to itself and no
// Cast reads another Cast.
func TestNoSelfCasts(t *testing.T) {
	m, _, err := convertProto(t, halfIslandModel(), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	checkCasts(t, m, FP16)
	if n := findNode(m.Graph, "to_float"); n == nil || n.GetOpType() != "Identity" {
		t.Errorf("to_float should become an Identity: %v", n)
	}
	if n := findNode(m.Graph, "same"); n == nil || n.GetOpType() != "Identity" {
		t.Errorf("same should become an Identity: %v", n)
	}
	if n := findNode(m.Graph, "to_half"); n == nil || n.GetOpType() != "Identity" {
		t.Errorf("to_half, which reads the converted MatMul, should become an Identity: %v", n)
	}
	if t.Failed() {
		t.Logf("converted:\n%s", dumpModel(m))
	}
	m, _, err = convertProto(t, halfWithFloatIOModel(), Options{Target: FP16, ConvertIO: true})
	if err != nil {
		t.Fatal(err)
	}
	checkCasts(t, m, FP16)
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			m, _, err := convertProto(t, c.model(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkCasts(t, m, c.opts.Target)
		})
	}
}

// TestNewerOpsetAdvice checks that a bfloat16 conversion below opset 22
// says which nodes stay in float32 for want of a bfloat16 version, and the
// exact command that upgrades this model file's opset.
func TestNewerOpsetAdvice(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "net.onnx")
	b, err := tm.Marshal(convModel())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(in, Options{Target: BF16})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"opset 17 has no bfloat16 version of Conv (1 node), GlobalAveragePool (1 node), so 2 nodes stay in float32",
		"export the model at opset 22 or newer",
		`onnx.save(vc.convert_version(onnx.load('net.onnx'), 22), 'net.opset22.onnx')`,
		"and convert net.opset22.onnx",
	}
	found := false
	for _, w := range s.Warnings {
		if strings.HasPrefix(w, "opset 17") {
			found = true
			for _, x := range want {
				if !strings.Contains(w, x) {
					t.Errorf("warning %q lacks %q", w, x)
				}
			}
		}
	}
	if !found {
		t.Errorf("no opset advice in %q", s.Warnings)
	}
}

// TestKeep checks Options.Keep, which mixes node names and operator types.
func TestKeep(t *testing.T) {
	m, s, err := convertProto(t, mlpModel(), Options{Target: FP16, Keep: []string{"Relu", " mm2 "}})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	for _, k := range s.KeptNodes {
		kept[k.Name] = k.Reason + ": " + k.Detail
	}
	want := map[string]string{
		"relu":    "keep-fp32: operator named in --keep-fp32",
		"mm2":     "keep-fp32: node named in --keep-fp32",
		"softmax": ReasonDefault + ": " + DefaultKeepReason("Softmax"),
	}
	for name, w := range want {
		if kept[name] != w {
			t.Errorf("node %s: kept %q, want %q", name, kept[name], w)
		}
	}
	if len(kept) != len(want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if n := findNode(m.Graph, "mm1"); n == nil {
		t.Fatal("mm1 is gone")
	}
	checkCasts(t, m, FP16)
	for _, bad := range [][]string{{"nope"}, {"relu2", "Relu"}, {"matmul"}} {
		_, _, err := convertProto(t, mlpModel(), Options{Target: FP16, Keep: bad})
		if err == nil || !strings.Contains(err.Error(), "--keep-fp32: \""+bad[0]+"\" is neither the name of a node of the model nor an operator type") {
			t.Errorf("Keep %q: err = %v", bad, err)
		}
	}
	// An ONNX operator the model does not use is accepted, as with KeepOps.
	if _, _, err := convertProto(t, mlpModel(), Options{Target: FP16, Keep: []string{"LayerNormalization"}}); err != nil {
		t.Errorf("Keep LayerNormalization: %v", err)
	}
}
