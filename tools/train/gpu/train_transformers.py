#!/usr/bin/env python3
"""Trains the default model's weights on a GPU with transformers' own MarianMTModel, for machines where the
C++ trainer (tools/train/train_default_model.sh) would take days: same data, same tokenization (ids made by
dragoman-cli tokenize, see tools/train/gpu/prepare_ids.sh), same shape, loss and optimizer settings, more
epochs. tst_transformers_parity shows the engine computes exactly what MarianMTModel computes, so these
weights serve as trained.

  python3 train_transformers.py --data DIR --layout DIR --out DIR [--seconds 420] [--seed 1]

DIR holds {train,valid}.{src,tgt}.ids (comma-separated ids per line). Trains until --seconds have passed or
--epochs are done, validating after every epoch; exports the better of the best epoch and the average of the
last five epochs' weights as OUT/model.safetensors (float32, the keys the engine reads), with OUT/log.json."""
import argparse
import collections
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import MarianConfig, MarianMTModel


def read_ids(path):
    return [[int(v) for v in line.split(",")] for line in Path(path).read_text().splitlines()]


def load(data, split, max_tokens):
    pairs = zip(read_ids(data / f"{split}.src.ids"), read_ids(data / f"{split}.tgt.ids"))
    return [(s, t) for s, t in pairs if 0 < len(s) <= max_tokens and 0 < len(t) <= max_tokens]


def batches(examples, batch_tokens, rng):
    # As the C++ trainer: shuffle, sort by length (ties in shuffled order), cut by padded size, shuffle batches.
    order = list(range(len(examples)))
    rng.shuffle(order)
    order.sort(key=lambda i: max(len(examples[i][0]), len(examples[i][1])))
    out, current, longest = [], [], 0
    for i in order:
        length = max(len(examples[i][0]), len(examples[i][1]))
        if current and max(longest, length) * (len(current) + 1) > batch_tokens:
            out.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    if current:
        out.append(current)
    rng.shuffle(out)
    return out


def tensors(examples, batch, pad, start, device):
    src_len = max(len(examples[i][0]) for i in batch)
    tgt_len = max(len(examples[i][1]) for i in batch)
    src = torch.full((len(batch), src_len), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), src_len), dtype=torch.long)
    dec_in = torch.full((len(batch), tgt_len), pad, dtype=torch.long)
    labels = torch.full((len(batch), tgt_len), -100, dtype=torch.long)
    for r, i in enumerate(batch):
        s, t = examples[i]
        src[r, :len(s)] = torch.tensor(s)
        mask[r, :len(s)] = 1
        dec_in[r, :len(t)] = torch.tensor([start] + t[:-1])  # shift_tokens_right
        labels[r, :len(t)] = torch.tensor(t)
    return src.to(device), mask.to(device), dec_in.to(device), labels.to(device)


def loss_sum(model, batch_tensors, smoothing):
    src, mask, dec_in, labels = batch_tensors
    logits = model(input_ids=src, attention_mask=mask, decoder_input_ids=dec_in).logits
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100,
                           label_smoothing=smoothing, reduction="sum")


def validate(model, valid, valid_batches, pad, start, device):
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
        for b in valid_batches:
            total = total + float(loss_sum(model, tensors(valid, b, pad, start, device), 0.0))
            tokens += sum(len(valid[i][1]) for i in b)
    model.train()
    return total / tokens


def export(state, path):
    # The keys MarianModel binds: tied copies (lm_head, embed_tokens) and the computed sinusoids are left out.
    skip = ("lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    tensors_ = {k: v.detach().float().cpu().contiguous().clone() for k, v in state.items()
                if k not in skip and "embed_positions" not in k}
    save_file(tensors_, str(path), metadata={"format": "pt"})
    return sorted(tensors_)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--layout", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seconds", type=float, default=420)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--limit", type=int, default=0, help="use only the first N training pairs (smoke tests)")
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--lr", type=float, default=8e-4)
    p.add_argument("--warmup", type=int, default=600)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    begin = time.time()
    device = a.device
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    config = MarianConfig.from_pretrained(a.layout)
    pad, start = config.pad_token_id, config.decoder_start_token_id
    train, valid = load(a.data, "train", a.max_tokens), load(a.data, "valid", a.max_tokens)
    if a.limit:
        train = train[:a.limit]
    valid_batches = batches(valid, 8000, random.Random(0))
    model = MarianMTModel(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=1e-4)
    log = {"examples": [len(train), len(valid)], "parameters": sum(p.numel() for p in model.parameters()),
           "args": {k: str(v) for k, v in vars(a).items()}, "epochs": []}
    a.out.mkdir(parents=True, exist_ok=True)
    recent = collections.deque(maxlen=5)
    best = (math.inf, None, 0)
    step = 0
    for epoch in range(1, a.epochs + 1):
        epoch_start, total, tokens = time.time(), torch.zeros((), device=device), 0
        for b in batches(train, a.batch_tokens, rng):
            n = sum(len(train[i][1]) for i in b)  # counted on the host: no device sync per step
            step += 1
            for group in optimizer.param_groups:
                group["lr"] = a.lr * min(step / a.warmup, math.sqrt(a.warmup / step))
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = loss_sum(model, tensors(train, b, pad, start, device), a.label_smoothing)
            (loss / n).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total, tokens = total + loss.detach(), tokens + n
        total = float(total)
        val = validate(model, valid, valid_batches, pad, start, device)
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        recent.append(state)
        if val < best[0]:
            best = (val, state, epoch)
        log["epochs"].append({"epoch": epoch, "step": step, "train_loss": total / tokens, "valid_loss": val,
                              "seconds": round(time.time() - epoch_start, 2)})
        print(f"epoch {epoch} step {step} train {total / tokens:.4f} valid {val:.4f} ({time.time() - epoch_start:.1f} s)", flush=True)
        (a.out / "log.json").write_text(json.dumps(log, indent=1))
        if time.time() - begin > a.seconds:
            break
    averaged = {k: sum(s[k].float() for s in recent) / len(recent) if recent[0][k].is_floating_point() else recent[-1][k]
                for k in recent[-1]}
    model.load_state_dict(averaged)
    averaged_val = validate(model, valid, valid_batches, pad, start, device)
    chosen = ("average of last 5 epochs", averaged, averaged_val) if averaged_val <= best[0] else (f"epoch {best[2]}", best[1], best[0])
    log["exported"] = {"weights": chosen[0], "valid_loss": chosen[2], "best_epoch": best[2], "best_valid_loss": best[0],
                       "average_valid_loss": averaged_val, "keys": export(chosen[1], a.out / "model.safetensors"),
                       "total_seconds": round(time.time() - begin, 1)}
    (a.out / "log.json").write_text(json.dumps(log, indent=1))
    print("exported", chosen[0], "valid", chosen[2], flush=True)


if __name__ == "__main__":
    main()
