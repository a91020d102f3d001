"""Does reusing a prompt prefix change llama.cpp's logits? The last-token logits of a prompt decoded whole,
against the same prompt decoded after a prefix kept in the KV cache (what a context's previous call or a
saved state gives), for several prefix lengths and batch sizes.

    python benchmarks/prefix_numerics.py --model qwen2.5-0.5b
    python benchmarks/prefix_numerics.py --model qwen2.5-1.5b --batch 512 --batch 32

With --batch B the context decodes at most B tokens a batch; a reused prefix that is a multiple of B then
leaves every token in a batch of the same tokens as a whole decode. Also times a 600-token prompt per B,
the batch sizes taking turns for --rounds rounds so that a shared machine's load falls on each alike;
reports the median prompt tokens/s per B and its ratio to the first B's.
Prints one line per batch size and one JSON line (date, commit, machine, command).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.provenance import commit, machine  # noqa: E402

PASSAGE = (
    "Passage: The Eiffel Tower was completed in 1889 in Paris. It was designed by the company of Gustave "
    "Eiffel. It was the tallest structure in the world until 1930. "
)
QUESTION = "Question: when was it completed? Answer:"


def measure(model: str, batch: int, tail: str = "") -> dict:
    import llama_cpp
    import numpy as np

    from experiments.lm.roster import model_path

    llama = llama_cpp.Llama(
        model_path=str(model_path(model)), n_ctx=2048, n_batch=batch, n_threads=1, verbose=False, seed=0
    )

    def last_logits(tokens: list[int], keep: int):
        llama.n_tokens = keep  # eval drops the KV entries from here on
        llama.eval(tokens[keep:])
        return np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).copy()

    prompt = llama.tokenize((PASSAGE * 3 + QUESTION + tail).encode())
    llama.reset()
    whole = last_logits(prompt, 0)
    kept = {}
    for keep in range(1, len(prompt)):
        llama.reset()
        last_logits(prompt, len(prompt))
        diff = float(np.abs(last_logits(prompt, keep) - whole).max())
        kept[keep] = diff
    llama.close()
    aligned = [k for k in kept if k % batch == 0]
    return {
        "model": model,
        "batch": batch,
        "prompt_tokens": len(prompt),
        "prefixes_tried": len(kept),
        "prefixes_identical": sum(d == 0.0 for d in kept.values()),
        "max_abs_diff": max(kept.values()),
        "batch_aligned_prefixes": len(aligned),
        "batch_aligned_identical": sum(kept[k] == 0.0 for k in aligned),
        "identical_prefixes": [k for k, d in kept.items() if d == 0.0],
    }


def throughput(model: str, batches: list[int], rounds: int) -> dict[int, list[float]]:
    """Prompt tokens/s of a 600-token prompt decoded whole, per batch size, the sizes taking turns."""
    import llama_cpp

    from experiments.lm.roster import model_path

    contexts = {
        b: llama_cpp.Llama(model_path=str(model_path(model)), n_ctx=2048, n_batch=b, n_threads=1, verbose=False)
        for b in batches
    }
    long = contexts[batches[0]].tokenize((PASSAGE * 40).encode())[:600]
    rates: dict[int, list[float]] = {b: [] for b in batches}
    for _ in range(rounds):
        for b, llama in contexts.items():
            llama.reset()
            started = time.perf_counter()
            llama.eval(long)
            rates[b].append(len(long) / (time.perf_counter() - started))
    for llama in contexts.values():
        llama.close()
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-0.5b")
    parser.add_argument("--batch", type=int, action="append", help="n_batch (repeatable; default 512 and 32)")
    parser.add_argument("--rounds", type=int, default=7, help="timing rounds (each batch size once a round)")
    parser.add_argument("--tail", default="", help="text after the question (changes the prompt's length)")
    parser.add_argument("--timing-only", action="store_true", help="skip the logits comparison (slow on 1.5B)")
    args = parser.parse_args(argv)
    from experiments.lm.offline import apply_offline_defaults

    apply_offline_defaults()
    measured = commit()
    batches = args.batch or [512, 32]
    rows = [
        {"model": args.model, "batch": b} if args.timing_only else measure(args.model, b, args.tail) for b in batches
    ]
    rates = throughput(args.model, batches, args.rounds)
    first = statistics.median(rates[batches[0]])
    for r in rows:
        r["prompt_tokens_per_s"] = round(statistics.median(rates[r["batch"]]), 1)
        r["prompt_tokens_per_s_rounds"] = [round(x, 1) for x in rates[r["batch"]]]
        r["speed_vs_first_batch"] = round(r["prompt_tokens_per_s"] / first, 3)
    for r in rows:
        numerics = ""
        if not args.timing_only:
            same, tried = r["prefixes_identical"], r["prefixes_tried"]
            aligned = f"{r['batch_aligned_identical']} of {r['batch_aligned_prefixes']}"
            numerics = (
                f"{same} of {tried} reused prefixes give the whole decode's logits (max |diff| "
                f"{r['max_abs_diff']:.3g}); prefixes a multiple of the batch: {aligned}; "
            )
        print(
            f"{r['model']} n_batch {r['batch']}: {numerics}{r['prompt_tokens_per_s']} prompt tokens/s "
            f"(median of {args.rounds}; {r['speed_vs_first_batch']}× n_batch {batches[0]}'s)"
        )
    command = "python3 benchmarks/prefix_numerics.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(
        json.dumps(
            {
                "rows": rows,
                "date": date.today().isoformat(),
                "commit": measured,
                "machine": machine(),
                "command": command,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
