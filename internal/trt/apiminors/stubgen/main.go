// Command stubgen writes the stubs of the stand-in TensorRT (internal/cgo/trtfake/stubsN_gen.hpp)
// from the vendored headers of each major (third_party/tensorrt/vN/include): for every class
// trtfake implements, every pure virtual function as a loud failure that names itself, and
// the enumerator values trtfake checks what it is given against (apiminors.RenderStubs). Run
// it from the module's root after the vendored headers change:
//
//	go run ./internal/trt/apiminors/stubgen [-root DIR]
//
// A test of internal/trt/apiminors fails while the files differ from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/trt/apiminors"
)

func main() {
	root := flag.String("root", ".", "the module's root")
	flag.Parse()
	for _, major := range apiminors.StubMajors {
		src, err := apiminors.GenerateStubs(*root, major)
		if err == nil {
			err = os.WriteFile(filepath.Join(*root, apiminors.StubFile(major)), src, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "apiminors/stubgen:", err)
			os.Exit(1)
		}
	}
}
