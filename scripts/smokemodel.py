#!/usr/bin/env python3
"""Write the model of scripts/gpu-smoke.sh's cancel checks.

    smokemodel.py [-o deepconv.onnx] [--layers 48]

A deep convolution network whose layers all differ (kernel size, channels), so
that TensorRT must time tactics for each one and a build lasts long enough,
also on an H100 or H200, for a cancel to land after some layers were timed and
well before the last. Input "images" 1x64x112x112 float32; 48 Conv+Relu
layers; about 37 MB of weights. ONNX IR version 8, opset 17 (what onnx 1.12,
Debian 12's python3-onnx, writes and reads). The weights come from a
counter-based generator (splitmix64) in integer arithmetic, so the file is the
same with every NumPy and onnx version. Needs the onnx package (and NumPy,
which onnx needs). Prints the model's path.
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8
OPSET = 17
KERNELS = [3, 1, 5, 3, 7, 3]
CHANNELS = [64, 96, 128, 80, 160, 112, 192, 72]
SIZE = 112


def floats(start, n, scale):
    """n values uniform in [-scale, scale) from splitmix64 of the counters start, start+1, ..."""
    x = (np.arange(n, dtype=np.uint64) + np.uint64(start)) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    u = (x >> np.uint64(40)).astype(np.float32) / np.float32(1 << 24)
    return (np.float32(2) * u - np.float32(1)) * np.float32(scale)


def model(layers):
    counter = 4838  # where the generator starts; each tensor takes the next counters
    initializers, nodes = [], []
    prev, cin = "images", 64
    for i in range(layers):
        k = KERNELS[i % len(KERNELS)]
        cout = CHANNELS[(i * 3 + 1) % len(CHANNELS)]
        if k == 7 and cout > 96:
            cout = 96  # keeps the largest weights small
        w, b = "w%d" % i, "b%d" % i
        n = cout * cin * k * k
        initializers.append(numpy_helper.from_array(floats(counter, n, 0.05).reshape(cout, cin, k, k), w))
        counter += n
        initializers.append(numpy_helper.from_array(floats(counter, cout, 0.05), b))
        counter += cout
        conv, relu = "conv%d" % i, "relu%d" % i
        nodes.append(helper.make_node("Conv", [prev, w, b], [conv], name="/layer%d/Conv" % i,
                                      kernel_shape=[k, k], pads=[k // 2] * 4))
        nodes.append(helper.make_node("Relu", [conv], [relu], name="/layer%d/Relu" % i))
        prev, cin = relu, cout
    graph = helper.make_graph(
        nodes, "deepconv",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 64, SIZE, SIZE])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, cin, SIZE, SIZE])],
        initializer=initializers)
    m = helper.make_model(graph, producer_name="trtbuild smoke model", producer_version="1",
                          opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", default="deepconv.onnx", help="file to write")
    parser.add_argument("--layers", type=int, default=48, help="Conv+Relu layers")
    args = parser.parse_args()
    if args.layers < 1:
        print("smokemodel.py: --layers %d: give 1 or more" % args.layers, file=sys.stderr)
        return 2
    onnx.save(model(args.layers), args.o)
    print(args.o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
