#!/usr/bin/env python3
"""Writes schemas.json: the type signature of every ONNX operator version.

The table is read from the operator schemas of the installed onnx Python
package (Apache-2.0, ONNX Project Contributors). Use the newest onnx release
available, since the table decides which opsets trtbuild can convert:

    python3 gen_schemas.py -o schemas.json

Each line after the first is one operator version:
    {"d": domain, "n": name, "v": since_version, "x": deprecated,
     "i": [[name, type, option, homogeneous], ...], "o": [...],
     "c": {constraint: [allowed type, ...]}}
option is 0 (single), 1 (optional) or 2 (variadic). The first line names the
onnx release and the newest opset of each domain.
"""

import argparse
import json
import sys

import onnx
from onnx import defs, helper

DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training")


def attr(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(names[0])


def param(p):
    return [
        p.name,
        attr(p, "type_str", "typeStr"),
        int(attr(p, "option").value),
        1 if attr(p, "is_homogeneous", "isHomogeneous") else 0,
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    rows = []
    newest = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain not in DOMAINS:
            continue
        rows.append({
            "d": s.domain,
            "n": s.name,
            "v": s.since_version,
            "x": 1 if s.deprecated else 0,
            "i": [param(p) for p in s.inputs],
            "o": [param(p) for p in s.outputs],
            "c": {c.type_param_str: sorted(c.allowed_type_strs) for c in s.type_constraints},
        })
    rows.sort(key=lambda r: (r["d"], r["n"], r["v"]))

    # The newest opset of each domain this onnx release defines.
    newest[""] = defs.onnx_opset_version()
    for d in DOMAINS[1:]:
        versions = [r["v"] for r in rows if r["d"] == d]
        newest[d] = max(versions) if versions else 0
    ml = [t for t in helper.VERSION_TABLE if t[0] == onnx.__version__]
    if ml:
        newest["ai.onnx.ml"] = max(newest["ai.onnx.ml"], ml[-1][3])

    with open(args.output, "w", encoding="utf-8") as f:
        f.write(json.dumps({"onnx": onnx.__version__, "opset": newest}, sort_keys=True,
                           separators=(",", ":")) + "\n")
        for r in rows:
            f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
