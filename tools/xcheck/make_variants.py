#!/usr/bin/env python3
"""Random-weight checkpoints of the two architectures in configurations the golden fixtures do not cover
(head_dim explicit and not hidden/heads, GQA, MQA and MHA, dynamic-alpha and plain RoPE, tied with and without a stored
lm_head copy, untied; Marian with relu/swish, with and without embedding scaling, a non-zero
final_logits_bias), in Hugging Face layout, for a side-by-side check against transformers itself
(tools/xcheck/run_transformers.py on a machine that has it; tools/xcheck/compare.py here).

  /usr/bin/python3 tools/xcheck/make_variants.py OUT_DIR
Weights are drawn with a larger spread than a trained model's initialisation so that greedy choices are
clear-cut: a near-tie would compare rounding, not semantics."""
import json
import struct
import sys
from pathlib import Path

import torch


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        t = t.contiguous()
        dtype = {torch.float32: "F32", torch.bfloat16: "BF16"}[t.dtype]
        data = t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((8 - (8 + len(raw)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for b in blobs:
            f.write(b)


def hunyuan(out, seed, dtype, hidden, heads, kv_heads, head_dim, inter, layers, vocab, rope_scaling, theta,
            qk_norm, tie, store_tied_copy, eps):
    g = torch.Generator().manual_seed(seed)
    rnd = lambda *shape, s=0.1: torch.randn(*shape, generator=g) * s
    hd = head_dim or hidden // heads
    w = {"model.embed_tokens.weight": rnd(vocab, hidden, s=1.0), "model.norm.weight": 1 + rnd(hidden)}
    for i in range(layers):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + rnd(hidden)
        w[p + "post_attention_layernorm.weight"] = 1 + rnd(hidden)
        w[p + "self_attn.q_proj.weight"] = rnd(heads * hd, hidden, s=0.3)
        w[p + "self_attn.k_proj.weight"] = rnd(kv_heads * hd, hidden, s=0.3)
        w[p + "self_attn.v_proj.weight"] = rnd(kv_heads * hd, hidden, s=0.3)
        w[p + "self_attn.o_proj.weight"] = rnd(hidden, heads * hd)
        if qk_norm:
            w[p + "self_attn.query_layernorm.weight"] = 1 + rnd(hd)
            w[p + "self_attn.key_layernorm.weight"] = 1 + rnd(hd)
        w[p + "mlp.gate_proj.weight"] = rnd(inter, hidden)
        w[p + "mlp.up_proj.weight"] = rnd(inter, hidden)
        w[p + "mlp.down_proj.weight"] = rnd(hidden, inter)
    if not tie:
        w["lm_head.weight"] = rnd(vocab, hidden, s=0.5)
    elif store_tied_copy:
        w["lm_head.weight"] = w["model.embed_tokens.weight"].clone()
    config = {"architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense",
              "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "vocab_size": vocab,
              "max_position_embeddings": 512, "rope_theta": theta, "rms_norm_eps": eps, "use_qk_norm": qk_norm,
              "tie_word_embeddings": tie, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
              "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "use_cache": True,
              "torch_dtype": "bfloat16" if dtype == torch.bfloat16 else "float32"}
    if head_dim:
        config["head_dim"] = head_dim
    if rope_scaling:
        config["rope_scaling"] = rope_scaling
    save(out, config, {k: v.to(dtype) for k, v in w.items()}, {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0})


def marian(out, seed, d, enc, dec, heads, ffn, vocab, act, scale):
    g = torch.Generator().manual_seed(seed)
    rnd = lambda *shape, s=0.15: torch.randn(*shape, generator=g) * s
    pad = vocab - 1
    w = {"model.shared.weight": rnd(vocab, d, s=1.0 if not scale else 0.2), "final_logits_bias": rnd(1, vocab, s=0.5)}
    def attn(p):
        for n in ("q", "k", "v", "out"):
            w[f"{p}{n}_proj.weight"] = rnd(d, d)
            w[f"{p}{n}_proj.bias"] = rnd(d, s=0.05)
    def norm(p):
        w[p + "weight"] = 1 + rnd(d, s=0.1)
        w[p + "bias"] = rnd(d, s=0.1)
    for side, count in (("encoder", enc), ("decoder", dec)):
        for i in range(count):
            p = f"model.{side}.layers.{i}."
            attn(p + "self_attn.")
            norm(p + "self_attn_layer_norm.")
            if side == "decoder":
                attn(p + "encoder_attn.")
                norm(p + "encoder_attn_layer_norm.")
            w[p + "fc1.weight"], w[p + "fc1.bias"] = rnd(ffn, d), rnd(ffn, s=0.05)
            w[p + "fc2.weight"], w[p + "fc2.bias"] = rnd(d, ffn), rnd(d, s=0.05)
            norm(p + "final_layer_norm.")
    config = {"architectures": ["MarianMTModel"], "model_type": "marian", "d_model": d, "encoder_layers": enc,
              "decoder_layers": dec, "encoder_attention_heads": heads, "decoder_attention_heads": heads,
              "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "vocab_size": vocab, "decoder_vocab_size": vocab,
              "max_position_embeddings": 256, "activation_function": act, "scale_embedding": scale,
              "normalize_before": False, "normalize_embedding": False, "static_position_embeddings": True,
              "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True, "is_encoder_decoder": True,
              "bos_token_id": 0, "eos_token_id": 0, "forced_eos_token_id": 0, "pad_token_id": pad,
              "decoder_start_token_id": pad, "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0,
              "torch_dtype": "float32"}
    save(out, config, w, {"bos_token_id": 0, "eos_token_id": 0, "forced_eos_token_id": 0, "pad_token_id": pad,
                          "decoder_start_token_id": pad, "bad_words_ids": [[pad]], "max_length": 256})


def save(out, config, weights, generation):
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps(generation, indent=1))
    write_safetensors(out / "model.safetensors", weights)


def main():
    root = Path(sys.argv[1])
    alpha = {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}
    hunyuan(root / "hy-gqa-headdim-alpha-bf16", 1, torch.bfloat16, 64, 4, 2, 24, 96, 3, 320, alpha, 10000.0, True, True, False, 1e-5)
    # transformers 5.x applies the q/k norms whatever use_qk_norm says (Tencent's own modeling code, and Dragoman,
    # honour it), so a checkpoint without them cannot be compared there; every HY-MT release has them.
    hunyuan(root / "hy-mqa-untied-f32", 2, torch.float32, 48, 6, 1, 16, 80, 2, 257, None, 500000.0, True, False, False, 1e-6)
    hunyuan(root / "hy-mha-tiedcopy-f32", 3, torch.float32, 64, 4, 4, 16, 128, 2, 300, {"type": "dynamic", "alpha": 50.0, "factor": 1.0}, 10000.0, True, True, True, 1e-5)
    marian(root / "marian-swish-scaled", 4, 64, 2, 3, 4, 96, 300, "swish", True)
    marian(root / "marian-relu-unscaled", 5, 32, 1, 2, 2, 64, 211, "relu", False)
    marian(root / "marian-gelu-scaled", 6, 48, 3, 1, 6, 80, 150, "gelu", True)


if __name__ == "__main__":
    main()
