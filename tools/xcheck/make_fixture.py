#!/usr/bin/env python3
"""Turns run_transformers.py's answers into the test fixture tests/fixtures/transformers-xcheck: the
checkpoints, reference.json (inputs, generated ids, versions) and reference.safetensors (logits, encoder
states as F32 '<model>/case<i>/logits' and '<model>/case<i>/encoder'). tst_transformers_parity compares
dragoman-cli's output with it.

  /usr/bin/python3 tools/xcheck/make_fixture.py MODELS_DIR tools/xcheck/cases.json TRANSFORMERS.json OUT_DIR"""
import json
import shutil
import struct
import sys
from pathlib import Path


def write_f32(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, rows in tensors.items():
        flat = [v for row in rows for v in row]
        data = struct.pack(f"<{len(flat)}f", *flat)
        header[name] = {"dtype": "F32", "shape": [len(rows), len(rows[0])], "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((8 - (8 + len(raw)) % 8) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


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
    write_f32(out / "reference.safetensors", tensors)


if __name__ == "__main__":
    main()
