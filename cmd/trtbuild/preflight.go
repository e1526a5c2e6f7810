package main

import (
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
)

// checkModel reads the model's structure before any builder starts: a file that is not ONNX is
// refused at once, and the simulated builder gets the model's real node names.
func checkModel(model string, req *builder.Request) error {
	m, err := onnx.ReadMetadata(model)
	if err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	req.Layers = m.NodeNames()
	return nil
}
