#!/usr/bin/env python3
"""Scores a model on the held-out dev sets with chrF2 and BLEU, computed as sacreBLEU 2.x does by default
(sacreBLEU is not installable here, so the two metrics are re-implemented below from its definitions):
  - chrF: character 1..6-grams with whitespace removed, beta 2, corpus-level statistics, averaged P and R;
  - BLEU: corpus-level 1..4-grams, brevity penalty, 'exp' smoothing, tokenizer 13a (the 'zh' tokenizer,
    one token per Chinese character, when the target is Chinese).
Each direction's source lines go through `dragoman-cli translate` (greedy) in one process. Each result also
gives the share of degenerate outputs (looping repetitions, defined in degenerate.py).

    tools/train/evaluate.py --model DIR [--cli build/app/dragoman-cli] [--corpora ../shared/corpora] [--limit N]
                            [--sets dev|all|tatoeba,tico19,libreoffice-help,gettext,general] [--debian WORKDIR/corpus]
                            [--json | --markdown]
By default it scores the whole dev sets of ../shared/corpora ('dev'); eval_sets.py describes the other sets.
"""
import argparse
import json
import os
import math
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import eval_sets
from degenerate import degenerate_rate

DIRECTIONS = [("en-de", "en", "de"), ("en-de", "de", "en"), ("en-zh", "en", "zh"), ("en-zh", "zh", "en")]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = re.sub(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 ", f" {line} ")
    line = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", line)
    line = re.sub(r"([\.,])([^0-9])", r" \1 \2", line)
    line = re.sub(r"([0-9])(-)", r"\1 \2 ", line)
    return " ".join(line.split())


def is_chinese_char(ch):
    c = ord(ch)
    return (0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xF900 <= c <= 0xFAFF or 0x20000 <= c <= 0x2FA1F
            or 0x3000 <= c <= 0x303F or 0xFF00 <= c <= 0xFFEF)


def tokenize_zh(line):
    # sacreBLEU's 'zh': Chinese characters and CJK punctuation become single tokens, the rest goes through 13a.
    spaced = "".join(f" {ch} " if is_chinese_char(ch) else ch for ch in line.strip())
    return tokenize_13a(spaced)


def ngrams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(hyps, refs, tokenize):
    correct, total = [0] * 4, [0] * 4
    hyp_len = ref_len = 0
    for h, r in zip(hyps, refs):
        ht, rt = tokenize(h).split(), tokenize(r).split()
        hyp_len += len(ht)
        ref_len += len(rt)
        for n in range(1, 5):
            hc, rc = ngrams(ht, n), ngrams(rt, n)
            correct[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            total[n - 1] += max(len(ht) - n + 1, 0)
    if hyp_len == 0:
        return 0.0
    log_precision, smooth = 0.0, 1.0
    for n in range(4):
        if total[n] == 0:
            return 0.0
        if correct[n] == 0:
            smooth *= 2
            p = 100.0 / (smooth * total[n])
        else:
            p = 100.0 * correct[n] / total[n]
        log_precision += math.log(p) / 4
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(log_precision)


def corpus_chrf(hyps, refs, order=6, beta=2.0):
    stats = [0] * (3 * order)
    for h, r in zip(hyps, refs):
        hc, rc = "".join(h.split()), "".join(r.split())
        for n in range(1, order + 1):
            hg, rg = ngrams(list(hc), n), ngrams(list(rc), n)
            stats[3 * (n - 1)] += sum(hg.values())
            stats[3 * (n - 1) + 1] += sum(rg.values())
            stats[3 * (n - 1) + 2] += sum(min(c, rg[g]) for g, c in hg.items())
    factor, eps = beta ** 2, 1e-16
    avg_p = avg_r = 0.0
    effective = 0
    for n in range(order):
        n_hyp, n_ref, n_match = stats[3 * n: 3 * n + 3]
        avg_p += n_match / n_hyp if n_hyp > 0 else eps
        avg_r += n_match / n_ref if n_ref > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            effective += 1
    if effective == 0:
        return 0.0
    avg_p, avg_r = avg_p / effective, avg_r / effective
    if avg_p + avg_r == 0:
        return 0.0
    return 100.0 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)


def translate(args, env, src, tgt, sources):
    out = subprocess.run([args.cli, "translate", "--model", args.model, "--from", src, "--to", tgt],
                         input="\n".join(sources) + "\n", capture_output=True, text=True, check=True, env=env)
    return out.stdout.split("\n")[: len(sources)]


def main():
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--cli", default=str(root / "build/app/dragoman-cli"))
    ap.add_argument("--corpora", default=str(root.parent / "shared/corpora"))
    ap.add_argument("--debian", help="tools/train/prepare_debian_corpus.sh's WORKDIR/corpus, for its held-out sets")
    ap.add_argument("--sets", default="dev", help="comma-separated set names or 'all' (see eval_sets.py); default: dev")
    ap.add_argument("--limit", type=int, default=0, help="score only the first N lines of each dev set")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (for the READMEs)")
    args = ap.parse_args()
    results = []
    # A fresh model store per run: a checkpoint re-exported by training must not trip the integrity check that
    # protects users from files changed behind the manifest's back.
    store = tempfile.mkdtemp(prefix="dragoman-eval-")
    env = dict(os.environ, DRAGOMAN_MODELS=store)
    for name in eval_sets.names(args.sets, args.debian):
        for pair, src, tgt in DIRECTIONS:
            rows = eval_sets.load(name, pair, args.corpora, args.debian)
            if not rows:
                continue
            if args.limit:
                rows = rows[: args.limit]
            en_first = pair.split("-")[0] == src
            sources = [(r[0] if en_first else r[1]).replace("\n", " ") for r in rows]
            refs = [(r[1] if en_first else r[0]) for r in rows]
            hyps = translate(args, env, src, tgt, sources)
            tokenize = tokenize_zh if tgt == "zh" else tokenize_13a
            results.append({"set": name, "direction": f"{src}->{tgt}", "lines": len(rows),
                            "chrF2": round(corpus_chrf(hyps, refs), 1),
                            "BLEU": round(corpus_bleu(hyps, refs, tokenize), 1),
                            "degenerate": round(degenerate_rate(hyps), 1), "example": hyps[0] if hyps else ""})
    if args.json:
        print(json.dumps(results, ensure_ascii=False))
        return
    if args.markdown:
        print("| set | direction | lines | chrF2 | BLEU | degenerate % |\n| --- | --- | --- | --- | --- | --- |")
        for r in results:
            print(f"| {r['set']} | {r['direction'].replace('->', '→')} | {r['lines']} | {r['chrF2']:.1f} | "
                  f"{r['BLEU']:.1f} | {r['degenerate']:.1f} |")
        return
    print(f"{'set':16s} {'direction':10s} {'lines':>6s} {'chrF2':>6s} {'BLEU':>6s} {'degen%':>6s}  first output")
    for r in results:
        print(f"{r['set']:16s} {r['direction']:10s} {r['lines']:6d} {r['chrF2']:6.1f} {r['BLEU']:6.1f} "
              f"{r['degenerate']:6.1f}  {r['example']}")


if __name__ == "__main__":
    main()
