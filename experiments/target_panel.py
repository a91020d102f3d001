"""Every target asked one generated case, perturbed and original, in one prompt setting: what a pivot comparison
scores attack success and flips from, and what the attack metric scores a valid case by.

A multiple-choice case (counterfactual) keeps its options, so its answers are scored by option; its original is
the question without a passage, as the generator's closed-book twin has it.
"""

from __future__ import annotations

import dspy

from experiments import task_registry
from experiments.errors import error_status
from experiments.lm.registry import ResolvedLM
from experiments.readers import readers_for
from metrics.scores import score_record

SCORED_FIELDS = ("task", "question", "options", "choice_labels")


def original_of(case: dict) -> tuple[str, list[str], str | None]:
    """(context, answers, option label) of the case before perturbation."""
    options, labels = case.get("options"), case.get("choice_labels")
    if options and labels and case.get("original_answer_label") in labels:
        label = case["original_answer_label"]
        return "", [options[labels.index(label)]], label
    return case.get("original_context") or "", list(case.get("original_answers") or []), None


class TargetPanel:
    def __init__(self, targets: list[ResolvedLM], setting: str):
        self.targets, self.setting = targets, setting
        self.readers = readers_for(targets, [])

    def prepare(self, examples: list) -> None:
        """Keep base-model demonstrations out of the seeds under attack."""
        self.readers = readers_for(self.targets, examples)

    def ask(self, case: dict, targets: list[ResolvedLM] | None = None) -> dict[str, dict]:
        return {t.config.label: self._both(t, case) for t in (self.targets if targets is None else targets)}

    def _both(self, target: ResolvedLM, case: dict) -> dict:
        context, answers, label = original_of(case)
        out = {}
        for variant, text, golds, option in (
            ("perturbed", case["context"], case["answers"], case.get("answer_label")),
            ("original", context, answers, label),
        ):
            out[variant], out[f"{variant}_correct"] = self._one(target, case, variant, text, golds, option)
        return out

    def _one(self, target: ResolvedLM, case: dict, variant: str, context: str, answers: list, label):
        try:
            with dspy.context(lm=target.lm, adapter=target.adapter()):
                answer = self.readers[target.config.label](
                    setting=self.setting, question=case["question"], context=context
                ).answer
        except Exception as exc:  # noqa: BLE001 - a target's failure is that answer's error, not the run's
            return error_status(exc), None
        scored = score_record(
            {
                **{k: case[k] for k in SCORED_FIELDS if k in case},
                "task_answer": task_registry.task_answer(case.get("task", "")),
                "variant": variant,
                "prediction": answer,
                "answers": answers,
                "answer_label": label,
                "status": "ok",
            }
        )
        correct = scored.get("task_correct")
        return answer, None if correct is None else bool(correct)
