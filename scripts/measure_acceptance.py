"""Fit and measure the acceptance score (experiments/judging/acceptance.py) on the archived verdicts.

    python3 scripts/measure_acceptance.py score [--scorer qwen2.5-0.5b] [--all-judged RUN_DIR ...]
    python3 scripts/measure_acceptance.py fit [--precision 0.95] [--labels independent] [--write]
    python3 scripts/measure_acceptance.py sheet OUT_DIR [--parts 4]
    python3 scripts/measure_acceptance.py import OUT_DIR/sheet-1.key.json VERDICTS.txt --reader NAME --kind KIND

`score` reads the plausibility signals of every reviewed answer-swap and unanswerable case under
docs/reviews/ (and of every judged case of the runs given with --all-judged) into each run folder's
acceptance_signals.jsonl; it resumes where it stopped. `fit` needs no model: per task it prints each signal's
effect on the verdicts (ROC AUC, development vs held-out rows, and how many invalid cases a cut at the signal's
own precision-90 point removes against valid ones kept), fits the stacked score on development-row verdicts,
chooses the threshold on their cross-validated scores, and reports it on held-out-row verdicts. --write stores
the parameters where runs read them.

`sheet` writes blind sheets (experiments/review/sheet.py: no status, checks, judge or ids; keys apart) of
every judged case of the development-row runs, for a reader who did not write the checks; `import` stores
that reader's lines in docs/reviews/independent_reading.jsonl, which `fit --labels independent` fits on
(the maintainer's archived verdicts, `--labels reviewer-1`, stay the held-out measure).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.judging import acceptance  # noqa: E402
from experiments.review.sample import read_sample  # noqa: E402
from experiments.review.verdicts import load_verdicts  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402

REVIEWS = ROOT / "docs" / "reviews"
# One file for the whole archive: stages of one comparison often hold the same case, read once.
SIGNALS = REVIEWS / acceptance.SIGNALS_FILE


def run_dirs() -> list[Path]:
    found = sorted(p.parent for p in REVIEWS.rglob("cases.jsonl"))
    return [d for d in found if ".superseded-" not in d.name and (d / "review" / "sample.json").exists()]


def records_of(run: Path) -> list[dict]:
    return RunStore(run.name, root=run.parent).records()


def verdicts_of(run: Path, annotator: str) -> dict[str, str]:
    """Case id → verdict, a verdict given to a drawn case serving every case that reads the same."""
    path = run / "review" / f"{annotator}.jsonl"
    if not path.exists():
        return {}
    given = {str(v.id): v.verdict for v in load_verdicts(path)}
    sample = read_sample(run / "review" / "sample.json")
    return {
        cid: given[case["id"]]
        for case in sample.get("cases", [])
        if case["id"] in given
        for cid in [case["id"], *case.get("same", [])]
    }


INDEPENDENT = REVIEWS / "independent_reading.jsonl"


def independent_verdicts() -> dict[tuple[str, str], str]:
    """(run, case id) → verdict of the independent reading."""
    if not INDEPENDENT.exists():
        return {}
    out = {}
    for line in INDEPENDENT.read_text(encoding="utf-8").splitlines():
        if line.strip():
            v = json.loads(line)
            out[(v["run"], v["id"])] = v["verdict"]
    return out


def run_key(run: Path) -> str:
    """How the independent reading names a run: its path under docs/reviews/, a stage of a sweep or bench as
    `run-id/stage`, else its folder name."""
    run = run.resolve()
    if run.is_relative_to(REVIEWS):
        return str(run.relative_to(REVIEWS))
    return f"{run.parent.name}/{run.name}" if (run.parent / "stages.json").exists() else run.name


def quoted_text(at: str | None = None) -> str:
    """Everything the tracked files say (configs, tests, docs, archived runs), lower-cased: a question found in
    it was read or used before. `at`: as they stood at that commit, the one a sheet was drawn from; archiving
    the runs read and quoting their cases afterwards would otherwise leave them out of their own figures."""
    import subprocess

    tree = [at] if at else []
    return subprocess.run(
        ["git", "grep", "-h", "-I", "-i", "-e", ".", *tree, "--", ".", ":!data/", f":!{INDEPENDENT.relative_to(ROOT)}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.lower()


def write_sheets(
    out_dir: Path,
    parts: int,
    runs: list[Path] | None = None,
    size: int | None = None,
    seed: int = 0,
    accepted_only: bool = False,
    allow_quoted: bool = False,
) -> None:
    """Blind sheets and their keys. Without `runs`: every judged case of the development-row runs. With
    `runs`: every judged case of those runs (or `size` drawn uniformly), none whose question the tracked files
    quote; reading the judge's rejections too measures both the judge's and the acceptance score's cut."""
    import random

    from experiments.review.sheet import group_same_reading, sheet_text

    groups = []
    if runs is None:
        for run in run_dirs():
            if split_of(run) != "development":
                continue
            records = [r for r in records_of(run) if acceptance.passed_checks(r)]
            groups += [(str(run.relative_to(REVIEWS)), g) for g in group_same_reading(records)]
    else:
        text = "" if allow_quoted else quoted_text()
        for run in runs:
            records = [r for r in records_of(run) if acceptance.passed_checks(r)]
            if accepted_only:
                records = [r for r in records if r["status"] == "accepted"]
            done = independent_verdicts()
            fresh = [
                r for r in records if r["question"].lower().strip() not in text and (run_key(run), r["id"]) not in done
            ]
            print(f"{run}: {len(records)} judged, {len(records) - len(fresh)} read or quoted before")
            groups += [(run_key(run), g) for g in group_same_reading(fresh)]
    random.Random(seed).shuffle(groups)
    if size is not None:
        groups = groups[:size]
    out_dir.mkdir(parents=True, exist_ok=True)
    for k in range(parts):
        part = groups[k::parts]
        (out_dir / f"sheet-{k + 1}.md").write_text(sheet_text([g for _, g in part]), encoding="utf-8")
        key = {str(n): {"run": run, "ids": [r["id"] for r in g]} for n, (run, g) in enumerate(part, start=1)}
        (out_dir / f"sheet-{k + 1}.key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
        print(f"{out_dir / f'sheet-{k + 1}.md'}: {len(part)} cases")


def fresh_report(runs: list[Path]) -> None:
    """For runs read in full by the independent reading: the yield and the valid share of what the judge alone
    accepted and of what the acceptance score accepts (`reeval accept` applied), with Wilson intervals."""
    verdicts = independent_verdicts()
    for task in acceptance.tasks():
        rows = []
        selected = 0
        for run in runs:
            records = [r for r in records_of(run) if r.get("task") == task]
            selected += sum(r["status"] != "rejected:seed_not_selected" for r in records)
            for r in records:
                if acceptance.passed_checks(r) or r.get("status_before_acceptance"):
                    v = verdicts.get((run_key(run), r["id"]))
                    before = r.get("status_before_acceptance", r["status"])
                    rows.append((before == "accepted", r["status"] == "accepted", v, r))
        if not rows:
            continue
        print(f"\n## {task}: {selected} seeds selected, {len(rows)} judged")
        for label, pick in (("the judge alone", 0), ("the acceptance score", 1)):
            chosen = [x for x in rows if x[pick]]
            read = [x for x in chosen if x[2] in ("valid", "invalid")]
            valid = sum(x[2] == "valid" for x in read)
            lo, hi = wilson_interval(valid, len(read)) if read else (float("nan"), float("nan"))
            print(
                f"{label}: accepts {len(chosen)} ({len(chosen) / max(selected, 1):.0%} of selected); read "
                f"{len(read)} (unread: quoted before or unsure {len(chosen) - len(read)}): {valid} valid = "
                f"{valid / max(len(read), 1):.0%} [{lo:.0%}, {hi:.0%}]"
            )


def carry(sources: list[Path], target: Path) -> None:
    """Verdicts of the independent reading for cases of `target` that read exactly as a read case of `sources`
    (the same seed given the same case by another version of the generator): read once, counted for both."""
    from experiments.review.sample import read_key

    verdicts = independent_verdicts()
    lines = [json.loads(x) for x in INDEPENDENT.read_text(encoding="utf-8").splitlines() if x.strip()]
    by_case = {(x["run"], x["id"]): x for x in lines}
    read = {}
    for run in sources:
        for r in records_of(run):
            if (run_key(run), r["id"]) in verdicts:
                read[(r.get("task"), read_key(r))] = by_case[(run_key(run), r["id"])]
    added = 0
    with INDEPENDENT.open("a", encoding="utf-8") as f:
        for r in records_of(target):
            source = read.get((r.get("task"), read_key(r)))
            if source and (target.name, r["id"]) not in verdicts and acceptance.passed_checks(r):
                f.write(json.dumps({**source, "run": target.name, "id": r["id"], "carried_from": source["run"]}) + "\n")
                added += 1
    print(f"{added} verdicts carried to {target.name}")


def by_kind(runs: list[Path]) -> None:
    """Read valid share of every judged case, by the old answer's kind (number or date, name, other)."""
    verdicts = independent_verdicts()
    for run in runs:
        counts = defaultdict(lambda: [0, 0])
        for r in records_of(run):
            v = verdicts.get((run_key(run), r["id"]))
            if v not in ("valid", "invalid") or r.get("task") != "answer_swap":
                continue
            number, name = acceptance.answer_kind(r["original_answers"][0])
            kind = "number or date" if number else "name" if name else "other"
            counts[kind][0] += v == "valid"
            counts[kind][1] += 1
        print(f"{run.name}: " + ", ".join(f"{k} {v}/{n}" for k, (v, n) in sorted(counts.items())))


def readings(prefix: str) -> None:
    """Valid share of the independent reading, per run whose name starts with `prefix`."""
    by_run = defaultdict(list)
    for (run, _), verdict in independent_verdicts().items():
        if run.startswith(prefix):
            by_run[run].append(verdict)
    for run, verdicts in sorted(by_run.items()):
        valid, invalid = verdicts.count("valid"), verdicts.count("invalid")
        lo, hi = wilson_interval(valid, valid + invalid)
        print(
            f"{run}: {valid} valid, {invalid} invalid, {verdicts.count('unsure')} unsure: "
            f"{valid / max(valid + invalid, 1):.0%} [{lo:.0%}, {hi:.0%}]"
        )


KIND = (
    "independent blind reader: a language-model agent given only the sheet and the blind brief, who did not "
    "write the checks"
)


def import_reading(key_path: Path, verdicts_path: Path, reader: str, kind: str = KIND) -> None:
    from datetime import datetime, timezone

    from experiments.review.sheet import parse_verdicts

    key = json.loads(key_path.read_text(encoding="utf-8"))
    found = parse_verdicts(verdicts_path, [int(n) for n in key])
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with INDEPENDENT.open("a", encoding="utf-8") as f:
        for v in found:
            entry = key[str(v.number)]
            for case_id in entry["ids"]:
                line = {"run": entry["run"], "id": case_id, "verdict": v.verdict, "note": v.reason}
                f.write(json.dumps({**line, "reader": reader, "kind": kind, "at": at}, ensure_ascii=False) + "\n")
    print(f"{len(found)} verdicts of {len(key)} cases from {verdicts_path} -> {INDEPENDENT.relative_to(ROOT)}")


def split_of(run: Path) -> str:
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    return "held_out" if (config.get("data") or {}).get("split") == "held_out" else "development"


def score_runs(scorer_name: str, all_judged: list[Path], threads: int) -> None:
    from experiments.lm.offline import apply_offline_defaults

    apply_offline_defaults()
    from experiments.lm.token_scorer import LlamaTokenScorer

    scorer = LlamaTokenScorer(scorer_name, n_threads=threads)
    every = {p.resolve() for p in all_judged}
    cache = acceptance.SignalCache(SIGNALS)
    # Answer swaps first: the generator the decision matters most for.
    for run in sorted(run_dirs(), key=lambda d: (split_of(d) != "development", "unanswerable" in str(d))) + [
        p for p in every if p not in run_dirs()
    ]:
        records = [r for r in records_of(run) if acceptance.passed_checks(r)]
        # Development-row runs: every judged case (the independent reading reads them all); others: the reviewed.
        if run.resolve() not in every and split_of(run) != "development":
            reviewed = verdicts_of(run, "reviewer-1")
            records = [r for r in records if r["id"] in reviewed]
        if not records:
            continue
        print(f"{run.relative_to(REVIEWS)}: {len(records)} cases", flush=True)
        acceptance.read_signals(records, scorer, scorer_name, cache)


def rows_for(task: str, scorer_name: str, annotator: str) -> list[dict]:
    """One row per distinct case text with a valid/invalid verdict (a case several stages wrote counts once).
    `annotator` "independent" takes the independent reading where it read a case, else nothing."""
    rows, seen = [], set()
    cache = acceptance.SignalCache(SIGNALS)
    independent = independent_verdicts() if annotator == "independent" else {}
    for run in run_dirs():
        name = str(run.relative_to(REVIEWS))
        if annotator == "independent":
            verdicts = {cid: v for (r, cid), v in independent.items() if r == name}
        else:
            verdicts = verdicts_of(run, annotator)
        for r in records_of(run):
            if (
                r.get("task") != task
                or not acceptance.passed_checks(r)
                or verdicts.get(r["id"]) not in ("valid", "invalid")
            ):
                continue
            key = acceptance.case_key(r, scorer_name)
            entry = cache.entries.get(key)
            if key in seen or entry is None or "signals" not in entry:
                continue
            seen.add(key)
            rows.append(
                {
                    "run": str(run.relative_to(REVIEWS)),
                    "split": split_of(run),
                    "valid": verdicts[r["id"]] == "valid",
                    "judge_accepted": r["status"] == "accepted",
                    "features": acceptance.feature_vector(task, r, entry["signals"]),
                }
            )
    return rows


def auc(scores: list[float], labels: list[bool]) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if 0 < sum(labels) < len(labels) else float("nan")


def kept(rows: list[dict], accept: list[bool]) -> str:
    k = [r for r, a in zip(rows, accept, strict=True) if a]
    valid = sum(r["valid"] for r in k)
    lo, hi = wilson_interval(valid, len(k)) if k else (float("nan"), float("nan"))
    invalid_all = sum(not r["valid"] for r in rows)
    valid_all = sum(r["valid"] for r in rows)
    return (
        f"keeps {len(k)}/{len(rows)}: {valid}/{len(k)} valid = {valid / max(len(k), 1):.2f} [{lo:.2f}, {hi:.2f}]; "
        f"invalid removed {invalid_all - (len(k) - valid)}/{invalid_all}, valid kept {valid}/{valid_all}"
    )


def removed(rows: list[dict], accept: list[bool]) -> str:
    invalid = [not r["valid"] for r in rows]
    gone_invalid = sum(i and not a for i, a in zip(invalid, accept, strict=True))
    kept_valid = sum(not i and a for i, a in zip(invalid, accept, strict=True))
    return f"invalid removed {gone_invalid}/{sum(invalid)}, valid kept {kept_valid}/{len(rows) - sum(invalid)}"


def fit_task(task: str, scorer_name: str, precision: float, write: bool, annotator: str) -> None:
    """Fit on development-row verdicts of `annotator` (the independent reading by default); measure on the
    held-out rows' archived verdicts (the maintainer's: the only reading of those rows)."""
    dev = [r for r in rows_for(task, scorer_name, annotator) if r["split"] == "development"]
    held = [r for r in rows_for(task, scorer_name, "reviewer-1") if r["split"] == "held_out"]
    names = acceptance.feature_names(task)
    print(
        f"\n## {task}: {len(dev)} development-row verdicts of {annotator} ({sum(not r['valid'] for r in dev)} "
        f"invalid); {len(held)} held-out verdicts of reviewer-1 ({sum(not r['valid'] for r in held)} invalid)"
    )
    print(
        "\nsignal | direction | AUC dev | AUC held-out | dev: the worst fifth by the signal removed | "
        "held-out: the same cut"
    )
    print("---|---|---|---|---|---")
    for i, name in enumerate(names):
        d = auc([r["features"][i] for r in dev], [r["valid"] for r in dev])
        h = auc([r["features"][i] for r in held], [r["valid"] for r in held])
        sign = 1.0 if (d if d == d else h) >= 0.5 else -1.0
        values = sorted(sign * r["features"][i] for r in dev)
        cut = values[len(values) // 5] if values else 0.0
        print(
            f"{name} | {'higher' if sign > 0 else 'lower'} = valid | {d:.2f} | {h:.2f} | "
            + removed(dev, [sign * r["features"][i] >= cut for r in dev])
            + " | "
            + removed(held, [sign * r["features"][i] >= cut for r in held])
        )
    print("\nthe judge alone: development " + kept(dev, [r["judge_accepted"] for r in dev]))
    print("the judge alone: held-out    " + kept(held, [r["judge_accepted"] for r in held]))
    x, y = [r["features"] for r in dev], [r["valid"] for r in dev]
    cv = acceptance.cross_validated(x, y)
    threshold, reached = acceptance.threshold_for(cv, y, precision), True
    if threshold >= 1.0:  # the target is out of reach: the most precise cut that still keeps a fifth
        threshold, reached = acceptance.best_cut(cv, y, min_share=0.2), False
    cv_kept = [s >= threshold for s in cv]
    params = {
        **acceptance.fit(x, y),
        "threshold": round(threshold, 4),
        "features": names,
        "precision_target": precision,
        "precision_target_reached": reached,
        "cross_validated": kept(dev, cv_kept),
        "scorer": scorer_name,
        "signals_version": acceptance.SIGNALS_VERSION,
        "fitted_on": f"{len(dev)} development-row verdicts of {annotator}",
        "name": f"acceptance.{task}/{acceptance.SIGNALS_VERSION}/{scorer_name}",
    }
    print(
        f"\n### stacked score; threshold {threshold:.3f} (target: cross-validated precision ≥ {precision}; "
        f"{'reached' if reached else 'out of reach: the most precise cut keeping a fifth'})"
    )
    print(
        f"AUC cross-validated: {auc(cv, y):.2f}; weights: "
        + ", ".join(f"{n} {w:+.2f}" for n, w in zip(names, params["coef"], strict=True))
    )
    print("cross-validated: " + params["cross_validated"])
    if held:
        scores = [acceptance.score(params, r["features"]) for r in held]
        print(
            f"held-out AUC {auc(scores, [r['valid'] for r in held]):.2f}; "
            + kept(held, [s >= threshold for s in scores])
        )
        by_run = defaultdict(list)
        for r, s in zip(held, scores, strict=True):
            by_run[r["run"]].append((r, s >= threshold))
        for run, pairs in sorted(by_run.items()):
            print(f"  {run}: " + kept([r for r, _ in pairs], [a for _, a in pairs]))
    if write:
        acceptance.params_path(task).write_text(json.dumps(params, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {acceptance.params_path(task).relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score")
    s.add_argument("--scorer", default=acceptance.DEFAULT_SCORER)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--all-judged", nargs="*", type=Path, default=[])
    f = sub.add_parser("fit")
    f.add_argument("--scorer", default=acceptance.DEFAULT_SCORER)
    f.add_argument("--precision", type=float, default=0.9)
    f.add_argument("--annotator", "--labels", dest="annotator", default="independent")
    f.add_argument("--write", action="store_true")
    f.add_argument("--task", choices=acceptance.tasks(), nargs="*", default=list(acceptance.tasks()))
    sh = sub.add_parser("sheet")
    sh.add_argument("out_dir", type=Path)
    sh.add_argument("--parts", type=int, default=4)
    sh.add_argument("--runs", type=Path, nargs="*", help="draw accepted cases of these run folders instead")
    sh.add_argument("--size", type=int, default=None)
    sh.add_argument("--accepted-only", action="store_true")
    sh.add_argument("--allow-quoted", action="store_true", help="seeds an archived run used (known-seed swaps)")
    ca = sub.add_parser("carry")
    ca.add_argument("target", type=Path)
    ca.add_argument("sources", type=Path, nargs="+")
    fr = sub.add_parser("fresh")
    fr.add_argument("runs", type=Path, nargs="+")
    bk = sub.add_parser("kinds")
    bk.add_argument("runs", type=Path, nargs="+")
    rd = sub.add_parser("readings")
    rd.add_argument("prefix", nargs="?", default="")
    im = sub.add_parser("import")
    im.add_argument("key", type=Path)
    im.add_argument("verdicts", type=Path)
    im.add_argument("--reader", required=True)
    im.add_argument("--kind", default=KIND)
    args = parser.parse_args()
    if args.command == "sheet":
        write_sheets(
            args.out_dir,
            args.parts,
            args.runs or None,
            args.size,
            accepted_only=args.accepted_only,
            allow_quoted=args.allow_quoted,
        )
    elif args.command == "carry":
        carry(args.sources, args.target)
    elif args.command == "fresh":
        fresh_report(args.runs)
    elif args.command == "kinds":
        by_kind(args.runs)
    elif args.command == "readings":
        readings(args.prefix)
    elif args.command == "import":
        import_reading(args.key, args.verdicts, args.reader, args.kind)
    elif args.command == "score":
        score_runs(args.scorer, args.all_judged, args.threads)
    else:
        for task in args.task:
            fit_task(task, args.scorer, args.precision, args.write, args.annotator)


if __name__ == "__main__":
    main()
