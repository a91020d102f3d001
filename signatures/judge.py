"""The judge's questions about one generated case: "if" and "only-if".

Two families. The reasoned signatures (JudgeSupport, JudgeUniqueness, JudgeAnswerability) give
a reason before a verdict. JudgeCheck and ExtractAnswers are built for scoring a small model:
JudgeCheck asks one yes/no check with the context first and the check last, so every check on
the same context shares the prompt prefix (llama.cpp resumes from the cached prefix) and the
verdict's probability comes from one token's log-probabilities; ExtractAnswers asks the model to
do what small models do well, read the answers off the context, and leaves the comparison to code.
ChooseAnswer turns support into a multiple choice among the expected answer and the other answers
the model reads elsewhere in the context: the probability of each letter says how strongly the
context gives each option, so a context giving two answers splits it.
Verdicts are Literal so schema-constrained decoding can only produce a valid one.
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


class JudgeCheck(dspy.Signature):
    """You check test cases for reading comprehension. Read the context and the question, then answer
    the check with yes or no. Judge only what the context says; ignore what you know about the world."""

    context: str = dspy.InputField()
    question: str = dspy.InputField()
    check: str = dspy.InputField()
    verdict: Literal["yes", "no"] = dspy.OutputField()


class ExtractAnswers(dspy.Signature):
    """Read the context and list every answer to the question that the context gives. Copy each answer
    as a short span from the context. If the context does not answer the question, give an empty list.
    Judge only what the context says; ignore what you know about the world."""

    context: str = dspy.InputField()
    question: str = dspy.InputField()
    answers: list[str] = dspy.OutputField(desc="short spans copied from the context; [] if it gives none")


class ChooseAnswer(dspy.Signature):
    """Read the context and answer the multiple-choice question: pick the option that the context gives
    as the answer to the question. Pick "none of these" when the context gives none of the options as
    the answer. Judge only what the context says; ignore what you know about the world."""

    context: str = dspy.InputField()
    question: str = dspy.InputField()
    options: str = dspy.InputField(desc="one option per line after its letter")
    # A fixed letter set whatever the number of options: every choice on one context shares the prompt
    # prefix, and a letter past the last option simply gets no probability mass.
    choice: Literal["A", "B", "C", "D"] = dspy.OutputField()


class ChooseOption(dspy.Signature):
    """Read the context and answer the multiple-choice question: pick the option that the context gives
    as the answer to the question. Pick "none of these" when the context gives none of the options as
    the answer. Judge only what the context says; ignore what you know about the world."""

    context: str = dspy.InputField()
    question: str = dspy.InputField()
    options: str = dspy.InputField(desc="one option per line after its letter")
    # A multiple-choice question's own options (up to five, as in ARC) plus "none of these".
    choice: Literal["A", "B", "C", "D", "E", "F"] = dspy.OutputField()
