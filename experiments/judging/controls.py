"""Control cases for the judge: cases whose right verdict is known without any LM.

Every kind of invalid case the judge must catch has its own condition, and every kind of valid
case too, so that a judge answering "invalid" (or "valid") to everything scores badly somewhere:

| condition | kind | valid? | what fails |
|---|---|---|---|
| gold_answer | answer | yes | — |
| other_answer | answer | no | "if": another question's answer is not supported |
| two_answers | answer | no | "only-if": a second sentence gives another answer of the same type (date, number, name) |
| answer_removed | unanswerable | yes | — (every sentence naming the answer deleted) |
| original_as_unanswerable | unanswerable | no | the untouched context still answers the question |
| option_gold | option | yes | — (the question as multiple choice: the gold answer and same-type options) |
| option_other | option | no | the passage supports another option than the expected one |

The option conditions stand in for counterfactual cases, whose passages are written by an LM (no
verdict is known for them without one): the seed's question becomes a multiple choice among its
answer and 2-3 answers of the same type from other questions, and the expected option is the gold
one or another one. In half of the seeds the context also carries a sentence, from another
question's passage, that names the other option without answering this question: an option named in
the passage is not yet an option the passage supports.

Controls come from NQ rows far past the ones the shipped generation configs perturb
(CALIBRATION_OFFSET), so a judge compiled or thresholded on them never sees the cases it will
judge. Each seed falls in the calibration or the held-out half by a hash of its id: thresholds
and demonstrations come from the first, reported accuracy from the second.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re

from experiments.data.loaders import load_qa
from experiments.data.registry import resolve_dataset
from experiments.filters import apply_reeval_filters
from metrics.checks import mentions, mentions_any, same_shape
from metrics.normalize import answer_tokens
from metrics.surface_forms import answer_kind
from programs.judge import rest_of_context
from programs.multiple_choice import lettered
from programs.sentences import split_sentences
from programs.span_edit import replace_spans

CONDITIONS = (
    "gold_answer",
    "other_answer",
    "two_answers",
    "answer_removed",
    "original_as_unanswerable",
    "option_gold",
    "option_other",
)
VALID = {
    "gold_answer": True,
    "other_answer": False,
    "two_answers": False,
    "answer_removed": True,
    "original_as_unanswerable": False,
    "option_gold": True,
    "option_other": False,
}
KIND = {
    "gold_answer": "answer",
    "other_answer": "answer",
    "two_answers": "answer",
    "answer_removed": "unanswerable",
    "original_as_unanswerable": "unanswerable",
    "option_gold": "option",
    "option_other": "option",
}
HALVES = ("calibration", "held_out")

# Raw NQ rows before this index are what generation configs perturb (their limits are ≤ 200);
# the calibration seeds start here, after ReEval's filters.
CALIBRATION_OFFSET = 5000
CALIBRATION_MAX_EVIDENCE_WORDS = 400
OTHER_ANSWER_POOL_SIZE = 2000
MIN_WORDS_LEFT = 25

OPTION_LABELS = ("A", "B", "C", "D")
MAX_DISTRACTOR_WORDS = 40
PRONOUN_START = re.compile(r"^(he|she|it|they|his|her|its|their|this|these|those|that|the latter|the former)\b", re.I)

_KINDS = (
    "how many",
    "how much",
    "how long",
    "how old",
    "how far",
    "what year",
    "when",
    "who",
    "whom",
    "whose",
    "where",
    "which",
    "what",
)


def half_of(seed_id: str) -> str:
    """A stable split by id, independent of how many seeds a run takes."""
    return HALVES[hashlib.sha256(str(seed_id).encode()).digest()[0] % 2]


def question_kind(question: str) -> str:
    """The wh-phrase that fixes the answer's type: a "when" answer for a "when" question."""
    q = " ".join(question.lower().split())
    for kind in _KINDS:
        if re.search(rf"\b{kind}\b", q):
            return kind
    return "other"


def _same_type_answers(example, pool: list) -> list[str]:
    return [answer for answer, _ in _same_type_rows(example, pool)]


def _same_type_rows(example, pool: list) -> list[tuple[str, object]]:
    """Answers of the same type as the seed's (with the row each comes from), absent from its context."""
    kind = question_kind(example.question)
    # Questions of the same kind first, so the answers' checks below run on those rows only.
    candidates = [other for other in pool if other.id != example.id and question_kind(other.question) == kind]
    gold = example.answers[0]
    # Only a date for a date, a number for a number, a name for a name: "the eighth season" is no
    # second answer to "what is bigger, the atlantic or the pacific", and the control would be valid.
    shape = answer_kind(gold)
    if shape == "other":
        return []
    out = []
    for other in candidates:
        answer = other.answers[0]
        if (
            answer_kind(answer) == shape
            and same_shape(gold, answer)
            and len(answer.split()) <= 5
            and not mentions_any(example.context, [answer])
            and not mentions(answer, gold)
            and not mentions(gold, answer)
        ):
            out.append((answer, other))
    return out


def _two_answer_context(example, other: str, rng: random.Random) -> str | None:
    """The original plus a copy of its answer sentence that names `other` instead."""
    sentences = split_sentences(example.context)
    support = next((s for s in sentences if mentions_any(s.text, example.answers)), None)
    if support is None:
        return None
    changed, count = replace_spans(support.text, example.answers, other)
    if not count or mentions_any(changed, example.answers):
        return None
    if rng.random() < 0.5:
        return f"{example.context.rstrip()} {changed}"
    return f"{example.context[: support.start]}{changed} {example.context[support.start :]}"


def _answer_removed_context(example) -> str | None:
    """Every sentence naming the answer in any form deleted: what the judge's choice reads rival
    answers from for the gold control, so both ask the same extraction."""
    kept = rest_of_context(example.context, list(example.answers))
    text = " ".join(kept)
    if len(kept) < 2 or len(text.split()) < MIN_WORDS_LEFT:
        return None
    return text


def _distractor_sentence(row, answer: str, question: str) -> str | None:
    """A sentence of another question's passage that names `answer`, stands on its own (no opening
    pronoun) and shares at most one content word with this question: it names the option without
    answering this question."""
    sentences = split_sentences(row.context)
    asked = {w for w in answer_tokens(question) if len(w) > 3}
    for sentence in sentences:
        text = sentence.text.strip()
        if (
            mentions_any(text, [answer])
            and len(text.split()) <= MAX_DISTRACTOR_WORDS
            and not PRONOUN_START.match(text)
            and len(asked & set(answer_tokens(text))) <= 1
        ):
            return text
    return None


def _option_controls(example, rows: list[tuple[str, object]], rng: random.Random) -> dict | None:
    """The question as a multiple choice (gold + 2-3 of `rows`, the same-type answers), the context it is
    asked on, and the option that the option_other control expects."""
    if len(rows) < 2:
        return None
    picked = rng.sample(rows, min(3, len(rows)))
    options = [example.answers[0], *[answer for answer, _ in picked]]
    rng.shuffle(options)
    other, row = picked[0]
    context = example.context
    if rng.random() < 0.5:
        sentences = split_sentences(context)
        distractor = _distractor_sentence(row, other, example.question)
        if distractor:
            at = sentences[rng.randrange(len(sentences))].start if sentences else 0
            context = f"{context[:at]}{distractor} {context[at:]}"
    labels = list(OPTION_LABELS[: len(options)])
    return {
        "options": options,
        "choice_labels": labels,
        "context": context,
        "other": other,
        "question": lettered(example.question, labels, options),
    }


def controls_for(example, pool: list, seed: int = 0) -> list[dict]:
    """The controls one seed yields (a condition is skipped when the seed cannot make it)."""
    rng = random.Random(f"{seed}:{example.id}")
    base = {
        "seed_id": example.id,
        "question": example.question,
        "context": example.context,
        "original_answers": list(example.answers),
        "status": "accepted",
        "task": "judge_calibration",
        "half": half_of(example.id),
    }
    inserted: dict[str, str] = {}
    contexts: dict[str, tuple[str, list[str]]] = {
        "gold_answer": (example.context, list(example.answers)),
        "original_as_unanswerable": (example.context, ["unknown"]),
    }
    # Found before any control is drawn: the other-answer and two-answer controls both choose among them.
    same_type_rows = _same_type_rows(example, pool)
    others = [e for e in pool if e.id != example.id and not mentions_any(example.context, e.answers)]
    if others:
        inserted["other_answer"] = rng.choice(others).answers[0]
        contexts["other_answer"] = (example.context, [inserted["other_answer"]])
    same_type = [answer for answer, _ in same_type_rows]
    if same_type:
        other = rng.choice(same_type)
        two = _two_answer_context(example, other, rng)
        if two:
            inserted["two_answers"] = other
            contexts["two_answers"] = (two, list(example.answers))
    removed = _answer_removed_context(example)
    if removed:
        contexts["answer_removed"] = (removed, ["unknown"])
    extra: dict[str, dict] = {}
    # A generator of its own, so adding these conditions left the other controls as they were.
    mc = _option_controls(example, same_type_rows, random.Random(f"{seed}:options:{example.id}"))
    if mc:
        fields = {"question": mc["question"], "options": mc["options"], "choice_labels": mc["choice_labels"]}
        contexts["option_gold"] = (mc["context"], [example.answers[0]])
        contexts["option_other"] = (mc["context"], [mc["other"]])
        extra = {
            c: {**fields, "answer_label": mc["choice_labels"][mc["options"].index(contexts[c][1][0])]}
            for c in ("option_gold", "option_other")
        }
        inserted["option_other"] = mc["other"]
    return [
        {
            **base,
            "id": f"{example.id}:{condition}",
            "condition": condition,
            "expected_valid": VALID[condition],
            "context": contexts[condition][0],
            "answers": contexts[condition][1],
            "judge_kind": KIND[condition],
            **extra.get(condition, {}),
            **({"inserted_answer": inserted[condition]} if condition in inserted else {}),
        }
        for condition in CONDITIONS
        if condition in contexts
    ]


@functools.lru_cache(maxsize=2)
def _shipped_rows(source: str) -> tuple:
    """One read of the source per process, however many calibrations and pools ask for it."""

    path = resolve_dataset(source).path
    return tuple(load_qa(path))


def calibration_seeds(source: str = "nq") -> list:
    """The seeds controls are made from: filtered rows from CALIBRATION_OFFSET on."""
    return _seeds_of(_shipped_rows(source))


def other_answer_pool(source: str = "nq") -> list:
    """Where "another answer" comes from: calibration-side rows only, whatever the seeds."""
    return _pool_of(_shipped_rows(source))


def _seeds_of(rows: tuple) -> list:
    examples, _ = apply_reeval_filters(
        list(rows[CALIBRATION_OFFSET:]), max_evidence_words=CALIBRATION_MAX_EVIDENCE_WORDS
    )
    return examples


def _pool_of(rows: tuple) -> list:
    return list(rows[CALIBRATION_OFFSET : CALIBRATION_OFFSET + OTHER_ANSWER_POOL_SIZE])


def held_out_controls(source: str, n_per_condition: int) -> list[dict]:
    """What a judged run is calibrated on, as the stored set holds it (experiments/judging/control_set.py): up to
    n held-out controls per condition, seeds and pool from one read of `source`."""
    rows = _shipped_rows(source)
    seeds, pool = _seeds_of(rows), _pool_of(rows)
    return control_cases(seeds, n_per_condition, pool=pool, half="held_out")


def control_cases(
    examples: list, n_per_condition: int, seed: int = 0, pool: list | None = None, half: str | None = None
) -> list[dict]:
    """Up to n controls per condition, from the first seeds (of one half, when asked) in order."""
    pool = examples if pool is None else pool
    counts = dict.fromkeys(CONDITIONS, 0)
    out: list[dict] = []
    for example in examples:
        if not example.get("context") or (half and half_of(example.id) != half):
            continue
        if all(n >= n_per_condition for n in counts.values()):
            break
        for control in controls_for(example, pool, seed):
            if counts[control["condition"]] < n_per_condition:
                counts[control["condition"]] += 1
                out.append(control)
    return out
