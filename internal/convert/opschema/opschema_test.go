package opschema

import (
	"slices"
	"testing"
)

func TestDefaultTable(t *testing.T) {
	tab := Default()
	if tab.Newest[""] < 17 {
		t.Fatalf("newest ai.onnx opset %d, want at least 17 (the table must cover Debian's onnx)", tab.Newest[""])
	}
	if tab.ONNX == "" {
		t.Fatal("table does not name the onnx release it came from")
	}
	tests := []struct {
		op        string
		opset     int
		wantSince int
		param     string // a formal input name
		admits    string
		want      bool
	}{
		{"Conv", 9, 1, "X", "tensor(float16)", true},
		{"Conv", 17, 11, "X", "tensor(bfloat16)", false},
		{"Conv", 22, 22, "X", "tensor(bfloat16)", true},
		{"Range", 17, 11, "start", "tensor(float16)", false},
		{"Resize", 13, 13, "scales", "tensor(float16)", false},
		{"Resize", 13, 13, "scales", "tensor(float)", true},
		{"Resize", 13, 13, "roi", "tensor(float16)", true},
		{"Cast", 9, 9, "input", "tensor(bfloat16)", false},
		{"Cast", 13, 13, "input", "tensor(bfloat16)", true},
		{"Celu", 12, 12, "X", "tensor(float16)", false},
		{"Add", 7, 7, "A", "tensor(float16)", true},
	}
	for _, tt := range tests {
		s, ok := tab.Lookup("", tt.op, tt.opset)
		if !ok {
			t.Errorf("Lookup(%s, %d): not found", tt.op, tt.opset)
			continue
		}
		if s.Since != tt.wantSince {
			t.Errorf("Lookup(%s, %d) = %s, want since %d", tt.op, tt.opset, s, tt.wantSince)
		}
		i := slices.IndexFunc(s.Inputs, func(p Param) bool { return p.Name == tt.param })
		if i < 0 {
			t.Errorf("%s has no input %q", s, tt.param)
			continue
		}
		if got := s.Admits(s.Inputs[i].Type, tt.admits); got != tt.want {
			t.Errorf("%s input %s admits %s = %v, want %v (allowed %v)", s, tt.param, tt.admits, got, tt.want, s.Allowed(s.Inputs[i].Type))
		}
	}
}

func TestLookupBeforeFirstVersion(t *testing.T) {
	tab := Default()
	if s, ok := tab.Lookup("", "LayerNormalization", 16); ok {
		t.Fatalf("LayerNormalization at opset 16 = %s, want none (it came in opset 17)", s)
	}
	if _, ok := tab.Lookup("ai.onnx", "Relu", 13); !ok {
		t.Fatal(`domain "ai.onnx" is not treated as the default domain`)
	}
	if _, ok := tab.Lookup("com.example", "Relu", 13); ok {
		t.Fatal("found Relu in an unknown domain")
	}
	if _, ok := tab.Lookup("ai.onnx.ml", "ZipMap", 1); !ok {
		t.Fatal("ai.onnx.ml operators are missing")
	}
}

func TestFormalParameters(t *testing.T) {
	s, _ := Default().Lookup("", "Concat", 13)
	for i := 0; i < 5; i++ {
		p, ok := s.Input(i)
		if !ok || p.Name != "inputs" || p.Option != Variadic || !p.Homogeneous {
			t.Fatalf("Concat input %d = %+v, %v; want the variadic homogeneous 'inputs'", i, p, ok)
		}
	}
	if _, ok := s.Output(1); ok {
		t.Fatal("Concat has a second output")
	}
	loop, _ := Default().Lookup("", "Loop", 16)
	if p, _ := loop.Input(7); p.Name != "v_initial" || p.Homogeneous {
		t.Fatalf("Loop input 7 = %+v, want the heterogeneous variadic v_initial", p)
	}
	if got := loop.String(); got != "Loop-v16" {
		t.Fatalf("String() = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for name, data := range map[string]string{
		"empty":      "",
		"bad header": "{",
		"bad row":    `{"onnx":"x","opset":{}}` + "\n{",
		"arity":      `{"onnx":"x","opset":{}}` + "\n" + `{"d":"","n":"A","v":1,"x":0,"i":[["X","T",0]],"o":[],"c":{"T":["tensor(float)"]}}`,
		"constraint": `{"onnx":"x","opset":{}}` + "\n" + `{"d":"","n":"A","v":1,"x":0,"i":[["X","U",0,1]],"o":[],"c":{"T":["tensor(float)"]}}`,
	} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: Parse succeeded", name)
		}
	}
}
