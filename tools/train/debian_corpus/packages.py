"""The Debian packages the corpus is made from: an explicit, moderate list (no registry scans).

Each source names its binary packages, the license its translations are under (checked against each package's
/usr/share/doc/PKG/copyright; the pipeline warns when `license_check` is not found there), and how it is read:
  lohelp  - LibreOffice help pages, paired by page path and paragraph id across libreoffice-help-{en-us,de,zh-cn}
  gettext - .mo catalogs under the packages' trees, msgid (English) -> msgstr, for de and zh_CN
`catalogs`, where given, limits a gettext source to those .mo names. `dev` names the held-out set the source's
dev pairs go to; `general` marks sources whose prose-like entries (narrative game texts) also feed the
general-domain evaluation set.
"""

LANGS = {"de": "de", "zh": "zh_CN"}  # our language code -> gettext locale directory


def _gettext(name, packages, license, check, general=False, min_words=2):
    return {"name": name, "kind": "gettext", "packages": packages, "license": license, "license_check": check,
            "dev": "gettext", "general": general, "min_words": min_words}


SOURCES = [
    {"name": "libreoffice-help", "kind": "lohelp", "license": "MPL-2.0", "license_check": "MPL-2.0",
     "packages": {"en": "libreoffice-help-en-us", "de": "libreoffice-help-de", "zh": "libreoffice-help-zh-cn"},
     "help_dirs": {"en": "en-US", "de": "de", "zh": "zh-CN"}, "dev": "libreoffice-help", "general": False,
     "min_words": 2},
    _gettext("libreoffice-ui", ["libreoffice-l10n-de", "libreoffice-l10n-zh-cn"], "MPL-2.0", "MPL-2.0"),
    _gettext("gimp", ["gimp-data"], "GPL-3+", "GPL-3+"),
    _gettext("inkscape", ["inkscape"], "GPL", "GNU GPL"),
    _gettext("vlc", ["vlc-l10n"], "GPL-2+", "GPL-2+"),
    _gettext("audacity", ["audacity-data"], "CC-BY-3.0 or GPL-2+", "GPL-2+"),
    # Not its timezone catalog: 400 "Asia/Kolkata" -> "Asien/Kalkutta" lines.
    dict(_gettext("gnome-control-center", ["gnome-control-center-data"], "GPL-2+", "GPL-2+"),
         catalogs=["gnome-control-center-2.0"]),
    _gettext("nautilus", ["nautilus-data"], "GPL-3+", "version 3"),
    _gettext("gnome-shell", ["gnome-shell-common"], "GPL-2+", "GPL-2+"),
    _gettext("gedit", ["gedit-common"], "GPL-2", "GNU General Public License"),
    _gettext("evolution", ["evolution-common"], "LGPL-2 or LGPL-3", "LGPL"),
    _gettext("rhythmbox", ["rhythmbox-data"], "GPL-2+", "GNU General Public License"),
    _gettext("aisleriot", ["aisleriot"], "GPL-3+", "GPL-3+"),
    _gettext("dolphin", ["dolphin"], "GPL-2+", "GPL-2+"),
    _gettext("okular", ["okular"], "GPL-2+", "GPL-2.0-or-later"),
    _gettext("kdenlive", ["kdenlive-data"], "GPL-2+", "GPL-2+"),
    _gettext("digikam", ["digikam-data"], "GPL-2+", "GNU General Public License"),
    _gettext("gramps", ["gramps"], "GPL-2+", "GPL-2+"),
    _gettext("gnucash", ["gnucash-common"], "GPL-2+", "GPL-2+"),
    _gettext("freeciv", ["freeciv-data"], "GPL-2+", "GPL-2+", general=True),
    _gettext("wesnoth", ["wesnoth-1.16-data"], "GPL-2+", "GNU General Public License", general=True),
    # Five campaigns' story dialogue: the most ordinary language of all these sources.
    _gettext("wesnoth-campaigns", ["wesnoth-1.16-httt", "wesnoth-1.16-tsg", "wesnoth-1.16-sof", "wesnoth-1.16-trow",
                                   "wesnoth-1.16-l"], "GPL-2+", "GNU General Public License", general=True),
    # Scenario stories and the tribes' encyclopedia: narrative prose like Wesnoth's campaigns.
    _gettext("widelands", ["widelands-data"], "GPL-2+", "GPL-2+", general=True),
    # Country, language, currency and script names: single words are the point here. Not the subdivisions
    # (iso_3166-2, thousands of transliterated place names) nor the 7,000 languages of ISO 639-3.
    dict(_gettext("iso-codes", ["iso-codes"], "LGPL-2.1+", "LGPL-2.1+", min_words=1),
         catalogs=["iso_3166-1", "iso_639-2", "iso_4217", "iso_15924"]),
]


def binary_packages(source):
    packages = source["packages"]
    return list(packages.values()) if isinstance(packages, dict) else list(packages)
