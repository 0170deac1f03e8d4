#!/usr/bin/env python3
"""Reference logits of a W8A8 checkpoint (int8 weights, int8 activations quantized per token), independent of the
engine: the fixture generator's plain-PyTorch MarianMTModel / HunYuanDenseV1 (../shared/fixtures/gen) over the
dequantized weights, every linear layer's input fake-quantized as compressed-tensors does for a dynamic "token"
strategy (scale = max|x| / 127.5, at least float32's epsilon; round half to even; clamp to [-128, 127]).

    w8a8_reference.py GEN_DIR MODEL_DIR --ids 1,2,3 [--decoder-ids 4,5] --out FILE.npy
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F


def fake_quantized(x):
    x = x.to(torch.float32)
    scale = (x.abs().amax(dim=-1, keepdim=True) / 127.5).clamp_min(torch.finfo(torch.float32).eps)
    return torch.clamp(torch.round(x / scale), -128, 127) * scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("gen")
    parser.add_argument("model")
    parser.add_argument("--ids", required=True)
    parser.add_argument("--decoder-ids")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.gen)
    from st_io import load_numpy  # the generator's own reader

    model = Path(args.model)
    cfg = json.loads((model / "config.json").read_text())
    raw = load_numpy(str(model / "model.safetensors"))[1]
    weights, quantized = {}, set()
    for name, value in raw.items():
        if name.endswith(".weight_scale"):
            continue
        value = torch.as_tensor(np.asarray(value))
        scale = raw.get(name + "_scale")
        if scale is not None:  # codes times their scale, in float64 as quant.py's twin
            value = value.to(torch.float64) * torch.as_tensor(np.asarray(scale)).to(torch.float64).reshape(-1, 1)
        weights[name] = value.to(torch.float32)
        if scale is not None:
            quantized.add(id(weights[name]))
    # The inputs of the layers whose weights are int8 (a tied output layer's too); layers kept in floating point
    # ("ignore", --keep-embeddings) read their inputs as they are.
    linear = F.linear
    F.linear = lambda x, w, b=None: linear(fake_quantized(x) if id(w) in quantized else x, w, b)
    ids = [int(i) for i in args.ids.split(",")]
    with torch.no_grad():
        if cfg.get("model_type") == "marian":
            from marian_ref import MarianRef
            ref = MarianRef(cfg, weights)
            logits = ref.decode([int(i) for i in args.decoder_ids.split(",")], ref.encode(ids))
        else:
            from hunyuan_ref import HunYuanRef
            logits = HunYuanRef(cfg, weights).forward(ids)[0]
    np.save(args.out, logits.to(torch.float32).numpy())


if __name__ == "__main__":
    main()
