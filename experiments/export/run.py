"""`reeval export`: a run's chosen cases written in one layout, checked for leaks before it is reported done."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from experiments import run_lock
from experiments.export.card import render_card, task_text
from experiments.export.croissant import CroissantInputs, validate_croissant, write_croissant
from experiments.export.faitheval_layout import folder_name, write_faitheval
from experiments.export.hf_layout import parquet_paths, write_parquet
from experiments.export.licence import NOTICE_FILE, hub_licence, notice, source_licences
from experiments.export.privacy import Scrubber, leaks, machine_paths
from experiments.export.provenance import provenance
from experiments.export.reeval_layout import reeval_row, write_reeval
from experiments.export.rows import public_row
from experiments.export.selection import CaseSet, select_case_sets
from experiments.failures import UserError
from experiments.paths import runs_dir

logger = logging.getLogger(__name__)

LAYOUTS = ("hf", "faitheval", "reeval")


@dataclass
class ExportResult:
    out: Path
    layout: str
    rows: dict[str, int]  # case set name -> rows written
    files: list[Path] = field(default_factory=list)
    croissant_warnings: list[str] = field(default_factory=list)


def _check_out(out: Path) -> None:
    for place in (out, *out.parents):
        if place.exists() and not place.is_dir():
            what = "is a file" if place == out else f"lies under {place}, a file"
            raise UserError(f"--out {out}: {what}; give a new or empty folder")
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out}: the folder is not empty; give a new or empty folder")


def run_location(run: str | Path, root: Path) -> tuple[str, Path]:
    """(run id, runs root) of a run id, or of the path of a run's folder archived outside the run store
    (docs/readings/<run-id>/, say): a folder holding the run's config.json."""
    path = Path(run).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        path = path.resolve()
        return path.name, path.parent
    if not (root / str(run) / "config.json").is_file():
        # The run store's own message would send a folder given by path to look under runs/ for it.
        if path.is_dir():
            raise UserError(f"{run}: a folder without config.json, so no run's folder; nor is it a run id in {root}")
        # A bench stage's id has a slash too: it names a folder under the run store.
        in_store = not path.is_absolute() and path.parts[0] != ".." and (root / path.parts[0]).is_dir()
        if len(path.parts) > 1 and not in_store:
            raise UserError(f"{run}: no such run folder, and no run of that id in {root}")
    return str(run), root


def _licences(sets: list[CaseSet]) -> list:
    first = sets[0].config.get("data") or {}
    licences = []
    for s in sets:
        for lic in source_licences(str((s.config.get("data") or {}).get("source", first.get("source", ""))), s.task):
            if lic not in licences:
                licences.append(lic)
    return licences


def _write_notice(folder: Path, sets: list[CaseSet], run_id: str, scrubber: Scrubber) -> Path:
    """Every layout carries its sources' licence and attribution: the sources are ShareAlike."""
    path = folder / NOTICE_FILE
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(scrubber.text(notice(_licences(sets), _pretty(run_id, sets))), encoding="utf-8")
    return path


def _rows(case_set: CaseSet, scrubber: Scrubber) -> list[dict]:
    return [public_row(r, case_set.human, scrubber) for r in case_set.records]


def _pretty(run_id: str, sets: list[CaseSet]) -> str:
    tasks = sorted({s.task for s in sets})
    return f"reeval {' + '.join(t.replace('_', ' ') for t in tasks)} cases ({run_id})"


def _write_hf(out: Path, run_id: str, sets: list[CaseSet], choice: str, root: Path, scrubber: Scrubber):
    paths = parquet_paths([s.name for s in sets])
    files, counts = [], {}
    for s in sets:
        rows = _rows(s, scrubber)
        files.append(write_parquet(out, paths[s.name], rows))
        counts[s.name] = len(rows)
    licences = _licences(sets)
    licence = hub_licence(licences)
    facts = {s.name: provenance(s, root) for s in sets}
    pretty = _pretty(run_id, sets)
    card = render_card(sets, facts, licence, licences, paths, choice, run_id, pretty)
    (out / "README.md").write_text(scrubber.text(card), encoding="utf-8")
    files.append(out / "README.md")
    reviewed = [f for f in facts.values() if f.reviewed_by != "not reviewed"]
    inputs = CroissantInputs(
        name=scrubber.text(pretty),
        description=scrubber.text("; ".join(sorted({task_text(s.task) for s in sets})) + "."),
        licence_urls=[lic.url for lic in licences if lic.url] or ["https://spdx.org/licenses/"],
        version="1.0.0",
        cite_as="ReEval: Yu et al., 2023, arXiv:2310.12516; FaithEval: Ming et al., 2024, arXiv:2410.03727",
        date=datetime.now(timezone.utc).date().isoformat(),
        parquet=paths,
        collection=(
            "Public question-answering rows (the card's source datasets) whose passages a language model "
            "(the pivot) rewrote; string checks and, where named, a judge model kept or rejected each rewrite."
        ),
        preprocessing=[
            "ReEval's seed filters (evidence and answer length, de-duplication) on the source rows",
            "seed selection: rows the pivot answers correctly from the passage",
        ],
        annotation=[f"{s.name}: {facts[s.name].validity}" for s in sets],
        machine_tools=sorted(
            {f"pivot {p}" for f in facts.values() for p in f.pivots}
            | {f"judge {f.judge}" for f in facts.values() if f.judge != "none"}
        ),
        limitations=[
            "Machine-generated: an accepted case can still be invalid (see the valid share and its interval).",
            "English only; short-answer questions from the source data sets.",
        ],
        biases=[
            "Inherits the topics and phrasing of the source QA rows (Wikipedia-based); the pivot model's "
            "choices of replacement answers reflect its own priors."
        ],
        use_cases=["Evaluating whether language models answer from the given passage (faithfulness), not training."],
        sensitive=["None added: the passages are public encyclopaedic text; no personal data was collected."],
        maintenance="Regenerated with reeval; versioned by the generator version named on each case.",
        social_impact="Measures reliance on parametric knowledge over given evidence; misuse as a source of facts "
        "would spread the perturbed, deliberately false statements.",
        annotations_per_item=(
            "; ".join(f"{f.reviewed_by}" for f in reviewed) if reviewed else "not reviewed by a person"
        ),
    )
    path = write_croissant(out, inputs)
    text = path.read_text(encoding="utf-8")
    path.write_text(scrubber.text(text), encoding="utf-8")
    files.append(path)
    return files, counts, validate_croissant(path)


def _write_faitheval(out: Path, run_id: str, sets: list[CaseSet], scrubber: Scrubber):
    files, counts = [], {}
    several = len(sets) > 1
    for s in sets:
        rows = _rows(s, scrubber)
        name = folder_name(s.task, s.name, several)
        files.append(write_faitheval(out / name, s.task, rows))
        # Each folder is a hub repository of its own, as FaithEval's are: each carries the notice.
        files.append(_write_notice(out / name, [s], run_id, scrubber))
        counts[name] = len(rows)
    return files, counts


def _write_reeval(out: Path, run_id: str, sets: list[CaseSet], scrubber: Scrubber):
    files, counts = [], {}
    for s in sets:
        source = Path(str((s.config.get("data") or {}).get("source", ""))).name
        rows = [scrubber.value(reeval_row(public_row(r, s.human, scrubber), r, source)) for r in s.records]
        name = s.task if s.name == "default" else s.name
        files.append(write_reeval(out / f"{name}.json", rows))
        counts[name] = len(rows)
    files.append(_write_notice(out, sets, run_id, scrubber))
    return files, counts


def _made_by_us(out: Path) -> Path | None:
    """The outermost folder of `out` that does not exist yet: what a failed export removes (None: `out` exists)."""
    if out.exists():
        return None
    top = out
    while not top.parent.exists():
        top = top.parent
    return top


def _undo(out: Path, made: Path | None) -> None:
    """Leave the disk as found: the folders the export made go; an empty `--out` that existed is emptied."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
    elif out.is_dir():
        for child in out.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()


def export_run(
    run_id: str | Path, out: Path, *, cases: str = "accepted", layout: str = "hf", runs_root: Path | None = None
) -> ExportResult:
    """Write the run's chosen cases to `out` in `layout`; a file that names a key or a local path is an error
    and the folder is removed. `run_id` may be the path of a run's folder archived outside the run store."""
    if layout not in LAYOUTS:
        raise UserError(f"--layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
    run_id, root = run_location(run_id, runs_root or runs_dir())
    out = Path(out)
    _check_out(out)
    # An export into a run's folder (runs/<id>/export/) writes there: only while no run, resume or rejudge does.
    with run_lock.hold_all(run_lock.run_folders_above(out, runs_root or runs_dir())):
        return _export(run_id, root, out, cases, layout)


def _export(run_id: str, root: Path, out: Path, cases: str, layout: str) -> ExportResult:
    sets = select_case_sets(run_id, cases, root)
    scrubber = Scrubber(machine_paths((root,)))
    made = _made_by_us(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        warnings: list[str] = []
        if layout == "hf":
            files, counts, warnings = _write_hf(out, run_id, sets, cases, root, scrubber)
            files.append(_write_notice(out, sets, run_id, scrubber))
        elif layout == "faitheval":
            files, counts = _write_faitheval(out, run_id, sets, scrubber)
        else:
            files, counts = _write_reeval(out, run_id, sets, scrubber)
        found = leaks(out, scrubber)
    except BaseException:
        _undo(out, made)
        raise
    if found:
        _undo(out, made)
        raise RuntimeError("export removed: " + "; ".join(found[:5]))
    logger.info("%s: %d rows in %s layout", out, sum(counts.values()), layout)
    return ExportResult(out, layout, counts, files, warnings)
