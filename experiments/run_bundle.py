"""A run's checkpoint as one file, to carry an unfinished run to another machine and resume it there.

Everything a run resumes from lives in `runs/<run-id>/` (its config, a bench's stage ledger and each
stage's case store); the call cache and MLflow do not travel (a resumed run logs a new MLflow
invocation, and calls not yet checkpointed are asked again). `pack` writes that folder as a gzipped tar,
leaving out superseded stages; `unpack` restores it under `runs/`, refusing to overwrite a run that is
already there unless it is the same run further behind (fewer records), so a newer checkpoint is never
replaced by an older one.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from experiments import run_lock
from experiments.failures import UserError
from experiments.run_lock import LOCK_FILE
from experiments.run_store import RunStore, is_run_id


class BundleError(UserError):
    """The bundle cannot be packed or restored as asked; the message says why."""


def _records(paths) -> int:
    return sum(sum(1 for line in p.open(encoding="utf-8") if line.strip()) for p in paths if p.name == "cases.jsonl")


def pack(run_id: str, out: Path, root: Path | None = None) -> tuple[int, int]:
    """Write runs/<run-id>/ to `out`; (files, records) packed."""
    store = RunStore(run_id, root=root)
    if not (store.dir / "config.json").exists():
        raise BundleError(f"no run {run_id!r} in {store.dir.parent} (no config.json): nothing to pack")
    files = [
        p
        for p in sorted(store.dir.rglob("*"))
        if p.is_file()
        and p.name != LOCK_FILE  # whoever last wrote the run, on this machine: nothing for another
        and not any(".superseded-" in part for part in p.relative_to(store.dir).parts)
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        for path in files:
            info = tar.gettarinfo(str(path), arcname=f"{run_id}/{path.relative_to(store.dir)}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with path.open("rb") as f:
                tar.addfile(info, f)
    return len(files), _records(files)


def unpack(bundle: Path, root: Path) -> tuple[str, int]:
    """Restore a packed run under `root`; (run id, records restored)."""
    with tarfile.open(bundle, "r:gz") as tar:
        members = tar.getmembers()
        tops = {m.name.split("/", 1)[0] for m in members}
        if len(tops) != 1 or not is_run_id(next(iter(tops))):
            raise BundleError(f"{bundle}: not a packed run (one top folder named by a run id expected)")
        run_id = tops.pop()
        bad = [m.name for m in members if not (m.isfile() or m.isdir()) or ".." in Path(m.name).parts]
        if bad:
            raise BundleError(f"{bundle}: refusing entries that are not plain files under the run: {bad[:3]}")
        incoming = 0
        for m in members:
            if m.isfile() and m.name.endswith("cases.jsonl"):
                incoming += sum(1 for line in io.TextIOWrapper(tar.extractfile(m), encoding="utf-8") if line.strip())
        target = root / run_id
        existed = target.exists()  # before the lock makes the folder
        # Checked and replaced under the run's lock: a run still writing there would have its checkpoint replaced.
        with run_lock.hold(target):
            _restore(tar, root, run_id, incoming, existed)
    return run_id, incoming


def _restore(tar: tarfile.TarFile, root: Path, run_id: str, incoming: int, existed: bool) -> None:
    target = root / run_id
    if existed:
        here = _records(p for p in target.rglob("cases.jsonl") if ".superseded-" not in str(p))
        if here >= incoming:
            raise BundleError(
                f"runs/{run_id} already holds {here} records, the bundle {incoming}: it is not behind; "
                "move it away to restore the bundle"
            )
        config = target / "config.json"
        if config.exists():
            packed = json.load(tar.extractfile(f"{run_id}/config.json"))
            if json.loads(config.read_text(encoding="utf-8")) != packed:
                raise BundleError(f"runs/{run_id} holds another config than the bundle: move it away first")
    tar.extractall(root, filter="data")
