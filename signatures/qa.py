"""Answering signatures: the pivot's closed-book and open-book zero-shot answers (ReEval seed selection)."""

import dspy


class ClosedBookAnswer(dspy.Signature):
    """Answer the question from your own knowledge. Reply with the answer alone: a short phrase of at
    most five words, no explanation, no full sentence."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the answer only, at most five words")


class OpenBookAnswer(dspy.Signature):
    """Answer the question using the evidence passage. Reply with the answer alone, copied from the
    passage where possible: a short phrase of at most five words, no explanation."""

    context: str = dspy.InputField(desc="evidence passage")
    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="the answer only, at most five words")
