#!/usr/bin/env python3
"""Compare an ONNX model with its float16/bfloat16 conversion on random inputs.

    check/convert-numerics.py ORIGINAL.onnx CONVERTED.onnx [ORIGINAL2 CONVERTED2 ...]

Both models run in ONNX Runtime on the same random inputs (several
samples); for every output the script reports the relative L2 error
||converted - original|| / ||original|| and the largest absolute difference
relative to the largest original magnitude, the worst over the samples
(NaNs and infinities must be in the same places); for integer and boolean
outputs, the fraction of elements that differ. A float16 conversion is
expected around 1e-3, bfloat16 around 1e-2.

Exit status: 0 when every output is within --tolerance, 1 when one is
not, 2 for bad arguments, 3 when ONNX Runtime is not installed or could
not run some model (for example when it has no kernel for an operator in
the converted type on the chosen device: that pair is reported as SKIP
with the reason, and the others are still compared).
"""

import argparse
import json
import sys


def fail(code, msg):
    print(f"check-convert-numerics: {msg}", file=sys.stderr)
    sys.exit(code)


try:
    import numpy as np
except ImportError:
    fail(3, "numpy is not installed; install python3-numpy (or pip install numpy)")

try:
    import onnxruntime as ort
except ImportError:
    fail(3, "onnxruntime is not installed, so the numeric check cannot run; "
            "install it with pip install onnxruntime (or onnxruntime-gpu) and run again")

# ONNX Runtime's type strings and the NumPy types to feed them with.
NUMPY = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


def parse_dims(items):
    dims = {}
    for item in items or []:
        name, _, value = item.partition("=")
        if not value.isdigit():
            fail(2, f"--dim {item!r}: want NAME=SIZE, for example batch=4")
        dims[name] = int(value)
    return dims


def shape_of(arg, dims, default):
    shape = []
    for d in arg.shape:
        if isinstance(d, int) and d >= 0:
            shape.append(d)
        elif isinstance(d, str) and d in dims:
            shape.append(dims[d])
        else:
            shape.append(default)
    return shape


def random_input(rng, arg, dims, default, int_high):
    shape = shape_of(arg, dims, default)
    t = arg.type
    if t in ("tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)"):
        return rng.standard_normal(shape).astype(np.float32)
    if t == "tensor(bool)":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if t == "tensor(uint8)":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if t in NUMPY:
        return rng.integers(0, int_high, shape).astype(NUMPY[t])
    fail(2, f"input {arg.name!r} has type {t}, which this script cannot make random values for")


def feed_for(session, values):
    """Casts the float32 sample values to each input's declared type."""
    feed = {}
    for arg in session.get_inputs():
        v = values[arg.name]
        if arg.type == "tensor(bfloat16)":
            raise CannotRun(f"input {arg.name!r} is bfloat16, which NumPy cannot hold; convert with --keep-io-types")
        feed[arg.name] = v.astype(NUMPY[arg.type]) if arg.type in NUMPY else v
    return feed


class CannotRun(Exception):
    """The runtime cannot load or run a model."""


class Arg:
    """An input or output as the ONNX reference runtime's stand-in for ONNX Runtime's NodeArg."""

    def __init__(self, vi):
        import onnx

        self.name = vi.name
        tt = vi.type.tensor_type
        self.type = "tensor(" + onnx.TensorProto.DataType.Name(tt.elem_type).lower() + ")"
        self.shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]


class ReferenceSession:
    """Runs a model with onnx.reference.ReferenceEvaluator, which computes
    bfloat16 (through ml_dtypes) where ONNX Runtime's CPU kernels do not."""

    def __init__(self, path):
        import onnx
        from onnx.reference import ReferenceEvaluator

        model = onnx.load(path)
        inits = {t.name for t in model.graph.initializer}
        self.inputs = [Arg(vi) for vi in model.graph.input if vi.name not in inits]
        self.outputs = [Arg(vi) for vi in model.graph.output]
        self.evaluator = ReferenceEvaluator(model)

    def get_inputs(self):
        return self.inputs

    def get_outputs(self):
        return self.outputs

    def run(self, names, feed):
        return self.evaluator.run(names, feed)


def session(path, providers):
    if providers == ["reference"]:
        try:
            return ReferenceSession(path)
        except Exception as e:  # noqa: BLE001
            raise CannotRun(f"the ONNX reference runtime cannot run {path}: {str(e).strip().splitlines()[0]}") from e
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(path, opts, providers=providers)
    except Exception as e:  # noqa: BLE001 - every failure to load is reported the same way
        raise CannotRun(f"ONNX Runtime cannot run {path}: {str(e).strip().splitlines()[0]}") from e


def compare(original, converted, args, providers):
    ref = session(original, providers)
    low = session(converted, providers)
    rng = np.random.default_rng(args.seed)
    dims = parse_dims(args.dim)
    worst = {}
    for _ in range(args.samples):
        values = {a.name: random_input(rng, a, dims, args.default_dim, args.int_high) for a in ref.get_inputs()}
        try:
            want = ref.run(None, feed_for(ref, values))
            got = low.run(None, feed_for(low, values))
        except CannotRun:
            raise
        except Exception as e:  # noqa: BLE001 - a kernel missing at run time
            raise CannotRun(f"ONNX Runtime failed running {converted}: {str(e).strip().splitlines()[0]}") from e
        for meta, w, g in zip(ref.get_outputs(), want, got):
            w = np.asarray(w)
            g = np.asarray(g)
            if w.shape != g.shape:
                rel, peak = float("inf"), float("inf")
            elif w.dtype.kind not in "fc":
                # Integer or boolean outputs: the fraction of elements that differ.
                rel = peak = float(np.mean(w != g)) if w.size else 0.0
            else:
                w64, g64 = w.astype(np.float64), g.astype(np.float64)
                finite = np.isfinite(w64)
                same_special = np.array_equal(w64[~finite], g64[~finite], equal_nan=True)
                if not same_special or not np.all(np.isfinite(g64[finite])):
                    rel, peak = float("inf"), float("inf")  # an overflow, or a NaN or infinity moved
                else:
                    w64, g64 = w64[finite], g64[finite]
                    norm = np.linalg.norm(w64)
                    diff = np.linalg.norm(g64 - w64)
                    rel = float(diff / norm) if norm > 0 else float(diff)
                    scale = float(np.max(np.abs(w64), initial=0))
                    worst_abs = float(np.max(np.abs(g64 - w64), initial=0))
                    peak = worst_abs / scale if scale > 0 else worst_abs
            prev = worst.get(meta.name, (0.0, 0.0))
            worst[meta.name] = (max(prev[0], rel), max(prev[1], peak))
    kinds = {m.name: m.type for m in ref.get_outputs()}
    rows = []
    for name, (r, p) in worst.items():
        floating = kinds[name] in ("tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)")
        limit = args.tolerance if floating else args.int_tolerance
        rows.append({"model": converted, "output": name, "float": floating, "rel_l2": r, "rel_max": p, "ok": r <= limit})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="pairs of ORIGINAL CONVERTED model paths")
    ap.add_argument("--samples", type=int, default=8, help="random input sets per model (default 8)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", action="append", help="size of a named dynamic dimension, NAME=SIZE (repeatable)")
    ap.add_argument("--default-dim", type=int, default=2, help="size of other dynamic dimensions (default 2)")
    ap.add_argument("--int-high", type=int, default=10, help="integer inputs are drawn from [0, this) (default 10)")
    ap.add_argument("--tolerance", type=float, default=1e-2, help="largest acceptable relative L2 error of float outputs (default 1e-2)")
    ap.add_argument("--int-tolerance", type=float, default=0.0,
                    help="largest acceptable fraction of differing elements of integer and boolean outputs (default 0: exact)")
    ap.add_argument("--provider", default="auto",
                    help="auto (CUDA when available, else CPU), cuda, cpu, or reference: the onnx package's "
                         "reference runtime, slow but able to compute bfloat16")
    ap.add_argument("--json", action="store_true", help="print one JSON object per output")
    args = ap.parse_args()
    if len(args.models) % 2:
        fail(2, "give the models in pairs: ORIGINAL.onnx CONVERTED.onnx ...")
    available = ort.get_available_providers()
    if args.provider == "reference":
        providers = ["reference"]
    elif args.provider == "cpu" or (args.provider == "auto" and "CUDAExecutionProvider" not in available):
        providers = ["CPUExecutionProvider"]
    elif "CUDAExecutionProvider" in available:
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    else:
        fail(3, f"--provider cuda: this onnxruntime has {', '.join(available)}")
    if not args.json:
        runtime = "onnx reference runtime" if providers == ["reference"] else f"onnxruntime {ort.__version__}, {providers[0]}"
        print(f"{runtime}, {args.samples} samples, seed {args.seed}")
    failed = skipped = 0
    for original, converted in zip(args.models[::2], args.models[1::2]):
        try:
            rows = compare(original, converted, args, providers)
        except CannotRun as e:
            skipped += 1
            if args.json:
                print(json.dumps({"model": converted, "error": str(e)}))
            else:
                print(f"SKIP {converted}: {e}")
            continue
        for r in rows:
            failed += not r["ok"]
            if args.json:
                print(json.dumps(r))
            else:
                mark = "ok  " if r["ok"] else "FAIL"
                if r["float"]:
                    print(f"{mark} {r['model']}  {r['output']}: "
                          f"relative L2 error {r['rel_l2']:.2e}, max error {r['rel_max']:.2e} of the largest value")
                else:
                    print(f"{mark} {r['model']}  {r['output']}: {r['rel_l2']:.2%} of the elements differ")
    if failed:
        return 1
    return 3 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
