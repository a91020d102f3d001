"""Demonstrations for the few-shot settings, disjoint from the cases they are shown with.

AutoDebug's mitigation (Table 6) compares demonstrations with clean evidence against demonstrations
with adversarial evidence. Here both come from the bench's own accepted cases of the same task,
in two folds split by a hash of the seed: a case of one fold is asked with k demonstrations drawn
from the other fold, so no case ever sees its own seed. The clean demonstrations are the originals
of exactly the seeds the adversarial ones come from, so the two settings differ only in the evidence.
"""

from __future__ import annotations

import hashlib
import random

import dspy

FOLDS = 2


def fold_of(seed_id: str) -> int:
    return int(hashlib.sha256(str(seed_id).encode()).hexdigest(), 16) % FOLDS


def _demo(context: str, question: str, answer: str) -> dspy.Example:
    return dspy.Example(context=context, question=question, answer=answer).with_inputs("context", "question")


class DemoBook:
    """Per (task, fold, kind) the demonstrations; `key` names the set a case is asked with."""

    def __init__(self, cases_by_task: dict[str, list[dspy.Example]], k: int, seed: int = 0):
        self.sets: dict[str, list[dspy.Example]] = {}
        for task, cases in cases_by_task.items():
            one_per_seed = {}
            for case in sorted(cases, key=lambda c: str(c.id)):
                one_per_seed.setdefault(str(case.seed_id), case)
            for fold in range(FOLDS):
                pool = [c for s, c in sorted(one_per_seed.items()) if fold_of(s) != fold]
                chosen = random.Random(f"{seed}:{task}:{fold}").sample(pool, min(k, len(pool)))
                if not chosen:
                    continue
                self.sets[f"{task}:{fold}:clean"] = [
                    _demo(c.original_context, c.question, (list(c.original_answers) or [""])[0]) for c in chosen]
                self.sets[f"{task}:{fold}:adversarial"] = [
                    _demo(c.context, c.question, (list(c.answers) or [""])[0]) for c in chosen]

    def key(self, task: str, seed_id: str, setting: str) -> str | None:
        """The demonstration set for a case of this seed in a few-shot setting; None if there is none."""
        kind = setting.removeprefix("few_shot_")
        key = f"{task}:{fold_of(seed_id)}:{kind}"
        return key if key in self.sets else None

    def get(self, key: str) -> list[dspy.Example]:
        return self.sets.get(key, [])
