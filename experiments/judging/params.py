"""Which judge method and parameters a run uses, and where they came from.

`validation.judge_params` in a config: "auto" (the default) takes the parameters a calibration
study fitted for this judge model, shipped in experiments/judging/params/<model>.json, when the
model file's hash matches; "reasoned" forces the plain reasoned judge; "run:<run id>" or a path
takes a calibration run's judge_params.json. A provider or server judge without shipped
parameters uses the reasoned judge until a calibration run has fitted one.

`validation.judge_method` picks which of the fitted methods judges: "auto" (the default) takes the
method the shipped file names for the run's task under `task_methods` (measured on the reviewed runs:
docs/results/judge.md, "One call per task"), else the method the calibration study chose; a method
name takes that method with the parameters the same study fitted for it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from experiments.lm.registry import ResolvedLM
from experiments.paths import runs_dir
from programs.judge import DEFAULT_PARAMS, METHODS, CaseJudge

AUTO = "auto"

logger = logging.getLogger(__name__)

SHIPPED = Path(__file__).parent / "params"
PARAMS_FILE = "judge_params.json"
SIGNALS_FILE = "judge_signals.jsonl"


class JudgeParamsError(ValueError):
    """Judge parameters that cannot be used; the message names the file or run."""


def _shipped(judge_lm: ResolvedLM) -> tuple[dict[str, Any], str] | None:
    """The shipped fitted file for this judge model (and where it is), when its file hash matches."""
    path = SHIPPED / f"{judge_lm.config.name}.json"
    if not path.exists():
        return None
    fitted = json.loads(path.read_text())
    want = fitted.get("judge", {}).get("file_sha256")
    have = judge_lm.file_sha256
    if want and want != have:
        logger.warning(
            "%s: fitted for another file of %s (sha256 %s…); using the reasoned judge",
            path,
            judge_lm.config.name,
            str(want)[:12],
        )
        return None
    return fitted, str(path.relative_to(SHIPPED.parents[1]))


def _from_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        fitted = json.loads(path.read_text())
        params = dict(fitted["params"])
    except FileNotFoundError:
        raise JudgeParamsError(f"{path}: no such judge parameters file") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise JudgeParamsError(f"{path}: not a judge parameters file ({exc})") from None
    if params.get("method") not in METHODS:
        raise JudgeParamsError(f"{path}: field 'params.method': {params.get('method')!r} is not one of {METHODS}")
    return fitted, str(path)


def _pick(fitted: dict[str, Any], source: str, task: str | None, method: str) -> dict[str, Any]:
    """The fitted parameters of the method that judges `task`: the one asked for, else the file's
    measured choice for the task, else the study's overall choice."""
    chosen = dict(fitted["params"])
    want = method if method != AUTO else (fitted.get("task_methods") or {}).get(task or "", chosen["method"])
    if want == chosen["method"]:
        return {**chosen, "source": source}
    if want == DEFAULT_PARAMS["method"]:
        return {**DEFAULT_PARAMS, "source": f"{source} (method {want})"}
    try:
        params = dict(fitted["methods"][want]["params"])
    except (KeyError, TypeError):
        fitted_methods = ", ".join(sorted((fitted.get("methods") or {}).keys())) or "none"
        raise JudgeParamsError(
            f"{source}: no fitted parameters for judge method {want!r} (fitted: {fitted_methods}); "
            "set validation.judge_method to one of those, or run the judge study with that method"
        ) from None
    how = f"measured for {task}" if method == AUTO else "validation.judge_method"
    return {**params, "source": f"{source} (method {want}: {how})"}


def resolve_params(
    judge_lm: ResolvedLM | None, spec: str = "auto", task: str | None = None, method: str = AUTO
) -> dict[str, Any]:
    """The judge's method and parameters for the cases of `task` (a generator's name)."""
    if method != AUTO and method not in METHODS:
        raise JudgeParamsError(f"validation.judge_method: {method!r} is not auto or one of {METHODS}")
    if spec == "reasoned" or judge_lm is None:
        if method not in (AUTO, DEFAULT_PARAMS["method"]):
            raise JudgeParamsError(
                f"validation.judge_method: {method!r} with validation.judge_params: reasoned; the reasoned "
                "judge has no other method (set judge_params to auto or a judge study's run:<id>)"
            )
        return {**DEFAULT_PARAMS, "source": "reasoned"}
    if spec == "auto":
        shipped = _shipped(judge_lm)
        if shipped is None:
            if method not in (AUTO, DEFAULT_PARAMS["method"]):
                raise JudgeParamsError(
                    f"validation.judge_method: {method!r} needs fitted parameters, and none ship for "
                    f"{judge_lm.config.name}; set validation.judge_params to a judge study's run:<id>"
                )
            return {**DEFAULT_PARAMS, "source": "reasoned (no fitted parameters for this judge)"}
        return _pick(*shipped, task, method)
    if spec.startswith("run:"):
        return _pick(*_from_file(runs_dir() / spec[4:] / PARAMS_FILE), task, method)
    return _pick(*_from_file(Path(spec)), task, method)


def judge_from(params: dict[str, Any]) -> CaseJudge:
    return CaseJudge({k: v for k, v in params.items() if k != "source"})


def make_judge(judge_lm: ResolvedLM | None, spec: str = "auto") -> CaseJudge:
    return judge_from(resolve_params(judge_lm, spec))


def describe(params: dict[str, Any]) -> dict[str, Any]:
    """Flat MLflow params: the method, its thresholds and where they came from."""
    out: dict[str, Any] = {"judge.method": params.get("method"), "judge.params_source": params.get("source")}
    for kind, value in (params.get("thresholds") or {}).items():
        out[f"judge.threshold.{kind}"] = round(float(value), 6)
    for kind, weights in (params.get("weights") or {}).items():
        out[f"judge.weights.{kind}"] = ",".join(f"{w:.4f}" for w in weights)
    return out
