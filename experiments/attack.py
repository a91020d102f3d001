"""Attack generators as optimisable units, and the scorer behind the attack metric.

A generator is a DSPy program plus the two functions that connect it to seeds and cases: what
its forward() takes from a seed, and how its prediction becomes a case the validation stage and
the targets understand. The scorer runs that validation (checks already done by the program,
then the judge) and asks every target the perturbed and the original question, and turns the
outcome into `metrics.attack.attack_score`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import dspy

from experiments.errors import error_status
from experiments.known_names import known_in_pool
from experiments.lm.registry import ResolvedLM
from experiments.readers import readers_for
from experiments.validation import validate
from metrics.attack import attack_score, is_valid
from metrics.evaluation import score_record
from programs.answer_swap import AnswerSwap
from programs.faitheval import UNKNOWN, Unanswerable
from programs.judge import CaseJudge
from programs.target_reader import TargetReader

# 2: a bootstrapping trace holding a reply the program threw away scores 0 (`Generator.every_reply_used`).
METRIC_VERSION = "attack_metric/2"


@dataclass(frozen=True)
class Generator:
    name: str
    build: Callable[..., dspy.Module]  # (max_attempts, **dials) -> program
    to_case: Callable[[dspy.Example, dspy.Prediction], dict]
    # The prompt setting a target resists in: FaithEval's task instruction lets it say "unknown".
    setting: str = "open_book"
    # Whether the judge's verdict belongs in the metric's validity term: measured against blind reviews
    # (docs/results/validity.md), it agrees beyond chance on answer swaps and unanswerable cases and not
    # on enriched contexts (κ -0.10), where the checks alone decide.
    judge_informative: bool = True
    # Whether the program used every reply its predictors gave for the case: a trace holding a reply the
    # program threw away (a rewrite that still named the answer, a proposal the checks refused) must not become
    # a demonstration, since DSPy's bootstrapping may pick any call of a predictor as the demo.
    every_reply_used: Callable[[dict], bool] = lambda case: True

    @staticmethod
    def inputs(example: dspy.Example) -> dict:
        return {"question": example.question, "context": example.context, "answers": list(example.answers)}


def _status(prediction) -> str:
    return f"rejected:{prediction.rejection}" if prediction.rejection else "accepted"


def _swap_case(example, out) -> dict:
    return {
        "task": "answer_swap",
        "context": out.context,
        "answers": [out.new_answer] if out.new_answer else [],
        "proposals": out.proposals,
        "checks": out.checks,
        "status": _status(out),
    }


def _unanswerable_case(example, out) -> dict:
    return {
        "task": "unanswerable",
        "context": out.context,
        "answers": [UNKNOWN],
        "judge_kind": "unanswerable",
        "edits": out.edits,
        "checks": out.checks,
        "status": _status(out),
    }


def _answer_swap(max_attempts: int, distance: str = "proposed") -> dspy.Module:
    # The pivot's own proposal unless a dial says otherwise: benches, optimisers and pivot comparisons study
    # the pivot as a generator, and a code-made answer leaves nothing of it to compare or tune.
    return AnswerSwap(max_attempts, distance=distance, known_name=known_in_pool)


def _unanswerable(max_attempts: int, removal: str = "rewrite", lures: str = "keep") -> dspy.Module:
    return Unanswerable(removal=removal, lures=lures)


def _no_refused_proposal(case: dict) -> bool:
    return all(p.get("problem") is None for p in case.get("proposals") or [])


def _no_dropped_rewrite(case: dict) -> bool:
    # A sentence the dials drop in code (`removal: drop`, `lures: remove`; its edit says `why`) threw no
    # reply of the pivot away.
    return all(e.get("to") is not None for e in case.get("edits") or [] if "why" not in e)


GENERATORS = {
    "answer_swap": Generator("answer_swap", _answer_swap, _swap_case, every_reply_used=_no_refused_proposal),
    "unanswerable": Generator(
        "unanswerable",
        _unanswerable,
        _unanswerable_case,
        setting="task_instruction",
        every_reply_used=_no_dropped_rewrite,
    ),
}


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
        self.readers: dict[str, TargetReader] = readers_for(targets, [])

    def prepare(self, examples: list) -> None:
        """Keep base-model demonstrations out of the seeds under attack."""
        self.readers = readers_for(self.targets, examples)

    def assess(self, case: dict, targets: list[ResolvedLM] | None = None) -> dict:
        [case] = validate(self.judge_lm, self.judge, [case])
        asked = self.targets if targets is None else targets
        answers = {t.config.label: self._ask_both(t, case) for t in asked} if is_valid(case) else {}
        wrong = [not a["perturbed_correct"] for a in answers.values() if a["perturbed_correct"] is not None]
        return {
            **case,
            "targets": answers,
            "valid": is_valid(case),
            "attack_score": attack_score(is_valid(case), wrong, self.strength),
        }

    def _ask_both(self, target: ResolvedLM, case: dict) -> dict:
        out = {}
        for variant, context, answers in (
            ("perturbed", case["context"], case["answers"]),
            ("original", case["original_context"], case["original_answers"]),
        ):
            prediction, correct = self._ask(target, case, variant, context, answers)
            out[variant] = prediction
            out[f"{variant}_correct"] = correct
        return out

    def _ask(self, target: ResolvedLM, case: dict, variant: str, context: str, answers: list[str]):
        try:
            with dspy.context(lm=target.lm, adapter=target.adapter()):
                answer = self.readers[target.config.label](
                    setting=self.setting, question=case["question"], context=context
                ).answer
        except Exception as exc:  # noqa: BLE001 - a target's failure is that answer's error, not the run's
            return error_status(exc), None
        scored = score_record(
            {
                "task": case.get("task", ""),
                "variant": variant,
                "prediction": answer,
                "answers": answers,
                "question": case["question"],
                "status": "ok",
            }
        )
        return answer, bool(scored["task_correct"])


class AttackMetric:
    """The DSPy metric: generate → validate → ask the optimisation targets → attack score.

    With `feedback` it returns GEPA's score-plus-feedback prediction, the feedback being what
    the checks, the judge and the targets said about this case.
    """

    def __init__(self, generator: Generator, scorer: AttackScorer, targets: list[ResolvedLM], feedback: bool = False):
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
