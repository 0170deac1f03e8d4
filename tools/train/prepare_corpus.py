#!/usr/bin/env python3
"""Prepares the default model's training data from the parallel corpora (en-de and en-zh TSV files).

Writes into OUT:
  spm_input.txt   every training sentence of both sides, once, for sentencepiece training
  train.tsv       TARGET_LANG <tab> SOURCE <tab> TARGET, all four directions (en->de, de->en, en->zh, zh->en)
  valid.tsv       the same for a small slice held out of the training files, to watch the loss
The *.dev.tsv files are never read here: they are the held-out test sets the quality is measured on.
The en-zh file is sorted by length (Tatoeba order), so everything is shuffled with a fixed seed first.

--extra DIR (repeatable) adds DIR/en-de.train.tsv and DIR/en-zh.train.tsv (e.g. the Debian corpus that
tools/train/prepare_debian_corpus.sh writes) to the training pairs only: the validation slice still comes from
--corpora alone, so validation losses stay comparable with runs without extra data. --base-repeat N lists the
--corpora pairs N times in the training file, so that the extra data (mostly software text) does not drown the
everyday sentences of Tatoeba and the news-like ones of TICO-19.
"""
import argparse
import random
import unicodedata
from pathlib import Path

PAIRS = {"en-de": ("en", "de"), "en-zh": ("en", "zh")}


def clean(text):
    # NFC only: the tokenizer uses identity normalization so that full-width Chinese punctuation survives.
    return unicodedata.normalize("NFC", " ".join(text.split()))


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2:
                continue
            a, b = clean(cols[0]), clean(cols[1])
            if a and b and len(a) <= 400 and len(b) <= 400:
                pairs.append((a, b))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--valid-per-pair", type=int, default=300)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--base-repeat", type=int, default=1, help="list the --corpora training pairs N times")
    ap.add_argument("--extra", type=Path, action="append", default=[], help="more NAME.train.tsv files (training only)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    extra_rng = random.Random(args.seed + 1)
    train_rows, valid_rows, sentences = [], [], {}
    for name, (src, tgt) in PAIRS.items():
        pairs = sorted(set(read_pairs(args.corpora / f"{name}.train.tsv")))
        rng.shuffle(pairs)
        valid, train = pairs[: args.valid_per_pair], pairs[args.valid_per_pair:]
        train = train * args.base_repeat
        if args.extra:
            known = set(pairs)
            extra = [p for d in args.extra if (d / f"{name}.train.tsv").exists()
                     for p in read_pairs(d / f"{name}.train.tsv")]
            extra = sorted(set(p for p in extra if p not in known))
            extra_rng.shuffle(extra)  # its own generator: the base data's shuffles and validation slice stay as without
            print(f"{name}: {len(extra)} extra training pairs")
            train += extra
        for rows, chunk in ((train_rows, train), (valid_rows, valid)):
            for a, b in chunk:
                rows.append((tgt, a, b))
                rows.append((src, b, a))
        for a, b in train:
            sentences.setdefault(a, None)
            sentences.setdefault(b, None)
        print(f"{name}: {len(train)} training pairs, {len(valid)} held out")
    rng.shuffle(train_rows)
    for file, rows in (("train.tsv", train_rows), ("valid.tsv", valid_rows)):
        with open(args.out / file, "w", encoding="utf-8") as f:
            f.writelines(f"{t}\t{s}\t{d}\n" for t, s, d in rows)
    with open(args.out / "spm_input.txt", "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s in sentences)
    print(f"{len(train_rows)} training examples, {len(valid_rows)} validation examples, {len(sentences)} sentences")


if __name__ == "__main__":
    main()
