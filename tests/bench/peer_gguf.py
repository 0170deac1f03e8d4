#!/usr/bin/env python3
"""A HunYuanDenseV1 checkpoint (Hugging Face layout, bf16 safetensors) as a `hunyuan-dense` GGUF with the same
bf16 weight bytes, for llama.cpp's llama-bench (tests/bench/peer.sh). Written with llama.cpp's own gguf-py (on
PYTHONPATH); the metadata follow llama.cpp's converter for this architecture (conversion/hunyuan.py), which needs
`transformers` and a known tokenizer, neither of which a synthetic checkpoint has. The vocabulary is a stand-in:
the 256 byte-level symbols, one merge and placeholders up to vocab_size, enough for llama-bench, which feeds
random ids.
    peer_gguf.py MODEL_DIR OUT.gguf"""
import json
import struct
import sys
from pathlib import Path

import numpy as np

import gguf


def read_safetensors(path):
    """{name: (dtype, shape, memory-mapped uint8 bytes)} without copying."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (header_size,) = struct.unpack("<Q", raw[:8].tobytes())
    header = json.loads(raw[8:8 + header_size].tobytes())
    base = 8 + header_size
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], raw[base + begin:base + end])
    return out


def byte_symbols():
    """GPT-2's printable stand-ins for the 256 byte values (the byte-level BPE alphabet)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def main():
    model_dir, out_path = Path(sys.argv[1]), sys.argv[2]
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("architectures") != ["HunYuanDenseV1ForCausalLM"]:
        sys.exit(f"{model_dir}: not a HunYuanDenseV1 checkpoint")
    layers, head_dim = config["num_hidden_layers"], config["head_dim"]
    arch = gguf.MODEL_ARCH.HUNYUAN_DENSE
    writer = gguf.GGUFWriter(out_path, gguf.MODEL_ARCH_NAMES[arch])
    writer.add_name(model_dir.name)
    writer.add_block_count(layers)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_BF16)
    # HunYuan's NTK "alpha" RoPE as a plain base, as llama.cpp's converter writes it.
    scaling = config.get("rope_scaling") or {}
    base = config.get("rope_theta", 10000.0)
    alpha = scaling.get("alpha", 1.0) if scaling.get("type") == "dynamic" else 1.0
    writer.add_rope_freq_base(base * alpha ** (head_dim / (head_dim - 2)))
    writer.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    writer.add_rope_scaling_factor(1)

    vocab = config["vocab_size"]
    tokens = byte_symbols() + [f"[PAD{i}]" for i in range(256, vocab)]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.NORMAL] * 256 + [gguf.TokenType.UNUSED] * (vocab - 256))
    writer.add_token_merges(["\u0120 \u0120"])  # llama.cpp refuses a BPE vocabulary without merges
    writer.add_bos_token_id(config.get("bos_token_id", 1) % vocab)
    writer.add_eos_token_id(config.get("eos_token_id", 2) % vocab)

    names = gguf.get_tensor_name_map(arch, layers)
    tensors = {}
    for part in sorted(model_dir.glob("*.safetensors")):
        tensors.update(read_safetensors(part))
    for name, (dtype, shape, data) in tensors.items():
        if name == "lm_head.weight" and config.get("tie_word_embeddings", False):
            continue  # tied: llama.cpp reads the embedding table
        if dtype != "BF16":
            sys.exit(f"{name}: {dtype}; this converter writes bf16 checkpoints only (quantize the GGUF with llama-quantize)")
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            sys.exit(f"{name}: no llama.cpp name for it")
        bits = data.view(np.uint16).reshape(shape)
        if len(shape) == 1:  # norms in float32, as llama.cpp's converter keeps them
            writer.add_tensor(mapped, (bits.astype(np.uint32) << 16).view(np.float32))
        else:
            writer.add_tensor(mapped, bits, raw_shape=shape, raw_dtype=gguf.GGMLQuantizationType.BF16)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
