// Command gen writes internal/trt's table of older minors (apiminors_gen.go): for each TensorRT
// major, which of its minor releases the TensorRT backend compiled against the headers of its
// newest release can drive, and which build options need a newer one. It reads the headers of
// every release tag of the major from a clone of github.com/NVIDIA/TensorRT (and the ONNX
// parser's header of releases before 10.14 from a clone of github.com/onnx/onnx-tensorrt).
//
//	go run ./internal/trt/apiminors/gen -tensorrt DIR [-onnx-tensorrt DIR] [-headers v10.16,v11.1] [-o FILE]
//
// go generate ./internal/trt runs it with the folders in TENSORRT_GIT and ONNX_TENSORRT_GIT.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/trtbuild/trtbuild/internal/trt/apiminors"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "apiminors/gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	trtDir := fs.String("tensorrt", "", "a clone of github.com/NVIDIA/TensorRT with its release tags")
	onnxDir := fs.String("onnx-tensorrt", "", "a clone of github.com/onnx/onnx-tensorrt, for the parser header of releases before 10.14 (optional: without it, or without a release's commit, that release's parser is unknown)")
	headers := fs.String("headers", "", "the tag whose headers the backend is compiled against, one per major, comma-separated (default: the newest tag of majors 10 and 11)")
	out := fs.String("o", "apiminors_gen.go", "the file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *trtDir == "" {
		return errors.New("-tensorrt is empty; give a clone of github.com/NVIDIA/TensorRT (go generate takes it from TENSORRT_GIT)")
	}
	var tags []string
	if *headers != "" {
		tags = strings.Split(*headers, ",")
	}
	src, err := apiminors.Generate(apiminors.Repo{Dir: *trtDir}, apiminors.Repo{Dir: *onnxDir}, tags)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, src, 0o644)
}
