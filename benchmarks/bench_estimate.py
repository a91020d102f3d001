"""Estimate a bench config's cold wall time from the per-call seconds of earlier runs.

    python benchmarks/bench_estimate.py experiments/configs/bench_local.yaml --runs runs/

Generation: seconds per call (or per case) and selection/acceptance rates read from the `seconds`
fields and statuses of finished single-task runs in the runs folder (answer swap without a judge for
the pivot's short calls, unanswerable without a judge for rewrites, judged runs for the judge, context
enriching for its per-seed generation); where no such run exists the README's measured per-case wall
times stand in (inconsistent, counterfactual, the stacked judge's two extra calls). Evaluation: the
number of target calls is the bench's own sharing plan on synthetic cases with the expected accepted
counts; seconds per call per target come from the README's evaluation run (3 small targets, 1.69 s a
call) split by the models' prompt throughput, qwen2.5-1.5b's from the pivot's short calls, times a
factor per prompt shape (closed-book shorter, few-shot and two-document contexts longer, CoT writes
more). It is an estimate: it says where the time goes, not what a run will take to the minute.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import defaultdict
from pathlib import Path

import dspy

from experiments.bench.demos import DemoBook
from experiments.bench.options import BenchOptions, seeded_generators
from experiments.bench.sharing import plan
from experiments.config_loader import load_config

# docs/results/speed.md: inconsistent 23 min 47 s for 53 selected seeds (judged, seed selection cached);
# counterfactual 42 min 35 s for 50 questions (judged); rejudge with the stacked judge 5 min 30 s for 40
# cases, two calls each; evaluation 675 calls of qwen2.5-0.5b, smollm2-135m, gemma3-270m in 19 min.
README = {
    "inconsistent_per_selected": 1427 / 53,
    "counterfactual_per_question": 2555 / 50,
    "stacked_extra_call": 330 / 80,
    "small_target_call": 1140 / 675,
    "inconsistent_accepted_per_row": 26 / 75,
    "counterfactual_accepted_per_question": 21 / 50,
}
# DESIGN.md measured a qwen2.5-1.5b seed-selection call alone on the machine at 3.35 s; runs recorded beside
# another LM job take longer; the ratio rescales an estimate to the machine alone (the one call type measured both
# ways).
SOLO_CALL = 3.35
# Prompt throughput (DESIGN.md, tokens/s with 2 threads): splits the small targets' mean call time.
PROMPT_TOKENS_PER_S = {"qwen2.5-0.5b": 215, "smollm2-135m": 320, "gemma3-270m": 650 / 2}  # gemma: + one demo
# Prompt shape relative to an open-book call on an NQ context.
SHAPE = {"closed_book": 0.5, "few_shot_clean": 2.5, "few_shot_adversarial": 2.5, "cot": 1.5}
TASK_SHAPE = {"inconsistent": 1.8, "counterfactual": 0.8}


def _latest(path: Path) -> list[dict]:
    latest: dict[tuple, dict] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        key = (record["seed_id"], record["id"])
        if record.get("attempt", 1) >= latest.get(key, {}).get("attempt", 0):
            latest[key] = record
    return list(latest.values())


def measured(runs: Path) -> dict[str, float]:
    """Per-call seconds and rates from the runs' cases.jsonl (first attempts for timings)."""
    out: dict[str, float] = {}
    by_task: dict[str, list[Path]] = defaultdict(list)
    for config in runs.glob("*/config.json"):
        by_task[json.loads(config.read_text()).get("task", "")].append(config.parent)

    def first(run: Path) -> list[dict]:
        return [
            json.loads(x)
            for x in (run / "cases.jsonl").read_text().splitlines()
            if json.loads(x).get("attempt", 1) == 1
        ]

    def judged(run: Path) -> bool:
        return (json.loads((run / "config.json").read_text())["models"] or {}).get("judge") is not None

    short, rewrite, judge, enrich = [], [], [], []
    for run in by_task["answer_swap"]:
        for r in first(run):
            if "seconds" in r and not judged(run):  # a cold pivot: 2 seed-selection calls + proposals
                short.append((r["seconds"], 2 + len(r.get("proposals") or [])))
            elif "seconds" in r and r.get("judge"):  # pivot calls cached: the judge's single extraction
                judge.append(r["seconds"])
    for run in by_task["unanswerable"]:
        for r in first(run):
            if "seconds" in r and not judged(run) and r.get("edits"):
                rewrite.append((r["seconds"], len(r["edits"])))
            elif "seconds" in r and r.get("judge"):
                judge.append(r["seconds"])
    for run in by_task["context_enrich"]:
        seeds = {r["seed_id"]: r["seconds"] for r in first(run) if "seconds" in r}
        enrich += list(seeds.values())
    missing = [
        what
        for values, what in (
            (short, "an answer-swap run without a judge (the pivot's short calls)"),
            (rewrite, "an unanswerable run without a judge (the pivot's rewrites)"),
            (judge, "a judged answer-swap or unanswerable run (the judge's calls)"),
            (enrich, "a context-enriching run"),
        )
        if not values
    ]
    if missing:
        raise SystemExit(
            f"{runs}: the estimate reads per-call seconds from finished runs, and it lacks "
            + "; ".join(missing)
            + ". Run those configs (experiments/configs/nq_*.yaml, with or "
            "without models.judge) or point --runs at a folder that has them."
        )
    # A seed whose calls came from the cache took a fraction of one call: only cold seeds measure the work.
    out["pivot_short_call"] = sum(s for s, _ in short) / sum(n for _, n in short)
    enrich = [s for s in enrich if s > 2 * out["pivot_short_call"]] or enrich
    out["pivot_rewrite_call"] = sum(s for s, _ in rewrite) / sum(n for _, n in rewrite)
    out["judge_extract_call"] = statistics.mean(judge)
    out["enrich_per_selected_seed"] = statistics.median(enrich) - 2 * out["pivot_short_call"]
    out["judge_stacked_case"] = out["judge_extract_call"] + 2 * README["stacked_extra_call"]
    for task in ("answer_swap", "unanswerable", "context_enrich"):
        rows = selected = generated = checked = accepted = 0
        # Acceptance as the judge leaves it: from judged runs (latest verdicts) where there are any.
        for run in [r for r in by_task[task] if judged(r)] or by_task[task]:
            records = _latest(run / "cases.jsonl")
            rows += len({r["seed_id"] for r in records})
            live = [r for r in records if r["status"] != "rejected:seed_not_selected"]
            selected += len({r["seed_id"] for r in live})
            generated += len(live)
            checked += sum(bool(r.get("judge")) for r in live)
            accepted += sum(r["status"] == "accepted" for r in live)
        out[f"{task}.selected_per_row"] = selected / rows
        out[f"{task}.checked_per_case"] = checked / max(generated, 1)
        out[f"{task}.cases_per_selected"] = generated / max(selected, 1)
        out[f"{task}.accepted_per_row"] = accepted / rows
    return out


def target_call_seconds(names: list[str], pivot_call: float) -> dict[str, float]:
    small = [n for n in PROMPT_TOKENS_PER_S]
    mean_inverse = statistics.mean(1 / PROMPT_TOKENS_PER_S[n] for n in small)
    out = {n: README["small_target_call"] * (1 / PROMPT_TOKENS_PER_S[n]) / mean_inverse for n in small}
    out["qwen2.5-1.5b"] = pivot_call
    return {n: out.get(n, pivot_call) for n in names}


def estimate(config_path: str, runs: Path) -> None:
    config = load_config(config_path)
    options = BenchOptions.model_validate(config.options)
    m = measured(runs)
    rows = config.data.limit or 40
    questions = options.counterfactual_data.limit or rows
    minutes: dict[str, float] = {}
    seeded = [t for t in options.tasks if t in seeded_generators()]
    if seeded:
        minutes["seeds"] = rows * 2 * m["pivot_short_call"] / 60
    accepted: dict[str, float] = {}
    for task in options.tasks:
        if task == "counterfactual":
            minutes[task] = questions * README["counterfactual_per_question"] / 60
            accepted[task] = questions * README["counterfactual_accepted_per_question"]
            continue
        if task == "inconsistent":
            selected = rows * m["unanswerable.selected_per_row"]  # same seed rule (open-book correct)
            minutes[task] = selected * README["inconsistent_per_selected"] / 60
            accepted[task] = rows * README["inconsistent_accepted_per_row"]
            continue
        selected = rows * m[f"{task}.selected_per_row"]
        cases = selected * m[f"{task}.cases_per_selected"]
        judge = cases * m[f"{task}.checked_per_case"] * m["judge_stacked_case"] if config.models.judge else 0
        if task == "answer_swap":
            work = selected * (m["pivot_short_call"] * 1.82)  # proposals per selected seed, measured
        elif task == "unanswerable":
            work = selected * m["pivot_rewrite_call"] * 1.38  # rewrites per selected seed, measured
        else:
            work = selected * m["enrich_per_selected_seed"]
        minutes[task] = (work + judge) / 60
        accepted[task] = rows * m[f"{task}.accepted_per_row"]
    # Synthetic accepted cases on random seed subsets, as many as expected, through the bench's own plan.
    rng = random.Random(0)
    seeds = [f"s{i}" for i in range(rows)]
    cases: dict[str, list] = {}
    for task, n in accepted.items():
        pool = [f"q{i}" for i in range(questions)] if task == "counterfactual" else seeds
        chosen = rng.sample(pool, min(len(pool), round(n / (2 if task == "context_enrich" else 1))))
        copies = 2 if task == "context_enrich" else 1
        cases[task] = [
            dspy.Example(
                id=f"{s}:{task}{c}",
                seed_id=s,
                question=f"question {s}",
                context=f"{task} {s} {c}",
                answers=["a"],
                original_context=f"original {s}",
                original_answers=["b"],
            )
            for s in chosen
            for c in range(copies)
        ]
    names = [t.name for t in config.models.targets]
    the_plan = plan(cases, options, names, DemoBook(cases, options.k_shots, options.seed))
    per_call = target_call_seconds(names, m["pivot_short_call"])
    by_setting: dict[str, float] = defaultdict(float)
    for ask in the_plan.asks.values():
        task = next(u.task for u in the_plan.uses if u.ask_id == ask.id)
        shape = SHAPE.get(ask.setting, 1.0) * (TASK_SHAPE.get(task, 1.0) if ask.context else 1.0)
        by_setting[f"{ask.setting}/{ask.decoding}"] += per_call[ask.target] * shape / 60
    counts = the_plan.counts()
    print("measured per call (s):", {k: round(v, 2) for k, v in m.items() if "per_" not in k or "seed" in k})
    print("expected accepted cases:", {k: round(v, 1) for k, v in accepted.items()})
    print("generation (min):", {k: round(v, 1) for k, v in minutes.items()}, "total", round(sum(minutes.values()), 1))
    print(f"target calls: {counts['asks']} ({counts['uses']} evaluations, {counts['saved']} saved by sharing)")
    print(
        "evaluation (min) by setting:",
        {k: round(v, 1) for k, v in sorted(by_setting.items())},
        "total",
        round(sum(by_setting.values()), 1),
    )
    total = sum(minutes.values()) + sum(by_setting.values())
    solo = SOLO_CALL / m["pivot_short_call"]
    print(
        f"cold total: {total:.0f} min from the recorded seconds; {total * solo:.0f} min at the solo speed "
        f"(x{solo:.2f}: a seed-selection call took {SOLO_CALL} s alone, {m['pivot_short_call']:.2f} s recorded)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--runs", type=Path, default=Path("runs"))
    args = parser.parse_args()
    estimate(args.config, args.runs)
