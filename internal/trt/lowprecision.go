package trt

import (
	"regexp"
	"strings"
)

// lowPrecisionFragment is what TensorRT 11.2 says when it has no FP16/BF16 kernel for a
// convolution of a strongly typed network: "No low-precision conv kernel available ... Consider
// keeping Conv/ConvTranspose ... in FP32 (e.g. via modelopt.onnx.autocast ...). Failing node:
// node_223_Conv" (NVIDIA/TensorRT#4838).
// It is matched case-insensitively on the message itself: lower-casing the message first would
// move byte offsets where the message holds invalid UTF-8 (found by FuzzLowPrecisionFailingNode).
const lowPrecisionFragment = "no low-precision conv kernel available"

var lowPrecisionPattern = regexp.MustCompile(`(?i)` + regexp.QuoteMeta(lowPrecisionFragment))

// failingNode captures the node name after "Failing node:": up to white space, or the "; " that
// joins several errors in one message. Quotes and a closing full stop are not part of it.
var failingNode = regexp.MustCompile(`(?i)failing node:\s*["'` + "`" + `]?([^\s;"'` + "`" + `]+)`)

// LowPrecisionFailingNode finds, in a build failure message, TensorRT's "No low-precision conv
// kernel available ... Failing node: X" and returns X. It returns false for any other message,
// and for that one when it names no node. When the message holds several such errors, the
// last one's node is returned: TensorRT stops at the last.
func LowPrecisionFailingNode(message string) (string, bool) {
	all := lowPrecisionPattern.FindAllStringIndex(message, -1)
	if len(all) == 0 {
		return "", false
	}
	at := all[len(all)-1][0]
	m := failingNode.FindStringSubmatch(message[at:])
	if m == nil {
		return "", false
	}
	node := strings.TrimRight(m[1], ".,)")
	if node == "" {
		return "", false
	}
	return node, true
}
