"""Judge calibration as an experiment: control cases whose right verdict is known, judged with
every method's signals, then each method fitted on the calibration half and measured on the
held-out half (experiments/judging/fit.py). The fitted parameters are the run's judge_params.json,
which a config selects with `validation.judge_params: run:<this run id>`."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
from pydantic import BaseModel, ConfigDict, Field

from experiments import task_registry
from experiments.judging.calibration import calibration_metrics
from experiments.judging.controls import CONDITIONS, controls_for, half_of, other_answer_pool
from experiments.judging.fit import current_signals, fit_and_measure, method_table
from experiments.judging.params import PARAMS_FILE, SIGNALS_FILE
from experiments.lm.registry import ResolvedLM
from experiments.report_page import Report, Section, write
from experiments.validation import judge_record
from programs.judge import METHODS, CaseJudge


@task_registry.task("judge_calibration")
class JudgeCalibrationTask:
    roles = ("judge",)

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        seed: int = Field(0, description="draws the control cases")
        families: list[str] = Field(
            ["checks", "extract", "reasoned"],
            description="signal families to collect: every method built on them is compared",
        )
        reasoned_half: str | None = Field(None, description="collect the (slow) reasoned signals only on this half")
        reasoned_seeds: int | None = Field(None, ge=1, description="... and only on its first N seeds")

    def __init__(self, lms: dict[str, ResolvedLM], options: Options | None = None):
        self.options = options or self.Options()
        self.judge_lm = lms["judge"]
        families = tuple(self.options.families)
        cheap = tuple(f for f in families if f != "reasoned")
        self.judge = CaseJudge({"method": cheap[0] if cheap else "reasoned"}, collect=families)
        self.cheap_judge = CaseJudge({"method": cheap[0] if cheap else "reasoned"}, collect=cheap)
        self.pool = other_answer_pool()
        self._reasoned_ids: set[str] = set()

    def prepare(self, examples: list, run_dir) -> None:
        """Which seeds get the reasoned signals: fixed by the seed list, not by the order cases finish."""

        half = self.options.reasoned_half
        wanted = [e.id for e in examples if not half or half_of(e.id) == half]
        self._reasoned_ids = set(wanted[: self.options.reasoned_seeds] if self.options.reasoned_seeds else wanted)

    def programs(self) -> dict[str, dspy.Module]:
        return {"judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        records = []
        for control in controls_for(example, self.pool, self.options.seed):
            judge = self.judge
            if example.id not in self._reasoned_ids:
                judge = self.cheap_judge
            records.append(judge_record(self.judge_lm, judge, control))
        return records

    def summarize(self, records: list[dict]) -> dict[str, float]:
        controls = [r for r in records if "condition" in r]
        metrics = calibration_metrics(controls)
        fitted = fit_and_measure(controls)
        for variant, result in fitted["results"].items():
            for condition, acc in result["held_out"].items():
                metrics[f"judge_method.{variant}.held_out.{condition}.accuracy"] = acc["accuracy"]
            metrics[f"judge_method.{variant}.held_out.worst"] = result["held_out_worst"]
            for pair, value in result["auc"].items():
                metrics[f"judge_method.{variant}.auc.{pair}"] = value
        return metrics

    def write_artifacts(self, records: list[dict], out_dir: Path, run_info: dict) -> Path:
        out_dir.mkdir(parents=True, exist_ok=True)
        controls = [r for r in records if "condition" in r]
        fitted = fit_and_measure(controls)
        payload = {
            "judge": self.judge_lm.identity(),
            "run": run_info,
            "chosen": fitted.get("chosen"),
            "params": fitted.get("params"),
            "controls": fitted.get("controls"),
            "methods": fitted.get("results"),
            "methods_known": list(METHODS),
        }
        (out_dir.parent / PARAMS_FILE).write_text(json.dumps(payload, indent=2, default=str))
        # What the fit rests on, without the contexts: enough to refit or audit with no LM call.
        with open(out_dir.parent / SIGNALS_FILE, "w") as handle:
            for r in map(current_signals, controls):
                handle.write(
                    json.dumps(
                        {k: r.get(k) for k in ("id", "seed_id", "condition", "half", "expected_valid")}
                        | {"judge": {"signals": r["judge"].get("signals"), "extracted": r["judge"].get("extracted")}}
                    )
                    + "\n"
                )
        (out_dir / PARAMS_FILE).write_text(json.dumps(payload, indent=2, default=str))
        title = f"Judge methods — {run_info.get('run_id', '')}"
        return write(JudgeMethodsPage(title, *method_table(fitted)), out_dir).markdown_path

    def table_rows(self, records):
        fitted = fit_and_measure([r for r in records if "condition" in r])
        header = ["method"] + list(CONDITIONS) + ["worst (held-out)"]
        rows = []
        for variant, result in fitted["results"].items():
            mark = " (chosen)" if variant == fitted.get("chosen") else ""
            rows.append(
                [variant + mark]
                + [f"{result['held_out'][c]['accuracy']:.0%} n={result['held_out'][c]['n']}" for c in CONDITIONS]
                + [f"{result['held_out_worst']:.0%}"]
            )
        return header, rows


class JudgeMethodsPage(Report):
    """The calibration's page (judge_methods.md, .html): each method's held-out accuracy, the chosen one marked."""

    name = "judge_methods"
    intro = (
        "On the held-out half of the calibration controls: each method's accuracy per condition, its worst "
        "condition and the AUC of each pair of conditions; the method chosen on the calibration half is marked."
    )

    def __init__(self, title: str, header: list[str], rows: list[list[str]]):
        self.title, self.header, self.rows = title, header, rows

    def sections(self) -> list[Section]:
        return [Section("", self.header, self.rows)]
