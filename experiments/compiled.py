"""Compiled generator programs: saved by an optimisation run, loaded by name in any later config.

A reference is `run:<reeval run id>` (the variant that scored best on that run's validation
seeds), `run:<reeval run id>:<variant>` (e.g. `:mipro_v2`), a path to a saved program JSON, or an
MLflow model URI (`models:/<registered name>/<version>`, `models:/<name>@<alias>`, `models:/<model id>`).
The state sits in runs/<id>/compiled/ and in the MLflow run's `compiled/` artifacts, so a
clone without the local runs/ folder still finds it through the tracking store; the best variant is also
an MLflow model (`mlflow.dspy.log_model`), registered under `options.register_as` when the config names one.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dspy

from experiments.config import ConfigError
from experiments.paths import runs_dir
from experiments.tracking import find_runs, setup_mlflow

BEST = "best"
MODELS_PREFIX = "models:/"


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


def log_compiled_model(program: dspy.Module, variant: str, meta: dict, registered_name: str | None) -> str:
    """The program as an MLflow model of the active run (registered when a name is given); its URI."""
    import mlflow

    info = mlflow.dspy.log_model(
        program,
        name=f"compiled-{variant}",
        registered_model_name=registered_name,
        # Named, not inferred: inference imports the program's whole environment and takes minutes.
        pip_requirements=[f"dspy=={dspy.__version__}"],
        metadata={"reeval": meta},
    )
    return info.model_uri


def _load_model(program: dspy.Module, reference: str) -> dict:
    import mlflow

    setup_mlflow()
    active = mlflow.get_active_model_id()
    try:
        loaded = mlflow.dspy.load_model(reference)
        meta = (mlflow.models.get_model_info(reference).metadata or {}).get("reeval", {})
    except Exception as exc:  # noqa: BLE001 - MLflow raises several kinds for an unknown model or version
        raise CompiledProgramNotFound(f"compiled program {reference!r}: {exc}") from None
    finally:
        # Loading makes the model the process's active model, and every metric logged afterwards (in any
        # store) would name it: a later run's metrics then point at a model its store does not hold.
        if mlflow.get_active_model_id() != active:
            mlflow.clear_active_model() if active is None else mlflow.set_active_model(model_id=active)
    if type(loaded).__name__ != type(program).__name__:
        kinds = f"a {type(loaded).__name__}, not a {type(program).__name__}"
        raise ConfigError(f"compiled program {reference!r} is {kinds}")
    program.load_state(loaded.dump_state())
    return meta


def load_compiled(program: dspy.Module, reference: str, generator: str) -> dict:
    """Load the state (and the dial settings it was compiled at) into `program`; refuses a program compiled
    for another generator."""
    if reference.startswith(MODELS_PREFIX):
        meta = _load_model(program, reference)
    else:
        path, meta = resolve(reference)
    if meta.get("generator") not in (None, generator):
        raise ConfigError(f"compiled program {reference!r} was compiled for {meta['generator']!r}, not {generator!r}")
    if not reference.startswith(MODELS_PREFIX):
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
