"""Knowledge scans that ship: a target's raw closed- and open-book answers, kept under `data/knowledge_scans/`.

A full scan of the held-out NQ split costs hours per target on a 2-core CPU, longer than a machine may
live, so the answers a scan got are archived in the repository and a later scan with the same prompts,
model, decoding and llama.cpp build starts from them (`prefill`), asking only the rows the archive lacks.
Only the raw answers are kept: whether an answer counts as known is recomputed with today's metrics, so a
change to `metrics.conflict.knows` or `metrics.qa.is_correct` applies to archived rows too. An archive
whose key differs from the run's is ignored with a warning (other weights or another build can answer
differently; greedy tokens of the portable build are the same on every x86-64 machine).

Archive a run's scans with `python3 scripts/archive_knowledge_scan.py <run-id>`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import platform
import re
from collections.abc import Iterable
from pathlib import Path

import dspy

from experiments.paths import project_root
from experiments.readers import DECODINGS
from experiments.tracking import git_state
from metrics.conflict import knows
from metrics.qa import is_correct
from programs.target_reader import TargetReader

logger = logging.getLogger(__name__)

KEY_FIELDS = (
    "prompts",
    "model_string",
    "temperature",
    "max_tokens",
    "seed",
    "adapter",
    "llama_cpp_features",
    "data_sha256",
    "max_evidence_words",
)
KEY_FILE = "scan_key.json"


def archive_dir() -> Path:
    return project_root() / "data" / "knowledge_scans"


def archive_path(source: str, split: str, target: str, root: Path | None = None) -> Path:
    """One file per source, split and target; a source given as a file is named by its file name (the key's
    data hash tells two files of one name apart)."""
    name = Path(source).name.split(".")[0] if ("/" in source or "." in source) else source
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{name}-{split}-{target}")
    return (root or archive_dir()) / f"{safe}.jsonl.gz"


def prompt_fingerprint(adapter) -> str:
    """The hash of the closed- and open-book prompts as the adapter renders them, and of the greedy decoding:
    any change to what a scan sends changes it, a change elsewhere in the reader does not."""
    reader = TargetReader()
    rendered = [
        adapter.format(reader.closed_book.signature, [], {"question": "{question}"}),
        adapter.format(reader.open_book.signature, [], {"question": "{question}", "context": "{context}"}),
        DECODINGS["greedy"],
        dspy.__version__,
    ]
    return hashlib.sha256(json.dumps(rendered, sort_keys=True, default=str).encode()).hexdigest()[:16]


def scan_key(prompts: str, identity: dict, data_sha256: str, max_evidence_words: int | None) -> dict:
    """What must match for archived answers to stand for asking again: the prompts sent, the model file,
    its decoding and llama.cpp build, the data file and how much of each passage the open-book ask reads."""
    key = {"prompts": prompts, "data_sha256": data_sha256, "max_evidence_words": max_evidence_words}
    key.update({f: identity.get(f) for f in KEY_FIELDS if f not in key})
    return key


def asked_by() -> dict:
    """Where a scan's answers come from: the code's commit and the machine that asked."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo().splitlines() if line.startswith("model name")),
        platform.processor() or platform.machine(),
    )
    return {"commit": git_state()["git.commit"], "machine": f"{cpu}, {os.cpu_count()} cores"}


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def write_key(store, described: dict) -> None:
    """Beside a scan stage's checkpoint, what its answers were asked with, for archiving them later."""
    store.dir.mkdir(parents=True, exist_ok=True)
    (store.dir / KEY_FILE).write_text(json.dumps(described, indent=1, sort_keys=True) + "\n")


def read_key(stage_dir: Path) -> dict:
    return json.loads((stage_dir / KEY_FILE).read_text())


def read_archive(path: Path) -> tuple[dict, dict[str, dict]]:
    """The archive's header and its rows by id; a missing file is an empty archive."""
    if not path.exists():
        return {}, {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines or lines[0].get("kind") != "knowledge_scan":
        raise ValueError(f"{path}: line 1 is not a knowledge_scan header")
    return lines[0], {str(row["id"]): row for row in lines[1:]}


def write_archive(path: Path, header: dict, rows: Iterable[dict], source: dict | None = None) -> int:
    """Merge `rows` into the archive at `path` (a row already there is kept unless the new one has more);
    `source` (run, commit, machine) joins the header's list of the runs that added rows."""
    old_header, old = read_archive(path)
    if old and old_header.get("key") != header["key"]:
        raise ValueError(f"{path} holds a scan with another key; move it away to archive this one")
    merged = dict(old)
    added = 0
    for row in rows:
        kept = merged.get(str(row["id"]))
        if kept is None or (row.get("open_answer") is not None and kept.get("open_answer") is None):
            merged[str(row["id"])] = row
            added += 1
    runs = list(old_header.get("runs", []))
    if source is not None and added:
        runs.append({**source, "rows_added": added})
    header = {**header, "runs": runs}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    # mtime=0: the same rows give the same bytes, so git sees no change when nothing changed
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write((json.dumps({**header, "rows": len(merged)}) + "\n").encode())
        for row_id in sorted(merged):
            f.write((json.dumps(merged[row_id], ensure_ascii=False) + "\n").encode())
    tmp.replace(path)
    return len(merged)


def archived_rows(records: Iterable[dict]) -> list[dict]:
    """The raw answers of a scan's finished records (errors are not archived: they are asked again)."""
    out = []
    for r in records:
        if r.get("status") != "ok":
            continue
        row = {"id": str(r["seed_id"]), "closed_answer": r["closed_answer"]}
        if "open_answer" in r:
            row["open_answer"] = r["open_answer"]
        out.append(row)
    return out


def prefill_records(rows: dict[str, dict], examples: list, table_ids: set[str]) -> list[dict]:
    """Scan records for the examples the archive answers as fully as a probe would have asked them: the
    closed-book answer, and the open-book one where the probe asks it (known, or a table row)."""
    out = []
    for e in examples:
        row = rows.get(str(e.id))
        if row is None:
            continue
        closed_correct = knows(row["closed_answer"], e.answers, e.question)
        in_table = e.id in table_ids
        record = {
            "id": e.id,
            "seed_id": e.id,
            "question": e.question,
            "answers": list(e.answers),
            "in_table": in_table,
            "closed_answer": row["closed_answer"],
            "closed_correct": closed_correct,
        }
        if closed_correct or in_table:
            if row.get("open_answer") is None:
                continue  # the probe would ask open-book; the archive did not
            record.update(open_answer=row["open_answer"], open_correct=is_correct(row["open_answer"], e.answers))
        out.append({**record, "status": "ok", "seconds": 0.0, "archived": True})
    return out


def prefill(store, path: Path, key: dict, examples: list, table_ids: set[str], target: str) -> int:
    """Append to a scan stage's store the archived records of rows it has not done; how many."""
    header, rows = read_archive(path)
    if not rows:
        return 0
    if header.get("key") != key:
        differs = sorted(k for k in key if header.get("key", {}).get(k) != key[k])
        logger.warning("%s not used: it was made with another %s", path, ", ".join(differs))
        return 0
    done = store.finished_ids()
    records = [{**r, "target": target} for r in prefill_records(rows, examples, table_ids) if r["id"] not in done]
    if records:
        store.append(records)
        logger.info("knowledge scan %s: %d rows from %s", target, len(records), path)
    return len(records)


def start_from_archive(store, *, data, target, data_sha256: str, examples: list, table_ids) -> int:
    """A scan stage's first step: record the key its answers are asked under (what archiving the stage later
    files them by) and take every row the shipped archive of that key answers; how many. `data`: the
    scanned rows' DataConfig (source, split, max_evidence_words)."""
    name = target.config.name
    source, split = data.source, data.split
    key = scan_key(prompt_fingerprint(target.adapter()), target.identity(), data_sha256, data.max_evidence_words)
    write_key(store, {"source": source, "split": split, "target": name, "key": key, "asked_by": asked_by()})
    return prefill(store, archive_path(source, split, name), key, examples, set(table_ids), target.config.label)
