package preflight

import (
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// value builds an onnx.Value; dims are int (fixed), string (named) or nil.
func value(name string, dims ...any) onnx.Value {
	v := onnx.Value{Name: name, Kind: "tensor", ElemType: onnx.Float, Shape: []onnx.Dim{}}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			v.Shape = append(v.Shape, onnx.Dim{Value: int64(d), Known: true})
		case string:
			v.Shape = append(v.Shape, onnx.Dim{Param: d})
		case nil:
			v.Shape = append(v.Shape, onnx.Dim{})
		}
	}
	return v
}

func TestExampleShapes(t *testing.T) {
	tests := []struct {
		name   string
		inputs []onnx.Value
		want   string
	}{
		{"named batch", []onnx.Value{value("images", "batch", 3, 224, 224)},
			"--min-shapes images:1x3x224x224 --opt-shapes images:8x3x224x224 --max-shapes images:16x3x224x224"},
		{"batch and image sides", []onnx.Value{value("images", "batch", 3, "height", "width")},
			"--min-shapes images:1x3x224x224 --opt-shapes images:8x3x224x224 --max-shapes images:16x3x224x224"},
		{"unnamed NCHW", []onnx.Value{value("x", nil, 3, nil, nil)},
			"--min-shapes x:1x3x224x224 --opt-shapes x:8x3x224x224 --max-shapes x:16x3x224x224"},
		{"sequence shared by two inputs", []onnx.Value{value("ids", "N", "seq_len"), value("mask", "N", "seq_len")},
			"--min-shapes ids:1x1,mask:1x1 --opt-shapes ids:8x128,mask:8x128 --max-shapes ids:16x512,mask:16x512"},
		{"shared name keeps its first meaning", []onnx.Value{value("a", "d0"), value("b", 2, "d0")},
			"--min-shapes a:1,b:2x1 --opt-shapes a:8,b:2x8 --max-shapes a:16,b:2x16"},
		{"other dimension", []onnx.Value{value("feat", 1, "channels")},
			"--min-shapes feat:1x1 --opt-shapes feat:1x64 --max-shapes feat:1x256"},
		{"scalar", []onnx.Value{value("s")},
			"--min-shapes s:scalar --opt-shapes s:scalar --max-shapes s:scalar"},
		{"name needing quotes", []onnx.Value{value("input 0", "batch")},
			"--min-shapes 'input 0:1' --opt-shapes 'input 0:8' --max-shapes 'input 0:16'"},
		{"name with a comma", []onnx.Value{value("a,b", "batch")},
			`--min-shapes ''\''a,b'\'':1' --opt-shapes ''\''a,b'\'':8' --max-shapes ''\''a,b'\'':16'`},
		{"unknown rank is left out", []onnx.Value{{Name: "u"}, value("x", "batch")},
			"--min-shapes x:1 --opt-shapes x:8 --max-shapes x:16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FlagLine(ExampleShapes(tt.inputs)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			// The example is a valid profile.
			min, opt, max := ExampleShapes(tt.inputs)
			if _, _, err := shapes.Ranges(nil, min, opt, max); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDimsString(t *testing.T) {
	if got := DimsString(value("x", "batch", 3, nil).Shape); got != "batch x 3 x ?" {
		t.Errorf("DimsString = %q", got)
	}
	if got := DimsString(value("x").Shape); got != "scalar" {
		t.Errorf("DimsString(scalar) = %q", got)
	}
	if got := DimsString(nil); got != "unknown rank" {
		t.Errorf("DimsString(nil) = %q", got)
	}
}
