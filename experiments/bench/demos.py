"""Demonstrations for the few-shot settings, disjoint from the cases they are shown with.

AutoDebug's mitigation (Table 6) compares demonstrations with clean evidence against demonstrations
with adversarial evidence. Here both come from the bench's own accepted cases of the same task, in
two folds (seeds ordered by a hash of their id, dealt alternately, so the folds stay balanced on a
handful of seeds): a case of one fold is asked with k demonstrations drawn from the other fold, so
no case ever sees its own seed. The clean demonstrations are the originals
of exactly the seeds the adversarial ones come from, so the two settings differ only in the evidence.
"""

from __future__ import annotations

import hashlib
import random

import dspy

FOLDS = 2


def folds(seed_ids) -> dict[str, int]:
    ordered = sorted({str(s) for s in seed_ids}, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    return {seed: i % FOLDS for i, seed in enumerate(ordered)}


def _demo(context: str, question: str, answer: str) -> dspy.Example:
    return dspy.Example(context=context, question=question, answer=answer).with_inputs("context", "question")


class DemoBook:
    """Per (task, fold, kind) a set of demonstrations; `key` names the set a case is asked with."""

    def __init__(self, cases_by_task: dict[str, list[dspy.Example]], k: int, seed: int = 0):
        self.sets: dict[str, list[dspy.Example]] = {}
        self.folds: dict[str, dict[str, int]] = {}
        self.keys: dict[tuple, str] = {}
        for task, cases in cases_by_task.items():
            one_per_seed = {}
            for case in sorted(cases, key=lambda c: str(c.id)):
                one_per_seed.setdefault(str(case.seed_id), case)
            self.folds[task] = fold = folds(one_per_seed)
            for f in range(FOLDS):
                pool = [c for s, c in sorted(one_per_seed.items()) if fold[s] != f]
                chosen = random.Random(f"{seed}:{task}:{f}").sample(pool, min(k, len(pool)))
                if not chosen:
                    continue
                for kind, demos in (
                    (
                        "clean",
                        [_demo(c.original_context, c.question, (list(c.original_answers) or [""])[0]) for c in chosen],
                    ),
                    ("adversarial", [_demo(c.context, c.question, (list(c.answers) or [""])[0]) for c in chosen]),
                ):
                    # Named by content: the same demonstrations (clean ones drawn for two tasks from one seed)
                    # make the same asks, and cases made again make new ones.
                    blob = "\x00".join(f"{d.question}\x00{d.context}\x00{d.answer}" for d in demos)
                    key = f"{kind}:{hashlib.sha256(blob.encode()).hexdigest()[:12]}"
                    self.sets[key] = demos
                    self.keys[(task, f, kind)] = key

    def key(self, task: str, seed_id: str, setting: str) -> str | None:
        """The demonstration set for a case of this seed in a few-shot setting; None if there is none."""
        fold = self.folds.get(task, {}).get(str(seed_id))
        return self.keys.get((task, fold, setting.removeprefix("few_shot_")))

    def get(self, key: str) -> list[dspy.Example]:
        return self.sets.get(key, [])
