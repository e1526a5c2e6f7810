package preflight

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/shapes"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// sharedDimsModel has inputs that share named dimensions in the ways the
// bundled BERT-like model does not: "bias" has an unnamed dynamic dimension
// besides the shared ones, and "square" repeats one name.
func sharedDimsModel(t *testing.T) string {
	t.Helper()
	tm := testmodels.Value
	return writeModel(t, testmodels.Model(&onnxpb.GraphProto{
		Name: "shared",
		Node: []*onnxpb.NodeProto{testmodels.Node("id", "Identity", []string{"ids"}, []string{"y"})},
		Input: []*onnxpb.ValueInfoProto{
			tm("ids", testmodels.I64, "batch", "seq"),
			tm("bias", testmodels.F32, "batch", nil, "seq"),
			tm("square", testmodels.F32, "n", "n"),
		},
		Output: []*onnxpb.ValueInfoProto{tm("y", testmodels.I64, "batch", "seq")},
	}), nil)
}

// profileString writes a profile as NAME=min/opt/max entries.
func profileString(inputs []shapes.Input) string {
	var parts []string
	for _, in := range inputs {
		parts = append(parts, in.Name+"="+shapes.FormatDims(in.Min)+"/"+shapes.FormatDims(in.Opt)+"/"+shapes.FormatDims(in.Max))
	}
	return strings.Join(parts, " ")
}

func TestSharedDimsAccepted(t *testing.T) {
	tests := []struct {
		name     string
		p        []string // shapes, min, opt, max
		profile  string
		warnings []string
	}{
		{
			name:    "one input fixes the others",
			p:       []string{"input_ids:1x128"},
			profile: "input_ids=1x128/1x128/1x128 attention_mask=1x128/1x128/1x128 token_type_ids=1x128/1x128/1x128",
			warnings: []string{
				`input "attention_mask" has no shape; using 1x128, from the dimensions it shares with "input_ids" (batch, seq)`,
				`input "token_type_ids" has no shape; using 1x128, from the dimensions it shares with "input_ids" (batch, seq)`,
			},
		},
		{
			name:    "a range is copied",
			p:       []string{"", "input_ids:1x1", "input_ids:8x128", "input_ids:16x512"},
			profile: "input_ids=1x1/8x128/16x512 attention_mask=1x1/8x128/16x512 token_type_ids=1x1/8x128/16x512",
			warnings: []string{
				`input "attention_mask" has no shape; using min 1x1, opt 8x128, max 16x512, from the dimensions it shares with "input_ids" (batch, seq)`,
				`input "token_type_ids" has no shape; using min 1x1, opt 8x128, max 16x512, from the dimensions it shares with "input_ids" (batch, seq)`,
			},
		},
		{
			name:    "all given and consistent",
			p:       []string{"input_ids:2x64,attention_mask:2x64,token_type_ids:2x64"},
			profile: "input_ids=2x64/2x64/2x64 attention_mask=2x64/2x64/2x64 token_type_ids=2x64/2x64/2x64",
		},
		{
			name:    "consistent across flags",
			p:       []string{"token_type_ids:4x32", "input_ids:4x32", "attention_mask:4x32", "input_ids:4x32"},
			profile: "token_type_ids=4x32/4x32/4x32 input_ids=4x32/4x32/4x32 attention_mask=4x32/4x32/4x32",
			warnings: []string{
				`input "input_ids" has no --opt-shapes; using its --max-shapes value 4x32`,
				`input "attention_mask" has no --min-shapes; using its --opt-shapes value 4x32`,
				`input "attention_mask" has no --max-shapes; using its --opt-shapes value 4x32`,
			},
		},
	}
	path := testmodels.Bundled(t, "bert_tiny.onnx")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := Run(path, params(t, tt.p...))
			if err != nil {
				t.Fatal(err)
			}
			r, err := CheckPath(m, path, params(t, tt.p...))
			if err != nil {
				t.Fatal(err)
			}
			if got := profileString(r.Inputs); got != tt.profile {
				t.Errorf("profile\n  %s\nwant\n  %s", got, tt.profile)
			}
			if !reflect.DeepEqual(r.Warnings, tt.warnings) {
				t.Errorf("warnings\n  %q\nwant\n  %q", r.Warnings, tt.warnings)
			}
		})
	}
}

func TestSharedDimsRefused(t *testing.T) {
	tests := []struct {
		name  string
		model string // "" is sharedDimsModel
		p     []string
		rule  string
		want  string
	}{
		{
			name: "mismatch in one flag", model: "bert_tiny.onnx",
			p:    []string{"input_ids:1x128,attention_mask:2x64"},
			rule: "shape-shared-dim",
			want: `--shapes input_ids:1x128,attention_mask:2x64: inputs "input_ids" and "attention_mask" share the dimension "batch" but are given 1 and 2; ` +
				`give every input the same batch, as in --shapes input_ids:1x128,attention_mask:1x128`,
		},
		{
			name: "mismatch of the second dimension", model: "bert_tiny.onnx",
			p:    []string{"", "", "", "input_ids:16x512,token_type_ids:16x256"},
			rule: "shape-shared-dim",
			want: `--max-shapes input_ids:16x512,token_type_ids:16x256: inputs "input_ids" and "token_type_ids" share the dimension "seq" but are given 512 and 256; ` +
				`give every input the same seq, as in --max-shapes input_ids:16x512,token_type_ids:16x512`,
		},
		{
			name: "mismatch across flags", model: "bert_tiny.onnx",
			p:    []string{"input_ids:1x128", "attention_mask:1x128", "attention_mask:8x128", "attention_mask:16x128"},
			rule: "shape-shared-dim",
			want: `the profile's opt shapes: inputs "input_ids" and "attention_mask" share the dimension "batch" but are given 1 and 8; ` +
				`give every input the same batch, as in --min-shapes input_ids:1x128,attention_mask:1x128 --opt-shapes input_ids:1x128,attention_mask:1x128 --max-shapes input_ids:1x128,attention_mask:1x128`,
		},
		{
			name: "one name twice in one input",
			p:    []string{"ids:1x8,bias:1x4x8,square:2x3"},
			rule: "shape-shared-dim",
			want: `--shapes ids:1x8,bias:1x4x8,square:2x3: dimensions 0 and 1 of input "square" are both "n" but are given 2 and 3; ` +
				`give every input the same n, as in --shapes ids:1x8,bias:1x4x8,square:2x2`,
		},
		{
			// bias has an unnamed dynamic dimension: it cannot be filled in, and
			// the example keeps the sizes ids gives batch and seq.
			name: "suggestion keeps the shared sizes",
			p:    []string{"ids:2x32,square:4x4"},
			rule: "missing-shapes",
			want: `input "bias" has dynamic dimensions (batch x ? x seq) and no shape was given; ` +
				`use: --min-shapes ids:2x32,bias:2x1x32,square:4x4 --opt-shapes ids:2x32,bias:2x64x32,square:4x4 --max-shapes ids:2x32,bias:2x256x32,square:4x4`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.model == "" {
				path = sharedDimsModel(t)
			} else {
				path = testmodels.Bundled(t, tt.model)
			}
			_, _, err := Run(path, params(t, tt.p...))
			wantFailure(t, err, tt.rule, tt.want)
		})
	}
}

// TestSharedDimsFixIsAccepted checks that the fix a shared-dimension error
// shows passes preflight when given back.
func TestSharedDimsFixIsAccepted(t *testing.T) {
	path := testmodels.Bundled(t, "bert_tiny.onnx")
	_, _, err := Run(path, params(t, "", "input_ids:1x1,token_type_ids:1x1", "input_ids:8x128,token_type_ids:8x64", "input_ids:16x512,token_type_ids:16x512"))
	var pe *Error
	if !errors.As(err, &pe) || pe.Rule != "shape-shared-dim" {
		t.Fatalf("error %v, want a shape-shared-dim failure", err)
	}
	_, fix, ok := strings.Cut(err.Error(), "as in ")
	if !ok {
		t.Fatalf("no fix in %q", err)
	}
	f := strings.Fields(fix) // --opt-shapes VALUE
	if len(f) != 2 || f[0] != "--opt-shapes" {
		t.Fatalf("fix %q is not one --opt-shapes flag", fix)
	}
	if _, _, err := Run(path, params(t, "", "input_ids:1x1,token_type_ids:1x1", f[1], "input_ids:16x512,token_type_ids:16x512")); err != nil {
		t.Errorf("the fix %q is refused: %v", fix, err)
	}
}
