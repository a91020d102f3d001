"""Label Studio round trip: the review sample as tasks plus a labeling config, and an export back
as verdicts in the agreed ``review/<annotator>.jsonl`` files.

Tasks carry what the review page shows before an answer (question, expected answer, options,
context, original context, what "valid" means) and the case id; never the judge's verdict or the
case status, so the review stays blind. The config uses plain ``Text`` tags (not ``HyperText``):
generated text is adversarial and must not be rendered as markup in Label Studio either.

Reading back takes Label Studio's "JSON" export (a list of tasks, each with ``annotations`` whose
``result`` holds a ``choices`` region from the ``verdict`` control and a ``textarea`` region from
``note``) and its flat "JSON_MIN" export. Cancelled (skipped) annotations are not verdicts.
"""

from __future__ import annotations

import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from experiments.review.verdict_log import VerdictLog, check_annotator
from experiments.review.verdicts import ANSWER_SEPARATOR, VERDICTS, ReviewFormatError, Verdict
from experiments.review.view import case_view

logger = logging.getLogger(__name__)

VERDICT_CONTROL = "verdict"
NOTE_CONTROL = "note"
HOTKEYS = {"valid": "v", "invalid": "i", "unsure": "u"}


# --------------------------------------------------------------------------------------------
# Export


def task_data(record: Mapping[str, Any]) -> dict[str, str]:
    view = case_view(record)
    options = "\n".join(f"{o.label}. {o.text}{'   <- expected' if o.expected else ''}" for o in view.options)
    return {
        "case_id": view.id,
        "task": view.task,
        "question": view.question,
        "expected_answer": ANSWER_SEPARATOR.join(view.answers),
        "guidance": view.guidance,
        "options": options,
        "context": str(record.get("context") or ""),
        "original_context": view.original_context or "",
    }


def labeling_config(with_options: bool) -> str:
    view = ET.Element("View")

    def text(header: str, name: str) -> None:
        ET.SubElement(view, "Header", value=header, size="5")
        ET.SubElement(view, "Text", name=name, value=f"${name}")

    text("Question", "question")
    text("Expected answer", "expected_answer")
    ET.SubElement(view, "Text", name="guidance", value="$guidance")
    if with_options:
        text("Options", "options")
    text("Context", "context")
    panel = ET.SubElement(ET.SubElement(view, "Collapse"), "Panel", value="Original context")
    ET.SubElement(panel, "Text", name="original_context", value="$original_context")
    choices = ET.SubElement(
        view, "Choices", name=VERDICT_CONTROL, toName="context", choice="single", showInline="true", required="true"
    )
    for verdict in VERDICTS:
        ET.SubElement(choices, "Choice", value=verdict, hotkey=HOTKEYS[verdict])
    ET.SubElement(
        view,
        "TextArea",
        name=NOTE_CONTROL,
        toName="context",
        placeholder="why (optional)",
        maxSubmissions="1",
        editable="true",
    )
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def config_path_for(out: Path) -> Path:
    return out.with_name(out.stem + ".labeling_config.xml")


def export_label_studio(records: Iterable[Mapping[str, Any]], out: str | Path) -> tuple[Path, Path]:
    """Write the tasks (``out``, a JSON list) and the labeling config beside it; return both paths."""
    out = Path(out)
    tasks = [{"data": task_data(r)} for r in records]
    with_options = any(t["data"]["options"] for t in tasks)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    config = config_path_for(out)
    config.write_text(labeling_config(with_options), encoding="utf-8")
    logger.info("Wrote %d Label Studio task(s) to %s and the labeling config to %s", len(tasks), out, config)
    return out, config


# --------------------------------------------------------------------------------------------
# Import


def _iso_utc(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _user_key(completed_by: Any) -> str:
    """A stable, file-name-safe key for a Label Studio user: the email's local part, else the user id."""
    if isinstance(completed_by, Mapping):
        completed_by = completed_by.get("email") or completed_by.get("id")
    if isinstance(completed_by, str) and not completed_by.isdigit():
        return re.sub(r"[^A-Za-z0-9_.-]", "_", completed_by.split("@")[0]).lstrip(".")[:40] or "user"
    return f"user{completed_by}" if completed_by is not None else ""


def _region(result: list, control: str, kind: str) -> list[str] | None:
    for region in result or []:
        if isinstance(region, Mapping) and region.get("from_name") == control and region.get("type") == kind:
            values = (region.get("value") or {}).get("choices" if kind == "choices" else "text")
            return [str(v) for v in values] if isinstance(values, list) else None
    return None


def _verdict(value: str, where: str) -> str:
    label = value.strip().lower()
    if label not in VERDICTS:
        raise ReviewFormatError(f"{where}: field '{VERDICT_CONTROL}': {value!r} is not one of {', '.join(VERDICTS)}")
    return label


def _raw_verdicts(export: list, path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(user key, verdict fields) for every answered annotation, in export order."""
    found = []
    for n, task in enumerate(export, start=1):
        if not isinstance(task, Mapping):
            raise ReviewFormatError(f"{path}: item {n}: expected a task object")
        where = f"{path}: task {n} (Label Studio id {task.get('id')})"
        if "annotations" not in task and VERDICT_CONTROL in task:  # JSON_MIN: one flat row per annotation
            case_id = task.get("case_id")
            choice = task.get(VERDICT_CONTROL)
            if isinstance(choice, Mapping):
                choice = (choice.get("choices") or [None])[0]
            if not case_id:
                raise ReviewFormatError(f"{where}: field 'case_id': missing (not a reeval export?)")
            if choice:
                found.append(
                    (
                        _user_key(task.get("annotator")),
                        {
                            "id": str(case_id),
                            "verdict": _verdict(str(choice), where),
                            "note": str(task.get(NOTE_CONTROL) or ""),
                            "at": _iso_utc(task.get("updated_at")),
                            "source": where,
                        },
                    )
                )
            continue
        data = task.get("data") or {}
        case_id = data.get("case_id") if isinstance(data, Mapping) else None
        if not case_id:
            raise ReviewFormatError(
                f"{where}: field 'data.case_id': missing (tasks must come from reeval review --export-label-studio)"
            )
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            source = f"{where}, annotation {annotation.get('id')}"
            choices = _region(annotation.get("result"), VERDICT_CONTROL, "choices")
            if not choices:
                continue  # submitted without a verdict: not annotated
            note = _region(annotation.get("result"), NOTE_CONTROL, "textarea") or []
            found.append(
                (
                    _user_key(annotation.get("completed_by")),
                    {
                        "id": str(case_id),
                        "verdict": _verdict(choices[0], source),
                        "note": "\n".join(note),
                        "at": _iso_utc(annotation.get("updated_at") or annotation.get("created_at")),
                        "source": source,
                    },
                )
            )
    return found


def from_label_studio(export_path: str | Path, annotator_default: str) -> list[Verdict]:
    """Verdicts from a Label Studio JSON (or JSON_MIN) export of tasks made by :func:`export_label_studio`.

    With one Label Studio user in the export every verdict is ``annotator_default``'s; with
    several, each user becomes ``<annotator_default>-<email local part or user id>``. A user who
    annotated a task twice keeps the later annotation (by ``updated_at``, then export order).
    """
    path = Path(export_path)
    check_annotator(annotator_default)
    try:
        export = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ReviewFormatError(f"{path}: invalid JSON: {exc.msg} (line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewFormatError(f"{path}: cannot read Label Studio's export ({exc})") from None
    if not isinstance(export, list):
        raise ReviewFormatError(f"{path}: expected Label Studio's JSON export (a list of tasks)")
    raw = _raw_verdicts(export, path)
    users = sorted({user for user, _ in raw})
    latest: dict[tuple[str, str], Verdict] = {}
    for user, fields in raw:
        name = annotator_default if len(users) <= 1 else check_annotator(f"{annotator_default}-{user}")
        verdict = Verdict(annotator=name, **fields)
        key = (verdict.id, name)
        if key not in latest or verdict.at >= latest[key].at:
            latest[key] = verdict
    if len(users) > 1:
        logger.info(
            "%s: %d Label Studio users, named %s",
            path,
            len(users),
            ", ".join(f"{annotator_default}-{u}" for u in users),
        )
    return list(latest.values())


def import_label_studio(
    export_path: str | Path, review_dir: Path, annotator_default: str, sample_ids: Iterable[str] | None = None
) -> dict[str, int]:
    """Append the export's verdicts to ``review_dir/<annotator>.jsonl``; return verdicts per annotator.

    Appending is safe to repeat: the later line for a (case, annotator) wins when read.
    """
    verdicts = from_label_studio(export_path, annotator_default)
    if sample_ids is not None:
        known = set(sample_ids)
        outside = [v.id for v in verdicts if v.id not in known]
        if outside:
            logger.warning(
                "%d imported verdict(s) are for cases outside this run's sample, e.g. %s", len(outside), outside[:3]
            )
    counts: dict[str, int] = {}
    logs: dict[str, VerdictLog] = {}
    for v in verdicts:
        log = logs.setdefault(v.annotator, VerdictLog(review_dir, v.annotator))
        log.append(v.id, v.verdict, v.note, at=v.at or None)
        counts[v.annotator] = counts.get(v.annotator, 0) + 1
    return counts
