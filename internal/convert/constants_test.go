package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// manyConstantsModel: n Constant nodes in a chain of Muls, their values
// alternately in raw_data and float_data, one beyond float16's range (its
// reader stays float32), plus a ConstantOfShape with a value and a Loop
// whose body has Constants too. domain is the domain of the Constant
// nodes: "" or its synonym "ai.onnx".
func manyConstantsModel(n int, domain string) *onnxpb.ModelProto {
	r := tm.NewRand(13)
	var nodes []*onnxpb.NodeProto
	x := "x"
	for i := 0; i < n; i++ {
		vals := r.Floats(4, 8)
		if i == n/2 {
			vals[1] = 1e5
		}
		t := tm.Floats(fmt.Sprintf("v%d", i), []int64{4}, vals)
		if i%2 == 1 {
			t.RawData, t.FloatData = nil, vals
		}
		c := tm.Node(fmt.Sprintf("const%d", i), "Constant", nil, []string{fmt.Sprintf("c%d", i)}, tm.AttrTensor("value", t))
		c.Domain = domain
		y := fmt.Sprintf("y%d", i)
		nodes = append(nodes, c, tm.Node(fmt.Sprintf("mul%d", i), "Mul", []string{x, c.Output[0]}, []string{y}))
		x = y
	}
	shape := tm.Node("shape", "Constant", nil, []string{"shape"}, tm.AttrTensor("value", tm.Int64s("", []int64{1}, 4)))
	fill := tm.Node("fill", "ConstantOfShape", []string{"shape"}, []string{"filled"}, tm.AttrTensor("value", tm.Floats("", []int64{1}, []float32{0.1})))
	fill.Domain, shape.Domain = domain, domain
	bc := tm.Node("bc", "Constant", nil, []string{"bc"}, tm.AttrTensor("value", tm.Floats("bv", []int64{4}, []float32{1, 2, 3, 4})))
	bc.Domain = domain
	body := graph("body", []*onnxpb.NodeProto{
		bc,
		tm.Node("bm", "Mul", []string{"bx", "bc"}, []string{"by"}),
		tm.Node("bi", "Identity", []string{"cond_in"}, []string{"cond_out"}),
	}, nil,
		[]*onnxpb.ValueInfoProto{tm.Value("iter", i64), tm.Value("cond_in", bool_), tm.Value("bx", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("cond_out", bool_), tm.Value("by", f32, 4)})
	nodes = append(nodes, shape, fill,
		tm.Node("addfill", "Add", []string{x, "filled"}, []string{"z"}),
		tm.Node("loop", "Loop", []string{"M", "cond", "z"}, []string{"y"}, tm.AttrGraph("body", body)))
	return tm.Model(graph("constants", nodes,
		[]*onnxpb.TensorProto{tm.Int64s("M", nil, 3), {Name: "cond", DataType: int32(bool_), Int32Data: []int32{1}}},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 4)}))
}

// TestManyConstantsMatchDecodedForm converts a model of many Constants,
// whose values are read and written as views of the nodes' bytes, and the
// same model with the Constants in domain "ai.onnx", which takes the
// decoded form: the results, summaries included, must be the same.
func TestManyConstantsMatchDecodedForm(t *testing.T) {
	const n = 3000
	for _, target := range []Target{FP16, BF16} {
		got, gs, err := convertProto(t, manyConstantsModel(n, ""), Options{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		want, ws, err := convertProto(t, manyConstantsModel(n, "ai.onnx"), Options{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []*onnxpb.GraphProto{want.Graph, findNode(want.Graph, "loop").Attribute[0].G} {
			for _, nd := range g.Node {
				if nd.Domain == "ai.onnx" {
					nd.Domain = ""
				}
			}
		}
		if !proto.Equal(got, want) {
			t.Fatalf("%s: the converted models differ", target)
		}
		gj, _ := gs.JSON()
		wj, _ := ws.JSON()
		if string(gj) != string(wj) {
			t.Fatalf("%s: summaries differ:\n%+v\n%+v", target, gs, ws)
		}
		if gs.Constants.Converted != n+1 || gs.Constants.Kept != 1 {
			t.Errorf("%s: constants converted %d, kept %d; want %d and 1", target, gs.Constants.Converted, gs.Constants.Kept, n+1)
		}
	}
}

// TestConstantValueBits checks a converted Constant's value bit for bit,
// for data in raw_data and in float_data, and that its name, shape and
// node are kept.
func TestConstantValueBits(t *testing.T) {
	orig := manyConstantsModel(4, "")
	got, _, err := convertProto(t, proto.Clone(orig).(*onnxpb.ModelProto), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"const0", "const1", "fill"} {
		src, dst := findNode(orig.Graph, name).Attribute[0].T, findNode(got.Graph, name)
		if dst == nil || len(dst.Attribute) != 1 || dst.Attribute[0].GetName() != "value" {
			t.Fatalf("%s: node %v", name, dst)
		}
		d := dst.Attribute[0].T
		if d.GetDataType() != int32(onnxpb.TensorProto_FLOAT16) || d.GetName() != src.GetName() || fmt.Sprint(d.Dims) != fmt.Sprint(src.Dims) || len(d.FloatData) != 0 {
			t.Fatalf("%s: converted to %v", name, d)
		}
		vals := src.FloatData
		for i := 0; i < len(src.RawData)/4; i++ {
			vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(src.RawData[4*i:])))
		}
		if len(d.RawData) != 2*len(vals) {
			t.Fatalf("%s: %d bytes of data, want %d", name, len(d.RawData), 2*len(vals))
		}
		for i, v := range vals {
			if g, w := binary.LittleEndian.Uint16(d.RawData[2*i:]), tm.Float16Bits(v); g != w {
				t.Errorf("%s[%d] = %#04x, want %#04x (%g)", name, i, g, w, v)
			}
		}
	}
}
