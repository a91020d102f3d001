"""Compare pivot LLMs as attack generators: same seeds, same generator and settings, same judge and targets.

Every pivot runs the generator's own task with the options the config gives it (`generator_options`, as in a
single-task config: dials, strength, distance, removal, background, writer…), so each pivot makes exactly the
cases a single-task run with that pivot makes: its own seed selection (ReEval keeps the seeds *that pivot*
answers open-book correctly), the checks and the judge. Every valid case is then put to every target, perturbed
and original, in the generator's prompt setting. With `rules: true` the generator's code-made setting runs
beside the pivots as a row of its own: the baseline a pivot must beat.

Per row the report gives the funnel (seeds selected, reachable at the setting, passing the checks, valid), the
judge's validity, the readers' where a reading exists (prediction-powered), attack success and flips per target,
the cases another row made identically, and the pivot's tokens and seconds per valid case (the judge's left
out). Between every two rows it pairs attack success and flips on the cases both made valid. A reply the call
cache answered counts the tokens it took when it was made, so a comparison re-run from the cache keeps its token
costs; its wall time is this run's, and the table says how many calls the cache answered.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from experiments import task_registry
from experiments.config import ConfigError
from experiments.errors import error_status, error_text
from experiments.lm.prices import Price
from experiments.lm.registry import ResolvedLM
from experiments.lm.usage import run_cost
from experiments.target_panel import TargetPanel
from experiments.tasks import pivot_figures, pivot_reads, pivot_report
from experiments.tasks.pivot_generators import (
    RULES,
    MeteredJudge,
    RulesPivot,
    build_generator,
    comparable,
    generator_options,
    is_attack,
    pivot_cost,
    rules_options,
    shared_retrievers,
)
from metrics.attack import attack_score, flat_metrics, is_valid


def default_setting(generator: str) -> str:
    """The prompt setting a target resists the generator's cases in: FaithEval's task instruction lets it say
    "unknown" or "conflict"."""
    entry = task_registry.get(generator)
    if entry.attack is not None:
        return entry.attack.setting
    return "task_instruction" if "task_instruction" in entry.bench_settings else "open_book"


class CompareOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: str = Field(description="the generator every pivot runs: any generator with a pivot step")
    generator_options: dict[str, Any] = Field(
        default_factory=dict,
        description="the generator's own options, as in its single-task config (dials, strength, distance, "
        "removal, background, writer…), over its comparison defaults (answer swapping's writer: pivot)",
    )
    rules: bool = Field(
        False,
        description="add the generator's code-made setting as a row 'rules', no pivot (answer swapping's "
        "writer: rules; unanswerable's removal: drop); it perturbs every seed",
    )
    seeds: Literal["open_correct", "open_correct_closed_wrong", "all"] | None = Field(
        None, description="which seed-table cells to perturb (default: the generator's own)"
    )
    max_attempts: int | None = Field(None, ge=1, description="proposals tried per seed (default: the generator's own)")
    setting: Literal["open_book", "opinion", "task_instruction"] | None = Field(
        None,
        description="the prompt the targets answer in (default: task_instruction for unanswerable and "
        "inconsistent cases, open_book otherwise)",
    )
    strength: float = Field(
        0.5,
        ge=0,
        le=1,
        description="weights the attack score column (metrics/attack.py); the generator's own "
        "strength dial goes in generator_options",
    )

    @field_validator("generator")
    @classmethod
    def _comparable(cls, generator: str) -> str:
        return task_registry.check_name(generator, comparable, "generator with a pivot step")

    @model_validator(mode="after")
    def _generator_options(self) -> CompareOptions:
        options = self.resolved()
        try:
            task_registry.get(self.generator).Options.model_validate(options)
            if self.rules:
                task_registry.get(self.generator).Options.model_validate(rules_options(self.generator, options))
        except ValidationError as exc:
            problems = [
                f"generator_options.{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}"
                if e["loc"]
                else e["msg"].removeprefix("Value error, ")
                for e in exc.errors()
            ]
            raise ValueError("; ".join(problems)) from None
        return self

    def resolved(self) -> dict[str, Any]:
        """The options every pivot's generator runs with."""
        given = dict(self.generator_options)
        fields = task_registry.get(self.generator).Options.model_fields
        for key in ("seeds", "max_attempts"):
            if getattr(self, key) is not None and key in fields:
                given.setdefault(key, getattr(self, key))
        return generator_options(self.generator, given)


@task_registry.task("compare_pivots")
class ComparePivotsTask:
    roles = ("pivots", "judge", "targets")
    Options = CompareOptions

    def __init__(self, lms: dict, options: CompareOptions):
        self.options = options
        self.lms = lms
        self.cpu_started: float | None = None
        self.pivots: list[ResolvedLM] = lms["pivots"]
        names = [p.config.label for p in self.pivots]
        if len(set(names)) != len(names):
            raise ConfigError(f"models.pivots: each pivot once, got {names}")
        if self.options.rules and RULES in names:
            raise ConfigError("models.pivots: a pivot labelled 'rules' and options.rules: true name one row twice")
        self.targets: list[ResolvedLM] = lms["targets"]
        self.judge_lm: ResolvedLM | None = lms.get("judge")
        self.entry = task_registry.get(self.options.generator)
        self.setting = self.options.setting or default_setting(self.options.generator)
        self.generator_options = self.options.resolved()
        with shared_retrievers():
            self.rows: dict[str, tuple[Any, Any]] = {
                p.config.label: (p, build_generator(self.entry.name, p, self.judge_lm, self.generator_options))
                for p in self.pivots
            }
            if self.options.rules:
                rules = RulesPivot()
                self.rules_options = rules_options(self.entry.name, self.generator_options)
                self.rows[RULES] = (rules, build_generator(self.entry.name, rules, self.judge_lm, self.rules_options))
        self.panel = TargetPanel(self.targets, self.setting)
        self._judge = next(iter(self.rows.values()))[1].judge
        self.judge = self._judge

    @property
    def judge(self):
        return self._judge

    @judge.setter
    def judge(self, judge) -> None:
        # The runner hands the run's judge to `task.judge`: every row's generator judges with it, metered apart.
        self._judge = judge
        model = self.judge_lm.lm.model if self.judge_lm is not None else None
        for _, generator in self.rows.values():
            generator.judge = MeteredJudge(judge, model)

    def prepare(self, examples: list, run_dir: Path | None = None) -> None:
        self.panel.prepare(examples)
        self.run_dir = run_dir
        self.cpu_started = time.process_time()

    def tracking_params(self) -> dict:
        first = next(iter(self.rows.values()))[1]
        return first.tracking_params() if hasattr(first, "tracking_params") else {}

    def programs(self) -> dict[str, dspy.Module]:
        first = next(iter(self.rows.values()))[1]
        return {name: program for name, program in first.programs().items() if name != "judge"} | {"judge": self._judge}

    def process(self, example: dspy.Example) -> list[dict]:
        return [
            record
            for name, (pivot, generator) in self.rows.items()
            for record in self._one(name, pivot, generator, example)
        ]

    def _one(self, name: str, pivot, generator, example: dspy.Example) -> list[dict]:
        pivot_model = pivot.lm.model if pivot.lm is not None else None
        judge_model = self.judge_lm.lm.model if self.judge_lm is not None else None
        try:
            made, cost = pivot_cost(pivot_model, judge_model, lambda: generator.process(example))
        except Exception as exc:  # noqa: BLE001 - this pivot's case errored; the other pivots' stand
            return [
                {
                    "id": f"{example.id}:{name}",
                    "seed_id": example.id,
                    "pivot": name,
                    "task": self.entry.name,
                    "status": error_status(exc),
                    "error": error_text(exc, 500),
                }
            ]
        records = made if isinstance(made, list) else [made]
        out = []
        for i, record in enumerate(records):
            record = {**record, "case_key": record["id"], "id": f"{record['id']}:{name}", "pivot": name}
            if isinstance(pivot, RulesPivot):
                for key in ("pivot_closed_answer", "pivot_open_answer", "seed_cell", "open_correct", "closed_correct"):
                    record.pop(key, None)  # no pivot answered: these would read as its failures
            if i == 0:
                counts = {f"pivot_{k}": cost[k] for k in ("tokens", "prompt_tokens", "completion_tokens")}
                record.update({k: v for k, v in counts.items() if v is not None})
                record.update(pivot_seconds=cost["seconds"], pivot_cached_calls=cost["cached_calls"])
            if is_attack(record) and is_valid(record):
                record["targets"] = self.panel.ask(record)
            if is_attack(record) and record.get("status") != "rejected:seed_not_selected":
                wrong = [
                    not a["perturbed_correct"]
                    for a in (record.get("targets") or {}).values()
                    if a["perturbed_correct"] is not None
                ]
                record.update(
                    valid=is_valid(record), attack_score=attack_score(is_valid(record), wrong, self.options.strength)
                )
            out.append(record)
        return out

    def _by_row(self, records: list[dict]) -> dict[str, list[dict]]:
        return {name: [r for r in records if r.get("pivot") == name] for name in self.rows}

    def figures(self, records: list[dict], run_dir: Path | None = None) -> tuple[dict[str, dict], list[dict]]:
        """Per row its figures (with the readers' share where a reading exists), and the paired rows."""
        targets = [t.config.label for t in self.targets]
        by_row = self._by_row(records)
        human = pivot_reads.readings(run_dir)[0] if run_dir is not None and run_dir.is_dir() else {}
        same = pivot_figures.identical(by_row)
        per_row = {}
        for name, rows in by_row.items():
            row = pivot_figures.row_figures(rows, targets, *self._model(name))
            if isinstance(self.rows[name][0], RulesPivot):  # code alone: no LM to pay
                row.update(dollars=0.0, dollars_per_valid=0.0 if row["valid"] else None)
            row["identical"] = same[name]
            row["read"] = pivot_reads.read_share([r for r in rows if is_attack(r)], human) if human else None
            per_row[name] = row
        return per_row, pivot_figures.pairs(by_row, targets)

    def _model(self, name: str) -> tuple[str | None, Price | None]:
        """The row's model as its price is looked up (a roster name costs nothing), and its config's price."""
        pivot = self.rows[name][0]
        if pivot.lm is None:
            return None, None
        return pivot.config.name, getattr(pivot.config, "price", None)

    def summarize(self, records: list[dict]) -> dict[str, float]:
        per_row, pairs = self.figures(records, getattr(self, "run_dir", None))
        metrics: dict[str, float] = {}
        for name, row in per_row.items():
            metrics.update(flat_metrics(f"pivot.{name}", row["summary"]))
            for key, value in row.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    metrics[f"pivot.{name}.{key}"] = value
            metrics[f"pivot.{name}.identical_share"] = row["identical"]["share"]
            metrics[f"pivot.{name}.yield"] = row["yield"]["rate"]
            if row["read"]:
                for key in ("estimate", "low", "high", "read"):
                    metrics[f"pivot.{name}.read_valid.{key}"] = row["read"][key]
        for p in pairs:
            prefix = f"pair.{p['a']}.vs.{p['b']}.{p['target']}.{p['measure']}"
            metrics.update({f"{prefix}.{k}": p[k] for k in ("n", "diff", "low", "high", "p")})
        return metrics

    def settings(self, per_row: dict[str, dict]) -> dict[str, Any]:
        versions = sorted({v for row in per_row.values() for v in row["versions"]})
        return {
            "generator": self.entry.name,
            "version": self.entry.version,
            "versions": versions,
            "options": self.generator_options,
            "resolved": self._in_full(self.generator_options),
            "rules": self.rules_options if self.options.rules else None,
            "rules_resolved": self._in_full(self.rules_options) if self.options.rules else None,
            "setting": self.setting,
            "judge": self.judge_lm.config.label if self.judge_lm is not None else "none (the checks alone)",
            "strength": self.options.strength,
        }

    def spend(self) -> dict[str, Any]:
        """What every model of the comparison spent in this process since it was built, by the labels of the run's
        `lm.<label>.…` metrics and from the same figures (each model's `usage()`, `run_cost`), and this process's
        CPU seconds since the cases began (local models decode in it)."""
        usages = {
            (f"{r.role}/{r.config.label}" if isinstance(value, list) else role): r.usage()
            for role, value in self.lms.items()
            if value is not None
            for r in (value if isinstance(value, list) else [value])
        }
        cpu = None if self.cpu_started is None else round(time.process_time() - self.cpu_started, 3)
        return {"models": usages, "dollars": run_cost(usages).get("cost_usd"), "cpu_seconds": cpu}

    def _in_full(self, options: dict[str, Any]) -> dict[str, Any]:
        """Every option of the generator as it ran, defaults included."""
        return self.entry.Options.model_validate(options).model_dump(mode="json")

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        per_row, _ = self.figures(records, getattr(self, "run_dir", None))
        return pivot_report.main_rows(per_row, [t.config.label for t in self.targets])

    def write_artifacts(self, records: list[dict], out_dir: Path, run_info: dict) -> Path:
        run_dir = out_dir.parent if (out_dir.parent / "cases.jsonl").exists() else getattr(self, "run_dir", None)
        per_row, pairs = self.figures(records, run_dir)
        targets = [t.config.label for t in self.targets]
        return pivot_report.write_report(
            out_dir, run_info.get("run_id", ""), self.settings(per_row), per_row, pairs, targets, self.spend()
        )
