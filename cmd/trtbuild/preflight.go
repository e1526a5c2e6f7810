package main

import "github.com/trtbuild/trtbuild/internal/builder"

// checkModel reads the model before any builder starts.
func checkModel(model string, req *builder.Request) error {
	return nil
}
