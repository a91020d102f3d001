"""Judge calibration as an experiment: three control cases per seed whose right verdict is known."""

from __future__ import annotations

import dspy
from pydantic import BaseModel, ConfigDict

from experiments.lm_registry import ResolvedLM
from experiments.validation import calibration_metrics, controls_for, judge_record, other_answer_pool
from programs.judge import CaseJudge


class JudgeCalibrationTask:
    name = "judge_calibration"
    roles = ("judge",)

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        seed: int = 0

    def __init__(self, lms: dict[str, ResolvedLM], options: Options | None = None):
        self.options = options or self.Options()
        self.judge_lm = lms["judge"]
        self.judge = CaseJudge()
        self.pool = other_answer_pool()

    def programs(self) -> dict[str, dspy.Module]:
        return {"judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        return [judge_record(self.judge_lm, self.judge, c) for c in controls_for(example, self.pool, self.options.seed)]

    def summarize(self, records: list[dict]) -> dict[str, float]:
        return calibration_metrics([r for r in records if "condition" in r])

    def table_rows(self, records):
        metrics = self.summarize(records)
        rows = [[c, str(int(metrics[f"judge_calibration.{c}.n"])), f"{metrics[f'judge_calibration.{c}.accuracy']:.0%}",
                 str(int(metrics[f"judge_calibration.{c}.unjudged"]))]
                for c in ("gold_answer", "other_answer", "original_as_unanswerable")]
        return ["condition", "controls", "judge accuracy", "unjudged"], rows
