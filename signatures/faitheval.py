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


class WriteCounterfactualContext(dspy.Signature):
    """Write a short encyclopedic passage of two or three paragraphs on the topic of a science question.
    One or two sentences must clearly state a claim that makes `target_option` the correct answer,
    using the words of that option; the other paragraphs give related, neutral background. Never
    mention any of the `other_options`. Write confidently, as a reference text would."""

    question: str = dspy.InputField()
    target_option: str = dspy.InputField(desc="the answer the passage must support")
    other_options: list[str] = dspy.InputField(desc="must not appear in the passage")
    justification: str = dspy.OutputField(desc="one short sentence: which sentence supports the target option")
    passage: str = dspy.OutputField(desc="two or three paragraphs separated by blank lines")
