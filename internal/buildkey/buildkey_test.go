package buildkey

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/shapes"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// model is a small graph: y = Relu(x·W + b), with a Constant node and an If whose branch has
// its own initializer, so weights sit at every depth the hasher walks.
func model(w []float32, op string, branchBias float32) *onnxpb.ModelProto {
	branch := &onnxpb.GraphProto{
		Name:        "then",
		Node:        []*onnxpb.NodeProto{tm.Node("then/add", "Add", []string{"y", "bb"}, []string{"t"})},
		Initializer: []*onnxpb.TensorProto{tm.Floats("bb", []int64{2}, []float32{branchBias, 1})},
		Output:      []*onnxpb.ValueInfoProto{tm.Value("t", tm.F32, 1, 2)},
	}
	g := &onnxpb.GraphProto{
		Name: "g",
		Node: []*onnxpb.NodeProto{
			tm.Node("mm", "MatMul", []string{"x", "W"}, []string{"xw"}),
			tm.Node("c", "Constant", nil, []string{"b"}, tm.AttrTensor("value", tm.Floats("b", []int64{2}, []float32{0.5, 0.25}))),
			tm.Node("add", "Add", []string{"xw", "b"}, []string{"s"}),
			tm.Node("act", op, []string{"s"}, []string{"y"}),
			tm.Node("cond", "Constant", nil, []string{"c"}, tm.AttrTensor("value", &onnxpb.TensorProto{Name: "c", DataType: 9, Int32Data: []int32{1}})),
			tm.Node("if", "If", []string{"c"}, []string{"z"}, tm.AttrGraph("then_branch", branch), tm.AttrGraph("else_branch", branch)),
		},
		Initializer: []*onnxpb.TensorProto{tm.Floats("W", []int64{2, 2}, w)},
		Input:       []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 1, 2)},
		Output:      []*onnxpb.ValueInfoProto{tm.Value("z", tm.F32, 1, 2)},
	}
	return tm.Model(g)
}

func write(t *testing.T, dir, name string, m *onnxpb.ModelProto) string {
	t.Helper()
	b, err := tm.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hashOf(t *testing.T, path string) ModelHashes {
	t.Helper()
	h, err := HashModel(path)
	if err != nil {
		t.Fatalf("HashModel(%s): %v", path, err)
	}
	if !strings.HasPrefix(h.Graph, "sha256:") || len(h.Graph) != 71 || len(h.Weights) != 71 {
		t.Fatalf("malformed hashes %+v", h)
	}
	return h
}

func TestModelHashes(t *testing.T) {
	dir := t.TempDir()
	base := hashOf(t, write(t, dir, "a.onnx", model([]float32{1, 2, 3, 4}, "Relu", 0)))
	cases := []struct {
		name                 string
		m                    *onnxpb.ModelProto
		graphSame, weightSam bool
	}{
		{"same model under another name", model([]float32{1, 2, 3, 4}, "Relu", 0), true, true},
		{"one weight changed", model([]float32{1, 2, 3, 5}, "Relu", 0), true, false},
		{"one weight in a subgraph changed", model([]float32{1, 2, 3, 4}, "Relu", 7), true, false},
		{"one operator changed", model([]float32{1, 2, 3, 4}, "Sigmoid", 0), false, true},
		{"a constant's value changed", func() *onnxpb.ModelProto {
			m := model([]float32{1, 2, 3, 4}, "Relu", 0)
			m.Graph.Node[1].Attribute[0].T = tm.Floats("b", []int64{2}, []float32{0.5, 0.5})
			return m
		}(), true, false},
		{"an input renamed", func() *onnxpb.ModelProto {
			m := model([]float32{1, 2, 3, 4}, "Relu", 0)
			m.Graph.Input[0].Name = "x2"
			return m
		}(), false, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hashOf(t, write(t, dir, strings.Repeat("b", i+1)+".onnx", c.m))
			if (h.Graph == base.Graph) != c.graphSame {
				t.Errorf("graph hash same=%v, want %v", h.Graph == base.Graph, c.graphSame)
			}
			if (h.Weights == base.Weights) != c.weightSam {
				t.Errorf("weights hash same=%v, want %v", h.Weights == base.Weights, c.weightSam)
			}
		})
	}
}

// TestExternalData: the data file's bytes are in the weights hash, the file's name in neither.
func TestExternalData(t *testing.T) {
	src := tm.BundledDir(t)
	dir := t.TempDir()
	for _, f := range []string{"external_data.onnx", "external_data.bin"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "external_data.onnx")
	base := hashOf(t, path)
	if base.ExternalBytes == 0 {
		t.Fatalf("no external data read: %+v", base)
	}
	renamed := filepath.Join(dir, "renamed.onnx")
	if err := os.Rename(path, renamed); err != nil {
		t.Fatal(err)
	}
	if h := hashOf(t, renamed); h.Graph != base.Graph || h.Weights != base.Weights {
		t.Errorf("renaming the model changed its hashes: %+v vs %+v", h, base)
	}
	bin := filepath.Join(dir, "external_data.bin")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	data[16384] ^= 0x40 // first byte of the bias
	if err := os.WriteFile(bin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := hashOf(t, renamed)
	if h.Graph != base.Graph || h.Weights == base.Weights {
		t.Errorf("one external weight changed: graph same=%v (want true), weights same=%v (want false)", h.Graph == base.Graph, h.Weights == base.Weights)
	}
}

func TestHashModelErrors(t *testing.T) {
	dir := t.TempDir()
	outside := func(loc string) string {
		g := &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{tm.External("w", []int64{4}, loc, 0, 16)}}
		return write(t, dir, strings.NewReplacer("/", "_", ".", "_").Replace(loc)+".onnx", tm.Model(g))
	}
	if err := os.WriteFile(filepath.Join(dir, "short.bin"), make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.onnx"), "no such file"},
		{"truncated", tm.Bundled(t, "truncated.onnx"), "malformed"},
		{"external data outside the folder", outside("../secret.bin"), "model's folder"},
		{"external data too short", outside("short.bin"), "do not match"},
		{"external data missing", outside("absent.bin"), "absent.bin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := HashModel(c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("HashModel: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestBundledModelsHash(t *testing.T) {
	for _, name := range []string{"convnet.onnx", "dynamic_batch.onnx", "control_flow.onnx", "fp16.onnx", "custom_op.onnx"} {
		h := hashOf(t, tm.Bundled(t, name))
		if h.Graph == h.Weights {
			t.Errorf("%s: graph and weights hash alike", name)
		}
	}
}

func baseParts() Parts {
	return Parts{
		Graph: "sha256:aa", Weights: "sha256:bb", Backend: "tensorrt", TensorRT: "10.16.0.32",
		GPU: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", SMs: 132,
		Settings: Settings{OptLevel: -1, MaxAuxStreams: -1, AvgTiming: 8},
		Profiles: []shapes.Profile{{Inputs: []shapes.Input{{Name: "x", Min: []int64{1}, Opt: []int64{4}, Max: []int64{8}}}}},
	}
}

// TestKeyCoversEveryPart changes each part in turn: every change must change the key.
func TestKeyCoversEveryPart(t *testing.T) {
	base := baseParts().Key()
	if !Valid(base) {
		t.Fatalf("key %q is not Valid", base)
	}
	mutations := map[string]func(*Parts){
		"graph":                func(p *Parts) { p.Graph = "sha256:ab" },
		"weights":              func(p *Parts) { p.Weights = "sha256:bc" },
		"converter":            func(p *Parts) { p.Converter = "1" },
		"backend":              func(p *Parts) { p.Backend = "sim" },
		"tensorrt build":       func(p *Parts) { p.TensorRT = "10.16.0.33" },
		"onnx parser":          func(p *Parts) { p.ONNXParser = "version 100, sha256:dd" },
		"gpu":                  func(p *Parts) { p.GPU = "NVIDIA H200" },
		"compute capability":   func(p *Parts) { p.ComputeCapability = "9.1" },
		"sms":                  func(p *Parts) { p.SMs = 16 },
		"mig":                  func(p *Parts) { p.MIG = "1g.10gb" },
		"hardware compat":      func(p *Parts) { p.HardwareCompat = "ampere+" },
		"version compatible":   func(p *Parts) { p.VersionCompatible = true },
		"exclude lean runtime": func(p *Parts) { p.ExcludeLeanRuntime = true },
		"precision":            func(p *Parts) { p.Settings.Precision = []string{"fp16"} },
		"no tf32":              func(p *Parts) { p.Settings.NoTF32 = true },
		"refit":                func(p *Parts) { p.Settings.Refit = true },
		"strip weights":        func(p *Parts) { p.Settings.StripWeights = true },
		"sparse":               func(p *Parts) { p.Settings.SparseWeights = true },
		"opt level":            func(p *Parts) { p.Settings.OptLevel = 3 },
		"aux streams":          func(p *Parts) { p.Settings.MaxAuxStreams = 0 },
		"workspace":            func(p *Parts) { p.Settings.WorkspaceBytes = 1 << 30 },
		"avg timing":           func(p *Parts) { p.Settings.AvgTiming = 1 },
		"build route":          func(p *Parts) { p.Settings.BuildRoute = "-conv_use_long_w=off" },
		"profile max":          func(p *Parts) { p.Profiles[0].Inputs[0].Max = []int64{16} },
		"second profile":       func(p *Parts) { p.Profiles = append(p.Profiles, p.Profiles[0]) },
		"plugin":               func(p *Parts) { p.Plugins = []Plugin{{Name: "a.so", SHA256: "sha256:cc"}} },
		"sim seed":             func(p *Parts) { p.Sim = &Sim{Seed: 1} },
		"input formats": func(p *Parts) {
			p.Settings.InputFormats = []trtexec.IOFormat{{Type: "fp16", Formats: []string{"chw2"}}}
		},
		"output formats": func(p *Parts) {
			p.Settings.OutputFormats = []trtexec.IOFormat{{Type: "fp16", Formats: []string{"chw2"}}}
		},
		"precision constraints": func(p *Parts) { p.Settings.PrecisionConstraints = "obey" },
		"layer precisions": func(p *Parts) {
			p.Settings.LayerPrecisions = []trtexec.LayerPrecision{{Layer: "conv1", Type: "fp32"}}
		},
		"profiling verbosity": func(p *Parts) { p.Settings.ProfilingVerbosity = "detailed" },
		"tactic sources":      func(p *Parts) { p.Settings.TacticSources = []string{"-CUBLAS"} },
		"dla core":            func(p *Parts) { c := 0; p.Settings.DLACore = &c },
		"gpu fallback":        func(p *Parts) { p.Settings.GPUFallback = true },
		"strongly typed":      func(p *Parts) { p.Settings.StronglyTyped = true },
		"best":                func(p *Parts) { p.Settings.Best = true },
		"mem pools":           func(p *Parts) { p.Settings.MemPools = map[string]uint64{"tacticSharedMem": 1 << 20} },
		"keep fp32":           func(p *Parts) { p.Settings.KeepFP32 = []string{"Softmax"} },
		"no builtin plugins":  func(p *Parts) { p.Settings.NoBuiltinPlugins = true },
	}
	seen := map[string]string{base: "base"}
	for name, mutate := range mutations {
		p := baseParts()
		mutate(&p)
		k := p.Key()
		if other, dup := seen[k]; dup {
			t.Errorf("%s: key equals that of %s", name, other)
		}
		seen[k] = name
	}
	// Every field of Parts and Settings is covered by a mutation above.
	if n := reflect.TypeOf(Parts{}).NumField() + reflect.TypeOf(Settings{}).NumField() - 3; n > len(mutations) {
		t.Errorf("%d fields, %d mutations: a new field needs a case here", n, len(mutations))
	}
}

func TestKeyNormalizes(t *testing.T) {
	a, b := baseParts(), baseParts()
	a.Settings.Precision = []string{"fp16", "bf16"}
	b.Settings.Precision = []string{"bf16", "fp16"}
	a.Profiles[0].Inputs = append(a.Profiles[0].Inputs, shapes.Input{Name: "a", Min: []int64{1}, Opt: []int64{1}, Max: []int64{1}})
	b.Profiles[0].Inputs = append([]shapes.Input{{Name: "a", Min: []int64{1}, Opt: []int64{1}, Max: []int64{1}}}, b.Profiles[0].Inputs...)
	b.HardwareCompat = "none"
	if a.Key() != b.Key() {
		t.Errorf("order of precisions or inputs, or an explicit none, changed the key")
	}
	if baseParts().Key() != baseParts().Key() {
		t.Error("key is not deterministic")
	}
}

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		baseParts().Key():                        true,
		Prefix + strings.Repeat("0", 63):         false,
		"trtb1-" + strings.Repeat("0", 64):       false, // an older schema
		"trtb2-" + strings.Repeat("0", 64):       false,
		Prefix + strings.Repeat("G", 64):         false,
		Prefix + "../" + strings.Repeat("0", 61): false,
		"":                                       false,
	} {
		if Valid(s) != want {
			t.Errorf("Valid(%q) = %v, want %v", s, !want, want)
		}
	}
}

// BenchmarkHashModel hashes a 256 MiB model (weights inline); MB/s is the hashing rate.
func BenchmarkHashModel(b *testing.B) {
	path := filepath.Join(b.TempDir(), "large.onnx")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := tm.WriteLarge(f, 256); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	var first ModelHashes
	for b.Loop() {
		h, err := HashModel(path)
		if err != nil {
			b.Fatal(err)
		}
		if first.Weights == "" {
			first = h
		} else if h != first {
			b.Fatal("hashes differ between runs")
		}
	}
}
