#!/usr/bin/python3
"""Eager PyTorch baseline for HunYuanDenseV1 (HY-MT1.5) inference, the way transformers runs it on a CPU.

Same math and order of operations as transformers' modeling_hunyuan_v1_dense.py (eager attention): the model is
loaded in its checkpoint dtype (bf16 stays bf16, as torch_dtype="auto" does), RMSNorm and softmax in float32,
RoPE with base rope_theta * alpha^(head_dim / (head_dim - 2)), q/k RMSNorm after RoPE, GQA by repeating the
key/value heads, a DynamicCache that grows by concatenation. Like from_pretrained it reads the whole file into
memory (no mmap reuse). Needs only Debian's python3-torch and numpy.

    /usr/bin/python3 tools/baselines/hunyuan_eager.py --model DIR [--prompt-tokens 40] [--new-tokens 8] --json

The prompt is the formula shared with `dragoman-cli bench generate`: id j = 2 + (j*131) % (vocab - 3).
--process-start S: the caller's process start time (time.time()), to report start -> first token.
"""
import argparse
import json
import math
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=base + start).copy()
        if info["dtype"] == "BF16":
            t = torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16)
        elif info["dtype"] == "F32":
            t = torch.from_numpy(raw.view(np.float32))
        else:
            raise ValueError(f"{name}: unsupported dtype {info['dtype']}")
        out[name] = t.reshape(info["shape"])
    return out


class RMSNorm:
    def __init__(self, weight, eps):
        self.weight, self.eps = weight, eps

    def __call__(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Model:
    def __init__(self, cfg, w):
        self.cfg = cfg
        self.h, self.heads = cfg["hidden_size"], cfg["num_attention_heads"]
        self.kv = cfg.get("num_key_value_heads", self.heads)
        self.hd = cfg.get("head_dim", self.h // self.heads)
        eps = cfg.get("rms_norm_eps", 1e-5)
        self.embed = w["model.embed_tokens.weight"]
        self.lm_head = w.get("lm_head.weight", self.embed) if not cfg.get("tie_word_embeddings", True) else self.embed
        self.norm = RMSNorm(w["model.norm.weight"], eps)
        self.layers = []
        for i in range(cfg["num_hidden_layers"]):
            p = f"model.layers.{i}."
            self.layers.append({k: w[p + v] for k, v in {
                "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight", "v": "self_attn.v_proj.weight",
                "o": "self_attn.o_proj.weight", "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
                "down": "mlp.down_proj.weight"}.items()})
            self.layers[-1]["in_norm"] = RMSNorm(w[p + "input_layernorm.weight"], eps)
            self.layers[-1]["post_norm"] = RMSNorm(w[p + "post_attention_layernorm.weight"], eps)
            self.layers[-1]["q_norm"] = RMSNorm(w[p + "self_attn.query_layernorm.weight"], eps)
            self.layers[-1]["k_norm"] = RMSNorm(w[p + "self_attn.key_layernorm.weight"], eps)
        scaling = cfg.get("rope_scaling") or {}
        base = cfg.get("rope_theta", 10000.0)
        if scaling.get("alpha"):
            base = base * scaling["alpha"] ** (self.hd / (self.hd - 2))
        self.inv_freq = 1.0 / (base ** (torch.arange(0, self.hd, 2, dtype=torch.int64).float() / self.hd))
        self.dtype = self.embed.dtype

    def forward(self, ids, cache, start):
        t = ids.shape[1]
        x = F.embedding(ids, self.embed)
        pos = torch.arange(start, start + t).float()[None, :]
        freqs = (self.inv_freq[None, :, None] @ pos[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(self.dtype)[:, None], emb.sin().to(self.dtype)[:, None]
        mask = None
        if t > 1:
            mask = torch.full((t, start + t), float("-inf")).triu(start + 1)
        for i, l in enumerate(self.layers):
            r = x
            h = l["in_norm"](x)
            q = F.linear(h, l["q"]).view(1, t, self.heads, self.hd).transpose(1, 2)
            k = F.linear(h, l["k"]).view(1, t, self.kv, self.hd).transpose(1, 2)
            v = F.linear(h, l["v"]).view(1, t, self.kv, self.hd).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            q, k = l["q_norm"](q), l["k_norm"](k)
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], dim=2), torch.cat([cache[i][1], v], dim=2)
            cache[i] = (k, v)
            rep = self.heads // self.kv
            kk, vv = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            scores = torch.matmul(q, kk.transpose(2, 3)) / math.sqrt(self.hd)
            if mask is not None:
                scores = scores + mask
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            a = torch.matmul(probs, vv).transpose(1, 2).reshape(1, t, self.heads * self.hd)
            x = r + F.linear(a, l["o"])
            h = l["post_norm"](x)
            x = x + F.linear(F.silu(F.linear(h, l["gate"])) * F.linear(h, l["up"]), l["down"])
        x = self.norm(x)
        return F.linear(x[:, -1:], self.lm_head).float()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt-tokens", type=int, default=40)
    ap.add_argument("--new-tokens", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--process-start", type=float, default=0.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    t0 = time.time()
    cfg = json.load(open(f"{a.model}/config.json"))
    model = Model(cfg, load_safetensors(f"{a.model}/model.safetensors"))
    load_s = time.time() - t0
    vocab = cfg["vocab_size"]
    prompt = torch.tensor([[2 + (j * 131) % (vocab - 3) for j in range(a.prompt_tokens)]])
    with torch.inference_mode():
        cache = [None] * len(model.layers)
        start = time.time()
        nxt = model.forward(prompt, cache, 0)[0, -1].argmax().item()
        first = time.time()
        generated = [nxt]
        for i in range(1, a.new_tokens):
            nxt = model.forward(torch.tensor([[nxt]]), cache, a.prompt_tokens + i - 1)[0, -1].argmax().item()
            generated.append(nxt)
        end = time.time()
    out = {"load_s": load_s, "ttft_s": first - start, "decode_tokens_per_s": (a.new_tokens - 1) / (end - first) if a.new_tokens > 1 else 0.0,
           "threads": torch.get_num_threads(), "generated_ids": generated}
    if a.process_start:
        out["process_to_first_token_s"] = first - a.process_start
    print(json.dumps(out) if a.json else out)


if __name__ == "__main__":
    main()
