#!/usr/bin/python3
"""Eager PyTorch speed baseline for MarianMT inference.

This re-implements Hugging Face transformers' MarianMTModel inference path
(greedy and beam search with a KV cache) with the same module structure and
the same order of operations as transformers' eager code, so that the C++
engine can be compared against "what you get from transformers on a CPU"
without needing transformers itself (only Debian's python3-torch and numpy).

The workload is a deterministic formula shared with the C++ benchmark; keep
the two in sync (see workload_source_ids).

    /usr/bin/python3 tools/baselines/marian_eager.py --model DIR [--beams 4] --json

Run it on an otherwise idle machine: when --threads equals the core count and
another process competes for the cores, torch's OpenMP barriers can stall for
a scheduler time slice per op, making tiny models look ~50x slower.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


# ----------------------------------------------------------------------------
# Checkpoint loading
# ----------------------------------------------------------------------------

def load_safetensors(path):
    """Minimal safetensors reader: no safetensors package is available here."""
    with open(path, "rb") as f:
        data = f.read()
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        shape = info["shape"]
        count = int(np.prod(shape)) if shape else 1
        if info["dtype"] == "F32":
            # copy: frombuffer views are read-only and torch warns on those.
            arr = np.frombuffer(data, dtype="<f4", count=count, offset=base + start).copy()
        elif info["dtype"] == "BF16":
            # bf16 is the high half of a float32, so widening is a shift.
            raw = np.frombuffer(data, dtype="<u2", count=count, offset=base + start)
            arr = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{name}: unsupported dtype {info['dtype']}")
        assert arr.nbytes == (end - start) * (2 if info["dtype"] == "BF16" else 1)
        tensors[name] = torch.from_numpy(arr.reshape(shape))
    return tensors


def get_activation(name):
    # Mirrors transformers' ACT2FN for the names Marian checkpoints use.
    acts = {
        "swish": F.silu,
        "silu": F.silu,
        "relu": F.relu,
        "gelu": F.gelu,
        "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
        "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    }
    if name not in acts:
        raise ValueError(f"unsupported activation_function {name!r}")
    return acts[name]


# ----------------------------------------------------------------------------
# Model (same structure and parameter names as transformers' modeling_marian)
# ----------------------------------------------------------------------------

class MarianSinusoidalPositionalEmbedding(nn.Embedding):
    """Static table; Marian checkpoints do not store it, so it is rebuilt
    exactly as transformers does (angles in float64, then cast)."""

    def __init__(self, num_positions, embedding_dim):
        super().__init__(num_positions, embedding_dim)
        n_pos, dim = self.weight.shape
        position_enc = np.array(
            [[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]
        )
        out = torch.empty(n_pos, dim, dtype=self.weight.dtype)
        sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
        out[:, 0:sentinel] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
        out[:, sentinel:] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
        self.weight = nn.Parameter(out, requires_grad=False)

    def forward(self, seq_len, past_key_values_length=0):
        positions = torch.arange(
            past_key_values_length, past_key_values_length + seq_len, dtype=torch.long
        )
        return super().forward(positions)


class MarianAttention(nn.Module):
    """Multi-head attention in transformers' legacy eager form (bmm over
    bsz*heads); returns the (key, value) pair to cache when is_decoder."""

    def __init__(self, embed_dim, num_heads, is_decoder=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError("d_model must be divisible by the number of heads")
        self.scaling = self.head_dim ** -0.5
        self.is_decoder = is_decoder
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, key_value_states=None, past_key_value=None, attention_mask=None):
        is_cross_attention = key_value_states is not None
        bsz, tgt_len, _ = hidden_states.size()

        query_states = self.q_proj(hidden_states) * self.scaling
        if is_cross_attention and past_key_value is not None:
            # Encoder output does not change during generation: reuse K/V.
            key_states, value_states = past_key_value
        elif is_cross_attention:
            key_states = self._shape(self.k_proj(key_value_states), -1, bsz)
            value_states = self._shape(self.v_proj(key_value_states), -1, bsz)
        elif past_key_value is not None:
            # Grows the cache by concatenation each step, as transformers'
            # tuple-style past_key_values does (a realloc+copy per step).
            key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
            value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)
        else:
            key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
            value_states = self._shape(self.v_proj(hidden_states), -1, bsz)

        if self.is_decoder:
            past_key_value = (key_states, value_states)

        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.reshape(*proj_shape)
        value_states = value_states.reshape(*proj_shape)

        # Batch size is one source (beams are copies of it), so there is no
        # padding mask; the only mask is the causal one for multi-token
        # decoder input, which generation (one token per step) never needs.
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)

        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn_output), past_key_value


class MarianEncoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config["d_model"]
        self.self_attn = MarianAttention(d, config["encoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.activation_fn = get_activation(config["activation_function"])
        self.fc1 = nn.Linear(d, config["encoder_ffn_dim"])
        self.fc2 = nn.Linear(config["encoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states):
        # Post-LayerNorm (normalize_before = false in Marian configs).
        residual = hidden_states
        hidden_states, _ = self.self_attn(hidden_states)
        hidden_states = self.self_attn_layer_norm(residual + hidden_states)

        residual = hidden_states
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = self.fc2(hidden_states)
        return self.final_layer_norm(residual + hidden_states)


class MarianDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config["d_model"]
        self.self_attn = MarianAttention(d, config["decoder_attention_heads"], is_decoder=True)
        self.activation_fn = get_activation(config["activation_function"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = MarianAttention(d, config["decoder_attention_heads"], is_decoder=True)
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, config["decoder_ffn_dim"])
        self.fc2 = nn.Linear(config["decoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states, encoder_hidden_states, past_key_value=None, causal_mask=None):
        # past_key_value layout follows transformers' legacy tuples:
        # (self_k, self_v, cross_k, cross_v).
        self_past = past_key_value[:2] if past_key_value is not None else None
        residual = hidden_states
        hidden_states, present = self.self_attn(
            hidden_states, past_key_value=self_past, attention_mask=causal_mask
        )
        hidden_states = self.self_attn_layer_norm(residual + hidden_states)

        cross_past = past_key_value[2:] if past_key_value is not None else None
        residual = hidden_states
        hidden_states, cross_present = self.encoder_attn(
            hidden_states, key_value_states=encoder_hidden_states, past_key_value=cross_past
        )
        hidden_states = self.encoder_attn_layer_norm(residual + hidden_states)
        present = present + cross_present

        residual = hidden_states
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = self.fc2(hidden_states)
        hidden_states = self.final_layer_norm(residual + hidden_states)
        return hidden_states, present


class MarianEncoder(nn.Module):
    def __init__(self, config, embed_tokens):
        super().__init__()
        d = config["d_model"]
        self.embed_scale = math.sqrt(d) if config.get("scale_embedding", False) else 1.0
        self.embed_tokens = embed_tokens
        self.embed_positions = MarianSinusoidalPositionalEmbedding(config["max_position_embeddings"], d)
        self.layers = nn.ModuleList(MarianEncoderLayer(config) for _ in range(config["encoder_layers"]))

    def forward(self, input_ids):
        inputs_embeds = self.embed_tokens(input_ids) * self.embed_scale
        hidden_states = inputs_embeds + self.embed_positions(input_ids.shape[1])
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class MarianDecoder(nn.Module):
    def __init__(self, config, embed_tokens):
        super().__init__()
        d = config["d_model"]
        self.embed_scale = math.sqrt(d) if config.get("scale_embedding", False) else 1.0
        self.embed_tokens = embed_tokens
        self.embed_positions = MarianSinusoidalPositionalEmbedding(config["max_position_embeddings"], d)
        self.layers = nn.ModuleList(MarianDecoderLayer(config) for _ in range(config["decoder_layers"]))

    def forward(self, input_ids, encoder_hidden_states, past_key_values=None):
        past_len = past_key_values[0][0].shape[2] if past_key_values is not None else 0
        inputs_embeds = self.embed_tokens(input_ids) * self.embed_scale
        seq_len = input_ids.shape[1]
        hidden_states = inputs_embeds + self.embed_positions(seq_len, past_len)
        causal_mask = None
        if seq_len > 1:
            # Only for teacher forcing (e.g. checking logits against a reference).
            causal_mask = torch.full((seq_len, past_len + seq_len), -float("inf"))
            causal_mask = torch.triu(causal_mask, diagonal=past_len + 1)
        next_cache = ()
        for idx, layer in enumerate(self.layers):
            past = past_key_values[idx] if past_key_values is not None else None
            hidden_states, present = layer(hidden_states, encoder_hidden_states, past, causal_mask)
            next_cache += (present,)
        return hidden_states, next_cache


class MarianModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.shared = nn.Embedding(config["vocab_size"], config["d_model"], config["pad_token_id"])
        # Tied source/target embeddings: both stacks hold the same module.
        self.encoder = MarianEncoder(config, self.shared)
        self.decoder = MarianDecoder(config, self.shared)


class MarianMTModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = MarianModel(config)
        self.lm_head = nn.Linear(config["d_model"], config["vocab_size"], bias=False)
        self.lm_head.weight = self.model.shared.weight  # tie_word_embeddings
        self.register_buffer("final_logits_bias", torch.zeros((1, config["vocab_size"])))

    def encode(self, input_ids):
        return self.model.encoder(input_ids)

    def forward(self, decoder_input_ids, encoder_hidden_states, past_key_values=None):
        hidden_states, past = self.model.decoder(decoder_input_ids, encoder_hidden_states, past_key_values)
        logits = self.lm_head(hidden_states) + self.final_logits_bias
        return logits, past

    @staticmethod
    def reorder_cache(past_key_values, beam_idx):
        # Like transformers' EncoderDecoderCache.reorder_cache: every cached
        # tensor, cross-attention included, is gathered on the batch axis.
        return tuple(tuple(t.index_select(0, beam_idx) for t in layer) for layer in past_key_values)


def load_model(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    if config.get("normalize_before", False) or config.get("normalize_embedding", False):
        raise ValueError("only post-LayerNorm Marian models without embedding LayerNorm are supported")
    if not config.get("static_position_embeddings", True):
        raise ValueError("only static sinusoidal position embeddings are supported")

    model = MarianMTModel(config)
    weights = load_safetensors(os.path.join(model_dir, "model.safetensors"))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    # Aliases of the tied embedding and the rebuilt position tables are
    # legitimately absent from the file; anything else is a real mismatch.
    allowed = {
        "lm_head.weight",
        "model.encoder.embed_tokens.weight",
        "model.decoder.embed_tokens.weight",
        "model.encoder.embed_positions.weight",
        "model.decoder.embed_positions.weight",
    }
    bad_missing = [k for k in missing if k not in allowed]
    if bad_missing or unexpected:
        raise ValueError(f"weight mismatch: missing={bad_missing} unexpected={list(unexpected)}")
    model.eval()
    return model, config


# ----------------------------------------------------------------------------
# Generation (transformers' greedy search and _beam_search, batch size 1)
# ----------------------------------------------------------------------------

def greedy_search(model, config, source_ids, max_new_tokens, ban_pad):
    eos = config["eos_token_id"]
    pad = config["pad_token_id"]
    encoder_hidden_states = model.encode(torch.tensor([source_ids], dtype=torch.long))
    next_input = torch.tensor([[config["decoder_start_token_id"]]], dtype=torch.long)
    past = None
    generated = []
    for _ in range(max_new_tokens):
        logits, past = model(next_input, encoder_hidden_states, past)
        next_logits = logits[:, -1, :].to(copy=True, dtype=torch.float32)
        if ban_pad:
            # NoBadWordsLogitsProcessor with bad_words_ids = [[pad]].
            next_logits[:, pad] = -float("inf")
        next_token = torch.argmax(next_logits, dim=-1)
        generated.append(int(next_token))
        if generated[-1] == eos:
            break
        next_input = next_token[:, None]
    return generated, None


def beam_search(model, config, source_ids, max_new_tokens, num_beams, ban_pad,
                length_penalty=1.0):
    """transformers >= 4.50 _beam_search with early_stopping=False, written
    for a single source sentence (the batch axis is dropped from the search
    state, the model still sees num_beams rows)."""
    eos = config["eos_token_id"]
    pad = config["pad_token_id"]
    vocab_size = config["vocab_size"]
    decoder_prompt_len = 1
    max_length = decoder_prompt_len + max_new_tokens
    beams_to_keep = 2 * num_beams  # max(2, 1 + number of eos ids) * num_beams

    # Encoder runs once; its output is expanded to the beams afterwards, as
    # generate() does before dispatching to _beam_search.
    encoder_hidden_states = model.encode(torch.tensor([source_ids], dtype=torch.long))
    encoder_hidden_states = encoder_hidden_states.repeat_interleave(num_beams, dim=0)

    running_sequences = torch.full((num_beams, max_length), pad, dtype=torch.long)
    running_sequences[:, 0] = config["decoder_start_token_id"]
    sequences = running_sequences.clone()
    sequence_lengths = torch.zeros(num_beams, dtype=torch.long)
    # Only beam 0 is live at first, so step one does not pick K copies of
    # the same continuation.
    running_beam_scores = torch.zeros(num_beams)
    running_beam_scores[1:] = -1e9
    beam_scores = torch.full((num_beams,), -1e9)
    is_sent_finished = torch.zeros(num_beams, dtype=torch.bool)
    # Finished hypotheses may only come from the top num_beams candidates;
    # the extra ones exist so num_beams can keep running past an eos.
    top_num_beam_mask = torch.cat(
        (torch.ones(num_beams, dtype=torch.bool), torch.zeros(beams_to_keep - num_beams, dtype=torch.bool))
    )

    past = None
    cur_len = decoder_prompt_len
    while True:
        logits, past = model(running_sequences[:, cur_len - 1:cur_len], encoder_hidden_states, past)
        log_probs = F.log_softmax(logits[:, -1, :].to(copy=True, dtype=torch.float32), dim=-1)
        if ban_pad:
            log_probs[:, pad] = -float("inf")
        log_probs = (log_probs + running_beam_scores[:, None]).reshape(num_beams * vocab_size)

        # Top-2K continuations over all beams.
        topk_log_probs, topk_indices = torch.topk(log_probs, k=beams_to_keep)
        topk_beam_indices = topk_indices // vocab_size
        topk_ids = topk_indices % vocab_size
        topk_sequences = running_sequences[topk_beam_indices]
        topk_sequences[:, cur_len] = topk_ids
        gen_len = cur_len + 1 - decoder_prompt_len
        hits_stop = (topk_ids == eos) | (cur_len + 1 >= max_length)

        # Next running beams: best K candidates that did not stop.
        topk_running_log_probs = topk_log_probs + hits_stop.to(torch.float32) * -1.0e9
        next_topk = torch.topk(topk_running_log_probs, k=num_beams)[1]
        running_sequences = topk_sequences[next_topk]
        running_beam_scores = topk_running_log_probs[next_topk]
        beam_idx = topk_beam_indices[next_topk]

        # Finished hypotheses: length-normalised, merged with earlier ones.
        just_finished = hits_stop & top_num_beam_mask
        finished_scores = topk_log_probs / (gen_len ** length_penalty)
        finished_scores = finished_scores + (~just_finished).to(torch.float32) * -1.0e9
        merged_scores = torch.cat((beam_scores, finished_scores))
        keep = torch.topk(merged_scores, k=num_beams)[1]
        sequences = torch.cat((sequences, topk_sequences))[keep]
        sequence_lengths = torch.cat(
            (sequence_lengths, torch.full((beams_to_keep,), gen_len, dtype=torch.long))
        )[keep]
        beam_scores = merged_scores[keep]
        is_sent_finished = torch.cat((is_sent_finished, just_finished))[keep]

        past = model.reorder_cache(past, beam_idx)
        cur_len += 1

        # early_stopping=False heuristic: stop once the best running beam,
        # normalised by the current length, cannot beat the worst finished
        # one; also stop when every candidate hit a stopping criterion.
        best_possible = running_beam_scores[:1] / ((cur_len - decoder_prompt_len) ** length_penalty)
        worst_finished = torch.where(is_sent_finished, torch.min(beam_scores), torch.tensor(-1.0e9))
        improvement_possible = bool(torch.any(best_possible > worst_finished))
        if not improvement_possible or bool(torch.all(hits_stop)):
            break

    n = int(sequence_lengths[0])
    return sequences[0, decoder_prompt_len:decoder_prompt_len + n].tolist(), float(beam_scores[0])


# ----------------------------------------------------------------------------
# Benchmark driver
# ----------------------------------------------------------------------------

def workload_source_ids(i, vocab_size, eos_token_id):
    """Sequence i of the benchmark workload. The C++ benchmark uses the same
    formula; changing it here makes the two numbers incomparable."""
    length = 8 + (i * 7) % 25
    return [2 + ((i * 131 + j * 31) % (vocab_size - 3)) for j in range(length)] + [eos_token_id]


def translate(model, config, source_ids, max_new_tokens, beams, ban_pad):
    if beams > 1:
        return beam_search(model, config, source_ids, max_new_tokens, beams, ban_pad)
    return greedy_search(model, config, source_ids, max_new_tokens, ban_pad)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="directory with config.json and model.safetensors")
    parser.add_argument("--sequences", type=int, default=100, help="number of workload sequences (default 100)")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="generation limit per sequence (default 64)")
    parser.add_argument("--beams", type=int, default=1, help="beam size; 1 = greedy (default 1)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--print-ids", action="store_true",
                        help="print each sequence's generated ids, comma-separated, one line each")
    # Cross-check hook: one given sequence, no pad ban, default 12 new tokens
    # (what the fixtures' expected.json 'greedy'/'beam' cases were made with).
    parser.add_argument("--source-ids", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.beams < 1 or args.sequences < 1 or args.threads < 1:
        parser.error("--beams, --sequences and --threads must be >= 1")
    torch.set_num_threads(args.threads)
    model, config = load_model(args.model)

    with torch.inference_mode():
        if args.source_ids is not None:
            source_ids = [int(x) for x in args.source_ids.split(",") if x.strip()]
            max_new = args.max_new_tokens if args.max_new_tokens is not None else 12
            ids, score = translate(model, config, source_ids, max_new, args.beams, ban_pad=False)
            if args.json:
                print(json.dumps({"generated_ids": ids, "sequence_score": score}))
            else:
                print(",".join(map(str, ids)))
                if score is not None:
                    print(f"sequence_score {score:.6f}", file=sys.stderr)
            return

        max_new = args.max_new_tokens if args.max_new_tokens is not None else 64
        vocab_size, eos = config["vocab_size"], config["eos_token_id"]
        workload = [workload_source_ids(i, vocab_size, eos) for i in range(args.sequences)]

        # Warm-up: first-call allocations and thread-pool start-up are not
        # part of steady-state throughput.
        translate(model, config, workload[0], max_new, args.beams, ban_pad=True)

        outputs = []
        start = time.perf_counter()
        for source_ids in workload:
            outputs.append(translate(model, config, source_ids, max_new, args.beams, ban_pad=True)[0])
        seconds = time.perf_counter() - start

    target_tokens = sum(len(ids) for ids in outputs)
    if args.print_ids:
        for ids in outputs:
            print(",".join(map(str, ids)))
    result = {
        "target_tokens": target_tokens,
        "seconds": seconds,
        "target_tokens_per_s": target_tokens / seconds if seconds > 0 else 0.0,
        "sequences": args.sequences,
        "beams": args.beams,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.sequences} sequences, beams={args.beams}, threads={args.threads}: "
              f"{target_tokens} target tokens in {seconds:.3f} s = "
              f"{result['target_tokens_per_s']:.1f} tokens/s")


if __name__ == "__main__":
    main()
