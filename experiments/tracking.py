"""MLflow tracking: one experiment per config, one parent run per invocation, nested runs per model.

The store is `sqlite:///<repo>/mlruns/mlflow.db` with artifacts under `mlruns/artifacts`
unless MLFLOW_TRACKING_URI is set: a team's `mlflow server` (on PostgreSQL, serving the artifacts)
is checked once for an answer, and a run made on another machine is fetched from it by run id.

An invocation killed before its logging finished leaves its MLflow run RUNNING with part of
what it meant to log. The next invocation of the same reeval run completes that MLflow run
instead of opening another: params, metrics and nested runs already there are kept as they are
(none is logged twice), artifacts are written again over any half-written file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from experiments.paths import mlruns_dir, project_root, runs_dir
from experiments.run_store import is_run_id, stage_run_id
from experiments.secrets import redact, secret_values

logger = logging.getLogger(__name__)

RUN_ID_TAG = "reeval.run_id"
PROMPTS_TAG = "reeval.prompts"  # the Prompt Registry versions a run's generators used, "prompts:/<name>/<version>"
# MLflow accepts alphanumerics, _ - . / : and space in a metric name, at most 250 characters, and no
# name that is not its own normalised path ("a//b", "a/./b", a leading or trailing slash).
_METRIC_UNSAFE = re.compile(r"[^A-Za-z0-9_\-./: ]")
MAX_METRIC_NAME = 250


def metric_part(value: object) -> str:
    """One part of a metric name (a model id, a setting): each character MLflow refuses becomes _."""
    return _METRIC_UNSAFE.sub("_", "none" if value is None else str(value))


def metric_name(*parts: object) -> str:
    """Parts joined by '.', made a name MLflow accepts (see metric_part); a name too long keeps a hash."""
    name = ".".join(metric_part(p) for p in parts)
    name = "/".join(seg if seg not in ("", ".", "..") else "_" for seg in name.split("/"))
    if len(name) > MAX_METRIC_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = f"{name[: MAX_METRIC_NAME - 13]}-{digest}"
    return name


PID_TAG, HOST_TAG = "reeval.pid", "reeval.host"  # who is logging a RUNNING run: is it still alive?
SERVER_TIMEOUT = 10.0  # seconds; MLflow's own client retries an absent server for minutes
# MLflow's client retries a server that stops answering 7 times, its backoffs doubling from 2 s, each attempt
# waiting up to 120 s: a run whose cases were all saved then waited over four minutes to fail. Bounded here (about
# 10 s for a server that is down, 2 minutes for one that hangs), unless the user set them.
SERVER_RETRIES = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "3",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


class TrackingUnavailable(RuntimeError):
    """The server in MLFLOW_TRACKING_URI does not answer (every CLI command exits 2 with the message)."""


_answered: set[str] = set()


def default_tracking_uri() -> str:
    return f"sqlite:///{mlruns_dir() / 'mlflow.db'}"


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or default_tracking_uri()


_stores_made: set[str] = set()


@contextmanager
def store_lock(uri: str):
    """Across processes, for a sqlite store: two `reeval run`s started at once on a fresh machine both
    saw no tables and both created them, and the second crashed ("table runs already exists"); the
    same race loses an experiment's creation. A server serialises this itself."""
    if not uri.startswith("sqlite:///"):
        yield
        return
    from filelock import FileLock

    with FileLock(str(Path(uri.removeprefix("sqlite:///")).with_suffix(".lock"))):
        yield


def setup_mlflow():
    import mlflow

    uri = tracking_uri()
    if uri.startswith("sqlite:///"):
        mlruns_dir().mkdir(parents=True, exist_ok=True)
    if uri.startswith(("http://", "https://")):
        for name, value in SERVER_RETRIES.items():
            os.environ.setdefault(name, value)
    check_server(uri)
    mlflow.set_tracking_uri(uri)
    # MLflow's sqlite store logs its schema migrations at INFO on first use.
    for noisy in ("alembic", "mlflow.store.db.utils"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if uri not in _stores_made:
        with store_lock(uri):
            mlflow.MlflowClient(uri).search_experiments(max_results=1)  # creates and migrates the schema
        _stores_made.add(uri)
    return mlflow


def check_server(uri: str) -> None:
    """One quick request before MLflow's client would retry an unreachable server for minutes.
    Any HTTP answer will do (a proxy or an auth layer may answer for /health)."""
    if not uri.startswith(("http://", "https://")) or uri in _answered:
        return
    import requests

    try:
        requests.get(uri.rstrip("/") + "/health", timeout=SERVER_TIMEOUT)
    except requests.exceptions.SSLError:
        pass  # it answered; MLflow's client has TLS settings of its own (MLFLOW_TRACKING_INSECURE_TLS, …)
    except requests.RequestException as exc:
        reason = f"no answer in {SERVER_TIMEOUT:.0f} s" if isinstance(exc, requests.Timeout) else "cannot connect"
        raise TrackingUnavailable(
            f"MLflow tracking server {uri} (MLFLOW_TRACKING_URI): {reason}. Start it "
            "(docs/guides/tracking.md) or unset MLFLOW_TRACKING_URI to track into "
            "mlruns/mlflow.db."
        ) from None
    _answered.add(uri)


def ensure_experiment(name: str) -> str:
    mlflow = setup_mlflow()
    experiment = mlflow.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    # A sqlite store keeps artifacts beside its database (MLflow's default is ./mlruns of whatever
    # directory the command ran in); a tracking server decides for itself.
    location = None
    uri = tracking_uri()
    if uri.startswith("sqlite:///"):
        location = (Path(uri.removeprefix("sqlite:///")).parent / "artifacts").as_uri()
    with store_lock(uri):
        experiment = mlflow.get_experiment_by_name(name)  # another process may have made it meanwhile
        return experiment.experiment_id if experiment else mlflow.create_experiment(name, artifact_location=location)


def git_state() -> dict[str, str]:
    root = project_root()

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"git.commit": commit or "unknown", "git.dirty": str(dirty).lower()}


def flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, item in enumerate(value):
                out.update(flatten(item, f"{name}.{i}."))
        else:
            out[name] = value
    return out


@contextmanager
def parent_run(experiment_name: str, run_name: str, tags: dict[str, str]):
    mlflow = setup_mlflow()
    experiment_id = ensure_experiment(experiment_name)
    tags = {**tags, PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}
    interrupted = _interrupted_run(experiment_id, tags[RUN_ID_TAG], run_name)
    if interrupted is not None:
        logger.info("MLflow run %s of %s was interrupted while logging; completing it", interrupted, run_name)
        with mlflow.start_run(run_id=interrupted, tags=tags) as run:
            yield run
        return
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name, tags=tags) as run:
        yield run


def _interrupted_run(experiment_id: str, run_id: str, run_name: str) -> str | None:
    """The newest parent run of this name for this reeval run (a rejudge has its own name), if it is
    RUNNING and its process on this host is gone."""
    import mlflow

    runs = mlflow.search_runs(
        experiment_ids=[experiment_id],
        filter_string=f"tags.`{RUN_ID_TAG}` = '{run_id}'",
        order_by=["attributes.start_time DESC"],
        output_format="list",
    )
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags and r.info.run_name == run_name]
    if not parents or parents[0].info.status != "RUNNING":
        return None
    tags = parents[0].data.tags
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return None  # logged elsewhere (or before pids were recorded): it may still be alive
    return None if _alive(int(tags[PID_TAG])) else parents[0].info.run_id


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


@contextmanager
def nested_run(run_name: str, tags: dict[str, str] | None = None):
    """A child of the active run; an interrupted invocation's child of that name is completed, not doubled."""
    import mlflow

    parent = mlflow.active_run().info
    children = mlflow.search_runs(
        search_all_experiments=True, output_format="list", filter_string=f"tags.mlflow.parentRunId = '{parent.run_id}'"
    )
    existing = [c for c in children if c.info.run_name == run_name]
    if existing:
        with mlflow.start_run(run_id=existing[0].info.run_id, nested=True, tags=tags or {}) as run:
            yield run
        return
    # In the parent's experiment: left to itself MLflow files a child under the default experiment.
    with mlflow.start_run(experiment_id=parent.experiment_id, run_name=run_name, nested=True, tags=tags or {}) as run:
        yield run


def _logged(kind: str) -> set[str]:
    """Keys of the params or metrics the active run already holds (none, unless it was interrupted)."""
    import mlflow

    data = mlflow.get_run(mlflow.active_run().info.run_id).data
    return set(data.params if kind == "params" else data.metrics)


def log_params(params: dict[str, Any]) -> None:
    """Params of the active run, secrets taken out; a param it already holds keeps its value
    (MLflow refuses to change one, and an interrupted invocation's first value is the record)."""
    import mlflow

    secrets, logged = secret_values(), _logged("params")
    # Param keys follow the metric name rules (model ids appear in them).
    clean = {
        metric_name(k): redact(("" if v is None else str(v))[:6000], secrets)
        for k, v in params.items()
        if metric_name(k) not in logged
    }
    items = list(clean.items())
    for start in range(0, len(items), 100):  # MLflow caps a batch at 100 params
        mlflow.log_params(dict(items[start : start + 100]))


def log_metrics(metrics: dict[str, float]) -> None:
    """Metrics of the active run; one it already holds (from an interrupted invocation) is not logged again."""
    import mlflow

    logged = _logged("metrics")
    fresh = {k: v for k, v in metrics.items() if k not in logged}
    if fresh:
        mlflow.log_metrics(fresh)


def log_dataset(examples: list, name: str, source: str, sha256: str, context: str) -> None:
    """Dataset input with our content hash as digest: datasets' own fingerprint tracks path and mtime."""
    import mlflow
    import pandas as pd

    frame = pd.DataFrame([{k: _jsonable(v) for k, v in dict(e).items()} for e in examples])
    with warnings.catch_warnings():
        # MLflow registers two generated "local artifact" source classes and warns it picked one.
        warnings.simplefilter("ignore", UserWarning)
        dataset = mlflow.data.from_pandas(frame, source=source, name=name, digest=sha256[:16])
    mlflow.log_input(dataset, context=context)
    mlflow.set_tag(f"data.{name}.sha256", sha256)


def _jsonable(value):
    return value if isinstance(value, (str, int, float, bool)) or value is None else json.dumps(value)


def log_programs(programs: dict, adapters: dict[str, Any]) -> None:
    """Saved state of every program plus the rendered prompt of each predictor, as a reader sees it."""
    import mlflow

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, program in programs.items():
            name = name.replace("/", "__")  # provider model names contain slashes
            program.save(str(folder / f"{name}.json"))
            adapter = next(iter(adapters.values()), None)
            for predictor_name, predictor in program.named_predictors():
                (folder / f"{name}.{predictor_name}.prompt.txt").write_text(render_prompt(predictor, adapter))
        mlflow.log_artifacts(str(folder), artifact_path="programs")
    register_prompts(programs, adapters)


# The modules whose programs generate cases; their VERSION is the one a case records (program_version).
GENERATOR_MODULES = ("programs.answer_swap", "programs.context_enrich", "programs.faitheval")


def generator_version(program) -> str | None:
    """The VERSION of the module that defines a generator program; None for any other program (seed
    selection, the judge, a target's reader)."""
    import importlib

    module = type(program).__module__
    if module not in GENERATOR_MODULES:
        return None
    version = getattr(importlib.import_module(module), "VERSION", None)
    return version if isinstance(version, str) else None


def prompt_name(program_key: str, predictor_name: str) -> str:
    """A Prompt Registry name (letters, digits, '_', '-', '.') for one predictor of one program."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"reeval.{program_key}.{predictor_name}")


def _prompt_version(client, name: str, version: str, template: str):
    """The registered version of `name` for this generator version and text, registered if there is none:
    a generator version's prompt is one registry version, however many runs use it."""
    import mlflow

    try:
        existing = client.search_prompt_versions(name)
    except Exception:  # noqa: BLE001 - MLflow raises several kinds for a prompt never registered
        existing = []
    for found in getattr(existing, "prompt_versions", existing) or []:
        if found.tags.get("program_version") == version and found.template == template:
            return found
    return mlflow.genai.register_prompt(
        name=name, template=template, commit_message=version, tags={"program_version": version}
    )


def register_prompts(programs: dict, adapters: dict[str, Any]) -> list[str]:
    """Every generator predictor's rendered prompt in the Prompt Registry, linked to the active run; the
    run's PROMPTS_TAG lists them. Programs without a generator version (seed selection, the judge) are not
    generators and stay run artifacts only."""
    import mlflow

    run = mlflow.active_run()
    if run is None:
        return []
    client = mlflow.MlflowClient()
    adapter = next(iter(adapters.values()), None)
    secrets = secret_values()
    uris = []
    for key, program in programs.items():
        version = generator_version(program)
        if version is None:
            continue
        for predictor_name, predictor in program.named_predictors():
            template = redact(render_prompt(predictor, adapter), secrets)
            found = _prompt_version(client, prompt_name(key, predictor_name), version, template)
            client.link_prompt_version_to_run(run.info.run_id, found)
            uris.append(f"prompts:/{found.name}/{found.version}")
    if uris:
        mlflow.set_tag(PROMPTS_TAG, " ".join(uris))
    return uris


def render_prompt(predictor, adapter) -> str:
    import dspy

    adapter = adapter or dspy.JSONAdapter()
    signature = predictor.signature
    placeholders = {name: f"{{{name}}}" for name in signature.input_fields}
    messages = adapter.format(signature, predictor.demos, placeholders)
    return "\n\n".join(f"### {m['role']}\n{m['content']}" for m in messages)


def find_runs(run_id: str):
    """Parent MLflow runs for a reeval run id (or the MLflow run with that id), newest first."""

    if not is_run_id(run_id):  # no run has it, and quoted into a filter string it would not parse
        return []
    mlflow = setup_mlflow()
    if "/" in run_id:  # a bench stage, "<bench id>/<stage>": the stage's nested runs, those that did work first
        bench = run_id.split("/", 1)[0]
        runs = mlflow.search_runs(
            search_all_experiments=True,
            filter_string=f"tags.`{RUN_ID_TAG}` = '{bench}'",
            order_by=["attributes.start_time DESC"],
            output_format="list",
        )
        stage = [
            r
            for r in runs
            if "reeval.stage" in r.data.tags and stage_run_id(bench, r.data.tags["reeval.stage"]) == run_id
        ]
        return sorted(stage, key=lambda r: r.data.tags.get("reeval.stage.reused") == "true")
    runs = mlflow.search_runs(
        search_all_experiments=True,
        filter_string=f"tags.`{RUN_ID_TAG}` = '{run_id}'",
        order_by=["attributes.start_time DESC"],
        output_format="list",
    )
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    if parents:
        return parents
    try:
        return [mlflow.get_run(run_id)]
    except Exception:  # noqa: BLE001 - MLflow raises several types for an unknown id
        return []


def fetch_checkpoint(run_id: str, folder: Path) -> bool:
    """The run's checkpoint (cases.jsonl, config.json) as its newest finished MLflow run logged it, into
    `folder`: a run made on another machine that tracks into the same server. False when none was logged."""
    import mlflow

    runs = [r for r in find_runs(run_id) if r.info.status == "FINISHED"]
    with tempfile.TemporaryDirectory() as tmp:
        found = {}
        for name in ("cases.jsonl", "config.json"):  # a rejudge run logs newer cases but no config
            for run in runs:
                try:
                    found[name] = mlflow.artifacts.download_artifacts(
                        run_id=run.info.run_id, artifact_path=f"cases/{name}", dst_path=f"{tmp}/{name}"
                    )
                    break
                except Exception:  # noqa: BLE001 - MLflow raises several types for a missing artifact
                    continue
        if "cases.jsonl" not in found:
            return False
        folder.mkdir(parents=True, exist_ok=True)
        for name, path in found.items():
            shutil.copyfile(path, folder / name)
    logger.info("fetched the checkpoint of %s from %s into %s", run_id, tracking_uri(), folder)
    return True


def checkpoint_here(run_id: str) -> bool:
    """This machine's run store has the run's cases, or now has them: fetched from the tracking server."""
    folder = runs_dir() / run_id
    return (folder / "cases.jsonl").exists() or fetch_checkpoint(run_id, folder)
