"""One attack strength in [0, 1] per generator, read as a ladder of dial settings.

Each rung names the dials it sets; a strength takes the highest rung at or below it, and a dial the user
sets directly wins over the rung's. The default strength of a generator is the rung that reproduces the
generator's behaviour before dials existed, so leaving `strength` unset changes nothing. A generator's ladder
is declared where it is registered (experiments/tasks/) and handed in here.
"""

from __future__ import annotations

from typing import Any

# (strength, dials), gentlest first.
Ladder = tuple[tuple[float, dict[str, Any]], ...]


def dials_at(ladder: Ladder, strength: float, generator: str = "this generator") -> dict[str, Any]:
    """The dial settings of the highest rung at or below `strength`."""
    if not ladder:
        raise ValueError(f"no strength ladder for {generator}")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    return dict(next(dials for level, dials in reversed(ladder) if level <= strength))


def with_strength(ladder: Ladder, options: dict[str, Any], generator: str = "this generator") -> dict[str, Any]:
    """Options with the dials of `options["strength"]` filled in where the user did not set them."""
    strength = options.get("strength")
    if strength is None:
        return options
    return {**dials_at(ladder, float(strength), generator), **options}
