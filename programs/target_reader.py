"""How a target model is asked, per prompting setting (ReEval/AutoDebug and FaithEval):
closed-book, open-book zero-shot, few-shot open-book, opinion-based ("faithful") prompt,
answer-then-reasoning chain of thought, and FaithEval's task-specific instruction."""

from __future__ import annotations

import dspy

from signatures.target import OPINION_QUESTION, AnswerThenReason, ClosedBookAnswer, InstructedAnswer, OpenBookAnswer

SETTINGS = ("closed_book", "open_book", "few_shot", "opinion", "cot", "task_instruction")
SPEAKER = "Bob"


def opinion_inputs(question: str, context: str) -> dict[str, str]:
    """Zhou et al.'s opinion-based prompt: the context becomes a person's statement."""
    return {"context": context, "question": OPINION_QUESTION.format(speaker=SPEAKER, question=question.rstrip(" ?"))}


# 2: no demonstration outside the few-shot setting, base models included.
# 3: opinion asked with the open-book signature, its words after the passage, so that open-book and opinion
# share the system message and the passage as a prefix.
VERSION = "target_reader/3"


class TargetReader(dspy.Module):
    def __init__(self, demos: list[dspy.Example] | None = None):
        super().__init__()
        self.closed_book = dspy.Predict(ClosedBookAnswer)
        self.open_book = dspy.Predict(OpenBookAnswer)
        self.few_shot = dspy.Predict(OpenBookAnswer)
        self.few_shot.demos = list(demos or [])
        self.opinion = dspy.Predict(OpenBookAnswer)
        self.cot = dspy.Predict(AnswerThenReason, max_tokens=160)
        self.task_instruction = dspy.Predict(InstructedAnswer)

    def forward(self, setting: str, question: str, context: str, config: dict | None = None) -> dspy.Prediction:
        config = config or {}
        if setting == "closed_book":
            out = self.closed_book(question=question, config=config)
        elif setting == "opinion":
            out = self.opinion(**opinion_inputs(question, context), config=config)
        elif setting in SETTINGS:
            out = getattr(self, setting)(question=question, context=context, config=config)
        else:
            raise ValueError(f"unknown prompt setting {setting!r}; settings: {', '.join(SETTINGS)}")
        return dspy.Prediction(answer=str(out.answer), reasoning=str(out.get("reasoning", "") or ""))
