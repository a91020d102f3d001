"""One registration per task: everything the harness knows about a task, kept on the task itself.

A task class is registered with `@task(...)`; the config loader, the runner, the review page, the
bench, optimisation, pivot comparison, sweeps, rejudging and external case files all read the entry
(`get(name)`, `names(where)`), so adding a generator is one module that defines its program, its
task class and this decorator.

The registry sits below every task, so it cannot import them: the built-in tasks are loaded by
module name on the first lookup, as a plugin's would be.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

# The modules whose import registers the built-in tasks.
BUILTIN_MODULES = (
    "experiments.tasks",
    "experiments.bench.task",
    "experiments.optimize_compare.task",
    "experiments.sweep.task",
)
DEFAULT_GUIDANCE = "Valid if the context supports the expected answer, and no other answer to the question."
DEFAULT_EXPECTATION = ("ORIGINAL answer: {original_or_answers}", "EXPECTED answer: {answers}")
# Shown on the review page for every case that has them; a task adds its own (`review_fields`).
COMMON_REVIEW_FIELDS: tuple[tuple[str, str], ...] = (("original answer", "original_answers"),)


@dataclass(frozen=True)
class Attack:
    """How a generator becomes an optimisable unit (optimize, compare_pivots, optimize_compare).

    `build(max_attempts, **dials)` makes its program; `to_case(example, prediction)` turns a prediction
    into the fields of a case the validation stage and the targets understand.
    """

    build: Callable[..., Any]
    to_case: Callable[[Any, Any], dict]
    # The prompt setting a target resists in: FaithEval's task instruction lets it say "unknown".
    setting: str = "open_book"
    # Whether the judge's verdict belongs in the metric's validity term: measured against blind reviews
    # (docs/results/validity.md), it agrees beyond chance on answer swaps and unanswerable cases and not
    # on enriched contexts, where the checks alone decide.
    judge_informative: bool = True
    # Whether the program used every reply its predictors gave for the case: a trace holding a reply the
    # program threw away (a rewrite that still named the answer, a proposal the checks refused) must not become
    # a demonstration, since DSPy's bootstrapping may pick any call of a predictor as the demo.
    every_reply_used: Callable[[dict], bool] = lambda case: True
    # Its cases contradict what a target already knows: comparisons take seeds the target knows by default.
    # Otherwise (the answer removed whatever the target knows) seeds the target knows mean nothing special.
    against_memory: bool = False
    name: str = ""  # the generator's; set by its registration


@dataclass(frozen=True)
class ConflictRole:
    """What a generator is in a bench's knowledge-conflict experiment (experiments/bench/conflict.py)."""

    # "swap": its cases contradict what a target knows; asked on the seeds the target knows and, as the
    # comparison, on seeds it reads right without knowing. "control": its cases should not move the target;
    # asked on the first seeds it knows, and an answer counts as the evidence's or as neither.
    role: Literal["swap", "control"]
    options: dict[str, Any] = dataclasses.field(default_factory=dict)  # its options there (`seeds: all` forced)


@dataclass(frozen=True)
class Registered:
    """A task's entry. Its class carries `Options` (a pydantic model), `roles`, and either the runner's
    per-case methods (`process`, `summarize`, `programs`) or `drive` (a task that runs its own stages)."""

    name: str
    cls: type
    # "cases": the runner maps the task's `process` over the seeds; "stages": the task drives its own run.
    runs: Literal["cases", "stages"] = "cases"
    label: str = ""  # how reports and the bench name it (default: the name)
    version: str = ""  # the generating program's version: a changed generator makes a bench stage run again
    # A generator makes cases from seeds: the bench can run it, a case file may name it, the review page
    # shows its cases with `guidance` and `review_fields`.
    generator: bool = False
    seeded: bool = False  # perturbs QA seeds the pivot selected first (the bench shares one selection)
    judged: bool = False  # the judge validates its cases in a bench unless told otherwise
    rejudgeable: bool = False  # its judged records are judged on their own fields
    guidance: str = DEFAULT_GUIDANCE  # what "valid" means, shown to every annotator
    review_fields: tuple[tuple[str, str], ...] = ()  # (label, record key) shown beside the case
    bench_settings: tuple[str, ...] = ()  # prompt settings the papers put its cases to, greedy
    bench_sampled: tuple[str, ...] = ()  # … and again with sampled decoding
    attack: Attack | None = None  # set: it can be optimised and compared across pivots
    sweep_settings: tuple[str, ...] = ()  # set: its dials can be swept; the settings where its failure shows
    # Attack strength as a ladder of (strength, dials) rungs, gentlest first (programs/strength.py), and the
    # strength that reproduces the generator with no dial set.
    ladder: tuple[tuple[float, dict[str, Any]], ...] = ()
    default_strength: float = 0.0
    # What a perturbed case expects: "span" (its answers), "choice" (an option letter), or the keyword kind
    # of a verdict (metrics.keywords: "unknown", "conflict").
    answer: str = "span"
    # Where the original a perturbed case is paired with is asked: FaithEval pairs a counterfactual passage
    # with its question asked without context, so no few-shot demonstration has an open-book original.
    original_setting: str = "open_book"
    # The review sheet's answer lines; fields: {original} (the seed's answers), {answers} (the case's),
    # {new_answer}, {original_or_answers}.
    expectation: tuple[str, ...] = DEFAULT_EXPECTATION
    knowledge_conflict: ConflictRole | None = None  # set: a bench's knowledge-conflict experiment runs it
    # The plausibility signals (metrics.plausibility) an acceptance model of its judged cases reads
    # (experiments/judging/acceptance.py); its fitted parameters ship as judging/params/acceptance.<name>.json.
    acceptance_signals: tuple[str, ...] = ()
    # Its cases keep the seed's answer, the evidence enriched around it (ReEval's Category 2): the reeval
    # layout writes them in ReEval's enriched fields, and a case file in those fields is read as its cases.
    keeps_answer: bool = False
    # The data set of its paper's release its cases match, the folder name of the faitheval layout.
    release: str = ""
    # Shipped data sets whose text its cases carry besides the seed's: their licences apply to an export too.
    extra_sources: tuple[str, ...] = ()
    # The export card: what a case is, in one sentence, and the paper the method comes from.
    card_text: str = ""
    paper: str = ""
    arxiv: str = ""
    # In a pivot comparison (experiments/tasks/compare_pivots.py), which studies the pivot as a generator: the
    # options it runs with there under the config's, and `rules(options)`, the options of its wholly code-made
    # setting (no LM in the pivot role, every seed perturbed), the row a pivot must beat; None: it has none.
    comparison_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    rules: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # Id suffixes of the records it writes beside its cases that are no attack: a baseline, or the part of a
    # case the judge read alone.
    helper_suffixes: tuple[str, ...] = ()

    @property
    def Options(self):  # noqa: N802 - the task class's options model, under its own name
        return self.cls.Options

    @property
    def shown_as(self) -> str:
        return self.label or self.name

    @property
    def verdict(self) -> bool:
        """Its cases expect a verdict keyword ("unknown", "conflict"), scored by keyword match."""
        return self.answer not in ("span", "choice")

    @property
    def optimisable(self) -> bool:
        return self.attack is not None

    @property
    def sweepable(self) -> bool:
        return bool(self.sweep_settings)


_REGISTRY: dict[str, Registered] = {}
_loaded = False


def task(name: str, **entry) -> Callable[[type], type]:
    """Register the decorated class as task `name`; `entry` holds the fields of `Registered`."""

    def register(cls: type) -> type:
        cls.name = name
        if entry.get("attack") is not None:
            entry["attack"] = dataclasses.replace(entry["attack"], name=name)
        _REGISTRY[name] = Registered(name, cls, **entry)
        return cls

    return register


def unregister(name: str) -> None:
    """Forget a task (a test's toy task, once it is done)."""
    _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN_MODULES:
            importlib.import_module(module)


def entries() -> dict[str, Registered]:
    _load_builtins()
    return dict(_REGISTRY)


def names(where: Callable[[Registered], bool] = lambda r: True) -> tuple[str, ...]:
    """The registered names whose entry satisfies `where`, in registration order."""
    return tuple(n for n, r in entries().items() if where(r))


def find(name: str) -> Registered | None:
    return entries().get(name)


def get(name: str, where: Callable[[Registered], bool] = lambda r: True, what: str = "task") -> Registered:
    """The entry of `name`; an unknown name (or one `where` refuses) fails with a "did you mean" message."""
    known = names(where)
    if name in known:
        return _REGISTRY[name]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise KeyError(f"unknown {what} {name!r} (known: {', '.join(known)}){hint}")


def ladder(name: str) -> tuple[tuple[float, dict[str, Any]], ...]:
    """The strength ladder of task `name`; empty for a task without one, or not registered."""
    entry = find(name)
    return entry.ladder if entry else ()


def is_helper(record_id: str) -> bool:
    """Whether a record is one a generator writes beside its cases, no attack (`Registered.helper_suffixes`)."""
    return str(record_id).endswith(tuple(s for entry in entries().values() for s in entry.helper_suffixes))


def task_answer(name: str) -> str:
    """What a perturbed case of task `name` expects (`Registered.answer`), as an evaluation record carries it
    for metrics.scores; a span for a name not registered (the rows of an external case file)."""
    entry = find(name)
    return entry.answer if entry else "span"


def check_name(name: str, where: Callable[[Registered], bool], what: str) -> str:
    """For a pydantic validator: `name` if registered and `where` holds, else a ValueError saying why."""
    try:
        get(name, where, what)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    return name
