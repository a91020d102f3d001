"""What an optimizer changed: each compiled program's rendered prompts against the uncompiled program's, and the
cases the variants made from the same seeds."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dspy

from experiments.tracking import render_prompt


def load_variant(build, folder: Path, variant: str) -> dspy.Module | None:
    """A compiled variant from its saved state (None when that optimizer failed and saved nothing)."""
    path = folder / f"{variant}.json"
    if not path.exists():
        return None
    program = build()
    program.load(str(path))
    return program


def prompt_diff(base: dspy.Module, compiled: dspy.Module, adapter) -> str:
    """A unified diff per predictor of the prompts as the pivot reads them (inputs left as {placeholders})."""
    theirs = dict(base.named_predictors())
    parts = []
    for name, predictor in compiled.named_predictors():
        before = render_prompt(theirs[name], adapter).splitlines()
        after = render_prompt(predictor, adapter).splitlines()
        diff = list(difflib.unified_diff(before, after, f"uncompiled.{name}", f"compiled.{name}", lineterm="", n=1))
        parts.append("\n".join(diff) if diff else f"(predictor {name}: prompt unchanged)")
    return "\n\n".join(parts)


def changed_excerpt(original: str, perturbed: str, width: int = 20) -> str:
    """The perturbed context around its first change, `width` words either side ("…" where cut)."""
    old, new = original.split(), perturbed.split()
    ops = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return "(context unchanged)"
    _, _, _, start, end = ops[0]
    low, high = max(0, start - width), min(len(new), max(end, start + 1) + width)
    return ("… " if low else "") + " ".join(new[low:high]) + (" …" if high < len(new) else "")


def side_by_side(
    records: Sequence[Mapping[str, Any]], variants: Sequence[str], targets: Sequence[str], shown: int
) -> list[dict[str, Any]]:
    """The first `shown` test seeds (by id) every variant has a case for: per variant its answer, status, the
    changed passage and each target's answer to it."""
    by_seed: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in records:
        if r.get("split") == "test" and r.get("variant") in variants:
            by_seed.setdefault(r["seed_id"], {})[r["variant"]] = r
    complete = [s for s in sorted(by_seed) if len(by_seed[s]) == len(variants)]
    # seeds some variant made a valid case from first: a row of rejections shows little of what changed
    seeds = sorted(complete, key=lambda s: not any(c.get("valid") for c in by_seed[s].values()))[:shown]
    out = []
    for seed in seeds:
        first = by_seed[seed][variants[0]]
        row = {
            "seed_id": seed,
            "question": first.get("question", ""),
            "original_answers": first.get("original_answers", []),
            "cases": {},
        }
        for variant in variants:
            case = by_seed[seed][variant]
            row["cases"][variant] = {
                "answers": case.get("answers", []),
                "status": case.get("status", ""),
                "valid": bool(case.get("valid")),
                "excerpt": changed_excerpt(case.get("original_context", ""), case["context"])
                if case.get("context")
                else "—",
                "targets": {t: (case.get("targets", {}).get(t) or {}).get("perturbed") for t in targets},
            }
        out.append(row)
    return out
