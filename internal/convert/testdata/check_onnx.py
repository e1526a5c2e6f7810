#!/usr/bin/env python3
"""Checks ONNX models the way the conversion tests require.

For each model path: onnx.checker.check_model(full_check=True) and
onnx.shape_inference.infer_shapes(check_type=True, strict_mode=True).
Prints one JSON object per model: {"path": ..., "ok": bool, "error": str}.
Exits 0 when the checks ran, whatever their results.
"""

import json
import sys

import onnx
from onnx import checker, shape_inference


def check(path):
    try:
        # The loaded model, not its path: given a path, onnx 1.12's check_model(full_check=True)
        # runs infer_shapes_path, which writes the inferred shapes back into the file.
        model = onnx.load(path)
        checker.check_model(model, full_check=True)
        shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:  # noqa: BLE001 - any failure is reported
        return {"path": path, "ok": False, "error": f"{type(e).__name__}: {e}".strip()}
    return {"path": path, "ok": True, "error": ""}


def main():
    for path in sys.argv[1:]:
        print(json.dumps(check(path)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
