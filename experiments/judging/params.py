"""Which judge method and parameters a run uses, and where they came from.

`validation.judge_params` in a config: "auto" (the default) takes the parameters a calibration
study fitted for this judge model, shipped in experiments/judging/params/<model>.json, when the
model file's hash matches; "reasoned" forces the plain reasoned judge; "run:<run id>" or a path
takes a calibration run's judge_params.json. A provider or server judge without shipped
parameters uses the reasoned judge until a calibration run has fitted one.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from experiments.lm.registry import ResolvedLM
from experiments.paths import runs_dir
from programs.judge import DEFAULT_PARAMS, METHODS, CaseJudge

logger = logging.getLogger(__name__)

SHIPPED = Path(__file__).parent / "params"
PARAMS_FILE = "judge_params.json"
SIGNALS_FILE = "judge_signals.jsonl"


class JudgeParamsError(ValueError):
    """Judge parameters that cannot be used; the message names the file or run."""


def _shipped(judge_lm: ResolvedLM) -> dict[str, Any] | None:
    path = SHIPPED / f"{judge_lm.config.name}.json"
    if not path.exists():
        return None
    fitted = json.loads(path.read_text())
    want = fitted.get("judge", {}).get("file_sha256")
    have = judge_lm.identity().get("file_sha256")
    if want and want != have:
        logger.warning(
            "%s: fitted for another file of %s (sha256 %s…); using the reasoned judge",
            path,
            judge_lm.config.name,
            str(want)[:12],
        )
        return None
    return {**fitted["params"], "source": str(path.relative_to(SHIPPED.parents[1]))}


def _from_file(path: Path) -> dict[str, Any]:
    try:
        fitted = json.loads(path.read_text())
        params = dict(fitted["params"])
    except FileNotFoundError:
        raise JudgeParamsError(f"{path}: no such judge parameters file") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise JudgeParamsError(f"{path}: not a judge parameters file ({exc})") from None
    if params.get("method") not in METHODS:
        raise JudgeParamsError(f"{path}: field 'params.method': {params.get('method')!r} is not one of {METHODS}")
    return {**params, "source": str(path)}


def resolve_params(judge_lm: ResolvedLM | None, spec: str = "auto") -> dict[str, Any]:
    if spec == "reasoned" or judge_lm is None:
        return {**DEFAULT_PARAMS, "source": "reasoned"}
    if spec == "auto":
        return _shipped(judge_lm) or {**DEFAULT_PARAMS, "source": "reasoned (no fitted parameters for this judge)"}
    if spec.startswith("run:"):
        return _from_file(runs_dir() / spec[4:] / PARAMS_FILE)
    return _from_file(Path(spec))


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
