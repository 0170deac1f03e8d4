#!/usr/bin/env python3
"""Builds the Debian part of the default model's corpus (issue #25): downloads the packages named in
packages.py, extracts and aligns their translations, cleans and deduplicates them, holds out dev sets, and
writes into WORKDIR/corpus:
  en-de.train.tsv, en-zh.train.tsv   EN <tab> OTHER <tab> SOURCE (prepare_corpus.py --extra reads them)
  dev/SET.PAIR.dev.tsv               held-out sets: libreoffice-help, gettext, general (see heldout.py)
  sources.tsv                        every source: packages with versions, license, and per pair the entries
                                     read (help paragraphs, catalog messages) and the pairs kept for train, dev
                                     and general (one entry can give several pairs when split into sentences)
  SOURCES.md                         the same as a list for the model's README
  rejected.tsv, reasons.tsv          samples and counts of what the cleaning dropped, for inspection
Nothing in a dev set, and nothing from ../shared/corpora/*.dev.tsv, reaches a training file.

    build.py WORKDIR [--shared ../shared/corpora] [--dev-size 500] [--general-size 400]
"""
import argparse
import collections
import sys
from pathlib import Path

import extract
import fetch
import heldout
from clean import clean_pair, comparable, strip_markup
from packages import SOURCES, binary_packages
from segment import segments

PAIRS = {"de": "en-de", "zh": "en-zh"}
REJECT_SAMPLES = 8  # per source, language and reason


def shared_keys(shared, kind):
    keys = set()
    for path in sorted(Path(shared).glob(f"*.{kind}.tsv")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            keys.update(comparable(c) for c in line.split("\t")[:2])
    keys.discard("")
    return keys


def check_license(tree, package, expected):
    copyright = Path(tree) / "usr/share/doc" / package / "copyright"
    text = copyright.read_text(encoding="utf-8", errors="replace") if copyright.exists() else ""
    if expected not in text:
        print(f"warning: {package}: '{expected}' not found in {copyright}", file=sys.stderr)


def collect(lang, trees, stats, rejected, dev_keys):
    """Cleaned, deduplicated (en, other, source) pairs for one language, in source order."""
    pairs, seen = [], set()
    for source in SOURCES:
        name = source["name"]
        st = stats[name][lang]
        gettext = source["kind"] == "gettext"
        for en, other, _origin in extract.units(source, trees, lang):
            st["entries"] += 1
            if gettext:  # "<para>A.</para><para>B.</para>": sentences only split once the tags are gone
                en, other = strip_markup(en), strip_markup(other)
            for e, o in segments(en, other, lang, lines=gettext):
                pair, reason = clean_pair(e, o, lang, source["min_words"], strip_ui=gettext)
                if pair:
                    key = (comparable(pair[0]), comparable(pair[1]))
                    if key in seen:
                        reason = "duplicate"
                    elif key[0] in dev_keys or key[1] in dev_keys:
                        reason = "in shared dev set"
                    else:
                        seen.add(key)
                        pairs.append((pair[0], pair[1], name))
                        continue
                st[reason] += 1
                rejected[(name, lang, reason)].append((heldout.rank(e, "reject"), e, o))
    return pairs


def hold_out(pairs, train_keys, dev_size, general_size):
    """{set name: pairs} for the general set and each source group's dev set."""
    general_sources = {s["name"] for s in SOURCES if s["general"]}
    fresh = lambda p: comparable(p[0]) not in train_keys and comparable(p[1]) not in train_keys
    general = heldout.choose(pairs, general_size, "general",
                             lambda p: p[2] in general_sources and fresh(p) and heldout.prose_like(p[0]))
    taken = {comparable(p[0]) for p in general}
    sets = {"general": general}
    for group in sorted({s["dev"] for s in SOURCES}):
        members = {s["name"] for s in SOURCES if s["dev"] == group}
        sets[group] = heldout.choose(pairs, dev_size, "dev", lambda p: p[2] in members and fresh(p)
                                     and comparable(p[0]) not in taken and len(p[0].split()) >= 4)
    return sets


def write_tsv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("\t".join(r) + "\n" for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[4] / "shared/corpora")
    ap.add_argument("--dev-size", type=int, default=500)
    ap.add_argument("--general-size", type=int, default=400)
    args = ap.parse_args()
    out = args.workdir / "corpus"

    packages = [p for s in SOURCES for p in binary_packages(s)]
    fetch.download(args.workdir / "debs", packages)
    trees, versions = {}, {}
    for source in SOURCES:
        for package in binary_packages(source):
            trees[package], versions[package] = fetch.extract(args.workdir / "debs", args.workdir / "extract", package)
            check_license(trees[package], package, source["license_check"])

    dev_keys, train_keys = shared_keys(args.shared, "dev"), shared_keys(args.shared, "train")
    stats = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    rejected = collections.defaultdict(list)
    candidates, sets = {}, {}
    for lang in PAIRS:
        candidates[lang] = collect(lang, trees, stats, rejected, dev_keys)
        sets[lang] = hold_out(candidates[lang], train_keys, args.dev_size, args.general_size)
    # Held-out English sentences leave the training data of both pairs, and held-out translations their own.
    held = {comparable(p[0]) for lang in sets for s in sets[lang].values() for p in s}
    for lang, pair in PAIRS.items():
        held_other = {comparable(p[1]) for s in sets[lang].values() for p in s}
        train = []
        for p in candidates[lang]:
            if comparable(p[0]) in held or comparable(p[1]) in held_other:
                stats[p[2]][lang]["held out"] += 1
            else:
                train.append(p)
                stats[p[2]][lang]["train"] += 1
        write_tsv(out / f"{pair}.train.tsv", train)
        for name, chosen in sets[lang].items():
            write_tsv(out / "dev" / f"{name}.{pair}.dev.tsv", chosen)
            for p in chosen:
                stats[p[2]][lang][f"dev:{name}"] += 1

    header = ["source", "packages", "license"]
    for pair in PAIRS.values():
        header += [f"{pair} entries", f"{pair} train", f"{pair} dev", f"{pair} general"]
    rows = [header]
    for source in SOURCES:
        row = [source["name"], ",".join(f"{p}={versions[p]}" for p in binary_packages(source)), source["license"]]
        for lang in PAIRS:
            st = stats[source["name"]][lang]
            dev = sum(v for k, v in st.items() if k.startswith("dev:") and k != "dev:general")
            row += [str(st["entries"]), str(st["train"]), str(dev), str(st["dev:general"])]
        rows.append(row)
    write_tsv(out / "sources.tsv", rows)
    # The list the model's README and NOTICE need, with the exact versions this corpus came from.
    with open(out / "SOURCES.md", "w", encoding="utf-8") as f:
        f.write("Debian packages (apt-get download, translations extracted; not installed):\n\n")
        for source in SOURCES:
            packages = ", ".join(f"{p} {versions[p]}" for p in binary_packages(source))
            f.write(f"- {source['name']}: {packages} ({source['license']})\n")
    write_tsv(out / "reasons.tsv", [[name, lang, reason, str(n)] for name in stats for lang in stats[name]
                                    for reason, n in sorted(stats[name][lang].items())])
    samples = []
    for (name, lang, reason), items in sorted(rejected.items()):
        samples += [[name, PAIRS[lang], reason, e.replace("\n", "\\n"), o.replace("\n", "\\n")]
                    for _, e, o in sorted(items)[:REJECT_SAMPLES]]
    write_tsv(out / "rejected.tsv", samples)
    for row in rows:
        print("\t".join(row))


if __name__ == "__main__":
    main()
