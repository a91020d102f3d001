"""FaithEval context constructions: unanswerable, inconsistent, counterfactual.

Each generator also writes a short justification: the paper found that asking for one improves
the generated contexts, and it is kept with the case for reviewers.
"""

import dspy

from signatures.answer_swap import ProposeWrongAnswer


class RewriteWithoutAnswer(dspy.Signature):
    """A sentence of a passage gives away the answer to a question. Rewrite the sentence so that it
    stays on the same topic and reads naturally in the passage but no longer states or implies the
    answer, so that a reader can no longer answer the question. Do not mention the answer."""

    question: str = dspy.InputField()
    sentence: str = dspy.InputField()
    answer: str = dspy.InputField(desc="must not appear in the rewritten sentence")
    justification: str = dspy.OutputField(desc="one short sentence: why the question is now unanswerable")
    rewritten_sentence: str = dspy.OutputField()


class ProposeConflictingAnswer(ProposeWrongAnswer):
    """You write test cases with conflicting evidence. Given a question and its correct answer, name the
    type of the answer and propose a different answer of exactly that type which a second, conflicting
    document could plausibly claim. Never repeat the correct answer or any phrase in `avoid`; give only
    the answer phrase, then one short sentence of justification."""

    justification: str = dspy.OutputField(desc="one short sentence: why the new answer is plausible")


class WriteSupportingParagraph(dspy.Signature):
    """Write one short encyclopedic paragraph (two or three sentences) for a science question. It must
    state, as established fact, a claim that makes `target_option` the correct answer, repeating the
    words of `target_option`. Never mention any of the `other_options`. Write confidently, as a
    reference text would."""

    question: str = dspy.InputField()
    target_option: str = dspy.InputField(desc="the answer the paragraph must support")
    other_options: list[str] = dspy.InputField(desc="must not appear in the paragraph")
    paragraph: str = dspy.OutputField(desc="two or three sentences")
    justification: str = dspy.OutputField(desc="at most ten words: which sentence supports the target option")


class ContinueSupportingParagraph(dspy.Signature):
    """Write the next paragraph of an encyclopedic text that begins with `paragraph`: two or three
    sentences on the same topic that agree with every claim in it, adding detail (how, why, an
    example). It must make sense on its own (name its subject; no "this" or "it" pointing back) and
    must not mention any of the `avoid` phrases."""

    paragraph: str = dspy.InputField(desc="the text so far")
    avoid: list[str] = dspy.InputField(desc="phrases that must not appear")
    next_paragraph: str = dspy.OutputField(desc="two or three sentences")
