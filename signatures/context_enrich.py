"""ReEval Category 2 (context enriching): supporting sentence, condensation, merge."""

import dspy


class SelectSupportingSentence(dspy.Signature):
    """Copy, word for word, the one sentence of the evidence that states the answer to the question.
    Copy it exactly as it appears, without changing or adding anything."""

    question: str = dspy.InputField()
    evidence: str = dspy.InputField()
    answer: str = dspy.InputField()
    sentence: str = dspy.OutputField(desc="one sentence copied verbatim from the evidence")


class CondensePassages(dspy.Signature):
    """Condense the retrieved passages into one short, coherent background paragraph (three to five
    sentences) about the topic of the question. Keep facts from the passages only, invent nothing, and
    do not answer the question."""

    question: str = dspy.InputField()
    passages: list[str] = dspy.InputField(desc="retrieved Wikipedia passages")
    background: str = dspy.OutputField(desc="one paragraph, three to five sentences")


class MergeEvidence(dspy.Signature):
    """Write one passage that combines the background paragraph with the key sentence. Include the key
    sentence word for word, somewhere that reads naturally, and keep the rest of the background. Add
    no new facts."""

    background: str = dspy.InputField()
    key_sentence: str = dspy.InputField(desc="must appear verbatim in the passage")
    passage: str = dspy.OutputField()
