"""What a run was started on, kept beside its checkpoint (`runs/<run-id>/inputs.json`): the data file's content
hash and the resolved config's digest. A run resumed on an edited data file would hold records of the old rows
beside records of the new ones, with nothing to tell them apart; so a resume compares the data and refuses a
change. (A changed config is refused before this, by its keys: experiments.resolved_run.)
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from experiments.run_store import RunStore, RunStoreError

logger = logging.getLogger(__name__)

INPUTS_FILE = "inputs.json"


def _path(store: RunStore) -> Path:
    return store.dir / INPUTS_FILE


def stored_inputs(store: RunStore) -> dict | None:
    path = _path(store)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunStoreError(
            f"{path}: damaged ({exc}); delete it to resume on the data as it is now, or start a new run with "
            "`reeval run <its config> --fresh`"
        ) from None


def check_data(store: RunStore, path: Path, sha256: str) -> None:
    """Refuse to add to a run whose data file changed since it started."""
    stored = stored_inputs(store)
    if stored is None or stored.get("data", {}).get("sha256") in (None, sha256):
        return
    then = stored["data"]
    moved = f" (at {then.get('path')})" if then.get("path") != str(path) else ""
    finished = len(store.finished_ids())
    raise RunStoreError(
        f"{_path(store)}: the data changed since run {store.run_id!r} started: {path} has sha256 {sha256[:12]}… "
        f"now, {then['sha256'][:12]}…{moved} then, and {finished} finished cases were made from the rows as they "
        "were; start a new run on the new data with `reeval run <its config> --fresh`, or put the file back as "
        "it was to resume"
    )


def record(store: RunStore, source: str, path: Path, sha256: str, config_digest: str) -> None:
    """Write what the run starts on; a run begun before these were kept records them on its next invocation."""
    target = _path(store)
    if target.exists():
        return
    if store.cases_path.exists():
        logger.info("run %s: recording its data's sha256 %s…: it had none from before", store.run_id, sha256[:12])
    inputs = {"data": {"source": source, "path": str(path), "sha256": sha256}, "config_sha256": config_digest}
    target.write_text(json.dumps(inputs, indent=2, sort_keys=True), encoding="utf-8")
