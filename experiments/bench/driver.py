"""The bench: every generator on one shared seed set, every target on the accepted cases and their
originals, the papers' tables — as stages under one parent MLflow run, resumable at any stage.

Stages, in order (each a nested MLflow run, its items checkpointed in runs/<bench id>/<stage>/):

1. `calibration` — the judge on held-out control cases (when validation.calibration_controls > 0);
2. `seeds.<pivot>` — seed selection once per NQ seed and pivot;
3. `generate.<task>.<pivot>` — each generator with the judge, the seed selection replayed;
4. `evaluate.<target>` — every distinct call the evaluation needs from that target (experiments.bench.sharing);

then the report (always rebuilt: it makes no LM call). runs/<bench id>/stages.json records which
stages finished on which inputs.
"""

from __future__ import annotations

import logging
import time

from experiments.bench.answering import TargetAsker
from experiments.bench.cases import accepted_cases
from experiments.bench.demos import DemoBook
from experiments.bench.generate import build_task, generation_metrics, stage_config
from experiments.bench.options import SEEDED_TASKS, BenchOptions
from experiments.bench.records import evaluation_records
from experiments.bench.report import write_bench_report
from experiments.bench.seeds import SeedStage
from experiments.bench.sharing import plan
from experiments.bench.stages import StageRunner, clean_metrics, digest, run_cases
from experiments.bench.summary import stage_rows, task_rows, validity_figure
from experiments.config import DataConfig, ExperimentConfig
from experiments.run_store import RunStore

logger = logging.getLogger(__name__)


class BenchConfigError(ValueError):
    """A bench config that cannot run; the message names the field."""


def _pivot_configs(config: ExperimentConfig) -> list:
    pivots = list(config.models.pivots) or ([config.models.pivot] if config.models.pivot else [])
    if not pivots:
        raise BenchConfigError("models.pivot: the bench needs a pivot (or models.pivots) to generate cases")
    if not config.models.targets:
        raise BenchConfigError("models.targets: the bench needs at least one target to evaluate")
    for field, items in (("models.pivots", pivots), ("models.targets", config.models.targets)):
        names = [c.name for c in items]
        if len(set(names)) != len(names):
            raise BenchConfigError(f"{field}: each model once, got {names}")
    return pivots


def check_config(config: ExperimentConfig) -> None:
    _pivot_configs(config)


def counterfactual_data(config: ExperimentConfig, options: BenchOptions) -> DataConfig:
    cf = options.counterfactual_data
    return DataConfig(source=cf.source, limit=cf.limit if cf.limit is not None else config.data.limit,
                      offset=cf.offset)


def run_bench(config: ExperimentConfig, *, run_id: str | None = None, fresh: bool = False,
              retry_errors: bool = False, progress: bool = True):
    from experiments import tracking
    from experiments.lm_registry import build_lm
    from experiments.runner import RunResult, load_data

    options = BenchOptions.model_validate(config.options)
    pivot_configs = _pivot_configs(config)
    run_id = run_id or RunStore.new_id(config.name, config.digest(), fresh=fresh)
    bench = RunStore(run_id)
    resolved = config.model_dump(mode="json")
    if bench.exists() and ExperimentConfig.model_validate(bench.read_config()).identity() != config.identity():
        raise ValueError(f"run {run_id!r} was made with a different config; use --fresh for a new run")
    bench.write_config(resolved)

    seeded = [t for t in options.tasks if t in SEEDED_TASKS]
    nq = load_data(config) if seeded else None
    cf_data = counterfactual_data(config, options)
    arc = load_data(config.model_copy(update={"data": cf_data})) if "counterfactual" in options.tasks else None
    for name, data in (("data", nq), ("options.counterfactual_data", arc)):
        if data is not None and not data.examples:
            raise BenchConfigError(f"{name}: no cases left to run (filter counts: {data.filter_counts})")

    pivots = {c.name: build_lm(c, "pivot") for c in pivot_configs}
    judge_lm = build_lm(config.models.judge, "judge") if config.models.judge else None
    targets = {c.name: build_lm(c, "target") for c in config.models.targets}
    labelled = {**{f"pivot/{n}": lm for n, lm in pivots.items()}, **({"judge": judge_lm} if judge_lm else {}),
                **{f"target/{n}": lm for n, lm in targets.items()}}
    judge = judge_params = None
    if judge_lm is not None:
        from experiments.judging.params import judge_from, resolve_params

        judge_params = resolve_params(judge_lm, config.validation.judge_params)
        judge = judge_from(judge_params)

    started = time.perf_counter()
    tags = {tracking.RUN_ID_TAG: run_id, "reeval.task": config.task, **tracking.git_state()}
    with tracking.parent_run(f"reeval/{config.name}", run_id, tags) as parent:
        import mlflow

        tracking.log_params(tracking.flatten(resolved))
        mlflow.log_dict(resolved, "config.json")
        mlflow.log_dict({label: lm.identity() for label, lm in labelled.items()}, "models.json")
        for label, source, data in (("seeds", config.data.source, nq), ("counterfactual", cf_data.source, arc)):
            if data is not None:
                tracking.log_dataset(data.examples, source, str(data.path), data.sha256, label)
        if judge_params is not None:
            from experiments.judging.params import describe

            tracking.log_params(describe(judge_params))
        stages = StageRunner(bench, labelled, run_id, retry_errors)

        def loop_config(stage: str) -> ExperimentConfig:
            """What the runner's case loop reads: error budget, threads, and the stage's name for its bar."""
            return config.model_copy(update={"task": stage})

        calibration: dict[str, float] = {}
        if judge_lm is not None and config.validation.calibration_controls:
            from experiments.judging.calibration import calibrate

            v = config.validation
            calibration = stages.run("calibration", digest([v.calibration_controls, v.calibration_source]),
                                     lambda store: {**calibrate(judge_lm, judge, v.calibration_controls,
                                                                v.min_judge_accuracy, v.calibration_source, progress),
                                                    "items": 5 * v.calibration_controls})

        seed_records: dict[str, list[dict]] = {}
        seed_stage_names = []
        for name, pivot in pivots.items() if seeded else ():
            stage = f"seeds.{name}"
            seed_stage_names.append(stage)

            def seed_work(store: RunStore, pivot=pivot, stage=stage) -> dict[str, float]:
                records, new = run_cases(SeedStage(pivot), nq.examples, store, loop_config(stage), retry_errors,
                                         progress)
                return {"items": len(records), "new_items": new, "seeds": len(records),
                        "seeds_open_correct": sum(bool(r.get("open_correct")) for r in records),
                        "errors": sum(str(r.get("status", "")).startswith("error:") for r in records)}

            stages.run(stage, digest([e.id for e in nq.examples]), seed_work)
            seed_records[name] = stages.store(stage).records()

        generation: dict[tuple[str, str], dict[str, float]] = {}
        validity: dict[tuple[str, str], str] = {}
        cases_by_task: dict[str, list] = {}
        for task in options.tasks:
            data = arc if task == "counterfactual" else nq
            generator_options = options.generators.get(task, {})
            for name, pivot in pivots.items():
                stage = f"generate.{task}.{name}"
                seeds = seed_records.get(name) if task in SEEDED_TASKS else None
                inputs = digest([[e.id for e in data.examples], generator_options,
                                 [[r["id"], r["status"]] for r in seeds or []]])

                def generate_work(store: RunStore, task=task, pivot=pivot, data=data, seeds=seeds, stage=stage,
                                  generator_options=generator_options) -> dict[str, float]:
                    single = stage_config(config, task, cf_data if task == "counterfactual" else config.data,
                                          pivot.config, generator_options)
                    store.write_config(single.model_dump(mode="json"))
                    generator = build_task(task, pivot, judge_lm, judge, generator_options, seeds)
                    records, new = run_cases(generator, data.examples, store, loop_config(stage), retry_errors,
                                             progress)
                    tracking.log_programs(generator.programs(), {"": pivot.adapter()})
                    return {**generation_metrics(generator, records), "items": len(records), "new_items": new}

                generation[(task, name)] = stages.run(stage, inputs, generate_work)
                store = stages.store(stage)
                validity[(task, name)] = validity_figure(store.run_id, calibration)
                cases_by_task.setdefault(task, []).extend(accepted_cases(store))

        book = DemoBook(cases_by_task, options.k_shots, options.seed)
        the_plan = plan(cases_by_task, options, list(targets), book)
        base_demos = _base_demos(config, targets, nq, arc, options)
        answers: dict[str, dict] = {}
        for name, target in targets.items():
            stage = f"evaluate.{name}"
            asks = the_plan.asks_for(name)

            def evaluate_work(store: RunStore, target=target, asks=asks, stage=stage) -> dict[str, float]:
                asker = TargetAsker(target, book, base_demos)
                records, new = run_cases(asker, asks, store, loop_config(stage), retry_errors, progress)
                if asker.readers:
                    tracking.log_programs({f"reader.{k or 'zero_shot'}".replace(":", "_"): r
                                           for k, r in asker.readers.items()}, {"": target.adapter()})
                return {"items": len(records), "new_items": new, "asks": len(asks),
                        "errors": sum(str(r.get("status", "")).startswith("error:") for r in records)}

            stages.run(stage, digest(a.id for a in asks), evaluate_work)
            answers.update({r["id"]: r for r in stages.store(stage).records()})

        records = evaluation_records(the_plan, answers)
        seconds = time.perf_counter() - started
        stage_metrics = {name: stages.ledger.stages[name]["metrics"] for name in stages.ran}  # in running order
        seed_calls = sum(stage_metrics[s].get("lm.calls", 0.0) for s in seed_stage_names)
        sharing = {
            "seeds": {"calls": seed_calls, "seeds": len(nq.examples), "pivots": len(pivots),
                      "per_seed": seed_calls / max(1, len(nq.examples) * len(pivots)), "generators": len(seeded),
                      "saved": seed_calls * (len(seeded) - 1)} if seeded else None,
            "asks": the_plan.counts(), "skipped": the_plan.skipped,
        }
        info = task_rows(options.tasks, list(pivots), {t: len((arc if t == "counterfactual" else nq).examples)
                                                      for t in options.tasks},
                         generation, {t: len(c) for t, c in cases_by_task.items()}, validity)
        ran_now = [s for s, ran in stages.ran.items() if ran]
        metrics = {
            "wall_seconds": seconds, "stages_run": len(ran_now), "stages_reused": len(stages.ran) - len(ran_now),
            "lm.calls": sum(stage_metrics[s].get("lm.calls", 0.0) for s in ran_now),
            "lm.calls_all_stages": sum(m.get("lm.calls", 0.0) for m in stage_metrics.values()),
            "lm.seconds_all_stages": sum(m.get("lm.seconds", 0.0) for m in stage_metrics.values()),
            "evaluations": len(records), "target_asks": len(the_plan.asks),
            "target_calls_saved_by_sharing": sharing["asks"]["saved"],
        }
        if sharing["seeds"]:
            metrics.update({"seed_selection.calls": seed_calls,
                            "seed_selection.calls_per_seed": sharing["seeds"]["per_seed"],
                            "seed_selection.calls_saved_by_sharing": sharing["seeds"]["saved"]})
        report = write_bench_report(
            bench.dir / "report", records, tasks=options.tasks, targets=list(targets), headline=options.headline,
            tasks_info=info, stages=stage_rows(stage_metrics, stages.ran), sharing=sharing,
            run_info={"run_id": run_id, "config": config.name, **tracking.git_state()})
        mlflow.log_metrics(clean_metrics({**metrics, **report.metrics}))
        mlflow.log_artifacts(str(report.dir), artifact_path="report")
        mlflow.log_artifact(str(bench.dir / "stages.json"), artifact_path="stages")
    new_items = sum(stage_metrics[s].get("new_items", 0) for s in ran_now)
    return RunResult(run_id, parent.info.run_id, records, metrics, int(new_items), seconds,
                     report)


def _base_demos(config, targets, nq, arc, options) -> list:
    """One demonstration for completion-prompted base models, from NQ rows the bench does not use."""
    from experiments.tasks.evaluate import demo_pool, is_base_model

    if not any(is_base_model(t) for t in targets.values()):
        return []
    exclude = {e.id for data in (nq, arc) if data is not None for e in data.examples}
    source = config.data.source if nq is not None else "nq"
    return demo_pool(source, exclude, 1, options.seed)

