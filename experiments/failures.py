"""How a `reeval` command ends when something fails: one handler for every command.

A user mistake (a bad data row, an unknown run id, a missing or corrupt model file, an invalid or
unreadable config, a run directory made by another config) prints its message and exits 2, with no
traceback: the message names the file, line and field (or the id) and says what to do, so a
traceback would only bury it. A path that cannot be written (a full disk, a read-only store, no
permission) is reported the same way (experiments/storage_faults.py). Anything else is a bug or a
fault of the machine: one line with the exception and the path of a log file holding the full
traceback, exit 1.

The handler sits in the command group's ``invoke`` (see :class:`ReportingGroup`), so it covers every
command and subcommand, under the console script and under typer's ``CliRunner`` alike.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import traceback
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from typer.core import TyperGroup
from typer.exceptions import Abort, Exit, TyperException

from experiments.paths import cache_dir
from experiments.storage_faults import storage_fault

logger = logging.getLogger(__name__)

USER_MISTAKE = 2
INTERNAL_ERROR = 1


class UserError(Exception):
    """A mistake in how a command was called that has no better-named class (e.g. two options that exclude
    each other). The message is what the user reads: say what is wrong and what to do."""


#: Every exception that is the user's to fix, as "module:Class". Listed in one place rather than marked
#: on each class, because programs/ (which must not import experiments/) raises some of them too.
USER_ERRORS: tuple[str, ...] = (
    "experiments.failures:UserError",
    "experiments.config:ConfigError",
    "experiments.data.errors:DataError",
    "experiments.data.errors:UnknownDatasetError",
    "experiments.case_sets:CaseSetNotRun",
    "experiments.run_store:RunNotFound",
    "experiments.run_store:RunStoreError",
    "experiments.run_lock:RunBusy",
    "experiments.tracking:TrackingUnavailable",
    "experiments.executors:ExecutorError",
    "experiments.lm.roster:UnknownModelError",
    "experiments.lm.roster:ModelNotInstalledError",
    "experiments.lm.roster:ModelIntegrityError",
    "experiments.compiled:CompiledProgramNotFound",
    "experiments.errors:ErrorBudgetExceeded",
    "experiments.errors:SpendCapReached",
    "experiments.judging.params:JudgeParamsError",
    "experiments.judging.rejudge:RejudgeError",
    "experiments.reproduce:InputChanged",
    "experiments.review.sample:SampleError",
    "experiments.review.verdicts:ReviewFormatError",
    "experiments.review.verdict_log:AnnotatorNameError",
    "programs.embedders:UnknownEmbedderError",
    "programs.embedders:EmbedderNotInstalledError",
    "programs.embedders:EmbedderIntegrityError",
)

_err = Console(stderr=True)


def user_error_types() -> tuple[type[BaseException], ...]:
    """The classes of :data:`USER_ERRORS` whose modules are loaded. A module that was never imported
    cannot have raised its exception, so nothing is imported here (some modules pull in torch)."""
    found = []
    for entry in USER_ERRORS:
        module_name, _, class_name = entry.partition(":")
        module = sys.modules.get(module_name)
        if module is not None:
            found.append(getattr(module, class_name))
    return tuple(found)


def is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, user_error_types())


def logs_dir() -> Path:
    return cache_dir() / "logs"


def write_crash_log(exc: BaseException) -> Path:
    """The full traceback, with the command line and versions, in a new file under :func:`logs_dir`."""
    folder = logs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    path = folder / f"reeval-{stamp}-{os.getpid()}.log"
    header = (
        f"command: {' '.join(sys.argv)}\ncwd: {os.getcwd()}\ntime: {stamp} UTC\n"
        f"python: {platform.python_version()} ({sys.executable})\n\n"
    )
    path.write_text(header + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), encoding="utf-8")
    return path


def _say(message: str) -> None:
    # markup=False: messages quote user data ("choices[0].label", "[local/…]") that rich would eat as markup.
    _err.print(message, style="red", markup=False, highlight=False, soft_wrap=True)


def report(exc: Exception) -> int:
    """Print what the user needs to know about ``exc``; return the exit code."""
    if is_user_error(exc):
        _say(str(exc))
        logger.debug("traceback of the error above", exc_info=exc)
        return USER_MISTAKE
    fault = storage_fault(exc)
    if fault is not None:  # a full disk, a read-only store: the machine's to fix, not a bug
        _say(fault)
        logger.debug("traceback of the error above", exc_info=exc)
        return USER_MISTAKE
    summary = " ".join(f"{type(exc).__name__}: {exc}".split())
    summary = summary if len(summary) <= 300 else summary[:299] + "…"
    try:
        where = f"full traceback in {write_crash_log(exc)}"
    except OSError as log_exc:  # the log cannot be written (read-only home…): the traceback goes here instead
        traceback.print_exception(type(exc), exc, exc.__traceback__)
        where = f"traceback above (no log file: {log_exc})"
    _say(f"reeval: internal error: {summary}\n{where}; please report it with that file")
    return INTERNAL_ERROR


class ReportingGroup(TyperGroup):
    """The `reeval` command group: every (sub)command runs inside :func:`report`'s handler."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (Exit, Abort, TyperException, BrokenPipeError):
            raise  # typer's own exits and usage errors keep their meaning; a closed pipe is typer's to handle
        except Exception as exc:  # noqa: BLE001 - this is the one place every failure is reported
            raise Exit(report(exc)) from None
