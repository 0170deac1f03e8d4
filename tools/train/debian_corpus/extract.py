"""Raw translation units per source and language, before cleaning: (english, translation, origin)."""
import re
from pathlib import Path

import lohelp
import mofile
from packages import LANGS


def lohelp_units(source, trees, lang):
    dirs = source["help_dirs"]
    en_root = lohelp.help_root(trees[source["packages"]["en"]], dirs["en"])
    other_root = lohelp.help_root(trees[source["packages"][lang]], dirs[lang])
    for page, pid, en, other in lohelp.aligned_pairs(en_root, other_root):
        yield en, other, f"{page}#{pid}"


def gettext_units(source, trees, lang):
    locale = LANGS[lang]
    for package in source["packages"]:
        tree = Path(trees[package])
        for mo in sorted(tree.rglob(f"{locale}/LC_MESSAGES/*.mo")):
            if source.get("catalogs") and mo.stem not in source["catalogs"]:
                continue
            for context, msgid, msgstr in mofile.read_mo(mo):
                # freeciv marks short-form strings with "?qualifier:"; their msgid is not text to translate.
                if msgid.startswith("?") and ":" in msgid:
                    continue
                # Wesnoth disambiguates with a "context^" prefix inside the msgid itself.
                msgid = re.sub(r"^[a-z_ ]{1,40}\^", "", msgid)
                yield msgid, msgstr, f"{package}:{mo.name}"


def units(source, trees, lang):
    return (lohelp_units if source["kind"] == "lohelp" else gettext_units)(source, trees, lang)
