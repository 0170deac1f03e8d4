#!/usr/bin/env python3
"""The transformers side of the cross-check: loads each checkpoint made by make_variants.py with transformers'
own classes (HunYuanDenseV1ForCausalLM, MarianMTModel) in float32 on the CPU (bf16 weights widened exactly,
which is how Dragoman computes), and writes the logits and the greedy / beam-search ids for the inputs in
cases.json. A decoder id of -1 stands for the model's decoder_start_token_id.

  python3 tools/xcheck/run_transformers.py MODELS_DIR tools/xcheck/cases.json OUT.json"""
import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, MarianMTModel


def main():
    models, cases, out = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3])
    torch.manual_seed(0)
    results = {"transformers": transformers.__version__, "torch": torch.__version__, "models": {}}
    for folder in sorted(p for p in models.iterdir() if (p / "config.json").exists()):
        config = json.loads((folder / "config.json").read_text())
        entry = results["models"][folder.name] = {"runs": []}
        with torch.no_grad():
            if config["model_type"] == "marian":
                model = MarianMTModel.from_pretrained(folder, dtype=torch.float32).eval()
                start = config["decoder_start_token_id"]
                for case in cases["seq2seq"]:
                    src = torch.tensor([case["source"]])
                    dec = torch.tensor([[start if i == -1 else i for i in case["decoder"]]])
                    out_ = model(input_ids=src, decoder_input_ids=dec)
                    run = {"logits": out_.logits[0].tolist(), "encoder": out_.encoder_last_hidden_state[0].tolist()}
                    for beams in cases["seq2seq_beams"]:
                        ids = model.generate(input_ids=src, num_beams=beams, do_sample=False, max_new_tokens=case["new_tokens"])
                        run[f"generate_{beams}"] = ids[0, 1:].tolist()  # without the decoder start token
                    entry["runs"].append(run)
            else:
                model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
                entry["class"] = type(model).__name__
                for case in cases["causal"]:
                    ids = torch.tensor([case["ids"]])
                    run = {"logits": model(input_ids=ids).logits[0].tolist()}
                    for beams in cases["causal_beams"]:
                        gen = model.generate(input_ids=ids, num_beams=beams, do_sample=False, max_new_tokens=case["new_tokens"])
                        run[f"generate_{beams}"] = gen[0, ids.shape[1]:].tolist()
                    entry["runs"].append(run)
    out.write_text(json.dumps(results))


if __name__ == "__main__":
    main()
