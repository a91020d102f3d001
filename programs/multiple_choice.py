"""A multiple-choice question as one string: the question, then one lettered option per line.
Targets read it that way; the judge wants the question and the options apart."""

from __future__ import annotations


def lettered(question: str, labels: list[str], options: list[str]) -> str:
    return question + "\n" + "\n".join(f"{label}. {text}" for label, text in zip(labels, options, strict=True))


def unlettered(question: str, labels: list[str], options: list[str]) -> str:
    """The question without its option lines (unchanged if it does not end with them)."""
    if not labels or len(labels) != len(options):
        return question
    suffix = lettered("", labels, options)
    return question[: -len(suffix)] if question.endswith(suffix) else question
