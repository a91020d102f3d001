"""Rows kept by the reading group of their answer, typed where it stands in its passage as the answer swap
types it (programs/answer_kinds.py). NQ asks mostly for dates and people: a plain run of 260 held-out rows
gave 14 accepted swaps that were neither a year, a number nor a person, so a reading of ≥ 30 places or works
per group draws its rows by group instead of reading hundreds of dates to reach them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from programs.answer_kinds import type_in
from programs.entity_tagger import tagger
from programs.person_names import is_first_name

GROUPS = ("people", "places and organisations", "works and things", "dates and numbers")


def answer_group(tag: Callable, example) -> str | None:
    """The reading group of the example's answer in its passage; None when no answer is found there."""
    typed = type_in(tag, example.context, list(example.answers), example.question, is_first_name)
    return typed.group if typed is not None else None


def keep_groups(examples: Iterable, groups: Iterable[str], tag: Callable | None = None) -> tuple[list, int]:
    """The examples whose answer is of one of `groups`, in order, and how many were dropped."""
    tag = tag or tagger()
    wanted = set(groups)
    kept, dropped = [], 0
    for example in examples:
        if answer_group(tag, example) in wanted:
            kept.append(example)
        else:
            dropped += 1
    return kept, dropped
