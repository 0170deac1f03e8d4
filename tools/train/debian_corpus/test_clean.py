"""Unit checks of the Debian corpus cleaning and alignment (not part of CTest):
    /usr/bin/python3 -m unittest discover -s tools/train/debian_corpus -p 'test_*.py'
"""
import struct
import tempfile
import unittest
from pathlib import Path

from clean import clean_pair, code_like, strip_markup, strip_mnemonics, strip_placeholders
from heldout import choose, prose_like
from lohelp import paragraphs
from mofile import read_mo
from segment import segments, split_sentences


class Mnemonics(unittest.TestCase):
    def test_each_toolkit(self):
        self.assertEqual(strip_mnemonics("Save _As…"), "Save As…")
        self.assertEqual(strip_mnemonics("Op_en"), "Open")
        self.assertEqual(strip_mnemonics("&Open File"), "Open File")
        self.assertEqual(strip_mnemonics("Tom && Jerry"), "Tom & Jerry")
        self.assertEqual(strip_mnemonics("~Datei"), "Datei")

    def test_chinese_brackets(self):
        self.assertEqual(strip_mnemonics("打开(_O)…"), "打开…")
        self.assertEqual(strip_mnemonics("文件（&F）"), "文件")

    def test_identifiers_keep_underscores(self):
        self.assertEqual(strip_mnemonics("file_name_max"), "file_name_max")


class Markup(unittest.TestCase):
    def test_tags_and_entities(self):
        self.assertEqual(" ".join(strip_markup("<b>Bold</b> &amp; <a href='x'>link</a>").split()), "Bold & link")

    def test_wesnoth_help_markup(self):
        got = strip_markup("<bold>text='Lawful'</bold> units, see <ref>dst='time' text='Time of Day'</ref>")
        self.assertEqual(" ".join(got.split()), "Lawful units, see Time of Day")

    def test_text_without_markup(self):
        self.assertEqual(strip_markup("a < b"), "a < b")


class Placeholders(unittest.TestCase):
    def test_at_the_edges_they_go(self):
        self.assertEqual(strip_placeholders("%1: not found"), "not found")
        self.assertEqual(strip_placeholders("%d files selected"), "files selected")
        self.assertEqual(strip_placeholders("Error: %s"), "Error")
        self.assertEqual(strip_placeholders("Last updated (%s)"), "Last updated")
        self.assertEqual(strip_placeholders("Same as locale setting ( %1 )"), "Same as locale setting")

    def test_as_object_at_the_end_they_reject(self):
        self.assertIsNone(strip_placeholders("Could not open '%s'"))
        self.assertIsNone(strip_placeholders("You do not have permission to access %s."))
        self.assertIsNone(strip_placeholders("无法打开“%s”"))

    def test_grouping_flag(self):
        self.assertIsNone(strip_placeholders("Making link to %'d file"))

    def test_inside_the_sentence_they_reject(self):
        self.assertIsNone(strip_placeholders("Delete %d files?"))
        self.assertIsNone(strip_placeholders("Search for {query} in {folder}"))
        self.assertIsNone(strip_placeholders("Only $student_hp hitpoints left!"))

    def test_percent_signs_in_prose_stay(self):
        self.assertEqual(strip_placeholders("It grows by 50% of the size"), "It grows by 50% of the size")
        self.assertEqual(strip_placeholders("100%% done"), "100% done")
        self.assertEqual(strip_placeholders("$18 US"), "$18 US")


class Pairs(unittest.TestCase):
    def check(self, en, other, lang, reason, **kw):
        self.assertEqual(clean_pair(en, other, lang, **kw)[1], reason, (en, other))

    def test_good_pairs_pass(self):
        pair, reason = clean_pair("_Open the selected file", "Ausgewählte Datei ö_ffnen", "de")
        self.assertEqual((pair, reason), (("Open the selected file", "Ausgewählte Datei öffnen"), None))
        pair, _ = clean_pair("Resize Layer", "改变图层大小(_R)", "zh")
        self.assertEqual(pair, ("Resize Layer", "改变图层大小"))
        self.check("Convert the image to perceptual (sRGB) gamma", "将图像转换为感官性 (sRGB) 伽马", "zh", None)
        self.check("Undo last zoom change", "Die letzte Änderung an der Vergrößerung rückgängig machen", "de", None)

    def test_space_left_by_tags(self):
        pair, _ = clean_pair("Far to the west is an archipelago called <b>Morogor</b>.",
                             "Weit im Westen liegt das Archipel <b>Morogor</b>.", "de")
        self.assertEqual(pair[0], "Far to the west is an archipelago called Morogor.")

    def test_rejections(self):
        self.check("Name", "Name", "de", "too few words")
        self.check("Print Preview", "Print Preview", "de", "identical")
        self.check("dict.Exists(key: str): bool", "dict.Exists(Schlüssel: str): bool", "de", "code")
        self.check("See https://example.org/x for more", "Siehe https://example.org/x", "de", "code")
        self.check("Open the file", "ファイルを開く", "zh", "script")
        self.check("Open the file", "Открыть файл", "de", "script")
        self.check("Plug-in Settings Set which plugins will be accessible from application", "插件设置", "zh",
                   "length ratio")
        self.check("Remove the file from the list", "Remove the file from the list of things", "de", "untranslated")
        self.check("Audio levels", "Audio levels - 音频电平", "zh", "untranslated")
        self.check("Delete %d files?", "%d Dateien löschen?", "de", "placeholder")
        self.check("They are thieves by nature; rare is the summer they do not raid us.",
                   "他们是天生的强盗和小偷;他们几乎每个夏天都来袭击我们。", "zh", None)

    def test_single_words_where_allowed(self):
        self.check("Germany", "Deutschland", "de", None, min_words=1)

    def test_code_detection(self):
        self.assertTrue(code_like("--verbose=LEVEL"))
        self.assertFalse(code_like("Type the formula =B5-B7 in the cell to calculate the net price of the goods."))


class Segments(unittest.TestCase):
    def test_equal_sentence_counts_split(self):
        got = list(segments("A cat sat. A dog ran away.", "Eine Katze saß. Ein Hund lief weg.", "de"))
        self.assertEqual(got, [("A cat sat.", "Eine Katze saß."), ("A dog ran away.", "Ein Hund lief weg.")])

    def test_unequal_counts_stay_whole(self):
        got = list(segments("A cat sat. A dog ran.", "Eine Katze saß, ein Hund lief.", "de"))
        self.assertEqual(got, [("A cat sat. A dog ran.", "Eine Katze saß, ein Hund lief.")])

    def test_lines_and_chinese(self):
        got = list(segments("First line.\nSecond one.", "第一行。\n第二行。", "zh"))
        self.assertEqual(got, [("First line.", "第一行。"), ("Second one.", "第二行。")])
        self.assertEqual(split_sentences("你好。我很好！", "zh"), ["你好。", "我很好！"])

    def test_wrapped_lines_are_joined(self):
        got = list(segments("To change it, stop any\n playing or recording first.",
                            "Um es zu ändern, stoppen Sie\nzuerst jegliche Wiedergabe.", "de"))
        self.assertEqual(got, [("To change it, stop any playing or recording first.",
                                "Um es zu ändern, stoppen Sie zuerst jegliche Wiedergabe.")])

    def test_abbreviations_do_not_split(self):
        self.assertEqual(split_sentences("Das ist z. B. gut. Ja.", "de"), ["Das ist z. B. gut.", "Ja."])


class HelpPages(unittest.TestCase):
    def test_paragraphs_by_id(self):
        page = ('<p id="par_id1" class="paragraph">Choose <span class="menuitem">Tools - Options</span>.</p>'
                '<p id="par_id2" class="bascode">Print x</p><h2 id="hd_id3">Title<br>here</h2>'
                '<p id="par_id4">Enter <span class="switchinline"><span hidden="true" id="MACx">Cmd</span>'
                '<span hidden="true" id="defaultx">Ctrl</span></span>+C.</p><p id="other">no</p>')
        self.assertEqual(paragraphs(page), {"par_id1": "Choose Tools - Options.", "hd_id3": "Title here",
                                            "par_id4": "Enter Ctrl+C."})


class MoFiles(unittest.TestCase):
    def test_contexts_and_plurals(self):
        entries = [(b"", b"Content-Type: text/plain; charset=UTF-8\n"), (b"Open", b"\xc3\x96ffnen"),
                   (b"menu\x04File", b"Datei"), (b"%d file\x00%d files", b"%d Datei\x00%d Dateien"),
                   (b"Untranslated", b"")]
        ids = b"".join(k + b"\0" for k, _ in entries)
        strs = b"".join(v + b"\0" for _, v in entries)
        n = len(entries)
        base = 28 + 16 * n
        table, offset = b"", base
        for k, _ in entries:
            table += struct.pack("<2I", len(k), offset)
            offset += len(k) + 1
        for _, v in entries:
            table += struct.pack("<2I", len(v), offset)
            offset += len(v) + 1
        head = struct.pack("<7I", 0x950412DE, 0, n, 28, 28 + 8 * n, 0, 0)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.mo"
            path.write_bytes(head + table + ids + strs)
            self.assertEqual(list(read_mo(path)), [("", "Open", "Öffnen"), ("menu", "File", "Datei"),
                                                   ("", "%d file", "%d Datei")])


class HeldOut(unittest.TestCase):
    def test_prose(self):
        self.assertTrue(prose_like("Though usually timid, they sometimes attack unwary travelers when startled."))
        self.assertFalse(prose_like("Click the button to open the settings dialog of the application."))
        self.assertFalse(prose_like("Too short a sentence."))

    def test_choice_is_stable_and_distinct(self):
        pairs = [(f"Sentence number {i} is here.", f"Satz {i}.", "s") for i in range(50)]
        pairs.append(pairs[0][:1] + ("Anderer Satz.", "s"))
        first = choose(pairs, 10, "dev", lambda p: True)
        # Chosen by hash, not position: the input order does not matter, and English sides are distinct.
        self.assertEqual(first, choose(list(reversed(pairs)), 10, "dev", lambda p: True))
        self.assertEqual(len({p[0] for p in first}), 10)

if __name__ == "__main__":
    unittest.main()
