"""Unit checks of the degenerate-output definition (degenerate.py) and the evaluation set split (not in CTest):
    /usr/bin/python3 -m unittest discover -s tools/train -p 'test_degenerate.py'
"""
import unittest
from pathlib import Path

import eval_sets
from degenerate import degenerate_rate, is_degenerate

SHARED = Path(__file__).resolve().parents[3] / "shared/corpora"


class Degenerate(unittest.TestCase):
    def test_loops_are_degenerate(self):
        for text in ["Jahr Jahr Jahr Jahr", "Im Jahr, Jahr, Jahr, Jahr 2020", "进行进行进行进行", "Settttttikanischen",
                     "Ich gehe nach Hause. Ich gehe nach Hause. Ich gehe nach Hause.", "the the the the end",
                     "我们的我们的我们的", "Das ist ist ist ist gut", "hahahaha", "的的的的的的"]:
            self.assertTrue(is_degenerate(text), text)

    def test_ordinary_text_is_not(self):
        for text in ["Die Schifffahrt ist schön.", "Very very good.", "哈哈哈", "It cost 1000000 dollars...",
                     "Nein, nein, nein!", "Tom likes Italian food.", "我们进行了讨论，然后进行了投票。",
                     "Aaaaah!", "Mississippi", "Sie sagte: „Ja, ja, ja.“", ""]:
            self.assertFalse(is_degenerate(text), text)

    def test_rate(self):
        self.assertEqual(degenerate_rate(["ok", "Jahr Jahr Jahr Jahr", "fine", "gut"]), 25.0)
        self.assertEqual(degenerate_rate([]), 0.0)


@unittest.skipUnless((SHARED / "en-zh.dev.tsv").exists(), "needs ../shared/corpora")
class Sets(unittest.TestCase):
    def test_tatoeba_and_tico19_split_the_en_zh_dev_set(self):
        tatoeba = eval_sets.load("tatoeba", "en-zh", SHARED, None)
        tico = eval_sets.load("tico19", "en-zh", SHARED, None)
        self.assertEqual(tatoeba + tico, eval_sets.load("dev", "en-zh", SHARED, None))
        self.assertEqual(tico[0][0], "and it get the chest pain")
        self.assertIsNone(eval_sets.load("tico19", "en-de", SHARED, None))


if __name__ == "__main__":
    unittest.main()
