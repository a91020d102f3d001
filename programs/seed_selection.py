"""ReEval seed selection: the pivot answers each question closed-book and open-book.

Which seeds a perturbation keeps (open-book correct, closed-book wrong, …) is decided on
these two answers by `metrics.seed_table`; this module only asks.
"""

import dspy

from signatures.qa import ClosedBookAnswer, OpenBookAnswer


class SeedSelection(dspy.Module):
    def __init__(self):
        super().__init__()
        self.closed_book = dspy.Predict(ClosedBookAnswer)
        self.open_book = dspy.Predict(OpenBookAnswer)

    def forward(self, question: str, context: str) -> dspy.Prediction:
        closed = self.closed_book(question=question)
        opened = self.open_book(question=question, context=context)
        return dspy.Prediction(closed_answer=closed.answer, open_answer=opened.answer)
