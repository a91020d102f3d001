"""One attack strength in [0, 1] per generator, read as a ladder of dial settings.

Each rung names the dials it sets; a strength takes the highest rung at or below it, and a dial the user
sets directly wins over the rung's. The default strength of a generator is the rung that reproduces the
generator's behaviour before dials existed, so leaving `strength` unset changes nothing.
"""

from __future__ import annotations

from typing import Any

# (strength, dials), gentlest first. Context enriching: more text around the evidence, the evidence away
# from the front; past the default the seed's passage is kept whole, since trimmed to its answer sentence
# among raw passages it read 63-77% valid, whole 95-100% (docs/results/strength.md). Unanswerable: more
# passages retrieved on the question's topic around what is left, which give a reader unwilling to abstain
# more to answer from. Off its ladder: `lures: keep`, whose cases read less
# often valid; `removal: window`, which on NQ's one-paragraph passages left less than the rest_kept share for
# most seeds; `removal: rewrite`, which moved no target's abstention (docs/results/strength.md). Answer swap: how
# far the new answer stands from the old (numbers and dates only): the further, the more often a target keeps
# the answer it knows (ClashEval); `far` and `extreme` are off the ladder: read blind, far swaps were 21 of 30
# valid (a year moved past the war or the president the passage names beside it), mid 29 of 30.
LADDERS: dict[str, list[tuple[float, dict[str, Any]]]] = {
    "context_enrich": [
        (0.0, {"k": 1, "background": "condensed", "position": "first"}),
        (0.25, {"k": 3, "background": "condensed", "position": "first"}),
        (0.5, {"k": 4, "background": "passages", "position": "middle", "evidence": "passage"}),
        (0.75, {"k": 8, "background": "passages", "position": "middle", "evidence": "passage"}),
        (1.0, {"k": 16, "background": "passages", "position": "middle", "evidence": "passage"}),
    ],
    "unanswerable": [
        (0.0, {"removal": "drop", "lures": "remove", "background": 0}),
        (0.25, {"removal": "drop", "lures": "remove", "background": 1}),
        (0.5, {"removal": "drop", "lures": "remove", "background": 2}),
        (0.75, {"removal": "drop", "lures": "remove", "background": 4}),
        (1.0, {"removal": "drop", "lures": "remove", "background": 8}),
    ],
    "answer_swap": [
        (0.0, {"distance": "near"}),
        (0.5, {"distance": "mid"}),
    ],
}
DEFAULT_STRENGTH = {"context_enrich": 0.25, "unanswerable": 0.0, "answer_swap": 0.0}


def dials_at(generator: str, strength: float) -> dict[str, Any]:
    """The dial settings of the highest rung at or below `strength`."""
    if generator not in LADDERS:
        raise ValueError(f"no strength ladder for {generator!r}; generators with one: {sorted(LADDERS)}")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    return dict(next(dials for level, dials in reversed(LADDERS[generator]) if level <= strength))


def with_strength(generator: str, options: dict[str, Any]) -> dict[str, Any]:
    """Options with the dials of `options["strength"]` filled in where the user did not set them."""
    strength = options.get("strength")
    if strength is None:
        return options
    return {**dials_at(generator, float(strength)), **options}
