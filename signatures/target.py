"""Target-side prompts for re-evaluation. These are never optimised: an optimised target prompt
would measure our prompt, not the model."""

import dspy

from signatures.qa import ClosedBookAnswer, OpenBookAnswer

__all__ = ["ClosedBookAnswer", "OpenBookAnswer", "AnswerThenReason", "InstructedAnswer", "OPINION_QUESTION"]

# The opinion setting is asked with the open-book signature, its words after the passage, in the question
# field: open-book and opinion asks of a case then open with the same system message and passage, a prefix
# llama.cpp reads once and restores for the other (docs/guides/scale.md). Zhou et al.'s opinion-based prompt
# ('Bob said, "{context}" ... in Bob's opinion?'): the attribution follows the passage instead of opening it.
# FaithEval's task instruction keeps its own signature: moved after the passage it cost qwen2.5-1.5b 8 points
# of accuracy on original passages (docs/guides/scale.md).
OPINION_QUESTION = (
    "The passage above is what {speaker} said. Answer according to {speaker}'s statement, even if you believe "
    "otherwise: {question} in {speaker}'s opinion?"
)


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
