"""Splits a long translation unit (a help paragraph, a multi-line gettext entry) into aligned pieces when both
sides split into the same number of lines, or else of sentences. Equal counts are the only alignment evidence
used: when they differ the unit stays whole (and is dropped later if it is too long to train on)."""
import re

from clean import length_ratio_ok

SENTENCE_END = {
    # . ! ? (with closing quotes/brackets), whitespace, then an opening capital or quote; group 1 ends the sentence.
    "en": re.compile(r"([.!?][\"'”’)]?)\s+(?=[\"'“‘(]?[A-Z])"),
    "de": re.compile(r"([.!?][\"'”“’)]?)\s+(?=[\"'„“‚(]?[A-ZÄÖÜ])"),
    # Chinese sentences end with full-width marks and need no space after them.
    "zh": re.compile(r"([。！？][”」』）]?)\s*(?=\S)"),
}
# "e.g. Foo", "z. B. Das": abbreviations that look like sentence ends; a false split changes the count.
ABBREVIATION = re.compile(r"\b([A-Za-z]|e\.g|i\.e|etc|vs|Mr|Mrs|Dr|No|z\.\s?B|d\.\s?h|u\.\s?a|bzw|ggf|evtl|ca|Nr|vgl"
                          r"|usw)\.$")


def split_sentences(text, lang):
    pieces, start = [], 0
    for m in SENTENCE_END[lang].finditer(text):
        if ABBREVIATION.search(text[start:m.end(1)]):
            continue
        pieces.append(text[start:m.end(1)])
        start = m.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def ends_unit(line):
    # A line that ends a sentence or is a list item; otherwise the break is wrapping, which translators redo
    # ("stop any\n playing or recording first" -> "stoppen Sie\nzuerst jegliche Wiedergabe").
    return bool(re.search(r"[.!?:;。！？：；…]\W?$", line.rstrip()) or re.match(r"\s*([-*•·]|\d+[.)])\s", line))


def segments(en, other, lang, lines=True):
    """Yields (en, other) pieces; the unit itself when no split is supported by equal counts. lines=False for
    HTML text, where a line break is only source formatting."""
    en_lines = [l for l in en.split("\n") if l.strip()]
    other_lines = [l for l in other.split("\n") if l.strip()]
    if (lines and len(en_lines) > 1 and len(en_lines) == len(other_lines)
            and all(map(ends_unit, en_lines[:-1] + other_lines[:-1]))):
        units = list(zip(en_lines, other_lines))
    else:
        units = [(" ".join(en.split()), " ".join(other.split()))]
    for e, o in units:
        e, o = " ".join(e.split()), " ".join(o.split())
        es, os_ = split_sentences(e, "en"), split_sentences(o, lang)
        if len(es) > 1 and len(es) == len(os_) and all(length_ratio_ok(a, b, lang) for a, b in zip(es, os_)):
            yield from zip(es, os_)
        else:
            yield e, o
