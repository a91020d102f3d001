"""Prompt and generation speed of the installed llama.cpp build against another build, in one run.

    python benchmarks/llama_build.py                              # the installed build alone
    python benchmarks/llama_build.py --against /tmp/portable      # and a second build, with the ratios

The second build lives in its own pip target directory, e.g. the portable one:

    CMAKE_ARGS=-DGGML_NATIVE=OFF python -m pip wheel --no-cache-dir --no-deps llama-cpp-python==0.3.36 -w /tmp/w
    python -m pip install --no-deps --target /tmp/portable /tmp/w/llama_cpp_python-*.whl

Each build answers the same ten NQ open-book prompts (greedy, two threads, no prompt cache): prompt
tokens per second from a one-token completion, generated tokens per second from the extra time of a
48-token one, and how many of the 48-token greedy answers the two builds write alike. The builds run
one after the other in child processes, alternating per model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(name: str, prompts: int) -> dict:
    import llama_cpp

    sys.path.insert(0, str(ROOT))
    from experiments.data.loaders import load_qa
    from experiments.data.registry import DATASETS
    from experiments.lm.engine import build_features
    from experiments.lm.roster import model_path

    llm = llama_cpp.Llama(
        model_path=str(model_path(name)), n_ctx=4096, n_threads=2, n_threads_batch=2, verbose=False, seed=0
    )
    rows = load_qa(DATASETS["nq"][0], limit=prompts + 2)[2:]
    prompt_tokens = generated = prompt_s = generate_s = 0.0
    answers = []
    for row in rows:
        text = f"Context: {row.context}\n\nQuestion: {row.question}\nAnswer in a few words:"
        llm.reset()
        started = time.perf_counter()
        out = llm.create_completion(text, max_tokens=1, temperature=0)
        first = time.perf_counter() - started
        prompt_tokens += out["usage"]["prompt_tokens"]
        prompt_s += first
        llm.reset()
        started = time.perf_counter()
        out = llm.create_completion(text, max_tokens=48, temperature=0)
        generated += out["usage"]["completion_tokens"] - 1
        answers.append(out["choices"][0]["text"])
        generate_s += max(time.perf_counter() - started - first, 1e-9)
    return {
        "model": name,
        "features": build_features(),
        "prompt_tok_s": round(prompt_tokens / prompt_s, 1),
        "gen_tok_s": round(generated / generate_s, 1),
        "prompt_tokens": int(prompt_tokens),
        "answers": answers,
    }


def child(name: str, prompts: int, site: str | None) -> dict:
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = os.pathsep.join([site, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--prompts", str(prompts)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="qwen2.5-1.5b,qwen2.5-0.5b")
    parser.add_argument("--against", help="a pip target directory holding another llama-cpp-python build")
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child, args.prompts)))
        return 0
    rows = []
    for name in args.models.split(","):
        installed = child(name, args.prompts, None)
        row = {"model": name, "installed": installed}
        if args.against:
            other = child(name, args.prompts, args.against)
            row["against"] = other
            row["prompt_ratio"] = round(installed["prompt_tok_s"] / other["prompt_tok_s"], 2)
            row["gen_ratio"] = round(installed["gen_tok_s"] / other["gen_tok_s"], 2)
            # greedy: do the two builds write the same 48 tokens?
            alike = sum(a == b for a, b in zip(installed["answers"], other["answers"], strict=True))
            row["same_greedy_text"] = f"{alike}/{len(installed['answers'])}"
        for build in ("installed", "against"):
            row.get(build, {}).pop("answers", None)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
