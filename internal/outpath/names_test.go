package outpath

import (
	"strings"
	"testing"
)

// The Windows name rules are pure functions of the strings: they are tested on every system.

func TestReservedDevice(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"CON", "CON"},
		{"con", "CON"},
		{"con.engine", "CON"},
		{"aux.onnx", "AUX"},
		{"Aux .onnx", "AUX"},
		{"nul", "NUL"},
		{"NUL.manifest.json", "NUL"},
		{"prn:", "PRN"},
		{"com1", "COM1"},
		{"COM9.txt", "COM9"},
		{"lpt1", "LPT1"},
		{"LPT²", "LPT²"},
		{"conin$", "CONIN$"},
		{"CONOUT$.log", "CONOUT$"},
		{"console", ""},
		{"com10", ""},
		{"com", ""},
		{"model.con", ""},
		{"xcon", ""},
		{"", ""},
	} {
		if got := ReservedDevice(tc.name); got != tc.want {
			t.Errorf("ReservedDevice(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestWindowsNameProblem(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"model.engine", ""},
		{".model.engine.trtbuild-abc.tmp", ""},
		{"résumé ü.onnx", ""},
		{".", ""},
		{"..", ""},
		{"con.engine", "reserves for the device CON"},
		{"aux.onnx", "reserves for the device AUX"},
		{"NUL", "reserves for the device NUL"},
		{"model.engine.", "ends with a dot or a space"},
		{"model.engine ", "ends with a dot or a space"},
		{"weights.bin:stream", "alternate data stream"},
		{"a<b", `contains '<'`},
		{"a|b", `contains '|'`},
		{"a?b", `contains '?'`},
		{"a*b", `contains '*'`},
		{`a"b`, `contains '"'`},
		{"a\tb", "control character"},
	} {
		got := WindowsNameProblem(tc.name)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("WindowsNameProblem(%q) = %q, want it to say %q", tc.name, got, tc.want)
		}
	}
}

func TestIsDiscardAndIsPipePath(t *testing.T) {
	for _, tc := range []struct {
		path          string
		discard, pipe bool
	}{
		{"NUL", true, false},
		{"nul", true, false},
		{"Nul", true, false},
		{`\\.\NUL`, true, false},
		{`\\.\nul`, true, false},
		{"//./nul", true, false},
		{`out\NUL`, false, false},
		{"nul.engine", false, false},
		{"NUL ", false, false},
		{`\\.\pipe\trace`, false, true},
		{`\\.\PIPE\trace`, false, true},
		{"//./pipe/trace", false, true},
		{`\\.\pipe\`, false, false},
		{`C:\pipe\trace`, false, false},
		{"model.engine", false, false},
	} {
		if got := IsDiscard(tc.path); got != tc.discard {
			t.Errorf("IsDiscard(%q) = %v, want %v", tc.path, got, tc.discard)
		}
		if got := IsPipePath(tc.path); got != tc.pipe {
			t.Errorf("IsPipePath(%q) = %v, want %v", tc.path, got, tc.pipe)
		}
	}
}
