// Command smokemodel writes the model of scripts/gpu-smoke.sh's cancel checks: a deep
// convolution network whose layers all differ (kernel size, channels), so that TensorRT must
// time tactics for each one and a build lasts long enough, also on an H100 or H200, for a
// SIGINT sent at the first step event to land in the middle of the build.
//
//	go run ./scripts/smokemodel -o deepconv.onnx
//
// Input "images" 1x64x112x112 float32; 48 Conv+Relu layers; about 40 MB of deterministic
// random weights. It prints the model's path.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

func main() {
	out := flag.String("o", "deepconv.onnx", "file to write")
	layers := flag.Int("layers", 48, "Conv+Relu layers")
	flag.Parse()
	if err := write(*out, *layers); err != nil {
		fmt.Fprintln(os.Stderr, "smokemodel:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}

func write(path string, layers int) error {
	if layers < 1 {
		return fmt.Errorf("-layers %d: give 1 or more", layers)
	}
	kernels := []int64{3, 1, 5, 3, 7, 3}
	channels := []int64{64, 96, 128, 80, 160, 112, 192, 72}
	r := tm.NewRand(4838)
	g := &onnxpb.GraphProto{Name: "deepconv"}
	g.Input = append(g.Input, tm.Value("images", tm.F32, 1, 64, 112, 112))
	prev, cin := "images", int64(64)
	for i := 0; i < layers; i++ {
		k := kernels[i%len(kernels)]
		cout := channels[(i*3+1)%len(channels)]
		if k == 7 && cout > 96 {
			cout = 96 // keeps the largest weights small
		}
		w := fmt.Sprintf("w%d", i)
		b := fmt.Sprintf("b%d", i)
		n := int(cout * cin * k * k)
		g.Initializer = append(g.Initializer,
			tm.Floats(w, []int64{cout, cin, k, k}, r.Floats(n, 0.05)),
			tm.Floats(b, []int64{cout}, r.Floats(int(cout), 0.05)))
		conv := fmt.Sprintf("conv%d", i)
		relu := fmt.Sprintf("relu%d", i)
		g.Node = append(g.Node,
			tm.Node(fmt.Sprintf("/layer%d/Conv", i), "Conv", []string{prev, w, b}, []string{conv},
				tm.AttrInts("kernel_shape", k, k), tm.AttrInts("pads", k/2, k/2, k/2, k/2)),
			tm.Node(fmt.Sprintf("/layer%d/Relu", i), "Relu", []string{conv}, []string{relu}))
		prev, cin = relu, cout
	}
	g.Output = append(g.Output, tm.Value(prev, tm.F32, 1, int(cin), 112, 112))
	data, err := tm.Marshal(tm.Model(g))
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
