package worker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trtbuild/trtbuild/internal/trt"
)

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
	// Retry tells the user, before the second build starts, that the build is repeated and why.
	Retry(note string)
}

// buildKeepingFP32 runs a converted (TensorRT 11 --fp16/--bf16) build, and when it fails with
// TensorRT's "No low-precision conv kernel available ... Failing node: X" (see
// trt.LowPrecisionFailingNode), converts again with X also kept in float32 and builds once
// more, saying so through Retry first. It never retries twice, nor for a node that was already kept (that
// would fail the same way): the second failure is the build's, with the hint to name more
// nodes. It returns the last build's failure ("" when it did not fail).
func buildKeepingFP32(b keepFP32Builder, keep []string) (failure string, err error) {
	model, err := b.Convert(keep)
	if err != nil {
		return "", err
	}
	failure, err = b.Build(model)
	if err != nil || failure == "" {
		return failure, err
	}
	node, ok := trt.LowPrecisionFailingNode(failure)
	if !ok || slices.Contains(keep, node) {
		return failure, nil
	}
	retry := append(slices.Clone(keep), node)
	b.Retry(fmt.Sprintf("TensorRT has no low-precision kernel for node %s: rebuilding once with it kept in float32 "+
		"(to skip this next time, pass --keep-fp32 %s)", node, strings.Join(retry, ",")))
	model, err = b.Convert(retry)
	if err != nil {
		return "", err
	}
	failure, err = b.Build(model)
	if err != nil || failure == "" {
		return failure, err
	}
	if next, ok := trt.LowPrecisionFailingNode(failure); ok && !slices.Contains(retry, next) {
		failure += fmt.Sprintf(" (rebuilt once with %s kept in float32; keep more nodes with --keep-fp32 %s,%s)", node, strings.Join(retry, ","), next)
	}
	return failure, nil
}
