"""What the review page shows of one case: plain data for the template, never markup.

The perturbed context is diffed word by word against the original (difflib), so a reader sees
exactly what the generator changed; an inconsistent case's context ("Document 1: … Document 2:
…") is split into its documents, each diffed against the original. Everything returned here is
text; the template escapes all of it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from experiments import task_registry
from programs.multiple_choice import unlettered

SegmentKind = Literal["same", "ins", "del"]

# A word (with inner hyphens/apostrophes) or one punctuation mark, each with its trailing space.
_TOKEN = re.compile(r"(\w+(?:['’-]\w+)*|[^\w\s])(\s*)")
_DOCUMENT = re.compile(r"(?:^|\n\s*\n)\s*Document (\d+):\s*")


@dataclass(frozen=True)
class Segment:
    text: str
    kind: SegmentKind = "same"
    trailing: str = ""  # whitespace after the segment, outside its highlight
    leading: str = ""  # a space before a removed span that the perturbed text has no room for


@dataclass
class Document:
    title: str
    segments: list[Segment]
    changed: bool


@dataclass
class Option:
    label: str
    text: str
    expected: bool


@dataclass
class CaseView:
    id: str
    task: str
    question: str
    answers: list[str]
    guidance: str
    documents: list[Document]
    original_context: str | None
    options: list[Option] = field(default_factory=list)
    fields: list[tuple[str, str]] = field(default_factory=list)  # task facts safe to show before answering
    status: str = ""
    checks: list[tuple[str, str]] = field(default_factory=list)
    judge: dict[str, Any] | None = None


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _TOKEN.finditer(text)]


def _leading_space(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def word_diff(original: str | None, perturbed: str) -> list[Segment]:
    """``perturbed`` as segments: words kept from ``original`` ("same"), added ("ins") and, in place,
    the original's removed words ("del"). Without an original everything is "same"."""
    if not original:
        return [Segment(perturbed)] if perturbed else []
    a, b = _tokens(original), _tokens(perturbed)
    matcher = difflib.SequenceMatcher(None, [w for w, _ in a], [w for w, _ in b], autojunk=False)
    out: list[Segment] = []

    def emit(tokens: list[tuple[str, str]], kind: SegmentKind) -> None:
        if not tokens:
            return
        text = "".join(w + s for w, s in tokens)
        body = text.rstrip()
        trailing = text[len(body) :] or (" " if kind == "del" else "")
        leading = " " if kind == "del" and out and out[-1].text and not out[-1].trailing else ""
        out.append(Segment(body, kind, trailing, leading))

    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            emit(b[j1:j2], "same")
        else:
            emit(a[i1:i2], "del")
            emit(b[j1:j2], "ins")
    lead = _leading_space(perturbed)
    if lead and out:
        out.insert(0, Segment("", "same", lead))
    return out


def split_documents(context: str) -> list[tuple[str, str]]:
    """``[(title, text)]``: the "Document N:" parts of a multi-document context, else one untitled part."""
    marks = list(_DOCUMENT.finditer(context))
    if len(marks) < 2 or marks[0].start() != 0:
        return [("", context)]
    parts = []
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt else len(context)
        parts.append((f"Document {mark.group(1)}", context[mark.end() : end].strip()))
    return parts


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _judge_view(judge: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not judge:
        return None
    view = {key: judge.get(key) for key in ("if", "if_reason", "only_if", "only_if_reason", "judge", "method")}
    p_valid = judge.get("p_valid")
    view["p_valid"] = f"{p_valid:.2f}" if isinstance(p_valid, (int, float)) else None
    return view


def _facts(record: Mapping[str, Any], entry: task_registry.Registered | None) -> list[tuple[str, str]]:
    """Task fields that help reading the case and say nothing about its verdict (the task's registration
    names them)."""
    shown = (*task_registry.COMMON_REVIEW_FIELDS, *(entry.review_fields if entry else ()))
    facts = []
    for label, key in shown:
        value = record.get(key)
        if value:
            facts.append((label, " | ".join(map(_text, value)) if isinstance(value, list) else _text(value)))
    return facts


def case_view(record: Mapping[str, Any]) -> CaseView:
    task = _text(record.get("task")) or "unknown"
    # What "valid" means for the task, shown under the question so every annotator judges the same thing.
    entry = task_registry.find(task)
    context = _text(record.get("context"))
    original = record.get("original_context")
    original = _text(original) if original else None
    documents = []
    for title, text in split_documents(context):
        segments = word_diff(original, text)
        documents.append(Document(title, segments, any(s.kind != "same" for s in segments)))
    options = []
    labels = record.get("choice_labels") or []
    for i, text in enumerate(record.get("options") or []):
        label = _text(labels[i]) if i < len(labels) else chr(ord("A") + i)
        options.append(Option(label, _text(text), label == _text(record.get("answer_label"))))
    # a counterfactual question carries its lettered options; the list below shows them marked
    question = unlettered(_text(record.get("question")), [o.label for o in options], [o.text for o in options])
    checks = [
        (name, "pass" if ok is True else "fail" if ok is False else _text(ok))
        for name, ok in (record.get("checks") or {}).items()
    ]
    return CaseView(
        id=_text(record.get("id")),
        task=task,
        question=question,
        answers=[_text(a) for a in record.get("answers") or []],
        guidance=entry.guidance if entry else task_registry.DEFAULT_GUIDANCE,
        documents=documents,
        original_context=original,
        options=options,
        fields=_facts(record, entry),
        status=_text(record.get("status")),
        checks=checks,
        judge=_judge_view(record.get("judge")),
    )
