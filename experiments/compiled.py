"""Compiled generator programs: saved by an optimisation run, loaded by name in any later config.

A reference is `run:<reeval run id>` (the variant that scored best on that run's validation
seeds), `run:<reeval run id>:<variant>` (e.g. `:mipro_v2`), or a path to a saved program JSON.
The state sits in runs/<id>/compiled/ and in the MLflow run's `compiled/` artifacts, so a
clone without the local runs/ folder still finds it through the tracking store.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dspy

from experiments.config import ConfigError
from experiments.paths import runs_dir
from experiments.tracking import find_runs

BEST = "best"


def compiled_dir(run_id: str) -> Path:
    return runs_dir() / run_id / "compiled"


def save_compiled(program: dspy.Module, folder: Path, variant: str, meta: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{variant}.json"
    program.save(str(path))
    (folder / f"{variant}.meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
    return path


class CompiledProgramNotFound(FileNotFoundError):
    """A compiled-program reference (a path or run:<id>[:variant]) with no program behind it."""


def read_meta(folder: Path, variant: str) -> dict | None:
    path = folder / f"{variant}.meta.json"
    return json.loads(path.read_text()) if path.exists() else None


def resolve(reference: str) -> tuple[Path, dict]:
    """(program JSON, its metadata) for a reference; a clear error names what was looked for."""
    if not reference.startswith("run:"):
        path = Path(reference)
        if not path.exists():
            raise CompiledProgramNotFound(f"compiled program {reference!r}: no such file")
        meta_path = path.with_name(path.stem + ".meta.json")
        return path, json.loads(meta_path.read_text()) if meta_path.exists() else {}
    run_id, _, variant = reference.removeprefix("run:").partition(":")
    variant = variant or BEST
    folder = compiled_dir(run_id)
    if not (folder / f"{variant}.json").exists():
        folder = _download(run_id, variant)
    meta = read_meta(folder, variant) or {}
    return folder / f"{variant}.json", meta


def _download(run_id: str, variant: str) -> Path:
    import mlflow

    runs = [r for r in find_runs(run_id) if r.info.status == "FINISHED"]
    if not runs:
        raise CompiledProgramNotFound(
            f"compiled program run:{run_id}:{variant}: no runs/{run_id}/compiled/"
            f"{variant}.json here and no finished MLflow run tagged {run_id!r}"
        )
    target = Path(tempfile.mkdtemp(prefix="reeval-compiled-"))
    try:
        for name in (f"{variant}.json", f"{variant}.meta.json"):
            mlflow.artifacts.download_artifacts(
                run_id=runs[0].info.run_id, artifact_path=f"compiled/{name}", dst_path=str(target)
            )
    except Exception as exc:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
        raise CompiledProgramNotFound(
            f"compiled program run:{run_id}:{variant}: not among the run's artifacts ({exc})"
        ) from None
    found = next(target.rglob(f"{variant}.json"))
    return found.parent


def load_compiled(program: dspy.Module, reference: str, generator: str) -> dict:
    """Load the state into `program`; refuses a program compiled for another generator."""
    path, meta = resolve(reference)
    if meta.get("generator") not in (None, generator):
        raise ConfigError(f"compiled program {reference!r} was compiled for {meta['generator']!r}, not {generator!r}")
    program.load(str(path))
    apply_dials(program, meta.get("dials") or {}, reference)
    return meta


def apply_dials(program: dspy.Module, dials: dict, reference: str) -> None:
    """The dial settings a program was compiled at (a searched `options.dials`): they are constructor
    arguments, not predictor state, so `load` alone would leave the program at its defaults."""
    for name, value in dials.items():
        if not hasattr(program, name):
            raise ConfigError(f"compiled program {reference!r}: dial {name!r} is unknown to {type(program).__name__}")
        setattr(program, name, value)
