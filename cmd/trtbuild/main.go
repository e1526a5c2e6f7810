// Command trtbuild builds TensorRT engines from ONNX models, with live nested progress, clean
// cancellation, plain text for logs and JSON lines for machines. See README.md.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], newStreams()))
}
