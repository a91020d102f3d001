"""The judge's questions about one generated case: "if" and "only-if", each with a reason.

Verdicts are Literal so schema-constrained decoding can only produce a valid one; the reason
comes first so the verdict follows from it.
"""

from typing import Literal

import dspy


class JudgeSupport(dspy.Signature):
    """You check test cases for reading comprehension. Decide whether the context, taken on its own,
    states or directly implies that the expected answer is the answer to the question. Ignore what you
    know about the world: judge only what the context says."""

    question: str = dspy.InputField()
    context: str = dspy.InputField()
    expected_answer: str = dspy.InputField()
    reason: str = dspy.OutputField(desc="one or two short sentences")
    verdict: Literal["yes", "no"] = dspy.OutputField(desc="yes if the context supports the expected answer")


class JudgeUniqueness(dspy.Signature):
    """You check test cases for reading comprehension. Decide whether the context, taken on its own,
    supports only the expected answer, or whether it also supports some other, different answer to the
    question. Ignore what you know about the world: judge only what the context says."""

    question: str = dspy.InputField()
    context: str = dspy.InputField()
    expected_answer: str = dspy.InputField()
    reason: str = dspy.OutputField(desc="one or two short sentences")
    verdict: Literal["only_expected", "other_answer_supported"] = dspy.OutputField()


class JudgeAnswerability(dspy.Signature):
    """You check test cases for reading comprehension. Decide whether the question can be answered from
    the context alone. Ignore what you know about the world: judge only what the context says."""

    question: str = dspy.InputField()
    context: str = dspy.InputField()
    reason: str = dspy.OutputField(desc="one or two short sentences")
    verdict: Literal["answerable", "unanswerable"] = dspy.OutputField()
