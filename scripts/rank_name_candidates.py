"""A pilot for name swaps: several same-type candidates, ranked by how well the untouched text of the
passage reads around each (a local model's log-probability of every token the edit did not write).

    python3 scripts/rank_name_candidates.py RUN_DIR OUT_DIR [--scorer qwen2.5-1.5b]

For every judged answer swap of RUN_DIR whose old answer is a name (experiments/judging/acceptance.py's
answer kind), the pivot lists five answers of the first proposal's type from the question alone
(ProposeAnswers, the generator's retry prompt); each candidate that today's proposal checks and swap checks
pass is written into the passage by the code edit, and the one whose untouched tokens are the most likely
is kept, the run's own new answer among the candidates. OUT_DIR gets cases.jsonl (one case per seed, the
run's fields with the ranked candidate), the candidates with their scores, and a config.json copy, so
`scripts/measure_acceptance.py sheet --runs OUT_DIR` can put the cases before a blind reader. No judge is
asked: the pilot measures what ranking changes in the cases, not the judge.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.judging import acceptance  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from metrics.plausibility import PASSAGE  # noqa: E402
from programs.answer_swap import failed_check, proposal_problem, swap_checks  # noqa: E402
from programs.retries import retry_config  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402


def rest_logprob(score, text: str, spans: list[tuple[int, int]]) -> float:
    """Sum of the log-probabilities of the passage's tokens outside the written spans."""
    scored = score(PASSAGE + text)
    offset = len(PASSAGE)
    return sum(t.logprob for t in scored if t.start >= offset and not any(s <= t.start - offset < e for s, e in spans))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--scorer", default="qwen2.5-1.5b")
    args = parser.parse_args()

    from experiments.lm.offline import apply_offline_defaults

    apply_offline_defaults()
    import dspy

    from experiments.config import LMConfig
    from experiments.lm.registry import build_lm
    from experiments.lm.token_scorer import shared_scorer
    from signatures.answer_swap import ProposeAnswers

    records = [
        r
        for r in RunStore(args.run.name, root=args.run.parent).records()
        if r.get("task") == "answer_swap"
        and acceptance.passed_checks(r)
        and acceptance.answer_kind(r["original_answers"][0])[1]
    ]
    pivot = build_lm(LMConfig(name="qwen2.5-1.5b", temperature=0.0, max_tokens=160, seed=0), "pivot")
    propose = dspy.Predict(ProposeAnswers, max_tokens=160)
    score = shared_scorer(args.scorer)
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copy(args.run / "config.json", args.out / "config.json")
    cases, ranked = [], []
    for r in records:
        golds, question, original = r["original_answers"], r["question"], r["original_context"]
        answer_type = next((p.get("answer_type") for p in r.get("proposals", []) if p.get("answer_type")), "name")
        with dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
            try:
                listed = [
                    str(c) for c in propose(question=question, answer_type=answer_type, config=retry_config(1)).answers
                ]
            except Exception:  # noqa: BLE001 - a list the pivot could not write leaves the run's own answer
                listed = []
        candidates = []
        for cand in [r["answers"][0], *listed[:5]]:
            cand = " ".join(cand.split())
            if not cand or any(c["answer"] == cand for c in candidates):
                continue
            if proposal_problem(cand, golds, context=original, question=question):
                continue
            edit = replace_forms(original, golds, cand)
            if edit.count == 0 or failed_check(swap_checks(original, edit.text, golds, cand, 0.9, edit)):
                continue
            spans = [(m.start(), m.end()) for m in re.finditer(re.escape(cand), edit.text)]
            candidates.append({"answer": cand, "context": edit.text, "rest": rest_logprob(score, edit.text, spans)})
        best = max(candidates, key=lambda c: c["rest"])
        ranked.append({"id": r["id"], "run_answer": r["answers"][0], "candidates": candidates})
        cases.append({**r, "answers": [best["answer"]], "context": best["context"], "status": "accepted"})
        print(f"{r['answers'][0]!r} -> {best['answer']!r} ({len(candidates)} candidates)", flush=True)
    (args.out / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
    (args.out / "candidates.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in ranked))


if __name__ == "__main__":
    main()
