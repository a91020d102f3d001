"""The judge: is a generated case valid? "if" (the context supports the expected answer — for an
unanswerable case, the context does not allow answering) and "only-if" (the context supports no
other answer). A judge output that does not parse is "unjudged", never valid or invalid.

"only-if" is asked only when "if" passed: a case failing "if" is invalid whatever the second
verdict says, and skipping it saves a third of the judge's calls on typical runs. The skipped
verdict is recorded as None with the reason SKIPPED, and only-if rates are conditional on "if"."""

from __future__ import annotations

from typing import Literal

import dspy
from dspy.utils.exceptions import AdapterParseError

from signatures.judge import JudgeAnswerability, JudgeSupport, JudgeUniqueness

UNJUDGED = "unjudged"
SKIPPED = "not asked: the if verdict already rejects the case"
CaseKind = Literal["answer", "unanswerable"]


def _ask(predictor, **inputs) -> tuple[str, str]:
    try:
        out = predictor(**inputs)
    except AdapterParseError as exc:
        return UNJUDGED, f"unparsed judge output: {str(exc)[:200]}"
    return str(out.verdict), str(out.reason)


class CaseJudge(dspy.Module):
    def __init__(self):
        super().__init__()
        self.support = dspy.Predict(JudgeSupport)
        self.uniqueness = dspy.Predict(JudgeUniqueness)
        self.answerability = dspy.Predict(JudgeAnswerability)

    def forward(self, question: str, context: str, expected_answer: str, kind: CaseKind = "answer",
                original_answer: str | None = None) -> dspy.Prediction:
        if kind == "unanswerable":
            verdict, if_reason = _ask(self.answerability, question=question, context=context)
            if_ok = None if verdict == UNJUDGED else verdict == "unanswerable"
        else:
            verdict, if_reason = _ask(self.support, question=question, context=context,
                                      expected_answer=expected_answer)
            if_ok = None if verdict == UNJUDGED else verdict == "yes"
        if if_ok is not True:
            return dspy.Prediction(if_ok=if_ok, if_reason=if_reason, only_if_ok=None, only_if_reason=SKIPPED,
                                   raw=(verdict, None))
        if kind == "unanswerable":
            # only-if: the answer the support was removed for is not still supported
            verdict2, only_if_reason = _ask(self.support, question=question, context=context,
                                            expected_answer=original_answer or "")
            only_if_ok = None if verdict2 == UNJUDGED else verdict2 == "no"
        else:
            verdict2, only_if_reason = _ask(self.uniqueness, question=question, context=context,
                                            expected_answer=expected_answer)
            only_if_ok = None if verdict2 == UNJUDGED else verdict2 == "only_expected"
        return dspy.Prediction(if_ok=if_ok, if_reason=if_reason, only_if_ok=only_if_ok,
                               only_if_reason=only_if_reason, raw=(verdict, verdict2))


def judge_status(if_ok: bool | None, only_if_ok: bool | None) -> str:
    if if_ok is False:
        return "rejected:judge_if"
    if if_ok is None or only_if_ok is None:
        return "error:judge_unparsed"
    if not only_if_ok:
        return "rejected:judge_only_if"
    return "accepted"
