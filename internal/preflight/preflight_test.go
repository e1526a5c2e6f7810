package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

func parse(t *testing.T, s string) []shapes.Spec {
	t.Helper()
	specs, err := shapes.Parse(s)
	if err != nil {
		t.Fatalf("shapes.Parse(%q): %v", s, err)
	}
	return specs
}

// params builds Params from flag strings: shapes, min, opt, max.
func params(t *testing.T, flags ...string) Params {
	t.Helper()
	for len(flags) < 4 {
		flags = append(flags, "")
	}
	return Params{Shapes: parse(t, flags[0]), Min: parse(t, flags[1]), Opt: parse(t, flags[2]), Max: parse(t, flags[3])}
}

// wantFailure checks that err is a one-line *Error of rule whose message
// is exactly want (or contains it, when want starts with "...").
func wantFailure(t *testing.T, err error, rule, want string) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *preflight.Error", err, err)
	}
	if pe.Rule != rule {
		t.Errorf("rule %q, want %q (%v)", pe.Rule, rule, err)
	}
	if exitcode.Of(err) != exitcode.Usage {
		t.Errorf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if sub, ok := strings.CutPrefix(want, "..."); ok {
		if !strings.Contains(msg, sub) {
			t.Errorf("error\n  %s\ndoes not contain\n  %s", msg, sub)
		}
	} else if msg != want {
		t.Errorf("error\n  %s\nwant\n  %s", msg, want)
	}
}

func TestMissingShapes(t *testing.T) {
	tests := []struct {
		model string
		p     []string // shapes, min, opt, max
		want  string
	}{
		{
			model: "dynamic_batch.onnx",
			want: `input "images" has dynamic dimensions (batch x 3 x 64 x 64) and no shape was given; ` +
				`add: --min-shapes images:1x3x64x64 --opt-shapes images:8x3x64x64 --max-shapes images:16x3x64x64`,
		},
		{
			model: "two_inputs_dynamic.onnx",
			want: `inputs "input_ids" (batch x sequence) and "attention_mask" (batch x sequence) have dynamic dimensions and no shapes were given; ` +
				`add: --min-shapes input_ids:1x1,attention_mask:1x1 --opt-shapes input_ids:8x128,attention_mask:8x128 --max-shapes input_ids:16x512,attention_mask:16x512`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			_, _, err := Run(testmodels.Bundled(t, tt.model), params(t, tt.p...))
			wantFailure(t, err, "missing-shapes", tt.want)
		})
	}
}

// TestExampleLineIsAccepted checks that the flag line of the missing-shapes
// error, given back, passes preflight.
func TestExampleLineIsAccepted(t *testing.T) {
	for _, model := range []string{"dynamic_batch.onnx", "two_inputs_dynamic.onnx"} {
		path := testmodels.Bundled(t, model)
		m, err := onnx.ReadMetadata(path)
		if err != nil {
			t.Fatal(err)
		}
		min, opt, max := ExampleShapes(m.DynamicInputs())
		warnings, err := Check(m, path, Params{Min: min, Opt: opt, Max: max})
		if err != nil || len(warnings) != 0 {
			t.Errorf("%s: example shapes give %v, warnings %q", model, err, warnings)
		}
	}
}

func TestShapeFlagErrors(t *testing.T) {
	tests := []struct {
		name  string
		model string
		p     []string
		rule  string
		want  string
	}{
		{"near name", "dynamic_batch.onnx", []string{"", "image:1x3x64x64"}, "shape-name",
			`--min-shapes names input "image", which dynamic_batch.onnx does not have; did you mean "images"?`},
		{"unknown name lists inputs", "two_inputs_dynamic.onnx", []string{"", "", "", "tokens:1x2"}, "shape-name",
			`--max-shapes names input "tokens", which two_inputs_dynamic.onnx does not have; its inputs are "input_ids", "attention_mask"`},
		{"initializer is not an input", "convnet.onnx", []string{"stem/conv1.weight:16x3x3x3"}, "shape-name",
			`...--shapes names input "stem/conv1.weight", which convnet.onnx does not have`},
		{"rank", "dynamic_batch.onnx", []string{"", "images:1x3x64", "images:8x3x64x64", "images:16x3x64x64"}, "shape-rank",
			`--min-shapes images:1x3x64 has 3 dimensions but input "images" has 4 (batch x 3 x 64 x 64); give 4, as in images:1x3x64x64`},
		{"scalar for a tensor", "dynamic_batch.onnx", []string{"images:scalar"}, "shape-rank",
			`...--shapes images:scalar has 0 dimensions but input "images" has 4`},
		{"static dimension", "dynamic_batch.onnx", []string{"", "images:1x3x64x64", "images:8x4x64x64", "images:16x3x64x64"}, "shape-static",
			`--opt-shapes images:8x4x64x64 does not fit input "images" (batch x 3 x 64 x 64): dimension 1 is fixed at 3; use 3 there`},
		{"static model", "convnet.onnx", []string{"images:2x3x224x224"}, "shape-static",
			`...dimension 0 is fixed at 1; use 1 there`},
		{"min above opt", "dynamic_batch.onnx", []string{"", "images:9x3x64x64", "images:8x3x64x64", "images:16x3x64x64"}, "shape-order",
			`input "images": dimension 0 of --min-shapes (9) is larger than of --opt-shapes (8); each dimension needs min <= opt <= max`},
		{"opt above max", "two_inputs_dynamic.onnx",
			[]string{"", "input_ids:1x1,attention_mask:1x1", "input_ids:1x64,attention_mask:1x64", "input_ids:1x32,attention_mask:1x32"}, "shape-order",
			`...input "input_ids": dimension 1 of --opt-shapes (64) is larger than of --max-shapes (32)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Run(testmodels.Bundled(t, tt.model), params(t, tt.p...))
			wantFailure(t, err, tt.rule, tt.want)
		})
	}
}

func TestValidShapes(t *testing.T) {
	tests := []struct {
		name     string
		model    string
		p        []string
		warnings []string
	}{
		{"static model, no flags", "convnet.onnx", nil, nil},
		{"static model, matching shape", "convnet.onnx", []string{"images:1x3x224x224"}, nil},
		{"full profile", "dynamic_batch.onnx", []string{"", "images:1x3x64x64", "images:4x3x64x64", "images:32x3x64x64"}, nil},
		{"fixed by --shapes", "dynamic_batch.onnx", []string{"images:4x3x64x64"}, nil},
		{"opt only", "dynamic_batch.onnx", []string{"", "", "images:4x3x64x64"}, []string{
			`input "images" has no --min-shapes; using its --opt-shapes value 4x3x64x64`,
			`input "images" has no --max-shapes; using its --opt-shapes value 4x3x64x64`,
		}},
		{"external data present", "external_data.onnx", nil, nil},
		{"fp16", "fp16.onnx", nil, nil},
		{"subgraphs", "control_flow.onnx", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings, err := Run(testmodels.Bundled(t, tt.model), params(t, tt.p...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Fatalf("warnings %q, want %q", warnings, tt.warnings)
			}
		})
	}
}

func TestMalformedFiles(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"truncated.onnx", "is truncated ("},
		{"random_bytes.onnx", "is not an ONNX model ("},
		{"wrong_magic.onnx", "is not an ONNX model (it is a PNG image)"},
		{"nested_length_bomb.onnx", "is not an ONNX model (a node is nested more than 100 messages deep"},
		{"external_data.bin", "is not an ONNX model ("},
		{"missing.onnx", "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, _, err := Run(testmodels.Bundled(t, tt.file), Params{})
			if m != nil {
				t.Errorf("Run returned a model for %s", tt.file)
			}
			wantFailure(t, err, "model", "..."+tt.want)
		})
	}
}

// writeModel writes m (and extra files) into a new folder and returns the
// model's path.
func writeModel(t *testing.T, m *onnxpb.ModelProto, files map[string]int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := testmodels.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, size := range files {
		p := filepath.Join(dir, name) // "../x" lands beside the model's folder
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// externalModel is a model with one 16x16 float initializer whose data is at
// location.
func externalModel(location string, offset, length int64) *onnxpb.ModelProto {
	return externalModelTensor(testmodels.External("w", []int64{16, 16}, location, offset, length))
}

func externalModelTensor(w *onnxpb.TensorProto) *onnxpb.ModelProto {
	return testmodels.Model(&onnxpb.GraphProto{
		Name:        "ext",
		Initializer: []*onnxpb.TensorProto{w},
		Node:        []*onnxpb.NodeProto{testmodels.Node("mm", "MatMul", []string{"x", "w"}, []string{"y"})},
		Input:       []*onnxpb.ValueInfoProto{testmodels.Value("x", testmodels.F32, 1, 16)},
		Output:      []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 1, 16)},
	})
}

func TestExternalData(t *testing.T) {
	noLocation := testmodels.External("w", []int64{16, 16}, "w.bin", 0, 1024)
	noLocation.ExternalData = noLocation.ExternalData[1:]
	badOffset := testmodels.External("w", []int64{16, 16}, "w.bin", 0, 1024)
	badOffset.ExternalData[1].Value = "0x10"
	tests := []struct {
		name  string
		model *onnxpb.ModelProto
		files map[string]int
		link  [2]string // symlink: name in the model folder -> target
		want  string
	}{
		{"ok", externalModel("w.bin", 0, 1024), map[string]int{"w.bin": 1024}, [2]string{}, ""},
		{"ok in a subfolder", externalModel("data/w.bin", 4096, 1024), map[string]int{"data/w.bin": 5120}, [2]string{}, ""},
		{"missing", externalModel("w.bin", 0, 1024), nil, [2]string{},
			`...external data file "w.bin" (1 tensor) of model.onnx is missing; copy it into `},
		{"too small", externalModel("w.bin", 0, 1024), map[string]int{"w.bin": 1000}, [2]string{},
			`external data file "w.bin" is 1000 bytes but model.onnx needs 1024; it is incomplete, copy it again`},
		{"too small for offset", externalModel("w.bin", 4096, 1024), map[string]int{"w.bin": 4096}, [2]string{},
			`external data file "w.bin" is 4096 bytes but model.onnx needs 5120; it is incomplete, copy it again`},
		{"parent folder", externalModel("../w.bin", 0, 1024), map[string]int{"../w.bin": 1024}, [2]string{},
			`model.onnx refers to external data file "../w.bin" (1 tensor), which is refused because it climbs out of the model's folder with ".."; keep external data files in the model's folder and refer to them by relative path`},
		{"hidden parent", externalModel("data/../../w.bin", 0, 1024), map[string]int{"../w.bin": 1024}, [2]string{},
			`...which is refused because it climbs out of the model's folder with ".."`},
		{"absolute", externalModel("/etc/passwd", 0, 16), nil, [2]string{},
			`...external data file "/etc/passwd" (1 tensor), which is refused because it is an absolute path`},
		{"backslash", externalModel(`..\w.bin`, 0, 1024), nil, [2]string{},
			`...which is refused because it contains a backslash`},
		{"link out", externalModel("w.bin", 0, 1024), map[string]int{"../secret.bin": 4096}, [2]string{"w.bin", "../secret.bin"},
			`...which is refused because it is a link that leads out of the model's folder`},
		{"not a file", externalModel("data", 0, 1024), map[string]int{"data/x": 1}, [2]string{},
			`external data "data" of model.onnx is not a regular file; replace it with the data file the model was exported with`},
		{"no location", externalModelTensor(noLocation), nil, [2]string{},
			`tensor "w" of model.onnx has a broken external data reference: it has no location; export the model again`},
		{"bad offset", externalModelTensor(badOffset), map[string]int{"w.bin": 1024}, [2]string{},
			`tensor "w" of model.onnx has a broken external data reference: offset "0x10" is not a byte count; export the model again`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeModel(t, tt.model, tt.files)
			if tt.link[0] != "" {
				if err := os.Symlink(tt.link[1], filepath.Join(filepath.Dir(path), tt.link[0])); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := Run(path, Params{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFailure(t, err, "external-data", tt.want)
		})
	}
}

func TestUnknownRankInput(t *testing.T) {
	v := testmodels.Value("x", testmodels.F32)
	v.Type.GetTensorType().Shape = nil
	m := testmodels.Model(&onnxpb.GraphProto{
		Name:   "g",
		Node:   []*onnxpb.NodeProto{testmodels.Node("r", "Relu", []string{"x"}, []string{"y"})},
		Input:  []*onnxpb.ValueInfoProto{v},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 1)},
	})
	path := writeModel(t, m, nil)
	_, _, err := Run(path, Params{})
	wantFailure(t, err, "missing-shapes",
		`input "x" has an unknown number of dimensions and no shape was given; give its whole shape with --shapes (or --min-shapes, --opt-shapes and --max-shapes), as in --shapes x:1x3x224x224 for a batch of one image`)
	// With a shape of any rank it passes.
	if _, _, err := Run(path, params(t, "x:2x5")); err != nil {
		t.Fatal(err)
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name  string
		model string
		p     Params
		want  []string
	}{
		{"opset too new", "convnet.onnx", Params{MinOpset: 9, MaxOpset: 13}, []string{
			"the model uses ai.onnx opset 17, newer than the 13 this TensorRT supports; the build may fail on operators added since, so export with opset 13 if you can"}},
		{"opset too old", "convnet.onnx", Params{MinOpset: 18, MaxOpset: 22}, []string{
			"the model uses ai.onnx opset 17, older than the 18 this TensorRT supports; convert it with onnx.version_converter if the build fails"}},
		{"opset in range", "convnet.onnx", Params{MinOpset: 9, MaxOpset: 22}, nil},
		{"custom ops", "custom_op.onnx", Params{}, []string{
			"the model uses operators from custom domains (com.example::Swish); TensorRT needs a plugin for each, loaded with --plugins"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings, err := Run(testmodels.Bundled(t, tt.model), tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(warnings, tt.want) {
				t.Fatalf("warnings %q, want %q", warnings, tt.want)
			}
		})
	}
}

func TestNonTensorInputWarning(t *testing.T) {
	seq := &onnxpb.ValueInfoProto{Name: "s", Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{
		SequenceType: &onnxpb.TypeProto_Sequence{ElemType: testmodels.Value("", testmodels.F32, 1).GetType()},
	}}}
	m := testmodels.Model(&onnxpb.GraphProto{
		Name:   "g",
		Node:   []*onnxpb.NodeProto{testmodels.Node("len", "SequenceLength", []string{"s"}, []string{"n"})},
		Input:  []*onnxpb.ValueInfoProto{seq},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("n", testmodels.I64)},
	})
	_, warnings, err := Run(writeModel(t, m, nil), Params{})
	// A sequence has no tensor shape, so it is dynamic with unknown rank.
	wantFailure(t, err, "missing-shapes", `...input "s" has an unknown number of dimensions`)
	if warnings != nil {
		t.Fatalf("warnings with an error: %q", warnings)
	}
	_, warnings, err = Run(writeModel(t, m, nil), params(t, "s:1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`input "s" is a sequence; TensorRT takes only tensor inputs`}; !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings %q, want %q", warnings, want)
	}
}

func TestSharedModels(t *testing.T) {
	for _, path := range testmodels.Shared(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, warnings, err := Run(path, Params{MinOpset: 9, MaxOpset: 22})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 0 {
				t.Fatalf("warnings %q", warnings)
			}
			if len(m.NodeNames()) != len(m.Nodes) {
				t.Fatal("NodeNames length")
			}
		})
	}
}
