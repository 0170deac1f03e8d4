#!/usr/bin/env python3
"""Trains the default model's weights on a GPU with transformers' own MarianMTModel, for machines where the
C++ trainer (tools/train/train_default_model.sh) would take days: same data, same tokenization (ids made by
the engine's tokenizer, see tools/train/gpu/prepare_ids.sh), same loss and optimizer settings.
tst_transformers_parity shows the engine computes exactly what MarianMTModel computes, so these weights serve
as trained.

  python3 train_transformers.py --data DIR --layout DIR --out DIR [--seconds 420] [--schedule cosine]

DIR holds {train,valid}.{src,tgt}.ids (comma-separated ids per line; .ids.xz is read too). Trains until
--seconds have passed or --epochs are done, validating after every epoch. With --schedule cosine the number of
epochs is planned from the first epoch's duration so that the learning rate reaches its floor when the time is
up (a GPU lease is short and fixed); inv-sqrt is the C++ trainer's schedule. Exports the better (by validation
loss) of the best epoch and the average of the last --average epochs as OUT/model.safetensors (the keys the
engine reads; --export-dtype bfloat16 halves the file), with OUT/log.json.

Resumable: after every epoch the whole state (weights, optimizer, schedule, random generators, the epochs kept
for averaging, the time spent) goes to OUT/checkpoint.pt, written atomically; run the same command again after an
interruption and it continues from the last finished epoch."""
import argparse
import collections
import json
import lzma
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import MarianConfig, MarianMTModel


def read_ids(data, name):
    plain, packed = data / name, data / f"{name}.xz"
    text = plain.read_text() if plain.exists() else lzma.decompress(packed.read_bytes()).decode()
    return [[int(v) for v in line.split(",")] for line in text.splitlines()]


def load(data, split, max_tokens):
    pairs = zip(read_ids(data, f"{split}.src.ids"), read_ids(data, f"{split}.tgt.ids"))
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
    src = np.full((len(batch), src_len), pad, dtype=np.int64)
    mask = np.zeros((len(batch), src_len), dtype=np.int64)
    dec_in = np.full((len(batch), tgt_len), pad, dtype=np.int64)
    labels = np.full((len(batch), tgt_len), -100, dtype=np.int64)
    for r, i in enumerate(batch):
        s, t = examples[i]
        src[r, :len(s)] = s
        mask[r, :len(s)] = 1
        dec_in[r, 0] = start  # shift_tokens_right
        dec_in[r, 1:len(t)] = t[:-1]
        labels[r, :len(t)] = t
    pinned = device != "cpu"
    return tuple(torch.from_numpy(a).pin_memory().to(device, non_blocking=True) if pinned else torch.from_numpy(a)
                 for a in (src, mask, dec_in, labels))


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


def dequantized(weights):
    """Float weights of a checkpoint, int8/FP8 ones (compressed-tensors, per-channel or per-tensor weight_scale,
    as `dragoman-cli quantize` writes them) multiplied out."""
    out = {}
    for k, v in weights.items():
        if k.endswith(".weight_scale"):
            continue
        scale = weights.get(f"{k}_scale")
        out[k] = v.float() * scale.float() if scale is not None else v.float()
    return out


def export(state, path, dtype):
    # The keys MarianModel binds: tied copies (lm_head, embed_tokens) and the computed sinusoids are left out.
    state = dict(state)
    if "model.shared.weight" not in state:  # a transformers version that keeps only the tied copies
        state["model.shared.weight"] = state["model.encoder.embed_tokens.weight"]
    skip = ("lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    tensors_ = {k: v.detach().to(dtype).cpu().contiguous().clone() for k, v in state.items()
                if k not in skip and "embed_positions" not in k}
    save_file(tensors_, str(path), metadata={"format": "pt"})
    return sorted(tensors_)


class Schedule:
    """inv-sqrt: linear warm-up, then peak * sqrt(warmup / step). cosine: linear warm-up, then a half cosine from
    the peak down to --min-lr-ratio of it over the planned steps (re-planned after every epoch)."""

    def __init__(self, a):
        self.a, self.total = a, None

    def plan(self, total_steps):
        self.total = max(total_steps, self.a.warmup + 1)

    def __call__(self, step):
        a = self.a
        if step < a.warmup:
            return a.lr * step / a.warmup
        if a.schedule == "inv-sqrt":
            return a.lr * math.sqrt(a.warmup / step)
        if self.total is None:  # the first epoch: not planned yet
            return a.lr
        progress = min(1.0, (step - a.warmup) / (self.total - a.warmup))
        return a.lr * (a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def save_checkpoint(path, state):
    # Atomic: an interruption while writing leaves the previous checkpoint whole.
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--layout", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seconds", type=float, default=420)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--hard-seconds", type=float, default=0,
                   help="stop mid-epoch once this much time has passed, still exporting (a lease's hard end)")
    p.add_argument("--limit", type=int, default=0, help="use only the first N training pairs (smoke tests)")
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--lr", type=float, default=8e-4)
    p.add_argument("--warmup", type=int, default=600)
    p.add_argument("--schedule", choices=("inv-sqrt", "cosine"), default="inv-sqrt")
    p.add_argument("--min-lr-ratio", type=float, default=0.05)
    p.add_argument("--average", type=int, default=5, help="average the last N epochs' weights")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cuda")
    p.add_argument("--init", type=Path, help="start from these weights (an earlier run's model.safetensors)")
    p.add_argument("--export-dtype", choices=("float32", "bfloat16"), default="float32")
    p.add_argument("--progress-every", type=int, default=0, help="print the running loss every N steps")
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
    model = MarianMTModel(config)
    if a.init:  # continuing a finished run for more epochs: weights only, a fresh optimizer and warm-up
        weights = dequantized(load_file(str(a.init)))
        missing, unexpected = model.load_state_dict(weights, strict=False)
        missing = [k for k in missing if "embed_positions" not in k and not k.endswith("embed_tokens.weight")
                   and k != "lm_head.weight"]
        if missing or unexpected:
            raise SystemExit(f"{a.init}: missing {missing}, unexpected {unexpected}")
    model = model.to(device).train()
    fused = {"fused": True} if device.startswith("cuda") else {}
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=1e-4, **fused)
    schedule = Schedule(a)
    log = {"examples": [len(train), len(valid)], "parameters": sum(p.numel() for p in model.parameters()),
           "args": {k: str(v) for k, v in vars(a).items()}, "load_seconds": round(time.time() - begin, 1),
           "epochs": []}
    print(f"{log['parameters']} parameters, {len(train)} training pairs, loaded in {log['load_seconds']} s", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    recent = collections.deque(maxlen=a.average)
    best = (math.inf, None, 0)
    step, planned = 0, a.epochs
    epoch = 0
    checkpoint = a.out / "checkpoint.pt"
    if checkpoint.exists():
        saved = torch.load(checkpoint, map_location=device, weights_only=False)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        epoch, step, schedule.total = saved["epoch"], saved["step"], saved["schedule_total"]
        # A cosine run keeps the plan it was on; otherwise --epochs of this command says how far to go.
        planned = saved["planned"] if a.schedule == "cosine" else a.epochs
        recent.extend(saved["recent"])
        best, log = saved["best"], saved["log"]
        rng.setstate(saved["rng"])
        torch.set_rng_state(saved["torch_rng"].cpu())
        if saved.get("cuda_rng") is not None and device.startswith("cuda"):
            torch.cuda.set_rng_state(saved["cuda_rng"].cpu())
        begin = time.time() - saved["elapsed"]
        print(f"resumed from {checkpoint} after epoch {epoch} (step {step}, {saved['elapsed']:.0f} s spent)", flush=True)
    while epoch < planned:
        epoch += 1
        epoch_start, total, tokens = time.time(), torch.zeros((), device=device), 0
        epoch_batches = batches(train, a.batch_tokens, rng)
        for b in epoch_batches:
            if a.hard_seconds and time.time() - begin > a.hard_seconds:
                print(f"hard time limit reached at step {step}", flush=True)
                planned = epoch
                break
            n = sum(len(train[i][1]) for i in b)  # counted on the host: no device sync per step
            step += 1
            for group in optimizer.param_groups:
                group["lr"] = schedule(step)
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = loss_sum(model, tensors(train, b, pad, start, device), a.label_smoothing)
            (loss / n).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total, tokens = total + loss.detach(), tokens + n
            if a.progress_every and step % a.progress_every == 0:
                print(f"  step {step} loss {float(total) / tokens:.4f} lr {schedule(step):.2e} "
                      f"({time.time() - begin:.0f} s)", flush=True)
        total, tokens = float(total), max(tokens, 1)
        seconds = time.time() - epoch_start
        if a.schedule == "cosine" and planned > epoch:  # as many more epochs as the time left holds, at this epoch's pace
            planned = min(a.epochs, epoch + int(max(0.0, a.seconds - (time.time() - begin)) // seconds))
            schedule.plan(planned * len(epoch_batches))
        val = validate(model, valid, valid_batches, pad, start, device)
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        recent.append(state)
        if val < best[0]:
            best = (val, state, epoch)
        log["epochs"].append({"epoch": epoch, "step": step, "train_loss": total / tokens, "valid_loss": val,
                              "seconds": round(seconds, 2), "planned_epochs": planned})
        print(f"epoch {epoch}/{planned} step {step} train {total / tokens:.4f} valid {val:.4f} ({seconds:.1f} s)",
              flush=True)
        (a.out / "log.json").write_text(json.dumps(log, indent=1))
        save_checkpoint(checkpoint, {
            "model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "step": step,
            "planned": planned, "schedule_total": schedule.total, "recent": list(recent), "best": best, "log": log,
            "rng": rng.getstate(), "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state() if device.startswith("cuda") else None,
            "elapsed": time.time() - begin})
        if a.schedule == "inv-sqrt" and time.time() - begin > a.seconds:
            break
    averaged = {k: sum(s[k].float() for s in recent) / len(recent) if recent[0][k].is_floating_point() else recent[-1][k]
                for k in recent[-1]}
    model.load_state_dict(averaged)
    averaged_val = validate(model, valid, valid_batches, pad, start, device)
    chosen = ((f"average of the last {len(recent)} epochs", averaged, averaged_val) if averaged_val <= best[0]
              else (f"epoch {best[2]}", best[1], best[0]))
    dtype = getattr(torch, a.export_dtype)
    log["exported"] = {"weights": chosen[0], "valid_loss": chosen[2], "best_epoch": best[2], "best_valid_loss": best[0],
                       "average_valid_loss": averaged_val, "dtype": a.export_dtype,
                       "keys": export(chosen[1], a.out / "model.safetensors", dtype),
                       "total_seconds": round(time.time() - begin, 1)}
    (a.out / "log.json").write_text(json.dumps(log, indent=1))
    print("exported", chosen[0], "valid", chosen[2], flush=True)


if __name__ == "__main__":
    main()
