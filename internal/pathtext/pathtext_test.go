package pathtext

import "testing"

func TestQ(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"model.onnx", "model.onnx"},
		{"dir with space/m.onnx", "dir with space/m.onnx"},
		{"modèle.onnx", "modèle.onnx"},
		{"", ""},
		{"a\nBuilt ok", `"a\nBuilt ok"`},
		{"x\x1b]0;pwned\x07.onnx", `"x\x1b]0;pwned\a.onnx"`},
		{"tab\there", `"tab\there"`},
		{"del\x7f", `"del\x7f"`},
		{"c1\u009b2J", `"c1\u009b2J"`},
		{"bidi\u202etxt.onnx", `"bidi\u202etxt.onnx"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{`"quoted"`, `"\"quoted\""`},
	} {
		if got := Q(tc.in); got != tc.want {
			t.Errorf("Q(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func FuzzQ(f *testing.F) {
	f.Add("a\nb")
	f.Add("plain.onnx")
	f.Fuzz(func(t *testing.T, s string) {
		q := Q(s)
		for i := 0; i < len(q); i++ {
			if c := q[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("Q(%q) = %q holds control byte %#x", s, q, c)
			}
		}
	})
}
