#!/usr/bin/env python3
"""Export a few real PyTorch architectures to ONNX for the conversion's numeric check.

    check/export-torch-test-models.py OUT_DIR

Writes resnet18.onnx, mobilenet_v3_small.onnx (torchvision, randomly
initialized: no download) and transformer.onnx (a two-layer
nn.TransformerEncoder with layer norms and softmax attention) at opset 17
with the TorchScript exporter, and transformer_opset22.onnx with the
dynamo exporter at opset 22, the first opset whose Conv, pooling and
normalization operators accept bfloat16; then prints their paths. Needs
torch, torchvision and, for the dynamo export, onnxscript.
"""

import os
import sys

import torch
import torchvision


def export(model, args, path, names, opset=17, dynamo=False):
    model.eval()
    kwargs = dict(opset_version=opset, input_names=names[0], output_names=names[1])
    if dynamo:
        program = torch.onnx.export(model, args, dynamo=True, external_data=False, **kwargs)
        program.save(path)
    else:
        torch.onnx.export(model, args, path, dynamo=False, **kwargs)
    print(path, flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    image = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        export(torchvision.models.resnet18(weights=None), (image,), os.path.join(out, "resnet18.onnx"), (["images"], ["logits"]))
        export(torchvision.models.mobilenet_v3_small(weights=None), (image,), os.path.join(out, "mobilenet_v3_small.onnx"),
               (["images"], ["logits"]))
        # The fused inference path of nn.MultiheadAttention has no ONNX export.
        torch.backends.mha.set_fastpath_enabled(False)
        layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, batch_first=True, dropout=0.0)
        encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        tokens = torch.randn(1, 16, 128)
        export(encoder, (tokens,), os.path.join(out, "transformer.onnx"), (["tokens"], ["encoded"]))
        export(encoder, (tokens,), os.path.join(out, "transformer_opset22.onnx"), (["tokens"], ["encoded"]), opset=22, dynamo=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
