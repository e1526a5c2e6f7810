// Command scalegen writes the models of the scale benchmarks
// (scripts/bench/scale.sh) into a folder:
//
//	scalegen -dir DIR -kind nodes -n 100000     DIR/nodes-100000.onnx
//	scalegen -dir DIR -kind identity -n 1000000 DIR/identity-1000000.onnx
//	scalegen -dir DIR -kind external -n 256     DIR/external-256.onnx + .data (4 MiB per layer)
//
// It prints the model's path. The models are deterministic.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

func main() {
	dir := flag.String("dir", ".", "folder to write the model into")
	kind := flag.String("kind", "nodes", "nodes (small Add nodes with weights), identity (Identity nodes) or external (4 MiB MatMul weights in external data)")
	n := flag.Int("n", 100000, "number of nodes (layers for external)")
	flag.Parse()
	path := filepath.Join(*dir, fmt.Sprintf("%s-%d.onnx", *kind, *n))
	if err := write(path, *kind, *n); err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

func write(path, kind string, n int) error {
	if kind == "external" {
		return testmodels.WriteExternalChain(path, filepath.Base(path)+".data", n)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	switch kind {
	case "nodes":
		err = testmodels.WriteManyNodes(w, n)
	case "identity":
		err = testmodels.WriteIdentityChain(w, n)
	default:
		return fmt.Errorf("unknown -kind %q: use nodes, identity or external", kind)
	}
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
