"""The offline entailment fallback: the judge LM asked whether one statement entails another."""

from typing import Literal

import dspy


class Entails(dspy.Signature):
    """Decide whether the premise entails the hypothesis: if the premise is true, must the hypothesis be
    true as well? Answer about meaning, not wording."""

    premise: str = dspy.InputField()
    hypothesis: str = dspy.InputField()
    verdict: Literal["entailment", "not_entailment"] = dspy.OutputField()
