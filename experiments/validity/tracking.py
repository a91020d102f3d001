"""Validity figures into MLflow: metrics on the run's latest parent run, which may have finished, with
validity.json and the validity page."""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from experiments.report import jsonable
from experiments.report_page import log_report, write
from experiments.tracking import find_runs, setup_mlflow
from experiments.validity.render import ValidityPage, report_section
from experiments.validity.run import RunValidity

logger = logging.getLogger(__name__)


def log_validity(rv: RunValidity, mlflow_run_id: str | None = None) -> str | None:
    """Log ``rv.metrics()`` (and the figures as validity.json) to ``mlflow_run_id``, or to the latest
    parent run of ``rv.run_id``; return the MLflow run id, None when the run has no MLflow run."""
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    if mlflow_run_id is None:
        runs = find_runs(rv.run_id)
        if not runs:
            logger.warning("run %s has no MLflow run: validity not logged", rv.run_id)
            return None
        mlflow_run_id = runs[0].info.run_id
    setup_mlflow()
    client = MlflowClient()
    now = int(time.time() * 1000)
    metrics = [Metric(key, value, now, 0) for key, value in sorted(rv.metrics().items())]
    for start in range(0, len(metrics), 1000):  # MLflow caps a batch at 1000 metrics
        client.log_batch(mlflow_run_id, metrics=metrics[start : start + 1000])
    client.set_tag(mlflow_run_id, "validity.judge_alone", str(rv.judge_alone).lower())

    client.log_dict(
        mlflow_run_id, jsonable({**report_section(rv), "figures": rv.figures.to_dict()}), "validity/validity.json"
    )
    with tempfile.TemporaryDirectory() as folder:
        write(ValidityPage(rv), Path(folder))
        log_report(Path(folder), "validity", run_id=mlflow_run_id)
    logger.info("logged %d validity metric(s) to MLflow run %s", len(metrics), mlflow_run_id)
    return mlflow_run_id
