package trt

import (
	"strings"
	"testing"
)

func TestLowPrecisionFailingNode(t *testing.T) {
	const issue4838 = "No low-precision conv kernel available for the given configuration. Consider keeping Conv/ConvTranspose " +
		"operators in FP32 (e.g. via modelopt.onnx.autocast with op_block_list=[Conv]). Failing node: node_223_Conv"
	tests := []struct {
		name, msg, node string
		ok              bool
	}{
		{"the issue's message", issue4838, "node_223_Conv", true},
		{"as trtbuild quotes it", "TensorRT could not build the engine: (2 earlier errors in the log) [optimizer] " + issue4838 + "; Builder failed", "node_223_Conv", true},
		{"path-like name, full stop", "No low-precision conv kernel available. Failing node: /backbone/stage2/conv1/Conv.", "/backbone/stage2/conv1/Conv", true},
		{"quoted name", `no low-precision conv kernel available; Failing node: "enc.0.conv"`, "enc.0.conv", true},
		{"case", "NO LOW-PRECISION CONV KERNEL AVAILABLE ... failing node:conv_7", "conv_7", true},
		{"the last of two", issue4838 + "; " + strings.Replace(issue4838, "node_223_Conv", "node_9_Conv", 1), "node_9_Conv", true},
		{"no node named", "No low-precision conv kernel available for the given configuration.", "", false},
		{"a node but another error", "Could not find any implementation. Failing node: node_1", "", false},
		{"node before the fragment only", "Failing node: x; No low-precision conv kernel available", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node, ok := LowPrecisionFailingNode(tt.msg)
			if node != tt.node || ok != tt.ok {
				t.Errorf("LowPrecisionFailingNode(%q) = %q, %v; want %q, %v", tt.msg, node, ok, tt.node, tt.ok)
			}
		})
	}
}

func FuzzLowPrecisionFailingNode(f *testing.F) {
	f.Add("No low-precision conv kernel available. Failing node: node_223_Conv")
	f.Add("no low-precision conv kernel available failing node: \"a b\"")
	f.Add("Failing node:")
	f.Fuzz(func(t *testing.T, msg string) {
		node, ok := LowPrecisionFailingNode(msg)
		if ok != (node != "") {
			t.Fatalf("ok %v with node %q", ok, node)
		}
		if ok {
			if strings.ContainsAny(node, " \t\n;\"'`") {
				t.Fatalf("node %q holds a separator", node)
			}
			if !strings.Contains(msg, node) {
				t.Fatalf("node %q is not in the message", node)
			}
			if !strings.Contains(strings.ToLower(msg), lowPrecisionFragment) {
				t.Fatalf("matched a message without the fragment")
			}
		}
	})
}
