"""Validity of a run's cases: the reviewed sample plus the judge on every case.

`run_validity(run_id)` reads the run store (cases, review sample, verdict files, and the records
of any evaluate run that scored this run's cases) and computes `metrics.validity` figures;
`log_validity` writes them to the run's latest MLflow parent run; `render` turns them into
table rows for the terminal and the HTML report.
"""

from experiments.validity.inputs import RunInputs, load_inputs
from experiments.validity.render import report_section, rich_table, statement, validity_rows
from experiments.validity.run import RunValidity, run_validity
from experiments.validity.tracking import log_validity

__all__ = [
    "RunInputs",
    "RunValidity",
    "load_inputs",
    "log_validity",
    "report_section",
    "rich_table",
    "run_validity",
    "statement",
    "validity_rows",
]
