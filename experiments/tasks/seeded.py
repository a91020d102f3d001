"""What every perturbation task shares besides its seed selection (`experiments.tasks.seed_selection`): the
optional judge role that validates every case that passed the checks, and the acceptance summaries."""

from __future__ import annotations

from experiments.judging.acceptance import AcceptanceDecision
from experiments.lm.registry import ResolvedLM
from experiments.validation import judge_metrics, validate
from metrics.status import status_counts
from programs.judge import CaseJudge


def acceptance_metrics(records: list[dict]) -> dict[str, float]:
    """Acceptance over generated cases, with one counter per rejection reason and error kind."""
    generated = [r for r in records if r.get("status") != "rejected:seed_not_selected"]
    accepted = sum(r.get("status") == "accepted" for r in generated)
    metrics: dict[str, float] = {
        "seeds": len({r["seed_id"] for r in records}),
        "seeds_selected": len({r["seed_id"] for r in generated}),
        "cases_generated": len(generated),
        "cases_accepted": accepted,
        "acceptance_rate": accepted / len(generated) if generated else 0.0,
    }
    metrics.update(status_counts(generated, "rejected"))
    return metrics


def status_table(records: list[dict]) -> tuple[list[str], list[list[str]]]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.get("status", "?")] = counts.get(record.get("status", "?"), 0) + 1
    total = max(len(records), 1)
    rows = [[status, str(n), f"{n / total:.0%}"] for status, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    return ["status", "cases", "share"], rows


class JudgedTask:
    """A pivot generates; when models.judge is set, every case that passed the checks is judged."""

    roles: tuple[str, ...] = ("pivot",)
    optional_roles: tuple[str, ...] = ("judge",)
    name = ""

    def __init__(self, lms: dict[str, ResolvedLM], options):
        self.options = options
        self.pivot = lms["pivot"]
        self.judge_lm = lms.get("judge")
        self.judge = CaseJudge()
        # Set by the runner when validation.acceptance is auto and parameters ship for the task.
        self.acceptance: AcceptanceDecision | None = None

    def _validate(self, records: list[dict]) -> list[dict]:
        judged = validate(self.judge_lm, self.judge, records)
        if self.acceptance is None or self.judge_lm is None:
            return judged
        return [self.acceptance.apply(r) for r in judged]

    def summarize(self, records: list[dict]) -> dict[str, float]:
        return {**acceptance_metrics(records), **judge_metrics(records)}

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        return status_table(records)
