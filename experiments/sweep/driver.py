"""The sweep's stages, under one parent MLflow run and resumable at any stage (experiments.bench.stages):

1. `seeds.<pivot>` — seed selection once per seed, shared by every level;
2. `generate.<generator>.<dial>-<level>.<pivot>` — the generator at each level, the judge as the bench judges it;
3. `evaluate.<target>` — every target on every level's accepted cases and their originals (an ask two levels
   share, such as an original passage, is asked once);

then the report (runs/<id>/report/sweep.md, sweep.html and sweep.png; it makes no LM call).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from experiments import task_registry, tracking
from experiments.bench.cases import accepted_cases
from experiments.bench.demos import DemoBook
from experiments.bench.driver import Bench, BenchConfigError, staged_run
from experiments.bench.generate import program_version
from experiments.bench.options import BenchOptions
from experiments.bench.records import evaluation_records
from experiments.bench.scan_archive import archive_path, read_archive
from experiments.bench.sharing import Plan, plan
from experiments.bench.stages import StageRunner, clean_metrics, digest
from experiments.bench.summary import validity_figure
from experiments.config import ExperimentConfig
from experiments.lm.engine import release_models
from experiments.report_page import log_report
from experiments.resolved_run import ResolvedRun
from experiments.runner import RunResult
from experiments.sweep.curves import level_yield, sweep_table
from experiments.sweep.options import label
from experiments.sweep.report import write_report
from metrics.conflict import knows
from metrics.surface_forms import answer_kind


@dataclass
class SweepReport:
    dir: Path
    markdown: str
    metrics: dict[str, float] = field(default_factory=dict)
    page: str = "sweep.md"


def check_config(config: ExperimentConfig) -> None:
    if len(config.models.pivots) > 1:
        raise BenchConfigError("models.pivots: a sweep varies one generator's dial with one pivot")


def chosen_seeds(examples: list, data, known_by: str | None, kinds: list[str]) -> list:
    """The seeds of kinds asked for, known to `known_by` by its shipped scan of this source and split."""
    if kinds:
        examples = [e for e in examples if answer_kind(list(e.answers)[0]) in kinds]
    if known_by:
        path = archive_path(data.source, data.split, known_by)
        _, rows = read_archive(path)
        if not rows:
            raise BenchConfigError(f"options.known_by: no shipped knowledge scan of {known_by} at {path}")
        examples = [
            e
            for e in examples
            if str(e.id) in rows and knows(rows[str(e.id)].get("closed_answer"), list(e.answers), e.question)
        ]
    return examples


class StrengthSweep:
    def __init__(self, run: ResolvedRun):
        self.config = config = run.config
        self.options = o = run.options
        # The bench's machinery with the swept generator as its one task: seeds, stages, judge, target asks.
        bench_options = {
            "tasks": [o.generator],
            "generators": {o.generator: o.base},
            "settings": {o.generator: o.settings},
            "sampled": {o.generator: []},
        }
        bench_config = config.model_copy(update={"options": bench_options})
        self.bench = Bench(
            dataclasses.replace(run, config=bench_config, options=BenchOptions.model_validate(bench_options))
        )
        self.bench.nq.examples = chosen_seeds(self.bench.nq.examples, config.data, o.known_by, o.answer_kinds)
        if not self.bench.nq.examples:
            raise BenchConfigError("options.known_by / answer_kinds: no seed of the data is left to sweep")

    def loaded_data(self) -> dict:
        return self.bench.loaded_data()

    def generate(self, seeds: dict[str, list[dict]]) -> tuple[dict, dict, dict]:
        b, o = self.bench, self.options
        generation, validity, cases = {}, {}, {}
        [(name, pivot)] = b.pivots.items()
        judge_lm = b.judge_lm_for(o.generator)
        for level in o.levels:
            level_label, options = label(level), o.level_options(level)
            stage = f"generate.{o.generator}.{o.dial}-{level_label}.{name}"
            replay = seeds[name]
            inputs = digest(
                [
                    [e.id for e in b.nq.examples],
                    # resolved: a ladder's rung changing under the same strength makes new cases
                    task_registry.get(o.generator).Options.model_validate(options).model_dump(mode="json"),
                    [[r["id"], r["status"]] for r in replay],
                    program_version(o.generator),
                    b.judge_params_for(o.generator),
                ]
            )
            b.stages.run(
                stage,
                inputs,
                partial(b._generate_stage, stage=stage, task=o.generator, pivot=pivot, options=options, replay=replay),
                uses=[pivot, judge_lm] if judge_lm else [pivot],
            )
            store = b.stages.store(stage)
            generation[level_label] = store.records()
            validity[level_label] = validity_figure(store.run_id, {})
            cases[level_label] = accepted_cases(store, b.nq.examples)
        return generation, validity, cases

    def run(self) -> RunResult:
        import mlflow

        b, o = self.bench, self.options
        started = time.perf_counter()
        tags = {tracking.RUN_ID_TAG: b.run_id, "reeval.task": self.config.task, **tracking.git_state()}
        with tracking.parent_run(f"reeval/{self.config.name}", b.run_id, tags) as parent:
            b._log_inputs()
            tracking.log_params(
                {"sweep.generator": o.generator, "sweep.dial": o.dial, "sweep.default": label(o.default)}
            )
            b.stages = StageRunner(b.store, b.labelled, b.run_id, b.retry_errors)
            with b.placement.session():
                generation, validity, cases = self.generate(b.select_seeds())
                book = DemoBook({}, b.options.k_shots, b.options.seed)
                plans = {lv: plan({o.generator: c}, b.options, list(b.targets), book) for lv, c in cases.items()}
                merged = Plan()
                for p in plans.values():
                    merged.asks.update(p.asks)
                    merged.uses += p.uses
                answers = b.evaluate(merged, book)
            release_models()
            records_by_level = {}
            for lv, the_plan in plans.items():
                originals = {str(c.id): list(c.get("original_answers") or []) for c in cases[lv]}
                records_by_level[lv] = [
                    {**r, "id": f"{lv}|{r['id']}", "level": lv, "original_answers": originals.get(r["case_id"], [])}
                    for r in evaluation_records(the_plan, answers)
                ]
            default = label(o.default)
            rows = sweep_table(records_by_level, default, list(b.targets), o.settings)
            yields = {lv: level_yield(g) for lv, g in generation.items()}
            out = write_report(
                b.store.dir / "report",
                generator=o.generator,
                dial=o.dial,
                default=default,
                rows=rows,
                yields=yields,
                validity=validity,
                run_info={"run_id": b.run_id, "config": self.config.name, **tracking.git_state()},
            )
            records = [r for lv in records_by_level for r in records_by_level[lv]]
            with open(out / "records.jsonl", "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r, default=str) + "\n" for r in records)
            metrics = {"wall_seconds": time.perf_counter() - started, "evaluations": float(len(records))}
            for lv, y in yields.items():
                metrics[f"sweep.{lv}.yield"] = y["yield"]["rate"] if y["cases"] else float("nan")
                metrics[f"sweep.{lv}.accepted"] = float(y["accepted"])
            for r in rows:
                key = f"sweep.{r['level']}.{r['target']}.{r['setting']}"
                metrics[f"{key}.success"] = r["success"]["rate"] if r["success"]["n"] else float("nan")
                metrics[f"{key}.vs_default"] = r["vs_default"]["diff"]
            mlflow.log_metrics(clean_metrics(metrics))
            log_report(out)
            mlflow.log_artifact(str(b.store.dir / "stages.json"), artifact_path="stages")
        report = SweepReport(out, (out / "sweep.md").read_text(encoding="utf-8"), metrics)
        new_items = sum(m.get("new_items", 0) for s, m in b.stages.ledger.stages.items() if b.stages.ran.get(s))
        return RunResult(
            b.run_id, parent.info.run_id, records, metrics, int(new_items), metrics["wall_seconds"], report
        )


def run_sweep(run: ResolvedRun) -> RunResult:
    return staged_run(StrengthSweep, run)
