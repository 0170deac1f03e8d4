"""Choice of held-out pairs. Selection is by a hash of the English side, not by position or a seeded shuffle:
the same sentence is held out on every run, whatever else the package versions add or remove, and in both
language pairs (en-de and en-zh dev sets share their English sentences where both catalogs translate them)."""
import hashlib
import re

from clean import comparable

UI_WORDS = re.compile(r"\b(click|select|dialog|menu|button|checkbox|option|toolbar|window|server|client|command|"
                      r"file|settings?|press|enter|type|preferences|tab|icon|cursor|mouse)s?\b", re.I)


def rank(text, salt):
    return hashlib.sha1(f"{salt}\x00{comparable(text)}".encode("utf-8")).hexdigest()


def prose_like(en):
    """An English sentence that reads as ordinary prose: 8-60 words, a capital first and sentence punctuation
    last, few capitalized words (not a title or a list of names), few digits, no user-interface vocabulary."""
    words = en.split()
    if not 8 <= len(words) <= 60 or not en[0].isupper() or not re.search(r"[.!?][\"'”’)]?$", en):
        return False
    capitalized = sum(w[0].isupper() for w in words[1:])
    digits = sum(c.isdigit() for c in en)
    return capitalized <= 0.2 * (len(words) - 1) and digits <= 4 and not UI_WORDS.search(en)


def choose(pairs, size, salt, eligible):
    """Up to SIZE pairs with distinct English sides, those whose English hashes lowest under SALT among the
    eligible ones; pairs are (en, other, source) tuples."""
    ranked = sorted((rank(p[0], salt), p) for p in pairs if eligible(p))
    chosen, seen = [], set()
    for _, p in ranked:
        key = comparable(p[0])
        if key not in seen:
            seen.add(key)
            chosen.append(p)
            if len(chosen) == size:
                break
    return chosen
