"""The tasks the runner's case loop runs: a task glues programs, roles, data and metrics for one kind of
experiment. Every module of this package is imported here, which registers its tasks
(`experiments.task_registry`): a new task module needs no line anywhere else."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
