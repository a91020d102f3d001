"""Target-side prompts for re-evaluation. These are never optimised: an optimised target prompt
would measure our prompt, not the model."""

import dspy

from signatures.qa import ClosedBookAnswer, OpenBookAnswer

__all__ = ["ClosedBookAnswer", "OpenBookAnswer", "OpinionAnswer", "AnswerThenReason", "InstructedAnswer"]


class OpinionAnswer(dspy.Signature):
    """Read what the named person said and answer the question according to that person's statement,
    even if you believe otherwise. Reply with the answer alone: a short phrase of at most five words."""

    context: str = dspy.InputField(desc="a statement attributed to a person")
    question: str = dspy.InputField(desc="asked about that person's opinion")
    answer: str = dspy.OutputField(desc="the answer only, at most five words")


class AnswerThenReason(dspy.Signature):
    """Answer the question using the evidence passage. First give the answer alone as a short phrase of
    at most five words, then explain your reasoning briefly."""

    context: str = dspy.InputField(desc="evidence passage")
    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the answer only, at most five words")
    reasoning: str = dspy.OutputField(desc="one or two sentences")


class InstructedAnswer(dspy.Signature):
    """Answer the question using the evidence passage only. If the passage does not contain the answer,
    reply "unknown". If the passage contains conflicting information about the answer, reply
    "conflict". Otherwise reply with the answer alone: a short phrase of at most five words."""

    context: str = dspy.InputField(desc="evidence passage")
    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the answer, or unknown, or conflict")
