"""Does compiling pay, and what does strength trade? Stages under one parent MLflow run, resumable at any stage:

1. `knowledge.<target>` — each optimisation target's knowledge scan (experiments.bench.knowledge), for answer
   swaps: the seeds are rows every optimisation target answers right closed-book and open-book, so a swap
   contradicts what it knows;
2. `optimize.strength_<s>` — the optimize task at options.strength: every optimizer compiled on the train
   seeds, every variant (uncompiled too) run on the same test seeds against every target;
3. `sweep.strength_<s>` — the sweep optimizer compiled at each other strength of options.strengths, on the
   same split;

then the report (experiments/optimize_compare/report.py; it makes no LM call).
"""

from __future__ import annotations

import logging
import time
from functools import partial

from experiments import runner, task_registry, tracking
from experiments.attack import METRIC_VERSION
from experiments.bench.driver import staged_run
from experiments.bench.generate import program_version
from experiments.bench.knowledge import VERSION, KnowledgeProbe, is_known, scan_order, scan_summary, scan_until_known
from experiments.bench.scan_archive import start_from_archive
from experiments.bench.stages import StageRunner, clean_metrics, digest, run_cases
from experiments.compiled import read_meta
from experiments.config import ConfigError, ExperimentConfig
from experiments.executors import build_task
from experiments.judging.params import resolve_params
from experiments.optimize_compare.changes import load_variant, prompt_diff, side_by_side
from experiments.optimize_compare.compare import GROUPS, comparison, cost, variant_figures
from experiments.optimize_compare.report import ComparisonReport, write_report
from experiments.optimize_compare.review import reviewed_validity
from experiments.report_page import log_report
from experiments.resolved_run import ResolvedRun
from experiments.review.carry import carry_reviews
from experiments.run_store import RunStore
from experiments.tasks.optimize import DIALED, UNCOMPILED, OptimizeOptions
from programs.target_reader import VERSION as READER_VERSION

logger = logging.getLogger(__name__)

JUDGE_NOTE = "the judge where it was measured informative for the generator: experiments/attack.py"


def check_config(config: ExperimentConfig) -> None:
    if config.run.executor != "local":
        raise ConfigError("run.executor: optimize_compare compiles in one process; remove `executor: ray`")


class Comparison:
    def __init__(self, run: ResolvedRun):
        self.resolved = run
        config = run.config
        self.config, self.run_id, self.retry_errors, self.progress = config, run.run_id, run.retry_errors, run.progress
        self.options = run.options
        self.store = RunStore(run.run_id)
        self.data = runner.load_data(config)
        self.lms = runner.build_lms(run)
        # The judge of the generator's cases, with the method measured for them (as `task: optimize` and the
        # bench judge): OptimizeTask's own default is the plain reasoned judge.
        v = config.validation
        self.judge_params = resolve_params(self.lms["judge"], v.judge_params, self.options.generator, v.judge_method)
        self.targets = {t.config.label: t for t in self.lms["targets"]}
        optimised = self.options.optimisation_targets or list(self.targets)[:1]
        unknown = sorted(set(optimised) - set(self.targets))
        if unknown:
            raise ConfigError(f"options.optimisation_targets: {unknown} not among models.targets {list(self.targets)}")
        self.groups = {"optimised": optimised, "held_out": [n for n in self.targets if n not in optimised]}
        self.groups = {g: names for g, names in self.groups.items() if names}
        self.stages: StageRunner | None = None

    def loaded_data(self) -> dict:
        return {"data": (self.config.data.source, self.data)}

    @property
    def labelled(self) -> dict:
        return {"pivot": self.lms["pivot"], "judge": self.lms["judge"]} | {
            f"target/{n}": t for n, t in self.targets.items()
        }

    def loop_config(self, stage: str) -> ExperimentConfig:
        return self.config.model_copy(update={"task": stage})

    # -- seeds ----------------------------------------------------------------------------------------------

    def seeds(self) -> list:
        """The seeds in scan order: the first `train + val + test` known to every optimisation target, or any."""
        opts = self.options
        ordered = scan_order(self.data.examples, opts.scan.seed)
        ordered = ordered[: opts.scan.max_rows] if opts.scan.max_rows else ordered
        if opts.seed_rule == "all":
            chosen = ordered[: opts.needed]
        else:
            known = [self.scan(name, ordered) for name in self.groups["optimised"]]
            chosen = [e for e in ordered if all(str(e.id) in k for k in known)][: opts.needed]
        if len(chosen) < opts.needed:
            raise ConfigError(
                f"options: {opts.needed} seeds needed (train + val + test), {len(chosen)} found "
                f"({opts.seed_rule} seeds among {len(ordered)} rows); lower options.train/val/test, raise "
                "options.scan.max_rows or data.limit, or choose optimisation targets that know more answers"
            )
        return chosen

    def scan(self, name: str, ordered: list) -> set[str]:
        stage = f"knowledge.{name}"
        order = [str(e.id) for e in ordered]
        inputs = digest(
            [VERSION, READER_VERSION, self.data.sha256, order, self.options.needed, self.options.scan.block]
        )
        self.stages.run(
            stage, inputs, partial(self._scan_stage, stage=stage, target=self.targets[name], ordered=ordered)
        )
        return {str(r["seed_id"]) for r in self.stages.store(stage).records() if is_known(r)}

    def _scan_stage(self, store, *, stage: str, target, ordered: list) -> dict[str, float]:
        # the knowledge-conflict bench's scans are the same asks in the same order: a shipped archive answers them
        start_from_archive(
            store,
            data=self.config.data,
            target=target,
            data_sha256=self.data.sha256,
            examples=ordered,
            table_ids=(),
        )
        records, new = scan_until_known(
            KnowledgeProbe.for_target(target, set()),
            ordered,
            store,
            self.loop_config(stage),
            block=self.options.scan.block,
            enough=self.options.needed,
            retry_errors=self.retry_errors,
            progress=self.progress,
        )
        return {**scan_summary(records, len(ordered)), "items": len(records), "new_items": new}

    # -- compiling and the test seeds -----------------------------------------------------------------------

    def optimise(self, stage: str, strength: float, optimizers: list[str], seeds: list) -> list[dict]:
        fields = set(OptimizeOptions.model_fields)
        options = OptimizeOptions.model_validate(
            {**self.options.model_dump(include=fields), "strength": strength, "optimizers": optimizers}
        )
        inputs = digest(
            [
                [e.id for e in seeds],
                options.model_dump(mode="json"),
                program_version(options.generator),
                READER_VERSION,
                METRIC_VERSION,
                self.judge_params,
            ]
        )
        self.stages.run(stage, inputs, partial(self._optimise_stage, stage=stage, options=options, seeds=seeds))
        return self.stages.store(stage).records()

    def _optimise_stage(self, store, *, stage: str, options: OptimizeOptions, seeds: list) -> dict[str, float]:
        import mlflow

        compiling = self.resolved.as_task("optimize", options)
        store.write_config(compiling.config.model_dump(mode="json"))
        task, _ = build_task(compiling, self.lms, self.judge_params)
        task.prepare(seeds, store.dir, ordered=True)  # seeds(): a prefix of the scan order
        records, new = run_cases(task, seeds, store, self.loop_config(stage), self.retry_errors, self.progress)
        tracking.log_programs(task.programs(), {"": self.lms["pivot"].adapter()})
        mlflow.log_artifacts(str(store.dir / "compiled"), artifact_path="compiled")
        return {**task.summarize(records), "items": len(records), "new_items": new}

    # -- the whole run --------------------------------------------------------------------------------------

    def run(self) -> runner.RunResult:
        import mlflow

        started = time.perf_counter()
        tags = {tracking.RUN_ID_TAG: self.run_id, "reeval.task": self.config.task, **tracking.git_state()}
        with tracking.parent_run(f"reeval/{self.config.name}", self.run_id, tags) as parent:
            resolved = self.config.model_dump(mode="json")
            tracking.log_params(tracking.flatten(resolved))
            mlflow.log_dict(resolved, "config.json")
            mlflow.log_dict({label: lm.identity() for label, lm in self.labelled.items()}, "models.json")
            tracking.log_dataset(
                self.data.examples, self.config.data.source, str(self.data.path), self.data.sha256, "rows"
            )
            self.stages = StageRunner(self.store, self.labelled, self.run_id, self.retry_errors)
            seeds = self.seeds()
            opts = self.options
            main_stage = f"optimize.strength_{opts.strength:g}"
            records = self.optimise(main_stage, opts.strength, list(opts.optimizers), seeds)
            curve_stages = {}
            for strength in opts.strengths:
                if strength == opts.strength and opts.curve_in_main_stage():
                    curve_stages[strength] = records
                else:
                    stage = f"sweep.strength_{strength:g}"
                    curve_stages[strength] = self.optimise(stage, strength, opts.curve_optimizers, seeds)
            report = self.report(records, curve_stages, main_stage, time.perf_counter() - started)
            mlflow.log_metrics(clean_metrics(report.metrics))
            log_report(report.dir)
            mlflow.log_artifact(str(self.store.dir / "stages.json"), artifact_path="stages")
        ran = [s for s, did in self.stages.ran.items() if did]
        new_items = int(sum(self.stages.ledger.stages[s]["metrics"].get("new_items", 0) for s in ran))
        return runner.RunResult(
            self.run_id, parent.info.run_id, records, report.metrics, new_items, report.metrics["wall_seconds"], report
        )

    def report(self, records: list[dict], curve_stages: dict, main_stage: str, seconds: float) -> ComparisonReport:
        opts, groups = self.options, list(self.groups)
        generator = task_registry.get(opts.generator).attack
        present = {r.get("variant") for r in records}
        variants = [UNCOMPILED, *(o for o in [DIALED, *opts.optimizers] if o in present)]
        rows = comparison(records, variants, self.groups)
        compiled = self.stages.store(main_stage).dir / "compiled"
        test_seeds = sorted({r["seed_id"] for r in records if r.get("split") == "test"})
        root, main_dir = self.store.dir.parent, self.stages.store(main_stage).dir
        curve = []
        for s, rs in sorted(curve_stages.items()):
            stage = main_stage if rs is records else f"sweep.strength_{s:g}"
            if stage != main_stage:
                # Verdicts on the main stage's cases serve the sweep's cases that read the same (its own sample).
                carry_reviews(main_dir, self.stages.store(stage).dir)
            read = reviewed_validity(f"{self.run_id}/{stage}", root, rs, [opts.sweep_optimizer])
            curve.append(
                {
                    "strength": s,
                    "variant": opts.sweep_optimizer,
                    "stage": stage,
                    **variant_figures(rs, opts.sweep_optimizer, self.groups, test_seeds),
                    "reviewed": read["variants"][opts.sweep_optimizer] if read else None,
                }
            )
        baseline = variant_figures(records, UNCOMPILED, self.groups, test_seeds)
        build = partial(generator.build, opts.max_attempts)
        base_program = build()
        diffs = {}
        for variant in variants[1:]:
            program = load_variant(build, compiled, variant)
            if program is not None:
                diffs[variant] = prompt_diff(base_program, program, self.lms["pivot"].adapter())
        judged = generator.judge_informative if opts.judge_in_metric is None else opts.judge_in_metric
        info = {
            "run_id": self.run_id,
            "config": self.config.name,
            **tracking.git_state(),
            "pivot": self.lms["pivot"].config.label,
            "judge": self.lms["judge"].config.label,
            "judge_method": f"{self.judge_params['method']} ({self.judge_params.get('source', '?')})",
            "generator": opts.generator,
            "seeds": opts.seed_rule,
            "strength": opts.strength,
            "train": opts.train,
            "val": opts.val,
            "test": len(test_seeds),
            "optimised": self.groups.get("optimised", []),
            "held_out": self.groups.get("held_out", []),
            "judged": judged,
            "validity_note": JUDGE_NOTE if opts.judge_in_metric is None else "set by options.judge_in_metric",
        }
        stage_id = f"{self.run_id}/{main_stage}"
        review = {"stage": stage_id, "figures": reviewed_validity(stage_id, root, records, variants)}
        costs = {v: cost(records, v, read_meta(compiled, v) if v != UNCOMPILED else None) for v in variants}
        content = {
            "info": info,
            "groups": groups,
            "rows": rows,
            "curve": curve,
            "baseline": baseline,
            "costs": costs,
            "diffs": diffs,
            "shown": side_by_side(records, variants, list(self.targets), opts.cases_shown),
            "targets": list(self.targets),
            "review": review,
        }
        report = write_report(self.store.dir / "report", content)
        report.metrics = {
            **flat(rows, curve, costs, review),
            "wall_seconds": seconds,
            "test_seeds": float(len(test_seeds)),
        }
        return report


def flat(rows: list[dict], curve: list[dict], costs: dict, review: dict) -> dict[str, float]:
    """MLflow's numbers: each variant's rates and paired differences, each strength's point, each cost."""
    out: dict[str, float] = {}

    def rate(prefix: str, r: dict) -> None:
        out.update({f"{prefix}.{k}": float(r[k]) for k in ("rate", "low", "high", "n")})

    for row in rows:
        v = f"compare.{row['variant']}"
        rate(f"{v}.validity", row["validity"])
        for group in GROUPS:
            if group in row:
                rate(f"{v}.{group}.on_valid", row[group]["on_valid"])
                rate(f"{v}.{group}.per_seed", row[group]["per_seed"])
        for measure, d in row.get("vs_uncompiled", {}).items():
            out.update({f"{v}.vs_uncompiled.{measure}.{k}": float(d[k]) for k in ("diff", "low", "high", "p", "n")})
    for point in curve:
        s = f"strength.{point['strength']:g}"
        rate(f"{s}.validity", point["validity"])
        if point.get("reviewed") and point["reviewed"]["n"]:
            rate(f"{s}.validity_reviewed", point["reviewed"])
        for group in GROUPS:
            if group in point:
                rate(f"{s}.{group}.per_seed", point[group]["per_seed"])
    for variant, c in costs.items():
        out.update({f"cost.{variant}.{k}": float(v) for k, v in c.items()})
    for variant, r in (review.get("figures") or {}).get("variants", {}).items():
        if r["n"]:
            rate(f"compare.{variant}.validity_reviewed", r)
    return out


def run_comparison(run: ResolvedRun):
    return staged_run(Comparison, run)  # check_config refuses `executor: ray`: compiling is one process
