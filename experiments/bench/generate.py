"""One generator on the bench's seeds: the task exactly as a single-task run makes its cases (checks,
judge), with the shared seed selection replayed and the run's judge, checkpointed in its stage store.

The stage store holds a config.json of the equivalent single-task run, so `reeval review`,
`reeval validity` and `reeval rejudge` work on a bench's generated cases as on any other run's.
"""

from __future__ import annotations

from experiments import task_registry
from experiments.bench.seeds import RecordedSeedSelection
from experiments.config import ExperimentConfig, ModelsConfig
from experiments.judging.acceptance import AcceptanceDecision
from metrics.status import status_counts
from programs import sentences


def stage_config(
    config: ExperimentConfig, task: str, data, pivot, options: dict, judged: bool = True
) -> ExperimentConfig:
    """The single-task config this stage's cases are equivalent to (without a judge where the bench
    leaves the task to the string checks)."""
    return ExperimentConfig(
        name=f"{config.name}.{task}",
        task=task,
        data=data,
        models=ModelsConfig(pivot=pivot, judge=config.models.judge if judged else None),
        run=config.run,
        validation=config.validation,
        options=options,
    )


def build_task(
    task: str, pivot, judge_lm, judge, options: dict, seed_records: list[dict] | None, acceptance: bool = False
):
    """`acceptance`: decide judged cases by the shipped acceptance score (validation.acceptance: auto)."""
    task_cls = task_registry.get(task).cls
    lms = {"pivot": pivot, **({"judge": judge_lm} if judge_lm is not None else {})}
    generator = task_cls(lms, task_cls.Options.model_validate(options))
    if judge is not None:
        generator.judge = judge
    if seed_records is not None and hasattr(generator, "seeds"):
        generator.seeds = RecordedSeedSelection(seed_records)
    if acceptance and judge is not None and hasattr(generator, "acceptance"):
        generator.acceptance = AcceptanceDecision.shipped(task)
    return generator


def program_version(task: str) -> str:
    """The generating program's version: part of a stage's inputs, so a changed generator makes its
    stage run again (from the call cache) instead of reusing cases an older version made."""
    return f"{task_registry.get(task).version}+{sentences.VERSION}"


def generation_metrics(generator, records: list[dict]) -> dict[str, float]:
    metrics = dict(generator.summarize(records))
    errors = status_counts(records, "error")
    metrics.update(errors)
    metrics["errors"] = float(sum(1 for r in records if str(r.get("status", "")).startswith("error:")))
    metrics["records"] = float(len(records))
    return metrics
