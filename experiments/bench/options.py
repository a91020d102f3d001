"""What a bench runs: which generators, on which data, and which prompt settings each task's cases
(and their originals) are put to. Every list here multiplies target calls, so a user trims them here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from experiments import task_registry
from experiments.data.registry import resolve_dataset

Setting = Literal[
    "closed_book", "open_book", "opinion", "cot", "task_instruction", "few_shot_clean", "few_shot_adversarial"
]

FEW_SHOT: tuple[str, ...] = ("few_shot_clean", "few_shot_adversarial")


def generators() -> tuple[str, ...]:
    """The registered generators: what a bench runs unless `tasks` says otherwise."""
    return task_registry.names(lambda r: r.generator)


def seeded_generators() -> tuple[str, ...]:
    """Generators that perturb QA seeds: they share one seed selection per seed and pivot."""
    return task_registry.names(lambda r: r.seeded)


def _generator(task: str) -> str:
    return task_registry.check_name(task, lambda r: r.generator, "generator")


# The settings the papers report, per generator (its registration's bench_settings, bench_sampled).
# ReEval/AutoDebug: closed-book, open-book zero-shot, the opinion prompt and few-shot with clean vs
# adversarial demonstrations (AutoDebug Table 6). FaithEval: open book with and without the task
# instruction and chain of thought, and sampled decoding.
def paper_settings() -> dict[str, list[str]]:
    return {n: list(task_registry.get(n).bench_settings) for n in generators()}


def paper_sampled() -> dict[str, list[str]]:
    return {n: list(task_registry.get(n).bench_sampled) for n in generators() if task_registry.get(n).bench_sampled}


# ReEval's settings where a known answer meets contrary evidence (AutoDebug Table 6 and the opinion prompt),
# and FaithEval's task instruction, which offers "conflict" as an answer.
CONFLICT_SETTINGS: list[str] = ["open_book", "opinion", "task_instruction", "few_shot_clean", "few_shot_adversarial"]


class KnowledgeConflict(BaseModel):
    """options.knowledge_conflict of a bench."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(False, description="scan each target's knowledge and run the conflict experiment")
    source: str = Field(
        "nq", description="QA rows scanned: a shipped name (split: all for one without declared development rows)"
    )
    split: Literal["all", "development", "held_out"] = Field(
        "held_out", description="rows of the source scanned (experiments/splits.py)"
    )
    scan_only: bool = Field(
        False,
        description="stop after the scans: what each target knows of a source, before any generation is paid for",
    )
    known_per_target: int = Field(250, ge=1, description="a target's scan stops once it knows this many seeds")
    max_rows: int | None = Field(None, ge=1, description="rows a scan may ask at most (default: all of the split)")
    block: int = Field(200, ge=1, description="rows scanned between two looks at the known count")
    table_rows: int = Field(
        200,
        ge=0,
        description="the first rows of the scan order, asked open-book too: "
        "their full 4-way table, and the unknown seeds",
    )
    unknown_per_target: int = Field(
        50, ge=0, description="seeds a target reads right but does not know, perturbed as the comparison"
    )
    control_seeds: int = Field(40, ge=0, description="known seeds per target also context-enriched (the control)")
    settings: list[Setting] = Field(
        default_factory=lambda: list(CONFLICT_SETTINGS),
        description="prompt settings every target answers its perturbed cases in",
    )
    seed: int = Field(0, description="the scan order")
    generators: dict[str, dict] = Field(
        default_factory=lambda: {
            name: dict(entry.knowledge_conflict.options)
            for name, entry in task_registry.entries().items()
            if entry.knowledge_conflict
        },
        description="options of the generators the experiment runs, the conflicting one and its control "
        "(seeds: all is forced)",
    )

    @field_validator("generators")
    @classmethod
    def _conflict_generators(cls, generators: dict[str, dict]) -> dict[str, dict]:
        known = task_registry.names(lambda r: r.knowledge_conflict is not None)
        unknown = set(generators) - set(known)
        if unknown:
            raise ValueError(f"generators: {' and '.join(known)} only, got {sorted(unknown)}")
        return generators


class CounterfactualData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str = Field("arc_challenge", description="multiple-choice questions: a shipped name or a JSONL path")
    limit: int | None = Field(None, description="questions; default: data.limit")
    offset: int = Field(0, ge=0, description="questions skipped first")

    @field_validator("source")
    @classmethod
    def _exists(cls, source: str) -> str:
        try:
            resolve_dataset(source)
        except (ValueError, FileNotFoundError, KeyError) as exc:
            raise ValueError(str(exc)) from None
        return source


class BenchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tasks: list[str] = Field(
        default_factory=lambda: list(generators()), description="generators to run (NQ seeds; counterfactual on ARC)"
    )
    counterfactual_data: CounterfactualData = Field(
        CounterfactualData(), description="the multiple-choice questions counterfactual cases are made from"
    )
    generators: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="each generator's own options, as in its single-task config"
    )
    settings: dict[str, list[Setting]] = Field(
        default_factory=paper_settings,
        description="per task: prompt settings its cases and their originals are put to, greedy",
    )
    sampled: dict[str, list[Setting]] = Field(
        default_factory=paper_sampled,
        description="per task: settings asked again with sampled decoding (temperature 0.3, top-p 0.9)",
    )
    judged_tasks: list[str] = Field(
        default_factory=lambda: list(task_registry.names(lambda r: r.generator and r.judged)),
        description="generators whose cases the judge (models.judge) validates after the string checks; "
        "the others are left to the checks (context enriching, as in nq_context_enrich.yaml)",
    )
    headline: Setting = Field("open_book", description="the setting of the main table, transfer matrix and ranks")
    k_shots: int = Field(2, ge=1, description="demonstrations in the few-shot settings")
    seed: int = Field(0, description="draws the demonstrations")
    knowledge_conflict: KnowledgeConflict = Field(
        default_factory=KnowledgeConflict,
        description="answer swaps on seeds each target knows (experiments/bench/conflict.py)",
    )

    @field_validator("tasks", "judged_tasks")
    @classmethod
    def _distinct(cls, tasks: list[str]) -> list[str]:
        if len(set(tasks)) != len(tasks):
            raise ValueError("each task once")
        return [_generator(t) for t in tasks]

    @field_validator("generators", "settings", "sampled")
    @classmethod
    def _generators(cls, per_task: dict) -> dict:
        return {_generator(t): v for t, v in per_task.items()}

    @model_validator(mode="after")
    def _consistent(self) -> BenchOptions:
        problems = []
        for task, options in self.generators.items():
            try:
                task_registry.get(task).Options.model_validate(options)
            except ValidationError as exc:
                problems += [
                    f"options.generators.{task}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
                ]
        for field in ("settings", "sampled"):
            for task, settings in getattr(self, field).items():
                if task_registry.get(task).original_setting != "open_book" and set(settings) & set(FEW_SHOT):
                    problems.append(
                        f"options.{field}.{task}: few-shot settings need an open-book original; "
                        f"{task} cases have a closed-book twin instead"
                    )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def plan(self) -> list[tuple[str, str, str]]:
        """(task, setting, decoding) for every task that runs, greedy first."""
        out = []
        for task in self.tasks:
            out += [(task, s, "greedy") for s in self.settings_of(task)]
            out += [(task, s, "sampled") for s in self.sampled_of(task)]
        return out

    # A task left out of `settings` / `sampled` keeps the papers' list; an empty list turns it off.
    def settings_of(self, task: str) -> list[str]:
        return list(self.settings.get(task, task_registry.get(task).bench_settings))

    def sampled_of(self, task: str) -> list[str]:
        return list(self.sampled.get(task, task_registry.get(task).bench_sampled))
