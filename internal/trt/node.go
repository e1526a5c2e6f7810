package trt

import (
	"regexp"
	"strings"
)

// TensorRT names the node a failure is about in its error texts, never in its phase names since
// 10.16 (whose tactic phases are all "Evaluating tactic times"). These are the forms that name
// one, each capturing the node.
var nodePatterns = []*regexp.Regexp{
	// "Could not find any implementation for node /model/model.6/Conv + PWN(/model/model.7/LeakyRelu)."
	// (Error Code 10, TensorRT 8 to 11). A node name may hold spaces, dots and parentheses, so
	// it runs to the full stop that closes the sentence: before ")" (TensorRT wraps it in
	// "Internal Error (…)"), before "; " (trtbuild joins errors so), or at the end.
	regexp.MustCompile(`(?i)for node (.+?)\.?(?:\.\)|; |\n|$)`),
	// "… Failing node: node_223_Conv" (no low-precision kernel, TensorRT 11.2).
	failingNode,
	// The ONNX parser: "In node 12 with name: /conv1/Conv and operator: Conv (…)".
	regexp.MustCompile(`(?i)with name: (.+?) and operator:`),
}

// NodeIn returns the node a TensorRT message names, or "" when it names none. Where a message
// names several (errors joined into one), the last one wins: TensorRT stops at the last.
func NodeIn(message string) string {
	node, at := "", -1
	for _, re := range nodePatterns {
		all := re.FindAllStringSubmatchIndex(message, -1)
		if len(all) == 0 {
			continue
		}
		m := all[len(all)-1]
		if m[2] < 0 || m[0] < at {
			continue
		}
		name := strings.TrimSpace(strings.TrimRight(message[m[2]:m[3]], ".,"))
		if name != "" {
			node, at = name, m[0]
		}
	}
	return node
}

// FailedNode returns the node that a failed build's messages name, the newest message that
// names one winning (messages oldest first), or "" when none does. It is what trtbuild says a
// failed build failed on (progress.Where.Node), the node's name exactly as TensorRT wrote it.
func FailedNode(messages []string) string {
	for i := len(messages) - 1; i >= 0; i-- {
		if node := NodeIn(messages[i]); node != "" {
			return node
		}
	}
	return ""
}
