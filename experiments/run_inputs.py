"""What a run was started on, kept beside its checkpoint: its resolved config (`runs/<run-id>/config.json`) and, in
`runs/<run-id>/inputs.json`, the data file's content hash, the resolved config's digest and the keys it was made
from. A run resumed on an edited data file, or on an edited `runs/<run-id>/config.json`, would hold records of
the old rows or settings beside records of the new ones, with nothing to tell them apart; so a resume compares
both and refuses a change.

(A config given on the command line that differs from the run's is refused before this, by its keys:
experiments.resolved_run. That check reads the run's config.json, so an edit of that file itself is caught
only here, against what the run started with.)
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


def check_data(store: RunStore, path: Path, sha256: str, key: str = "data") -> None:
    """Refuse to add to a run whose data file changed since it started (`key`: which of its data files, as
    `record` named it: a bench also reads `options.counterfactual_data`)."""
    stored = stored_inputs(store)
    if stored is None or stored.get(key, {}).get("sha256") in (None, sha256):
        return
    then = stored[key]
    moved = f" (at {then.get('path')})" if then.get("path") != str(path) else ""
    finished = len(store.finished_ids())
    raise RunStoreError(
        f"{_path(store)}: the data changed since run {store.run_id!r} started: {path} has sha256 {sha256[:12]}… "
        f"now, {then['sha256'][:12]}…{moved} then, and {finished} finished cases were made from the rows as they "
        "were; start a new run on the new data with `reeval run <its config> --fresh`, or put the file back as "
        "it was to resume"
    )


def _keys(data: dict, prefix: str = "") -> dict:
    """A config's settings by dotted key ("data.limit"), as the changed ones are named."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _changed(then: dict, now: dict) -> str:
    def value(config: dict, key: str) -> str:
        return json.dumps(config[key]) if key in config else "unset"

    then, now = _keys(then), _keys(now)
    differ = sorted(k for k in then.keys() | now.keys() if then.get(k) != now.get(k))
    shown = ", ".join(f"{k}: {value(then, k)} then, {value(now, k)} now" for k in differ[:3])
    return shown + (f" and {len(differ) - 3} more" if len(differ) > 3 else "")


def check_config(store: RunStore, identity: dict, digest: str) -> None:
    """Refuse to add to a run whose config changed since it started (`identity`: the config's settings as its
    digest hashes them, experiments.config.ExperimentConfig.identity)."""
    stored = stored_inputs(store)
    if stored is None or stored.get("config_sha256") in (None, digest):
        return
    if "config" in stored:
        what = _changed(stored["config"], identity)
    else:  # kept before the keys were: only the digests can be compared
        what = f"its digest was {stored['config_sha256'][:12]}…, it is {digest[:12]}… now"
    finished = len(store.finished_ids())
    raise RunStoreError(
        f"{_path(store)}: the config changed since run {store.run_id!r} started ({what}), and {finished} "
        f"finished cases were made with it as it was; start a new run with `reeval run <its config> --fresh`, "
        f"or put {store.dir / 'config.json'} back as it was to resume"
    )


def record(store: RunStore, config: dict, identity: dict, digest: str, data: dict[str, tuple[str, Path, str]]) -> None:
    """Write what the run starts on: its resolved `config` (config.json, as first written) and its inputs; a run
    begun before the inputs were kept records them on its next invocation. `data`: the data files it reads, by
    config key ("data", and a bench's "options.counterfactual_data"), each as (source, path, sha256)."""
    store.write_config(config)
    target = _path(store)
    if target.exists():
        return
    if store.cases_path.exists():
        logger.info("run %s: recording its data's sha256: it had none from before", store.run_id)
    inputs = {
        "config_sha256": digest,
        "config": identity,
        **{key: {"source": src, "path": str(p), "sha256": sha} for key, (src, p, sha) in data.items()},
    }
    target.write_text(json.dumps(inputs, indent=2, sort_keys=True), encoding="utf-8")
