#!/usr/bin/env python3
"""Turns run_transformers.py's answers into the test fixture tests/fixtures/transformers-xcheck: the
checkpoints, reference.json (inputs, generated ids, versions) and reference.safetensors (logits, encoder
states as F32 '<model>/case<i>/logits' and '<model>/case<i>/encoder'). tst_transformers_parity compares
what the engine's generate/logits calls (those of dragoman-cli) give with it.

  /usr/bin/python3 tools/xcheck/make_fixture.py MODELS_DIR tools/xcheck/cases.json TRANSFORMERS.json OUT_DIR"""
import json
import shutil
import sys
from pathlib import Path

import torch

from make_variants import write_safetensors


def main():
    models, cases, reference, out = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), json.loads(Path(sys.argv[3]).read_text()), Path(sys.argv[4])
    out.mkdir(parents=True, exist_ok=True)
    summary = {"transformers": reference["transformers"], "torch": reference["torch"], "models": {}}
    tensors = {}
    for name, entry in sorted(reference["models"].items()):
        shutil.copytree(models / name, out / name, dirs_exist_ok=True)
        seq2seq = json.loads((models / name / "config.json").read_text())["model_type"] == "marian"
        runs = []
        for index, (case, theirs) in enumerate(zip(cases["seq2seq" if seq2seq else "causal"], entry["runs"])):
            run = {"ids": case["source" if seq2seq else "ids"], "max_new_tokens": case["new_tokens"]}
            if seq2seq:
                run["decoder_ids"] = case["decoder"]
                tensors[f"{name}/case{index}/encoder"] = theirs["encoder"]
            tensors[f"{name}/case{index}/logits"] = theirs["logits"]
            run["generated"] = {str(beams): theirs[f"generate_{beams}"] for beams in cases["seq2seq_beams" if seq2seq else "causal_beams"]}
            runs.append(run)
        summary["models"][name] = runs
    (out / "reference.json").write_text(json.dumps(summary, indent=1))
    write_safetensors(out / "reference.safetensors", {k: torch.tensor(v, dtype=torch.float32) for k, v in tensors.items()})


if __name__ == "__main__":
    main()
