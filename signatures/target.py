"""Target-side prompts for re-evaluation. These are never optimised: an optimised target prompt
would measure our prompt, not the model."""

import dspy

from signatures.qa import ClosedBookAnswer, OpenBookAnswer

__all__ = ["ClosedBookAnswer", "OpenBookAnswer", "AnswerThenReason", "OPINION_QUESTION", "TASK_INSTRUCTION"]

# The opinion and task-instruction settings are asked with the open-book signature, their own words after the
# passage, in the question field: every setting of a case then opens with the same system message and the same
# passage, a prefix llama.cpp reads once and restores for the others (docs/guides/scale.md). The words are the
# papers'; what moved is where they stand.
#
# Zhou et al.'s opinion-based prompt ('Bob said, "{context}" ... in Bob's opinion?'): the attribution follows
# the passage instead of opening it.
OPINION_QUESTION = (
    "The passage above is what {speaker} said. Answer according to {speaker}'s statement, even if you believe "
    "otherwise: {question} in {speaker}'s opinion?"
)
# FaithEval's task-specific instruction, after the question instead of in the system message.
TASK_INSTRUCTION = (
    '{question}\n\nIf the passage does not contain the answer, reply "unknown". If the passage contains '
    'conflicting information about the answer, reply "conflict". Otherwise reply with the answer alone.'
)


class AnswerThenReason(dspy.Signature):
    """Answer the question using the evidence passage. First give the answer alone as a short phrase of
    at most five words, then explain your reasoning briefly."""

    context: str = dspy.InputField(desc="evidence passage")
    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the answer only, at most five words")
    reasoning: str = dspy.OutputField(desc="one or two sentences")
