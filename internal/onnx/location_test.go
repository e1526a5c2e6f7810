package onnx

import (
	"strings"
	"testing"
)

// TestUnsafeLocationWindowsSpellings: the locations that would leave the model's folder, or
// name something other than a file in it, on Windows are refused on every system (the rule is
// a function of the string), each with its reason.
func TestUnsafeLocationWindowsSpellings(t *testing.T) {
	for _, tc := range []struct{ loc, want string }{
		{"weights.bin", ""},
		{"data/weights.bin", ""},
		{"./data/w.bin", ""},
		{"console.bin", ""},
		{"com10.bin", ""},
		{"w.bin.data", ""},
		{`..\weights.bin`, "backslash"},
		{`data\weights.bin`, "backslash"},
		{`\weights.bin`, "absolute path on Windows"},
		{`\\server\share\weights.bin`, "absolute path on Windows"},
		{`\\?\C:\weights.bin`, "absolute path on Windows"},
		{`\\.\PhysicalDrive0`, "absolute path on Windows"},
		{`\??\C:\weights.bin`, "absolute path on Windows"},
		{"//server/share/weights.bin", "absolute path"},
		{"C:/weights.bin", "it is an absolute path"},
		{`C:\weights.bin`, "it is an absolute path"},
		{"C:weights.bin", "current folder of drive C:"},
		{"c:../weights.bin", "current folder of drive c:"},
		{"C:", "current folder of drive C:"},
		{"weights.bin:stream", "alternate data stream"},
		{"data/weights.bin::$DATA", "alternate data stream"},
		{"con", "device CON"},
		{"data/aux.bin", "device AUX"},
		{"NUL.bin", "device NUL"},
		{"lpt1", "device LPT1"},
		{"com3.weights", "device COM3"},
		{"weights.bin.", "ends with a dot or a space"},
		{"weights.bin ", "ends with a dot or a space"},
		{"data./w.bin", "ends with a dot or a space"},
		{"w?.bin", "forbids"},
		{"w*.bin", "forbids"},
		{"w<1>.bin", "forbids"},
		{`w".bin`, "forbids"},
		{"w|x.bin", "forbids"},
		{"w\n.bin", "control character"},
	} {
		got := UnsafeLocation(tc.loc)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("UnsafeLocation(%q) = %q, want it to say %q", tc.loc, got, tc.want)
		}
	}
}
