"""The judge: is a generated case valid? "if" (the context supports the expected answer; for an
unanswerable case, the context does not allow answering) and "only-if" (the context supports no
other answer; for an unanswerable case, the removed answer is not still supported).

A judge is a measuring instrument, so it comes in methods that calibration compares on control
cases (experiments/judging):

- ``reasoned``: a reason, then a verdict, per question (JudgeSupport / JudgeUniqueness /
  JudgeAnswerability). "only-if" is asked only when "if" passed.
- ``checks``: yes/no checks without reasons (JudgeCheck), read as probabilities from the verdict
  token's log-probabilities, combined into P(valid) and cut at a calibrated threshold.
- ``extract``: the model lists the answers the context gives (ExtractAnswers); code compares them
  with the expected answer.
- ``choose``: a multiple choice (ChooseAnswer) between the expected answer, the answers the model
  extracts from the rest of the context (the sentences that do not name the expected answer; for an
  unanswerable case, from the context itself) and "none of these"; P(valid) is the probability of
  the expected option (for an unanswerable case, one minus the original answer's). A context that
  gives a second answer splits the probability where a list extraction names only the first.
- ``stacked``: a logistic combination of the choice probabilities and the extraction's outcomes,
  fitted on the calibration half of the controls.

A multiple-choice case (kind ``option``: a counterfactual passage for a question with options) is
judged the same way by every method: the question's own options and "none of these" are put to the
model (ChooseOption), and P(valid) is the expected option's probability. The options are exactly
the rivals, so nothing needs extracting.

Every method yields the same verdict fields plus ``p_valid`` (its graded score) and the raw
``signals``, so a run records what its verdict rested on. Parameters (thresholds, weights) come
from calibration and are passed in; a module never loads them itself. A judge output that does
not parse is "unjudged", never valid or invalid.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import dspy
from dspy.utils.exceptions import AdapterParseError

from metrics.checks import mentions_any_form, old_name_part_left
from metrics.normalize import answer_tokens
from metrics.qa import contains_answer
from programs.sentences import split_sentences
from signatures.judge import (
    ChooseAnswer,
    ChooseOption,
    ExtractAnswers,
    JudgeAnswerability,
    JudgeCheck,
    JudgeSupport,
    JudgeUniqueness,
)

UNJUDGED = "unjudged"
SKIPPED = "not asked: the if verdict already rejects the case"
CaseKind = Literal["answer", "unanswerable", "option"]
METHODS = ("reasoned", "checks", "extract", "choose", "stacked")
FAMILIES = {
    "reasoned": ("reasoned",),
    "checks": ("checks",),
    "extract": ("extract",),
    "choose": ("choose",),
    "stacked": ("choose", "extract"),
}
DEFAULT_PARAMS: dict[str, Any] = {"method": "reasoned"}

SUPPORT_CHECK = 'Does the context say that the answer to the question is "{answer}"?'
OTHER_CHECK = 'Apart from "{answer}", does the context also give a different answer to the question?'
ANSWERABLE_CHECK = "Does the context contain the answer to the question?"
# What stacked weights multiply, in order, per kind.
FEATURES = {
    "answer": ("c_expected", "c_none", "e_support", "e_other"),
    "unanswerable": ("c_original", "c_none", "e_any", "e_original"),
}
LETTERS = ("A", "B", "C", "D")
OPTION_LETTERS = ("A", "B", "C", "D", "E", "F")
NONE_OPTION = "none of these"
MIN_WORDS_ELSEWHERE = 12  # a rest of context shorter than this gives no candidate worth asking about
LOGPROBS = {"logprobs": True, "top_logprobs": 5}


def verdict_probability(logprobs: Any, keys: tuple[str, str]) -> float | None:
    """P(keys[0]) / (P(keys[0]) + P(keys[1])) at the verdict token, from OpenAI-style logprobs
    ({"content": [{"token", "logprob", "top_logprobs": [...]}]}). A position counts as the verdict
    when its chosen token, stripped of quotes and spaces, starts one of the keys. None when the
    LM returned no logprobs (some providers never do)."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)
    for entry in content or ():
        entry = entry if isinstance(entry, dict) else vars(entry)
        token = _bare(entry.get("token"))
        if not token or not any(k.startswith(token) for k in keys):
            continue
        mass = [0.0, 0.0]
        floor = math.inf
        for alt in entry.get("top_logprobs") or [{"token": entry.get("token"), "logprob": entry.get("logprob")}]:
            alt = alt if isinstance(alt, dict) else vars(alt)
            floor = min(floor, alt["logprob"])
            text = _bare(alt.get("token"))
            for i, key in enumerate(keys):
                if text and key.startswith(text) and not keys[1 - i].startswith(text):
                    mass[i] += math.exp(alt["logprob"])
        # A key missing from the top list is at most as likely as the least likely listed one.
        mass = [m if m > 0 else math.exp(floor) / 2 for m in mass]
        return mass[0] / (mass[0] + mass[1])
    return None


def _bare(token: Any) -> str:
    return str(token or "").strip().strip('"').strip().lower()


def _loose(text: str) -> list[str]:
    # Punctuation as a space: NQ writes "1959 -- 61" where a model writes "1959-61".
    return answer_tokens(re.sub(r"[^\w\s]+", " ", text or ""))


def same_answer(candidate: str, expected: str) -> bool:
    """Two spans name the same answer: one contains the other (as SQuAD-normalised tokens, or with
    punctuation read as spaces). Shared words alone are not enough: "compound sentence" is not
    "complex sentence"."""
    if contains_answer(candidate, [expected]):
        return True
    a, b = " ".join(_loose(candidate)), " ".join(_loose(expected))
    return bool(a and b) and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def extraction_signals(answers: list[str], context: str, expected: str, original: str | None) -> dict[str, float]:
    """What code reads off the extracted answers. An answer whose words are not all in the context is
    ignored: a small model sometimes answers from memory instead of reading. (Dropping answers that
    echo the question was tried and removed: NQ answers are sometimes in the question.)"""
    words = set(_loose(context))
    grounded = [a for a in answers if _loose(a) and set(_loose(a)) <= words]
    return {
        "e_any": float(bool(grounded)),
        "e_support": float(any(same_answer(a, expected) for a in grounded)),
        "e_other": float(any(not same_answer(a, expected) for a in grounded)),
        "e_original": float(bool(original) and any(same_answer(a, original) for a in grounded)),
    }


def rest_of_context(context: str, answers: list[str]) -> list[str]:
    """The context's sentences that do not name the answers in any form a reader recognises
    (another date or number spelling, a clitic, a multi-word name's distinctive word)."""
    return [
        s.text
        for s in split_sentences(context)
        if not mentions_any_form(s.text, answers) and not old_name_part_left(s.text, answers)
    ]


def choice_rivals(found: list[str], context: str, focus: str, limit: int = len(LETTERS) - 2) -> list[str]:
    """Extracted answers worth offering beside the focus: grounded in the context, not the focus
    itself, distinct; at most `limit` so the focus and "none of these" still get a letter."""
    words = set(_loose(context))
    out: list[str] = []
    for answer in found:
        answer = " ".join(str(answer).split())
        if (
            answer
            and set(_loose(answer)) <= words
            and not (focus and same_answer(answer, focus))
            and not any(same_answer(answer, kept) for kept in out)
        ):
            out.append(answer)
    return out[:limit]


def ordered_options(options: list[str], question: str) -> list[str]:
    """A stable order that does not depend on which option is the expected one: small models prefer
    the first letter, and that preference must not line up with validity."""
    import hashlib

    return sorted(options, key=lambda o: hashlib.sha256(f"{question}\x00{o}".encode()).hexdigest())


def option_probabilities(logprobs: Any, chosen: str, n: int, letters: tuple[str, ...] = LETTERS) -> list[float]:
    """P(letter) for the first n letters from the choice position's top log-probabilities,
    renormalised over them; without logprobs, the chosen letter gets everything."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)
    mass = dict.fromkeys(letters[:n], 0.0)
    for entry in content or ():
        entry = entry if isinstance(entry, dict) else vars(entry)
        if _bare(entry.get("token")).upper() not in letters:
            continue
        for alt in entry.get("top_logprobs") or entry.get("top") or ():
            alt = alt if isinstance(alt, dict) else vars(alt)
            letter = _bare(alt.get("token")).upper()
            if letter in mass:
                mass[letter] += math.exp(alt["logprob"])
        break
    total = sum(mass.values())
    if total <= 0:
        letter = _bare(chosen).upper()
        return [float(letter == x) for x in letters[:n]]
    return [mass[x] / total for x in letters[:n]]


def score(kind: CaseKind, signals: dict[str, float], params: dict[str, Any]) -> float | None:
    """P(valid) under the params' method; None when a signal it needs is missing."""
    method = params.get("method", "reasoned")
    try:
        if kind == "option":
            return signals["c_expected"]
        if method == "reasoned":
            if kind == "answer":
                return signals["r_support"] * signals.get("r_only", 0.0)
            return (1 - signals["r_answerable"]) * (1 - signals.get("r_support_original", 1.0))
        if method == "checks":
            if kind == "answer":
                return signals["p_support"] * (1 - signals["p_other"])
            return (1 - signals["p_answerable"]) * (1 - signals["p_support_original"])
        if method == "extract":
            if kind == "answer":
                return signals["e_support"] * (1 - 0.5 * signals["e_other"])
            return (1 - 0.5 * signals["e_any"]) * (1 - signals["e_original"])
        if method == "choose":
            return signals["c_expected"] if kind == "answer" else 1 - signals["c_original"]
        if method == "stacked":
            weights = params["weights"][kind]
            z = weights[0] + sum(w * signals[f] for w, f in zip(weights[1:], FEATURES[kind], strict=True))
            return 1 / (1 + math.exp(-z))
    except KeyError:
        return None
    raise ValueError(f"unknown judge method {method!r}; known: {', '.join(METHODS)}")


class CaseJudge(dspy.Module):
    def __init__(self, params: dict[str, Any] | None = None, collect: tuple[str, ...] = ()):
        """`params`: what calibration chose (method, thresholds, weights). `collect`: signal families to
        gather beyond the method's own (the calibration study gathers all of them)."""
        super().__init__()
        self.params = dict(params or DEFAULT_PARAMS)
        if self.params.get("method") not in METHODS:
            raise ValueError(f"unknown judge method {self.params.get('method')!r}; known: {', '.join(METHODS)}")
        self.collect = tuple(collect)
        # Probabilities need an LM that returns logprobs (OpenAI, vLLM, llama.cpp; Anthropic refuses the
        # request), so only the methods that threshold them, and the calibration study, ask for them.
        self.probabilities = self.method != "reasoned" or bool(self.collect) or "thresholds" in self.params
        # Predictor names are the keys of saved state: keep them.
        self.support = dspy.Predict(JudgeSupport)
        self.uniqueness = dspy.Predict(JudgeUniqueness)
        self.answerability = dspy.Predict(JudgeAnswerability)
        self.check = dspy.Predict(JudgeCheck)
        self.extract = dspy.Predict(ExtractAnswers)
        self.choose = dspy.Predict(ChooseAnswer)
        self.choose_option = dspy.Predict(ChooseOption)

    @property
    def method(self) -> str:
        return self.params["method"]

    def forward(
        self,
        question: str,
        context: str,
        expected_answer: str,
        kind: CaseKind = "answer",
        original_answer: str | None = None,
        options: list[str] | None = None,
    ) -> dspy.Prediction:
        if kind == "option":
            signals: dict[str, float] = {}
            self._choose_option(question, context, expected_answer, list(options or []), signals)
            return self._thresholded(kind, signals, None, asked_extraction=False)
        families = set(FAMILIES[self.method]) | set(self.collect)
        signals = {}
        extracted: list[str] | None = None
        if "checks" in families:
            self._checks(question, context, expected_answer, kind, original_answer, signals)
        if "extract" in families:
            extracted = self._extract(question, context, expected_answer, original_answer, signals)
        if "choose" in families:
            self._choose(question, context, expected_answer, kind, original_answer, signals, extracted)
        reasoned = (
            self._reasoned(question, context, expected_answer, kind, original_answer, signals)
            if "reasoned" in families
            else None
        )
        if self.method == "reasoned" and "thresholds" not in self.params:
            assert reasoned is not None
            return dspy.Prediction(
                **reasoned,
                p_valid=score(kind, signals, self.params),
                signals=signals,
                method=self.method,
                extracted=extracted,
            )
        return self._thresholded(kind, signals, extracted, asked_extraction="extract" in families)

    # -- methods ---------------------------------------------------------------------------------

    def _thresholded(
        self, kind: CaseKind, signals: dict[str, float], extracted: list[str] | None, asked_extraction: bool
    ) -> dspy.Prediction:
        p_valid = score(kind, signals, self.params)
        summary = "; ".join(f"{k}={v:.2f}" for k, v in sorted(signals.items()))
        if asked_extraction:
            summary += f"; extracted: {extracted!r}" if extracted is not None else "; extracted: unparsed"
        if p_valid is None:
            return dspy.Prediction(
                if_ok=None,
                if_reason=f"unparsed judge output ({summary})",
                only_if_ok=None,
                only_if_reason=SKIPPED,
                p_valid=None,
                signals=signals,
                method=self.method,
                extracted=extracted,
            )
        valid = p_valid >= self.params.get("thresholds", {}).get(kind, 0.5)
        if "c_none" in signals:
            # Rejected by choice: "if" failed when nothing beats "none of these" (answer, option) / the
            # context gives some answer other than the original (unanswerable); else "only-if".
            if kind != "unanswerable":
                if_ok = valid or signals["c_other"] + signals["c_expected"] > signals["c_none"]
            else:
                if_ok = valid or signals["c_other"] <= signals["c_none"]
        elif kind == "answer":
            if_ok = valid or signals.get("p_support", signals.get("e_support", 0.0)) >= 0.5
        else:
            if_ok = valid or signals.get("p_answerable", signals.get("e_any", 1.0)) < 0.5
        return dspy.Prediction(
            if_ok=bool(if_ok),
            if_reason=summary,
            only_if_ok=bool(valid) if if_ok else None,
            only_if_reason=summary if if_ok else SKIPPED,
            p_valid=p_valid,
            signals=signals,
            method=self.method,
            extracted=extracted,
        )

    def _yes(self, context: str, question: str, check: str) -> float | None:
        try:
            out = self.check(context=context, question=question, check=check, config=self._config())
        except AdapterParseError:
            return None
        p = verdict_probability(getattr(out, "logprobs", None), ("yes", "no"))
        return p if p is not None else float(out.verdict == "yes")

    def _config(self) -> dict:
        return dict(LOGPROBS) if self.probabilities else {}

    def _checks(self, question, context, expected, kind, original, signals) -> None:
        asks = {"p_support": SUPPORT_CHECK.format(answer=expected), "p_other": OTHER_CHECK.format(answer=expected)}
        if kind == "unanswerable":
            asks = {"p_answerable": ANSWERABLE_CHECK, "p_support_original": SUPPORT_CHECK.format(answer=original or "")}
        for name, check in asks.items():
            p = self._yes(context, question, check)
            if p is not None:
                signals[name] = p

    def _extract(self, question, context, expected, original, signals) -> list[str] | None:
        answers = self._answers(question, context)
        if answers is not None:
            signals.update(extraction_signals(answers, context, expected, original))
        return answers

    def _answers(self, question: str, context: str) -> list[str] | None:
        try:
            return [str(a) for a in (self.extract(context=context, question=question).answers or [])]
        except AdapterParseError:
            return None

    def _choose(self, question, context, expected, kind, original, signals, extracted) -> None:
        """The multiple choice. For an answer case the rivals are read off the context without the
        expected answer's sentences (on the whole context the model mostly names the expected answer
        again), plus any other answer the whole context's extraction named;
        an expected answer that the context names in no form is not supported, without a call."""
        if kind == "answer":
            if not mentions_any_form(context, [expected]):
                signals.update(c_expected=0.0, c_none=1.0, c_other=0.0)
                return
            focus, elsewhere = expected, " ".join(rest_of_context(context, [expected]))
            found = self._answers(question, elsewhere) if len(elsewhere.split()) >= MIN_WORDS_ELSEWHERE else []
            # The whole context's own extraction, when it ran, sometimes names a second answer that the
            # rest alone did not bring up: offer both.
            found = [*(found or []), *(extracted or [])]
        else:
            focus = original or ""
            found = extracted if extracted is not None else self._answers(question, context)
        rivals = choice_rivals(found or [], context, focus)
        options = ordered_options([focus, *rivals], question) if focus else rivals
        if not options:
            # no original named and nothing read: nothing to choose among
            signals.update(c_original=0.0, c_none=1.0, c_other=0.0)
            return
        by_option = _choice(self.choose, LETTERS, context, question, [*options, NONE_OPTION])
        if by_option is None:
            return
        signals["c_none"] = by_option[NONE_OPTION]
        signals["c_other"] = sum(by_option.get(r, 0.0) for r in rivals)
        signals["c_expected" if kind == "answer" else "c_original"] = by_option.get(focus, 0.0)

    def _choose_option(self, question, context, expected, options, signals) -> None:
        """The question's own options, in an order that does not depend on which one is expected."""
        choices = ordered_options(list(dict.fromkeys(options)), question)[: len(OPTION_LETTERS) - 1]
        if expected not in choices:
            raise ValueError(f"expected option {expected!r} is not among the options {options!r}")
        by_option = _choice(self.choose_option, OPTION_LETTERS, context, question, [*choices, NONE_OPTION])
        if by_option is None:
            return
        signals["c_expected"] = by_option[expected]
        signals["c_none"] = by_option[NONE_OPTION]
        signals["c_other"] = 1.0 - by_option[expected] - by_option[NONE_OPTION]

    def _reasoned(self, question, context, expected, kind, original, signals) -> dict[str, Any]:
        if kind == "unanswerable":
            verdict, if_reason, p = _ask(
                self.answerability, ("unanswerable", "answerable"), self._config(), question=question, context=context
            )
            if_ok = None if verdict == UNJUDGED else verdict == "unanswerable"
            if p is not None:
                signals["r_answerable"] = 1 - p
        else:
            verdict, if_reason, p = _ask(
                self.support,
                ("yes", "no"),
                self._config(),
                question=question,
                context=context,
                expected_answer=expected,
            )
            if_ok = None if verdict == UNJUDGED else verdict == "yes"
            if p is not None:
                signals["r_support"] = p
        if if_ok is not True:
            return dict(if_ok=if_ok, if_reason=if_reason, only_if_ok=None, only_if_reason=SKIPPED)
        if kind == "unanswerable":
            verdict2, only_if_reason, p2 = _ask(
                self.support,
                ("yes", "no"),
                self._config(),
                question=question,
                context=context,
                expected_answer=original or "",
            )
            only_if_ok = None if verdict2 == UNJUDGED else verdict2 == "no"
            if p2 is not None:
                signals["r_support_original"] = p2
        else:
            verdict2, only_if_reason, p2 = _ask(
                self.uniqueness,
                ("only_expected", "other_answer_supported"),
                self._config(),
                question=question,
                context=context,
                expected_answer=expected,
            )
            only_if_ok = None if verdict2 == UNJUDGED else verdict2 == "only_expected"
            if p2 is not None:
                signals["r_only"] = p2
        return dict(if_ok=if_ok, if_reason=if_reason, only_if_ok=only_if_ok, only_if_reason=only_if_reason)


def _choice(
    predictor, letters: tuple[str, ...], context: str, question: str, options: list[str]
) -> dict[str, float] | None:
    """One multiple choice: each option's probability from the letters' log-probabilities (None: unparsed)."""
    listing = "\n".join(f"{letter}) {option}" for letter, option in zip(letters, options, strict=False))
    try:
        out = predictor(context=context, question=question, options=listing, config=dict(LOGPROBS))
    except AdapterParseError:
        return None
    probs = option_probabilities(getattr(out, "logprobs", None), str(out.choice), len(options), letters)
    return dict(zip(options, probs, strict=True))


def _ask(predictor, keys: tuple[str, str], config: dict, **inputs) -> tuple[str, str, float | None]:
    """(verdict, reason, P(keys[0])); the probability falls back to the verdict itself when the LM
    gives no logprobs."""
    try:
        out = predictor(**inputs, config=config)
    except AdapterParseError as exc:
        return UNJUDGED, f"unparsed judge output: {str(exc)[:200]}", None
    p = verdict_probability(getattr(out, "logprobs", None), keys)
    return str(out.verdict), str(out.reason), p if p is not None else float(str(out.verdict) == keys[0])


def judge_status(if_ok: bool | None, only_if_ok: bool | None) -> str:
    if if_ok is False:
        return "rejected:judge_if"
    if if_ok is None or only_if_ok is None:
        return "error:judge_unparsed"
    if not only_if_ok:
        return "rejected:judge_only_if"
    return "accepted"
