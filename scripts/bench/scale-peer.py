#!/usr/bin/env python3
"""The naive Python peer of scripts/bench-scale.sh.

    bench/scale-peer.py convert IN.onnx OUT.onnx   onnx.load + numpy astype(float16) + onnx.save
    bench/scale-peer.py convert-external IN OUT    the same, saving the weights to OUT.onnx.data
    bench/scale-peer.py inspect IN.onnx            onnx.load(..., load_external_data=False)

convert turns every float32 initializer into float16 with numpy and saves
the model, with its weights in OUT.onnx.data for models with external
data (convert-external). It inserts no Cast nodes and changes no value types: it is the least
work a Python script does for the same weights, not an equivalent tool.
"""

import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    mode, src = sys.argv[1], sys.argv[2]
    if mode == "inspect":
        m = onnx.load(src, load_external_data=False)
        print(len(m.graph.node), "nodes")
        return
    dst = sys.argv[3]
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.data_type == onnx.TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    if mode == "convert-external":
        onnx.save(m, dst, save_as_external_data=True, location=os.path.basename(dst) + ".data")
    else:
        onnx.save(m, dst)


if __name__ == "__main__":
    main()
