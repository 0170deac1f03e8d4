"""Extracts LibreOffice help paragraphs by id. The help packages (libreoffice-help-LANG) are generated from the
same XHP sources for every language, so a page's path and a paragraph's id name the same paragraph in each
language: pairing on (page, id) needs no sentence alignment at all."""
import re
from html.parser import HTMLParser
from pathlib import Path

PARAGRAPH_ID = re.compile(r"^(par|hd)_id")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Code samples (Basic, Python, command lines) are copied untranslated: they teach nothing but copying.
CODE_CLASSES = {"code", "bascode", "pycode", "codeintable"}


class _Paragraphs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # one entry per open element: (tag, paragraph id or None, hidden)
        self.open = {}  # paragraph id -> collected text pieces
        self.found = {}

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            if tag == "br":
                self._text(" ")
            return
        a = dict(attrs)
        pid = a.get("id") or ""
        # switchinline alternatives (MAC, WRITER, CALC, ...) are all hidden; scripts show the one that applies.
        # The 'default...' alternative is what a reader of the plain page sees.
        hidden = "hidden" in a and not pid.startswith("default")
        if PARAGRAPH_ID.match(pid) and (a.get("class") or "") not in CODE_CLASSES and pid not in self.found:
            self.open[pid] = []
        else:
            pid = None
        self.stack.append((tag, pid, hidden))

    def handle_endtag(self, tag):
        # Pop to the matching element; the help pages are well formed, this only guards against stray end tags.
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                for _, pid, _ in self.stack[depth:]:
                    if pid is not None:
                        self.found[pid] = "".join(self.open.pop(pid))
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self._text(data)

    def _text(self, data):
        if any(hidden for _, _, hidden in self.stack):
            return
        for pieces in self.open.values():
            pieces.append(data)


def paragraphs(html_text):
    """{paragraph id: text} for one help page; text still needs whitespace normalization."""
    parser = _Paragraphs()
    parser.feed(html_text)
    parser.close()
    return parser.found


def help_root(package_tree, lang_dir):
    return Path(package_tree) / "usr/share/libreoffice/help" / lang_dir


def aligned_pairs(en_root, other_root):
    """Yields (page, id, english, other) for every paragraph id present on the same page in both languages."""
    for en_page in sorted(Path(en_root).rglob("*.html")):
        rel = en_page.relative_to(en_root)
        other_page = Path(other_root) / rel
        if not other_page.exists():
            continue
        en = paragraphs(en_page.read_text(encoding="utf-8", errors="replace"))
        other = paragraphs(other_page.read_text(encoding="utf-8", errors="replace"))
        for pid, text in en.items():
            if pid in other:
                yield str(rel), pid, text, other[pid]
