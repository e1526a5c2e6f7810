// Command sourcedigest writes internal/cgo/cxx_sources_gen.h: the digest of every file the
// package's C++ includes from outside its own folder (shim/, trtfake/, cudadecl/ and the
// vendored TensorRT headers of third_party/tensorrt). Go's build cache hashes the files of a
// package's folder, not what its sources include from elsewhere, so without this header a
// change to, say, trtfake/build.cpp is not compiled until something in the folder changes; with
// it, regenerating the header rebuilds the package. Run it from the module's root (or
// go generate ./internal/cgo) after changing such a file; a test of internal/cgo fails while
// the header is stale.
//
//	go run ./internal/cgo/sourcedigest [-root DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/cgo/sourcedigest/digest"
)

func main() {
	root := flag.String("root", ".", "the module's root")
	flag.Parse()
	src, err := digest.Header(*root)
	if err == nil {
		err = os.WriteFile(filepath.Join(*root, digest.File), src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sourcedigest:", err)
		os.Exit(1)
	}
}
