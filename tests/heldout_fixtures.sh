#!/usr/bin/env bash
# Parity on checkpoints this repository does not contain, as the outside checks do: the fixture generator
# (../shared/fixtures/gen/make_all.py) makes tiny Marian and HunYuan checkpoints of other sizes with other seeds,
# with their reference outputs, and the parity suites run on them through $DRAGOMAN_TEST_FIXTURES.
#   tests/heldout_fixtures.sh TESTS_DIR      (TESTS_DIR holds tst_hunyuan, tst_marian, ...; CTest passes it)
# Exits 77 (CTest: skipped) without the generator (a fresh clone outside the workspace) or its Python modules.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tests="${1:?usage: heldout_fixtures.sh TESTS_DIR}"
gen="${DRAGOMAN_FIXTURE_GEN:-$root/../shared/fixtures/gen/make_all.py}"
if [[ ! -f "$gen" ]]; then
    echo "skipped: no fixture generator at $gen"
    exit 77
fi
if ! /usr/bin/python3 -c "import torch, numpy, sentencepiece, regex" 2>/dev/null; then
    echo "skipped: the generator needs Debian's python3-torch, python3-numpy, python3-sentencepiece, python3-regex"
    exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Sizes unlike the committed fixtures: GQA 5:1 and plain multi-head, head_dim apart from hidden/heads, no RoPE
# scaling (alpha 1), 1-3 layers, unequal encoder/decoder depths and heads, and the older Marian layout that
# stores every tied alias and the sinusoid tables.
cat >"$work/a.json" <<'JSON'
{"marian": {"dir": "marian-tiny", "d_model": 48, "enc_layers": 3, "dec_layers": 1, "enc_heads": 6, "dec_heads": 3,
            "enc_ffn": 80, "dec_ffn": 96, "src_vocab": 190, "tgt_vocab": 170, "max_pos": 128},
 "hunyuan": {"dir": "hunyuan-tiny", "hidden": 80, "inter": 144, "layers": 2, "heads": 5, "kv_heads": 1, "head_dim": 24,
             "alpha": 500.0, "merges": 800},
 "bad": false}
JSON
cat >"$work/b.json" <<'JSON'
{"marian": {"dir": "marian-tiny", "d_model": 24, "enc_layers": 1, "dec_layers": 3, "enc_heads": 2, "dec_heads": 6,
            "enc_ffn": 40, "dec_ffn": 48, "src_vocab": 150, "tgt_vocab": 210, "max_pos": 40},
 "hunyuan": {"dir": "hunyuan-tiny", "hidden": 48, "inter": 96, "layers": 1, "heads": 3, "kv_heads": 3, "head_dim": 8,
             "alpha": 1.0, "merges": 300},
 "bad": false}
JSON
status=0
for variant in "a 7" "b 99 --marian-extra-tied-keys"; do
    set -- $variant
    name="$1" seed="$2"
    shift 2
    out="$work/$name"
    /usr/bin/python3 "$gen" --out "$out" --seed "$seed" --profile-file "$work/$name.json" "$@" >"$work/$name.log" 2>&1 || {
        cat "$work/$name.log"
        echo "error: the generator failed for profile $name"
        exit 1
    }
    for suite in tst_hunyuan tst_hymt tst_bpe_tokenizer tst_marian tst_marian_tokenizer; do
        if DRAGOMAN_TEST_FIXTURES="$out" "$tests/$suite" >"$work/$suite.log" 2>&1; then
            echo "profile $name (seed $seed): $suite passed ($(grep -o 'Totals: [0-9]* passed' "$work/$suite.log"))"
        else
            grep -E "^(FAIL|QFATAL)|Loc:|Totals" "$work/$suite.log" || tail -20 "$work/$suite.log"
            echo "profile $name (seed $seed): $suite FAILED"
            status=1
        fi
    done
done
exit $status
