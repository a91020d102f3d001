"""Attack generators as optimisable units, and the scorer behind the attack metric.

A generator's registration (`experiments.task_registry.Attack`) holds its program and how its
prediction becomes a case the validation stage and the targets understand. The scorer runs that
validation (checks already done by the program, then the judge), asks every target the perturbed
and the original question, and turns the outcome into `metrics.attack.attack_score`.
"""

from __future__ import annotations

import dspy

from experiments.lm.registry import ResolvedLM
from experiments.target_panel import TargetPanel
from experiments.task_registry import Attack
from experiments.validation import validate
from metrics.attack import attack_score, is_valid
from programs.judge import CaseJudge

# 2: a bootstrapping trace holding a reply the program threw away scores 0 (`Attack.every_reply_used`).
METRIC_VERSION = "attack_metric/2"


def attack_inputs(example: dspy.Example) -> dict:
    """What a generator's forward() takes from a seed."""
    return {"question": example.question, "context": example.context, "answers": list(example.answers)}


def case_status(prediction) -> str:
    return f"rejected:{prediction.rejection}" if prediction.rejection else "accepted"


def seed_case(example: dspy.Example) -> dict:
    return {
        "seed_id": example.id,
        "question": example.question,
        "original_context": example.context,
        "original_answers": list(example.answers),
        "source": example.get("source", ""),
    }


class AttackScorer:
    """Judge + targets for one generated case. Targets only see cases that are valid."""

    def __init__(
        self, judge_lm: ResolvedLM | None, targets: list[ResolvedLM], strength: float, setting: str = "open_book"
    ):
        self.judge_lm, self.targets, self.strength, self.setting = judge_lm, targets, strength, setting
        self.judge = CaseJudge()
        self.panel = TargetPanel(targets, setting)

    def prepare(self, examples: list) -> None:
        """Keep base-model demonstrations out of the seeds under attack."""
        self.panel.prepare(examples)

    def assess(self, case: dict, targets: list[ResolvedLM] | None = None) -> dict:
        [case] = validate(self.judge_lm, self.judge, [case])
        asked = self.targets if targets is None else targets
        answers = self.panel.ask(case, asked) if is_valid(case) else {}
        wrong = [not a["perturbed_correct"] for a in answers.values() if a["perturbed_correct"] is not None]
        return {
            **case,
            "targets": answers,
            "valid": is_valid(case),
            "attack_score": attack_score(is_valid(case), wrong, self.strength),
        }


class AttackMetric:
    """The DSPy metric: generate → validate → ask the optimisation targets → attack score.

    With `feedback` it returns GEPA's score-plus-feedback prediction, the feedback being what
    the checks, the judge and the targets said about this case.
    """

    def __init__(self, generator: Attack, scorer: AttackScorer, targets: list[ResolvedLM], feedback: bool = False):
        self.generator, self.scorer, self.targets, self.feedback = generator, scorer, targets, feedback

    def __call__(self, example, prediction, trace=None, pred_name=None, pred_trace=None):
        case = {**seed_case(example), **self.generator.to_case(example, prediction)}
        if trace is not None and not self.feedback and not self.generator.every_reply_used(case):
            # Bootstrapping demonstrations (BootstrapFewShot, MIPROv2's demo sets: DSPy passes the trace; GEPA
            # scores with the feedback metric): measured, BootstrapFewShot kept a rewrite that copied its
            # sentence, answer and all, because the program had dropped that sentence and the case was valid.
            return 0.0
        assessed = self.scorer.assess(case, self.targets)
        score = assessed["attack_score"]
        if not self.feedback:
            return score
        return dspy.Prediction(score=score, feedback=explain(assessed))


def explain(case: dict) -> str:
    if case["status"].startswith("rejected:") and not case.get("judge"):
        return f"The case failed the check {case['status'].removeprefix('rejected:')}; it is worth nothing."
    verdicts = case.get("judge") or {}
    if not case["valid"]:
        return (
            f"The judge rejected the case (if={verdicts.get('if')}: {verdicts.get('if_reason', '')}; "
            f"only-if={verdicts.get('only_if')}: {verdicts.get('only_if_reason', '')})."
        )
    fooled = [name for name, a in case["targets"].items() if a["perturbed_correct"] is False]
    return (
        f"Valid case. Targets answering it wrongly: {', '.join(fooled) or 'none'} of "
        f"{len(case['targets'])}; expected {case['answers'][0]!r}."
    )
