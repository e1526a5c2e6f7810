package trt

import (
	"strings"
	"testing"
)

func TestNodeIn(t *testing.T) {
	// ComfyUI-Upscaler-Tensorrt#36, TensorRT 10.4.0, verbatim.
	const comfy = "IBuilder::buildSerializedNetwork: Error Code 10: Internal Error (Could not find any implementation for node /model/model.6/Conv + PWN(/model/model.7/LeakyRelu).)"
	tests := []struct{ name, msg, node string }{
		{"TensorRT's error, wrapped", comfy, "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)"},
		{"as trtbuild quotes it", "TensorRT could not build the engine: " + comfy, "/model/model.6/Conv + PWN(/model/model.7/LeakyRelu)"},
		{"bare, full stop", "Could not find any implementation for node head/fc.", "head/fc"},
		{"bare, no stop", "could not find any implementation for node head/fc", "head/fc"},
		{"joined with another error", "Could not find any implementation for node stem/conv1.; Builder failed", "stem/conv1"},
		{"the last of two", "Could not find any implementation for node a.; Could not find any implementation for node b.", "b"},
		{"a Myelin node", "Could not find any implementation for node {ForeignNode[/a/Conv.../b/Relu]}.", "{ForeignNode[/a/Conv.../b/Relu]}"},
		{"low precision", "No low-precision conv kernel available. Failing node: node_223_Conv", "node_223_Conv"},
		{"ONNX parser", "In node 12 with name: /conv1/Conv and operator: Conv (importConv): UNSUPPORTED_NODE", "/conv1/Conv"},
		{"no node", "Error Code 2: Internal Error (Assertion failed: out of memory)", ""},
		{"a phase name is no node", "Preparing graph for optimization", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NodeIn(tt.msg); got != tt.node {
				t.Errorf("NodeIn(%q) = %q, want %q", tt.msg, got, tt.node)
			}
		})
	}
}

func TestFailedNode(t *testing.T) {
	msgs := []string{"Could not find any implementation for node early.", "Builder failed while optimizing", "no node here"}
	if got := FailedNode(msgs); got != "early" {
		t.Errorf("FailedNode = %q, want the newest message that names one", got)
	}
	msgs = append(msgs, "Could not find any implementation for node late.")
	if got := FailedNode(msgs); got != "late" {
		t.Errorf("FailedNode = %q, want late", got)
	}
	if got := FailedNode(nil); got != "" {
		t.Errorf("FailedNode(nil) = %q", got)
	}
}

func FuzzNodeIn(f *testing.F) {
	f.Add("Could not find any implementation for node a b (c).)")
	f.Add("for node .; ")
	f.Add("with name:  and operator:")
	f.Fuzz(func(t *testing.T, msg string) {
		node := NodeIn(msg)
		if node == "" {
			return
		}
		if !strings.Contains(msg, node) {
			t.Fatalf("node %q is not in the message", node)
		}
		if node != strings.TrimSpace(node) {
			t.Fatalf("node %q has spaces around it", node)
		}
	})
}
