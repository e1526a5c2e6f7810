package worker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// splitKeepFP32 sorts the entries of --keep-fp32 into operator types (an ONNX operator's name,
// such as Conv: every node of that type stays in float32) and node names (anything else).
func splitKeepFP32(entries []string) (ops, nodes []string) {
	table := opschema.Default()
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case table.Known(e):
			ops = append(ops, e)
		default:
			nodes = append(nodes, e)
		}
	}
	return ops, nodes
}

// keepFP32Builder is what the rebuild-once rule needs of a TensorRT 11 reduced-precision build:
// converting the model with some entries kept in float32, and building a converted model. The
// worker's build loop implements it; the tests use a fake.
type keepFP32Builder interface {
	// Convert writes the reduced-precision copy of the model with keep (--keep-fp32 entries)
	// left in float32 and returns its path.
	Convert(keep []string) (model string, err error)
	// Build builds model and returns TensorRT's failure message, or "" when the build did not
	// fail (it was built, or cancelled). err is for what is not a build failure.
	Build(model string) (failure string, err error)
}

// buildKeepingFP32 runs a converted (TensorRT 11 --fp16/--bf16) build, and when it fails with
// TensorRT's "No low-precision conv kernel available ... Failing node: X" (see
// trt.LowPrecisionFailingNode), converts again with X also kept in float32 and builds once
// more, saying so in notes. It never retries twice, nor for a node that was already kept (that
// would fail the same way): the second failure is the build's, with the hint to name more
// nodes. It returns the last build's failure ("" when it did not fail).
func buildKeepingFP32(b keepFP32Builder, keep []string) (notes []string, failure string, err error) {
	model, err := b.Convert(keep)
	if err != nil {
		return nil, "", err
	}
	failure, err = b.Build(model)
	if err != nil || failure == "" {
		return nil, failure, err
	}
	node, ok := trt.LowPrecisionFailingNode(failure)
	if !ok || slices.Contains(keep, node) {
		return nil, failure, nil
	}
	retry := append(slices.Clone(keep), node)
	notes = append(notes, fmt.Sprintf("TensorRT has no low-precision kernel for node %s: rebuilding once with it kept in float32 "+
		"(to skip this next time, pass --keep-fp32 %s)", node, strings.Join(retry, ",")))
	model, err = b.Convert(retry)
	if err != nil {
		return notes, "", err
	}
	failure, err = b.Build(model)
	if err != nil || failure == "" {
		return notes, failure, err
	}
	if next, ok := trt.LowPrecisionFailingNode(failure); ok && !slices.Contains(retry, next) {
		failure += fmt.Sprintf(" (rebuilt once with %s kept in float32; keep more nodes with --keep-fp32 %s,%s)", node, strings.Join(retry, ","), next)
	}
	return notes, failure, nil
}
