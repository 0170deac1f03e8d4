"""Degenerate translations: the output loops instead of translating. An output is degenerate when, case-folded,
  (a) a unit of 1 or 2 words occurs 4 or more times in a row ("Jahr Jahr Jahr Jahr"), or a unit of 3 to 8
      words 3 or more times in a row (a sentence said three times over); words are \\w+ runs, punctuation
      between them is ignored, and a Chinese character counts as a word, or
  (b) with whitespace removed, one letter occurs 6 or more times in a row ("Settttttikanischen"), or a unit of
      2 to 4 letters 4 or more times in a row ("进行进行进行进行"). Letters are alphabetic characters (Chinese
      characters included); digits and punctuation never count ("1000000", "......").
German never has more than three equal letters in a row (Schifffahrt) and real text rarely says one word four
times running; the thresholds leave "very very" and "哈哈哈" alone.
"""
import re

WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
SAME_LETTER = re.compile(r"([^\W\d_])\1{5,}")
SHORT_UNIT = re.compile(r"([^\W\d_]{2,4}?)\1{3,}")


def repeated_words(words):
    for size in range(1, 9):
        needed = 4 if size <= 2 else 3
        for start in range(len(words) - size * needed + 1):
            unit = words[start:start + size]
            if all(words[start + k * size:start + (k + 1) * size] == unit for k in range(1, needed)):
                return True
    return False


def is_degenerate(text):
    folded = text.casefold()
    if repeated_words(WORD.findall(folded)):
        return True
    joined = "".join(folded.split())
    return bool(SAME_LETTER.search(joined) or SHORT_UNIT.search(joined))


def degenerate_rate(outputs):
    """Percentage of degenerate outputs."""
    return 100.0 * sum(map(is_degenerate, outputs)) / len(outputs) if outputs else 0.0
