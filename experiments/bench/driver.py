"""The bench: every generator on one shared seed set, every target on the accepted cases and their
originals, the papers' tables — as stages under one parent MLflow run, resumable at any stage.

Stages, in order (each a nested MLflow run, its items checkpointed in runs/<bench id>/<stage>/):

1. `calibration` — the judge on held-out control cases (when validation.calibration_controls > 0);
2. `seeds.<pivot>` — seed selection once per NQ seed and pivot;
3. `generate.<task>.<pivot>` — each generator, the seed selection replayed; the judge validates the
   cases of `options.judged_tasks` (not context enriching), with the method measured for the task;
4. `evaluate.<target>` — every distinct call the evaluation needs from that target (experiments.bench.sharing);

then the report (always rebuilt: it makes no LM call). runs/<bench id>/stages.json records which
stages finished on which inputs.

A stage's items run in this process or, with `run.executor: ray`, on Ray actors that load only that
stage's models (experiments.bench.placement). Either way a stage that runs starts with every model no
longer in use released, so the process holds the models of one stage at a time.
"""

from __future__ import annotations

import logging
import time
from functools import partial

from experiments import run_inputs, run_lock, task_registry, tracking
from experiments.bench import units
from experiments.bench.answering import TargetAsker
from experiments.bench.cases import accepted_cases
from experiments.bench.conflict import conflict_tasks
from experiments.bench.conflict_run import ConflictRun, conflict_sections, write_conflict_files
from experiments.bench.demos import DemoBook
from experiments.bench.generate import build_task, generation_metrics, program_version, stage_config
from experiments.bench.options import seeded_generators
from experiments.bench.placement import Placement, UnitRecipe
from experiments.bench.records import evaluation_records
from experiments.bench.report import BenchReport, write_bench_report
from experiments.bench.seeds import SeedStage
from experiments.bench.sharing import Plan, plan
from experiments.bench.stages import StageRunner, clean_metrics, digest, in_order, run_cases
from experiments.bench.summary import stage_rows, task_rows, validity_figure
from experiments.case_sets import is_run_source
from experiments.config import DataConfig, ExperimentConfig
from experiments.judging.calibration import calibrate
from experiments.judging.params import describe, judge_from, resolve_params
from experiments.lm.engine import release_models
from experiments.lm.registry import build_lm  # a name of this module: tests swap in a builder Ray actors use too
from experiments.report_page import log_report
from experiments.resolved_run import ResolvedRun
from experiments.run_store import RunStore
from experiments.runner import RunResult, load_data
from programs.target_reader import VERSION as READER_VERSION

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
        names = [c.label for c in items]
        if len(set(names)) != len(names):
            raise BenchConfigError(f"{field}: each model once, got {names}")
    return pivots


def check_config(config: ExperimentConfig) -> None:
    _pivot_configs(config)


def _errors(records: list[dict]) -> int:
    return sum(str(r.get("status", "")).startswith("error:") for r in records)


def _on_choices(task: str) -> bool:
    return task_registry.get(task).answer == "choice"


class Bench:
    """One invocation of a bench: its data and models, and what each stage hands the next."""

    def __init__(self, run: ResolvedRun):
        config = run.config
        self.config, self.run_id, self.retry_errors, self.progress = config, run.run_id, run.retry_errors, run.progress
        self.options = options = run.options
        self.store = RunStore(run.run_id)
        self.seeded = [t for t in options.tasks if t in seeded_generators()]
        cf = options.counterfactual_data
        self.cf_data = DataConfig(
            source=cf.source, limit=cf.limit if cf.limit is not None else config.data.limit, offset=cf.offset
        )
        self.nq = load_data(config) if self.seeded else None
        # Generators whose cases expect an option are made from the multiple-choice questions, not the QA seeds.
        self.on_choices = [t for t in options.tasks if _on_choices(t)]
        self.arc = load_data(config.model_copy(update={"data": self.cf_data})) if self.on_choices else None
        for name, data in (("data", self.nq), ("options.counterfactual_data", self.arc)):
            if data is not None and not data.examples:
                raise BenchConfigError(f"{name}: no cases left to run (filter counts: {data.filter_counts})")
        split = run.split
        self.pivots = {c.label: build_lm(c, "pivot", split) for c in _pivot_configs(config)}
        self.judge_lm = build_lm(config.models.judge, "judge", split) if config.models.judge else None
        self.targets = {c.label: build_lm(c, "target", split) for c in config.models.targets}
        # The study's own choice: what the calibration stage measures. Each generator's judge is
        # judge_params_for(task).
        self.judge = self.judge_params = None
        self._task_judges: dict[str, dict | None] = {}
        if self.judge_lm is not None:
            v = config.validation
            self.judge_params = resolve_params(self.judge_lm, v.judge_params, None, v.judge_method)
            self.judge = judge_from(self.judge_params)
            for task in {*options.tasks, *conflict_tasks()}:
                judged = task in options.judged_tasks
                self._task_judges[task] = (
                    resolve_params(self.judge_lm, v.judge_params, task, v.judge_method) if judged else None
                )
        self.stages: StageRunner | None = None
        self.placement = Placement(config.run, self.labelled, build_lm, run.ray_address)

    def loaded_data(self) -> dict:
        """The data files read, by config key, each as (source, loaded data or None)."""
        return {
            "data": (self.config.data.source, self.nq),
            "options.counterfactual_data": (self.cf_data.source, self.arc),
        }

    @property
    def labelled(self) -> dict:
        return {
            **{f"pivot/{n}": lm for n, lm in self.pivots.items()},
            **({"judge": self.judge_lm} if self.judge_lm else {}),
            **{f"target/{n}": lm for n, lm in self.targets.items()},
        }

    def judge_params_for(self, task: str) -> dict | None:
        """The judge's parameters for a generator's cases; None: the string checks alone decide."""
        return self._task_judges.get(task)

    def judge_lm_for(self, task: str):
        return self.judge_lm if self.judge_params_for(task) is not None else None

    def data_of(self, task: str):
        return self.arc if _on_choices(task) else self.nq

    def loop_config(self, stage: str) -> ExperimentConfig:
        """What the runner's case loop reads: error budget, threads, and the stage's name for its bar."""
        return self.config.model_copy(update={"task": stage})

    def map_stage(self, stage: str, store: RunStore, unit, recipe: UnitRecipe, items: list) -> tuple[list[dict], int]:
        """A stage's items through `unit` here, or on Ray actors that build theirs from `recipe`."""
        with self.placement.executor(unit, recipe) as executor:
            return run_cases(
                unit, items, store, self.loop_config(stage), self.retry_errors, self.progress, executor=executor
            )

    # -- stages ---------------------------------------------------------------------------------------

    def calibrate(self) -> dict[str, float]:
        v = self.config.validation
        if self.judge_lm is None or not v.calibration_controls:
            return {}

        def work(store: RunStore) -> dict[str, float]:
            metrics = calibrate(
                self.judge_lm,
                self.judge,
                v.calibration_controls,
                v.min_judge_accuracy,
                v.calibration_source,
                self.progress,
            )
            return {**metrics, "items": sum(v for k, v in metrics.items() if k.endswith(".n"))}

        inputs = digest([v.calibration_controls, v.calibration_source])
        return self.stages.run("calibration", inputs, work, uses=[self.judge_lm])

    def select_seeds(self) -> dict[str, list[dict]]:
        """Per pivot, the seed-selection records the NQ generators replay."""
        out: dict[str, list[dict]] = {}
        for name, pivot in self.pivots.items() if self.seeded else ():
            stage = f"seeds.{name}"
            self.stages.run(
                stage,
                digest([e.id for e in self.nq.examples]),
                partial(self._seeds_stage, stage=stage, pivot=pivot),
                uses=[pivot],
            )
            out[name] = in_order(self.stages.store(stage).records(), self.nq.examples)
        return out

    def _seeds_stage(self, store: RunStore, *, stage: str, pivot) -> dict[str, float]:
        recipe = UnitRecipe(units.seed_unit, {"pivot": f"pivot/{pivot.config.label}"})
        records, new = self.map_stage(stage, store, SeedStage(pivot), recipe, self.nq.examples)
        return {
            "items": len(records),
            "new_items": new,
            "seeds": len(records),
            "errors": _errors(records),
            "seeds_open_correct": sum(bool(r.get("open_correct")) for r in records),
        }

    def generate(self, seeds: dict[str, list[dict]], calibration: dict[str, float]):
        """Every generator with every pivot: accepted cases per task, each stage's metrics and validity."""
        cases: dict[str, list] = {}
        metrics: dict[tuple[str, str], dict[str, float]] = {}
        validity: dict[tuple[str, str], str] = {}
        for task in self.options.tasks:
            options = self.options.generators.get(task, {})
            for name, pivot in self.pivots.items():
                stage = f"generate.{task}.{name}"
                replay = seeds.get(name) if task in seeded_generators() else None
                inputs = digest(
                    [
                        [e.id for e in self.data_of(task).examples],
                        options,
                        [[r["id"], r["status"]] for r in replay or []],
                        program_version(task),
                        self.judge_params_for(task),
                    ]
                )
                judge_lm = self.judge_lm_for(task)
                metrics[(task, name)] = self.stages.run(
                    stage,
                    inputs,
                    partial(self._generate_stage, stage=stage, task=task, pivot=pivot, options=options, replay=replay),
                    uses=[pivot, judge_lm] if judge_lm else [pivot],
                )
                store = self.stages.store(stage)
                validity[(task, name)] = validity_figure(store.run_id, self.calibration_of(task, calibration))
                cases.setdefault(task, []).extend(accepted_cases(store, self.data_of(task).examples))
        return cases, metrics, validity

    def calibration_of(self, task: str, calibration: dict[str, float]) -> dict[str, float]:
        """The calibration stage's accuracy, where it measured the judge that judged this task's cases."""
        params = self.judge_params_for(task)
        same = params is not None and self.judge_params is not None and params["method"] == self.judge_params["method"]
        return calibration if same else {}

    def _generate_stage(
        self,
        store: RunStore,
        *,
        stage: str,
        task: str,
        pivot,
        options: dict,
        replay: list[dict] | None,
        examples: list | None = None,
        data=None,
    ) -> dict[str, float]:
        data = data or (self.cf_data if _on_choices(task) else self.config.data)
        params, judge_lm = self.judge_params_for(task), self.judge_lm_for(task)
        judged = judge_lm is not None
        store.write_config(stage_config(self.config, task, data, pivot.config, options, judged).model_dump(mode="json"))
        accept = self.config.validation.acceptance == "auto"
        generator = build_task(task, pivot, judge_lm, judge_from(params) if judged else None, options, replay, accept)
        recipe = UnitRecipe(
            partial(
                units.generator_unit, task=task, options=options, judge_params=params, replay=replay, acceptance=accept
            ),
            {"pivot": f"pivot/{pivot.config.label}", **({"judge_lm": "judge"} if judged else {})},
        )
        items = self.data_of(task).examples if examples is None else examples
        records, new = self.map_stage(stage, store, generator, recipe, items)
        tracking.log_programs(generator.programs(), {"": pivot.adapter()})
        return {**generation_metrics(generator, records), "items": len(records), "new_items": new}

    def evaluate(self, the_plan: Plan, book: DemoBook) -> dict[str, dict]:
        """Every target's answers to its distinct asks, by ask id."""
        answers: dict[str, dict] = {}
        for name, target in self.targets.items():
            stage, asks = f"evaluate.{name}", the_plan.asks_for(name)
            self.stages.run(
                stage,
                digest([READER_VERSION, *(a.id for a in asks)]),
                partial(self._evaluate_stage, stage=stage, asker=TargetAsker(target, book), asks=asks),
                uses=[target],
            )
            answers.update({r["id"]: r for r in self.stages.store(stage).records()})
        return answers

    def _evaluate_stage(self, store: RunStore, *, stage: str, asker: TargetAsker, asks: list) -> dict[str, float]:
        recipe = UnitRecipe(
            partial(units.asker_unit, book=asker.book), {"target": f"target/{asker.target.config.label}"}
        )
        records, new = self.map_stage(stage, store, asker, recipe, asks)
        for ask in asks:  # the readers the asks use, whichever process answered them
            asker.reader(ask.demos)
        if asker.readers:
            tracking.log_programs(
                {f"reader.{k or 'zero_shot'}".replace(":", "_"): r for k, r in asker.readers.items()},
                {"": asker.target.adapter()},
            )
        return {"items": len(records), "new_items": new, "asks": len(asks), "errors": _errors(records)}

    # -- the whole run --------------------------------------------------------------------------------

    def run(self):
        import mlflow

        started = time.perf_counter()
        tags = {tracking.RUN_ID_TAG: self.run_id, "reeval.task": self.config.task, **tracking.git_state()}
        with tracking.parent_run(f"reeval/{self.config.name}", self.run_id, tags) as parent:
            self._log_inputs()
            self.stages = StageRunner(self.store, self.labelled, self.run_id, self.retry_errors)
            with self.placement.session():
                calibration = self.calibrate()
                seeds = self.select_seeds()
                cases, generation, validity = self.generate(seeds, calibration)
                book = DemoBook(cases, self.options.k_shots, self.options.seed)
                the_plan = plan(cases, self.options, list(self.targets), book)
                records = evaluation_records(the_plan, self.evaluate(the_plan, book))
                conflict = ConflictRun(self).run(calibration) if self.options.knowledge_conflict.enabled else None
            release_models()  # the report makes no LM call
            metrics, report = self._report(
                records, the_plan, cases, generation, validity, time.perf_counter() - started, conflict
            )
            mlflow.log_metrics(clean_metrics({**metrics, **report.metrics}))
            log_report(report.dir)
            mlflow.log_artifact(str(self.store.dir / "stages.json"), artifact_path="stages")
        new_items = int(metrics.pop("new_items"))
        return RunResult(self.run_id, parent.info.run_id, records, metrics, new_items, metrics["wall_seconds"], report)

    def _log_inputs(self) -> None:
        import mlflow

        resolved = self.config.model_dump(mode="json")
        tracking.log_params(tracking.flatten(resolved))
        mlflow.log_dict(resolved, "config.json")
        mlflow.log_dict({label: lm.identity() for label, lm in self.labelled.items()}, "models.json")
        for label, source, data in (
            ("seeds", self.config.data.source, self.nq),
            ("+".join(self.on_choices), self.cf_data.source, self.arc),
        ):
            if data is not None:
                tracking.log_dataset(data.examples, source, str(data.path), data.sha256, label)
        if self.judge_params is not None:
            tracking.log_params(describe(self.judge_params))
            tracking.log_params(
                {
                    f"judge.method.{t}": (p or {}).get("method", "none (string checks only)")
                    for t, p in self._task_judges.items()
                }
            )

    def _report(self, records, the_plan: Plan, cases, generation, validity, seconds: float, conflict=None):
        ran = self.stages.ran
        stage_metrics = {name: self.stages.ledger.stages[name]["metrics"] for name in ran}  # in running order
        ran_now = [s for s, did in ran.items() if did]
        seed_calls = sum(m.get("lm.calls", 0.0) for s, m in stage_metrics.items() if s.startswith("seeds."))
        n_seeds = len(self.nq.examples) if self.nq is not None else 0
        sharing = {
            "seeds": {
                "calls": seed_calls,
                "seeds": n_seeds,
                "pivots": len(self.pivots),
                "per_seed": seed_calls / max(1, n_seeds * len(self.pivots)),
                "generators": len(self.seeded),
                "saved": seed_calls * (len(self.seeded) - 1),
            }
            if self.seeded
            else None,
            "asks": the_plan.counts(),
            "skipped": the_plan.skipped,
        }
        metrics = {
            "wall_seconds": seconds,
            "stages_run": len(ran_now),
            "stages_reused": len(ran) - len(ran_now),
            "lm.calls": sum(stage_metrics[s].get("lm.calls", 0.0) for s in ran_now),
            "lm.calls_all_stages": sum(m.get("lm.calls", 0.0) for m in stage_metrics.values()),
            "lm.seconds_all_stages": sum(m.get("lm.seconds", 0.0) for m in stage_metrics.values()),
            "evaluations": len(records),
            "target_asks": len(the_plan.asks),
            "target_calls_saved_by_sharing": sharing["asks"]["saved"],
            "new_items": sum(stage_metrics[s].get("new_items", 0) for s in ran_now),
            "cpu_seconds": round(sum(stage_metrics[s].get("cpu_seconds", 0.0) for s in ran_now), 3),
        }
        # As lm.calls: what this invocation spent, and what every stage cost when it ran; none where a stage's is
        # unknown (a model without a price, or a ledger from before dollars were recorded).
        for key, names in (("cost_usd", ran_now), ("cost_usd_all_stages", list(stage_metrics))):
            costs = [stage_metrics[s].get("lm.cost_usd") for s in names]
            if all(c is not None for c in costs):
                metrics[key] = round(sum(costs), 8)
        if sharing["seeds"]:
            metrics.update(
                {
                    "seed_selection.calls": seed_calls,
                    "seed_selection.calls_per_seed": sharing["seeds"]["per_seed"],
                    "seed_selection.calls_saved_by_sharing": sharing["seeds"]["saved"],
                }
            )
        info = task_rows(
            self.options.tasks,
            list(self.pivots),
            {t: len(self.data_of(t).examples) for t in self.options.tasks},
            generation,
            {t: len(c) for t, c in cases.items()},
            validity,
        )
        report: BenchReport = write_bench_report(
            self.store.dir / "report",
            records,
            tasks=self.options.tasks,
            targets=list(self.targets),
            headline=self.options.headline,
            tasks_info=info,
            stages=stage_rows(stage_metrics, ran),
            sharing=sharing,
            run_info={"run_id": self.run_id, "config": self.config.name, **tracking.git_state()},
            extra_sections=conflict_sections(conflict) if conflict else (),
        )
        if conflict is not None:
            metrics.update(conflict.metrics())
            write_conflict_files(report.dir, conflict)
        return metrics, report


def staged_run(driver, run: ResolvedRun):
    """A run of stages (`driver`: the bench or a class built on it); its config is written only once the driver
    has loaded everything it needs. A stage's own inputs digest names its seeds by id, so a data file edited
    between two invocations would mix old and new rows in a stage left unfinished: the run's inputs are checked
    as a single run's are (experiments.run_inputs)."""
    store = RunStore(run.run_id)
    with run_lock.hold(store.dir):
        identity, config_digest = run.config.identity(), run.config.digest()
        run_inputs.check_config(store, identity, config_digest)
        stages = driver(run)
        data = {
            key: (source, loaded.path, loaded.sha256)
            for key, (source, loaded) in stages.loaded_data().items()
            if loaded is not None and not is_run_source(source)
        }
        for key, (_, path, sha256) in data.items():
            run_inputs.check_data(store, path, sha256, key)
        run_inputs.record(store, run.config.model_dump(mode="json"), identity, config_digest, data)
        return stages.run()


def run_bench(run: ResolvedRun):
    return staged_run(Bench, run)
