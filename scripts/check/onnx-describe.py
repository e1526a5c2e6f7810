#!/usr/bin/env python3
"""Describe ONNX models with the onnx Python package, for trtbuild's cross-check test.

Usage: check/onnx-describe.py [--check] MODEL...

Prints one JSON object mapping each MODEL path to what onnx.load sees: IR version, opsets,
the main graph's node count, and its inputs (graph inputs that are not initializers) and
outputs with element type numbers and dimensions (an int for a fixed size, a string for a
named dimension, null for an unknown one; the whole shape is null when the rank is unknown).
With --check, each model also goes through onnx.checker.check_model(full_check=True) and
"checker" is "ok" or the checker's message.
"""
import json
import sys

import onnx


def value(v):
    t = v.type.tensor_type
    shape = None
    if t.HasField("shape"):
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.HasField("dim_param"):
                shape.append(d.dim_param)
            else:
                shape.append(None)
    return {"name": v.name, "elem_type": t.elem_type, "shape": shape}


def describe(path, check):
    m = onnx.load(path)
    g = m.graph
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    out = {
        "ir_version": m.ir_version,
        "opsets": [[o.domain or "ai.onnx", o.version] for o in m.opset_import],
        "nodes": len(g.node),
        "initializers": len(g.initializer) + len(g.sparse_initializer),
        "inputs": [value(v) for v in g.input if v.name not in inits],
        "outputs": [value(v) for v in g.output],
    }
    if check:
        try:
            onnx.checker.check_model(m, full_check=True)
            out["checker"] = "ok"
        except Exception as e:  # the checker raises several exception types
            out["checker"] = " ".join(str(e).split())
    return out


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    json.dump({p: describe(p, check) for p in paths}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
