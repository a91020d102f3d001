"""Would any cheap signal tell valid counterfactual passages from invalid ones? Each candidate filter is
scored against the archived blind readings (docs/reviews/: one maintainer's reading of each run's
review sample): the development reading (the bench's ARC questions 0-99, `faitheval/16` and `/18`) and
the held-out one (ARC questions 200-249, `faitheval/17` and `/18`).

- `c_expected`: the stacked judge's probability of the target option, at a stricter threshold;
- `link`: the sentence holding the target's words also holds a word of the question that no option
  has (the passage says the target answers the question, not merely names it);
- `embedding` (`--embed`): the largest margin by which a passage sentence is closer to another option
  than to the target (all-MiniLM-L6-v2), as a ROC AUC;
- `per-option` (`--lm`): qwen2.5-1.5b asked per option whether the passage says or implies that the
  answer is that option (log-probabilities of yes), another option's largest P(yes) minus the target's,
  as a ROC AUC. Four calls a passage; about 40 minutes for the development passages on 2 cores, free
  from the call cache afterwards.

    python scripts/measure_counterfactual_filters.py [--embed] [--lm]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.checks import content_stems  # noqa: E402
from programs.faitheval import option_words_present  # noqa: E402
from programs.sentences import split_sentences  # noqa: E402
from scripts.archived_runs import latest_records  # noqa: E402

REVIEWS = ROOT / "docs" / "reviews"
READINGS = {
    "development": (
        "bench-local-40-5bfe9dd7c5/generate.counterfactual.qwen2.5-1.5b",
        "bench-local-40-adb3e759b1/generate.counterfactual.qwen2.5-1.5b",
    ),
    "held-out": ("arc-counterfactual-8ddb25b470", "arc-counterfactual-8ddb25b470-20261127T082304"),
}
SUPPORT_CHECK = 'The context says or implies that the answer is "{option}".'


def reviewed(split: str) -> list[dict]:
    """Every read passage of the split's runs, with its verdict (valid or not; unsure ones left out)."""
    out = []
    for name in READINGS[split]:
        run = REVIEWS / name
        cases = {record["id"]: record for record in latest_records(run)}
        for line in (run / "review" / "reviewer-1.jsonl").read_text().splitlines():
            verdict = json.loads(line)
            if verdict["verdict"] in ("valid", "invalid"):
                out.append({**cases[verdict["id"]], "valid": verdict["verdict"] == "valid"})
    return out


def stem_of(record: dict) -> str:
    return record["question"].split("\nA.")[0].strip()


def target_index(record: dict) -> int:
    bare = [o.strip(". ") for o in record["options"]]
    return bare.index(record["answers"][0].strip(". "))


def linked(record: dict) -> bool:
    """A sentence holding all the target's words also holds a question word no option has."""
    question_own = content_stems(stem_of(record)) - set().union(*(content_stems(o) for o in record["options"]))
    target = record["answers"][0]
    return any(
        option_words_present(s.text, target) and (not question_own or question_own & content_stems(s.text))
        for s in split_sentences(record["context"])
    )


def roc_auc(scores_invalid: list[float], scores_valid: list[float]) -> float:
    """P(an invalid passage scores above a valid one), ties counting half."""
    from sklearn.metrics import roc_auc_score

    labels = [1] * len(scores_invalid) + [0] * len(scores_valid)
    return float(roc_auc_score(labels, [*scores_invalid, *scores_valid]))


def auc_of(records: list[dict], score) -> str:
    scores = [(score(r), r["valid"]) for r in records]
    invalid = [s for s, ok in scores if not ok]
    valid = [s for s, ok in scores if ok]
    return f"ROC AUC {roc_auc(invalid, valid):.2f} ({len(invalid)} invalid, {len(valid)} valid)"


def share(records: list[dict]) -> str:
    return f"{sum(r['valid'] for r in records)} of {len(records)} read valid"


def embedding_margin(embedder):
    def score(record: dict) -> float:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", record["context"]) if len(s.split()) >= 4]
        vectors = embedder.encode(sentences or [record["context"]])
        options = embedder.encode(record["options"])
        sims = vectors @ options.T
        t = target_index(record)
        return max(float((sims[:, o] - sims[:, t]).max()) for o in range(len(record["options"])) if o != t)

    return score


def option_margin(lm):
    import dspy

    from programs.judge import LOGPROBS, verdict_probability
    from signatures.judge import JudgeCheck

    check = dspy.Predict(JudgeCheck)

    def p_yes(record: dict, option: str) -> float:
        with dspy.context(lm=lm.lm, adapter=lm.adapter()):
            out = check(
                context=record["context"],
                question=stem_of(record),
                check=SUPPORT_CHECK.format(option=option.strip()),
                config=dict(LOGPROBS),
            )
        p = verdict_probability(getattr(out, "logprobs", None), ("yes", "no"))
        return p if p is not None else float(out.verdict == "yes")

    def score(record: dict) -> float:
        ps = [p_yes(record, o) for o in record["options"]]
        t = target_index(record)
        return max(p for i, p in enumerate(ps) if i != t) - ps[t]

    return score


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embed", action="store_true", help="also the embedding margin (loads all-MiniLM-L6-v2)")
    parser.add_argument("--lm", action="store_true", help="also the per-option check (qwen2.5-1.5b, development)")
    args = parser.parse_args(argv)
    for split in READINGS:
        records = reviewed(split)
        accepted = [r for r in records if r["status"] == "accepted"]
        print(f"== {split}: {len(records)} passages read, {share(accepted)} of the judge-accepted")
        for threshold in (0.5, 0.9):
            kept = [r for r in records if (r.get("judge") or {}).get("signals", {}).get("c_expected", 0) >= threshold]
            print(f"c_expected >= {threshold}: {share(kept)}")
        print(f"link, of the judge-accepted: {share([r for r in accepted if linked(r)])}")
        if args.embed:
            from programs.embedders import get_embedder

            print(f"embedding margin: {auc_of(records, embedding_margin(get_embedder()))}")
        if args.lm and split == "development":
            from experiments.lm.registry import build_lm
            from experiments.lm.settings import LMConfig

            lm = build_lm(LMConfig(name="qwen2.5-1.5b", max_tokens=16), "judge")
            print(f"per-option margin: {auc_of(records, option_margin(lm))}")


if __name__ == "__main__":
    main()
