"""Compare pivot LLMs as attack generators: same seeds, same generator, same judge and targets.

Per seed and pivot: the pivot's own seed selection (ReEval keeps the seeds *that pivot* answers
open-book correctly), the generator with that pivot, the judge, and every target on the
perturbed and the original question. Per pivot the run reports acceptance by the checks,
validity by the judge, attack success on each target, and the pivot's tokens and wall time per
valid case — the cost of a usable attack. A reply the call cache answered counts the tokens it took
when it was made, so a comparison re-run from the cache keeps its token costs; its wall time is this
run's, and the table says how many calls the cache answered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, field_validator

from experiments import task_registry
from experiments.attack import AttackScorer, attack_inputs
from experiments.config import ConfigError
from experiments.errors import error_status, error_text
from experiments.lm.registry import ResolvedLM
from experiments.lm.usage import measured
from experiments.tasks.seed_selection import SEED_RULES, select_seed
from metrics.attack import attack_summary, flat_metrics, format_rate, is_valid
from programs.seed_selection import SeedSelection


class CompareOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: str = Field("answer_swap", description="the generator every pivot runs: one that can be optimised")
    seeds: Literal["open_correct", "open_correct_closed_wrong", "all"] = Field(
        "open_correct",
        description="which seed-table cells to perturb: read right open-book, and wrong closed-book too, or every seed",
    )
    max_attempts: int = Field(3, ge=1, description="wrong-answer proposals tried per seed")
    setting: Literal["open_book", "opinion"] = Field("open_book", description="the prompt the targets answer in")
    strength: float = Field(0.5, ge=0, le=1, description="weights the attack score column (metrics/attack.py)")

    @field_validator("generator")
    @classmethod
    def _comparable(cls, generator: str) -> str:
        return task_registry.check_name(
            generator, lambda r: r.optimisable, "generator that can be compared across pivots"
        )


@task_registry.task("compare_pivots")
class ComparePivotsTask:
    roles = ("pivots", "judge", "targets")
    Options = CompareOptions

    def __init__(self, lms: dict, options: CompareOptions | None = None):
        self.options = options or CompareOptions()
        self.pivots: list[ResolvedLM] = lms["pivots"]
        names = [p.config.label for p in self.pivots]
        if len(set(names)) != len(names):
            raise ConfigError(f"models.pivots: each pivot once, got {names}")
        self.targets: list[ResolvedLM] = lms["targets"]
        self.generator = task_registry.get(self.options.generator).attack
        self.program = self.generator.build(self.options.max_attempts)
        self.seeds = SeedSelection()
        self.scorer = AttackScorer(lms["judge"], self.targets, self.options.strength, self.options.setting)

    def prepare(self, examples: list, run_dir: Path | None = None) -> None:
        self.scorer.prepare(examples)

    def programs(self) -> dict[str, dspy.Module]:
        return {"seed_selection": self.seeds, self.generator.name: self.program, "judge": self.scorer.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        return [self._one(pivot, example) for pivot in self.pivots]

    def _one(self, pivot: ResolvedLM, example: dspy.Example) -> dict:
        record = {
            "id": f"{example.id}:{pivot.config.label}",
            "pivot": pivot.config.label,
            "generator": self.generator.name,
        }
        try:
            with measured(pivot.lm.model) as cost, dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
                seed = select_seed(pivot, self.seeds, example)
                selected = SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"])
                prediction = self.program(**attack_inputs(example)) if selected else None
        except Exception as exc:  # noqa: BLE001 - this pivot's case errored; the other pivots' stand
            return {**record, "seed_id": example.id, "status": error_status(exc), "error": error_text(exc, 500)}
        record.update(
            seed, pivot_tokens=cost["tokens"], pivot_seconds=cost["seconds"], pivot_cached_calls=cost["cached_calls"]
        )
        if prediction is None:
            return {**record, "status": "rejected:seed_not_selected"}
        return self.scorer.assess({**record, **self.generator.to_case(example, prediction)})

    def _per_pivot(self, records: list[dict]) -> dict[str, dict]:
        names = [t.config.label for t in self.targets]
        out = {}
        for pivot in self.pivots:
            mine = [r for r in records if r.get("pivot") == pivot.config.label]
            generated = [
                r for r in mine if r["status"] != "rejected:seed_not_selected" and not r["status"].startswith("error:")
            ]
            passed_checks = [r for r in generated if r.get("judge") or r["status"] == "accepted"]
            judged = [r["judge"] for r in generated if r.get("judge")]
            valid = sum(is_valid(r) for r in generated)
            summary = attack_summary(mine, names)
            tokens = sum(r.get("pivot_tokens", 0) for r in mine)
            seconds = sum(r.get("pivot_seconds", 0.0) for r in mine)
            cached = sum(r.get("pivot_cached_calls", 0) for r in mine)
            out[pivot.config.label] = {
                "summary": summary,
                "seeds": len(mine),
                "selected": len(generated),
                "valid": valid,
                "errors": sum(r["status"].startswith("error:") for r in mine),
                "acceptance": len(passed_checks) / len(generated) if generated else float("nan"),
                "judge_if": _rate([j["if"] for j in judged]),
                "judge_only_if": _rate([j["only_if"] for j in judged]),
                "tokens": tokens,
                "seconds": round(seconds, 1),
                "cached_calls": cached,
                "tokens_per_valid": tokens / valid if valid else float("nan"),
                "seconds_per_valid": seconds / valid if valid else float("nan"),
            }
        return out

    def summarize(self, records: list[dict]) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for name, row in self._per_pivot(records).items():
            metrics.update(flat_metrics(f"pivot.{name}", row["summary"]))
            metrics.update({f"pivot.{name}.{k}": v for k, v in row.items() if k != "summary"})
        return metrics

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        names = [t.config.label for t in self.targets]
        header = [
            "pivot",
            "selected",
            "passed checks",
            "judge if",
            "judge only-if",
            "valid [95% CI]",
            *(f"success on {n} [95% CI]" for n in names),
            "tokens / valid",
            "s / valid",
        ]
        rows = []
        for pivot, row in self._per_pivot(records).items():
            summary = row["summary"]
            rows.append(
                [
                    pivot,
                    str(row["selected"]),
                    f"{row['acceptance']:.2f}",
                    f"{row['judge_if']:.2f}",
                    f"{row['judge_only_if']:.2f}",
                    format_rate(summary["validity"]),
                    *(format_rate(summary["targets"][n]["success"]) for n in names),
                    f"{row['tokens_per_valid']:.0f}",
                    f"{row['seconds_per_valid']:.1f}"
                    + (f" ({row['cached_calls']} calls from the cache)" if row["cached_calls"] else ""),
                ]
            )
        return header, rows

    def write_artifacts(self, records: list[dict], out_dir: Path, run_info: dict) -> Path:
        out_dir.mkdir(parents=True, exist_ok=True)
        header, rows = self.table_rows(records)
        per_pivot = self._per_pivot(records)
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows),
        ]
        _plot_matrix(per_pivot, [t.config.label for t in self.targets], out_dir / "generator_x_target.png")
        (out_dir / "comparison.json").write_text(json.dumps(per_pivot, indent=2, default=str))
        path = out_dir / "comparison.md"
        path.write_text(
            f"# Pivot comparison — {run_info.get('run_id', '')}\n\nGenerator: {self.options.generator}; "
            f"judge: {self.scorer.judge_lm.config.label}; setting: {self.options.setting}.\n\n"
            + "\n".join(lines)
            + "\n\n![generator × target](generator_x_target.png)\n"
        )
        return path


def _plot_matrix(per_pivot: dict, targets: list[str], path: Path) -> None:
    """Attack success (valid cases the target got wrong), generator rows × target columns, beside cost."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    pivots = list(per_pivot)
    grid = np.array(
        [[per_pivot[p]["summary"]["targets"][t]["success"]["rate"] for t in targets] for p in pivots], dtype=float
    )
    fig, (left, right) = plt.subplots(
        1,
        2,
        figsize=(4 + 1.6 * len(targets), 1.2 + 0.7 * len(pivots)),
        gridspec_kw={"width_ratios": [max(len(targets), 1), 1.3]},
    )
    left.imshow(np.nan_to_num(grid, nan=0.0), vmin=0, vmax=1, cmap="Reds")
    for i, pivot in enumerate(pivots):
        for j, target in enumerate(targets):
            n = per_pivot[pivot]["summary"]["targets"][target]["success"]["n"]
            label = "—" if np.isnan(grid[i, j]) else f"{grid[i, j]:.2f}\n(n={n})"
            left.text(j, i, label, ha="center", va="center", color="white" if grid[i, j] > 0.6 else "black")
    left.set_xticks(range(len(targets)), targets, rotation=20)
    left.set_yticks(range(len(pivots)), pivots)
    left.set_title("attack success (valid cases)")
    cost = [per_pivot[p]["tokens_per_valid"] for p in pivots]
    right.barh(range(len(pivots)), np.nan_to_num(cost, nan=0.0), color="grey")
    right.set_yticks(range(len(pivots)), [])
    right.invert_yaxis()
    right.set_title("pivot tokens / valid case")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _rate(flags: list) -> float:
    decided = [f for f in flags if f is not None]
    return sum(decided) / len(decided) if decided else float("nan")
