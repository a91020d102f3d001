"""Everything the bench report shows, computed from the scored evaluation records (no LM, no I/O).

The headline metric is each task's own (metrics.scores' task_correct): non-strict keyword
accuracy for unanswerable ("unknown") and inconsistent ("conflict") cases, multiple-choice accuracy
for counterfactual cases, EM-or-containment otherwise. A counterfactual original is its closed-book
twin, asked with the same decoding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metrics.effects import paired_effect
from metrics.evaluation import accuracy_table, paired_drop
from metrics.normalize import normalize_answer
from metrics.transfer import rank_changes, transfer_matrix

METRIC = "task_correct"
# (name, baseline (setting, decoding), compared (setting, decoding)): the papers' setting effects.
EFFECTS: tuple[tuple[str, tuple[str, str], tuple[str, str]], ...] = (
    ("task instruction", ("open_book", "greedy"), ("task_instruction", "greedy")),
    ("opinion prompt", ("open_book", "greedy"), ("opinion", "greedy")),
    ("chain of thought", ("open_book", "greedy"), ("cot", "greedy")),
    ("sampled decoding", ("open_book", "greedy"), ("open_book", "sampled")),
    ("sampled decoding, with task instruction", ("task_instruction", "greedy"), ("task_instruction", "sampled")),
    ("adversarial vs clean demonstrations", ("few_shot_clean", "greedy"), ("few_shot_adversarial", "greedy")),
)


def bench_tables(
    records: Sequence[Mapping[str, Any]], *, tasks: Sequence[str], targets: Sequence[str], headline: str
) -> dict[str, Any]:
    drops = paired_drop(records, METRIC, by=("task", "target", "setting", "decoding"))
    main: dict[str, dict[str, dict]] = {t: {} for t in targets}
    for row in drops:
        if row["setting"] == headline and row["decoding"] == "greedy" and row["target"] in main:
            main[row["target"]][row["task"]] = row
    effects = []
    for name, base, alt in EFFECTS:
        for variant in ("perturbed", "original"):
            effects += [{"effect": name, **row} for row in paired_effect(records, base, alt, variant=variant)]
    keywords = {
        m: [
            r
            for r in accuracy_table(records, metric=m, by=("task", "target", "setting", "decoding"))
            if r["n"] or r["errors"]
        ]
        for m in ("keyword_strict", "keyword_nonstrict")
    }
    transfer = {
        task: transfer_matrix(records, METRIC, value="drop", setting=headline, decoding="greedy", task=task)
        for task in tasks
    }
    ranks = [
        r
        for r in rank_changes(records, METRIC, by=("task", "setting", "decoding"))
        if r["setting"] == headline and r["decoding"] == "greedy"
    ]
    return {
        "metric": METRIC,
        "headline": headline,
        "tasks": list(tasks),
        "targets": list(targets),
        "main": main,
        "drops": drops,
        "effects": effects,
        "keywords": keywords,
        "transfer": transfer,
        "ranks": ranks,
        "answers": common_answers(records, headline),
        "accuracy": accuracy_table(records, metric=METRIC, by=("task", "target", "setting", "decoding", "variant")),
    }


def common_answers(records: Sequence[Mapping[str, Any]], headline: str, top: int = 2) -> dict[str, dict]:
    """Per "task|target|variant" in the headline setting, the commonest answers with their share: what a
    cell's accuracy is made of (a target that says "unknown" to everything scores on unanswerable cases
    and fails the originals)."""
    from collections import Counter

    counts: dict[str, Counter] = {}
    for r in records:
        if r["setting"] == headline and r["decoding"] == "greedy" and not r.get("error"):
            key = f"{r['task']}|{r['target']}|{r['variant']}"
            counts.setdefault(key, Counter())[normalize_answer(str(r.get("prediction") or "")) or "(empty)"] += 1
    return {
        key: {"n": sum(c.values()), "top": [(a, n / sum(c.values())) for a, n in c.most_common(top)]}
        for key, c in counts.items()
    }


def main_metrics(tables: Mapping[str, Any]) -> dict[str, float]:
    """The main table and the setting effects as flat MLflow metrics."""
    out: dict[str, float] = {}
    for target, cells in tables["main"].items():
        for task, row in cells.items():
            for key in ("original", "perturbed", "drop", "low", "high", "n"):
                out[f"main.{task}.{target}.{key}"] = row[key]
    for row in tables["effects"]:
        name = row["effect"].replace(" ", "_").replace(",", "")
        for key in ("change", "low", "high", "n"):
            out[f"effect.{name}.{row['variant']}.{row['task']}.{row['target']}.{key}"] = row[key]
    return out
