"""The validity figures of one run, with what they were computed from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from experiments.validity.inputs import RunInputs, load_inputs
from metrics.validity import ValidityFigures, validity_figures

CALIBRATION_ACCURACY = "judge_calibration.accuracy"


@dataclass
class RunValidity:
    run_id: str
    figures: ValidityFigures
    inputs: RunInputs
    calibration: dict[str, float] = field(default_factory=dict)  # judge_calibration.* metrics, if logged

    @property
    def judge_alone(self) -> bool:
        return self.figures.judge_alone

    @property
    def notes(self) -> list[str]:
        return [*self.figures.notes, *self.inputs.notes]

    def metrics(self) -> dict[str, float]:
        out = self.figures.to_metrics()
        if CALIBRATION_ACCURACY in self.calibration:
            out["validity.judge_calibration_accuracy"] = float(self.calibration[CALIBRATION_ACCURACY])
        return {k: v for k, v in out.items() if v == v}  # drop NaN


def run_validity(
    run_id: str,
    *,
    calibration: Mapping[str, float] | None = None,
    runs_root: Path | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> RunValidity:
    """Compute a run's validity figures from its run store.

    ``calibration``: the run's logged metrics (only ``judge_calibration.*`` are kept), shown with
    the judge's acceptance when there is no review.
    """
    inputs = load_inputs(run_id, runs_root)
    figures = validity_figures(
        inputs.population,
        inputs.human,
        inputs.stratum_population,
        failures=inputs.failures,
        judged=inputs.judged,
        alpha=alpha,
        seed=seed,
    )
    kept = {k: float(v) for k, v in (calibration or {}).items() if k.startswith("judge_calibration.")}
    return RunValidity(run_id, figures, inputs, kept)
