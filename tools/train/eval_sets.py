"""The held-out sets tools/train/evaluate.py scores, by name. Each is a list of (english, other) rows per pair.

  dev               ../shared/corpora/PAIR.dev.tsv as a whole (evaluate.py's default, as before)
  tatoeba           en-de.dev.tsv (all Tatoeba) and en-zh.dev.tsv without its last 100 lines
  tico19            the last 100 lines of en-zh.dev.tsv: TICO-19 (from line 528, "and it get the chest pain";
                    the 527 lines before it are Tatoeba sentences, checked by reading them). No en-de lines.
  libreoffice-help  DEBIAN/dev/libreoffice-help.PAIR.dev.tsv  \\
  gettext           DEBIAN/dev/gettext.PAIR.dev.tsv            > written by tools/train/prepare_debian_corpus.sh,
  general           DEBIAN/dev/general.PAIR.dev.tsv           /  DEBIAN being its WORKDIR/corpus
See tools/train/debian_corpus/heldout.py for how the last three are chosen.
"""
from pathlib import Path

SHARED_SETS = ["tatoeba", "tico19"]
DEBIAN_SETS = ["libreoffice-help", "gettext", "general"]
TICO19_LINES, EN_ZH_DEV_LINES = 100, 627


def read_rows(path):
    rows = [l.split("\t") for l in Path(path).read_text(encoding="utf-8").split("\n")]
    return [(r[0], r[1]) for r in rows if len(r) >= 2 and r[0].strip() and r[1].strip()]


def names(spec, debian):
    if spec == "all":
        return ["dev"] + SHARED_SETS + (DEBIAN_SETS if debian else [])
    return [n.strip() for n in spec.split(",") if n.strip()]


def load(name, pair, corpora, debian):
    """Rows of set NAME for PAIR ('en-de', 'en-zh'), or None where the set has no such pair."""
    if name in ["dev"] + SHARED_SETS:
        rows = read_rows(Path(corpora) / f"{pair}.dev.tsv")
        if name == "dev":
            return rows
        if pair == "en-de":
            return rows if name == "tatoeba" else None
        if len(rows) != EN_ZH_DEV_LINES:
            raise SystemExit(f"{pair}.dev.tsv has {len(rows)} lines, not {EN_ZH_DEV_LINES}: "
                             "where its TICO-19 part starts is unknown")
        return rows[:-TICO19_LINES] if name == "tatoeba" else rows[-TICO19_LINES:]
    if name not in DEBIAN_SETS:
        raise SystemExit(f"unknown set {name}: one of {', '.join(['dev'] + SHARED_SETS + DEBIAN_SETS)}")
    if not debian:
        raise SystemExit(f"set {name} needs --debian WORKDIR/corpus (tools/train/prepare_debian_corpus.sh)")
    path = Path(debian) / "dev" / f"{name}.{pair}.dev.tsv"
    return read_rows(path) if path.exists() else None
