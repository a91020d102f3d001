"""Asking one target the bench's asks: the evaluate task's reader and decodings, one reader per
demonstration set."""

from __future__ import annotations

import time

import dspy

from experiments.bench.demos import DemoBook
from experiments.bench.sharing import Ask
from experiments.errors import error_status, error_text
from experiments.lm.registry import ResolvedLM
from experiments.readers import DECODINGS
from programs.target_reader import TargetReader

# Both few-shot settings use the reader's few-shot prompt; their demonstrations differ.
READER_SETTING = {"few_shot_clean": "few_shot", "few_shot_adversarial": "few_shot"}


class TargetAsker:
    def __init__(self, target: ResolvedLM, book: DemoBook):
        self.target = target
        self.book = book
        self.readers: dict[str, TargetReader] = {}

    def reader(self, demos: str) -> TargetReader:
        if demos not in self.readers:
            # No demonstration outside the few-shot settings, base models included (see
            # experiments.readers.readers_for).
            self.readers[demos] = TargetReader(self.book.get(demos) if demos else [])
        return self.readers[demos]

    def process(self, ask: Ask) -> dict:
        started = time.perf_counter()
        record = {
            "id": ask.id,
            "target": ask.target,
            "setting": ask.setting,
            "decoding": ask.decoding,
            "demos": ask.demos,
            "question": ask.question,
            "context": ask.context,
        }
        config = dict(DECODINGS[ask.decoding])
        if ask.decoding == "sampled":
            config["rollout_id"] = self.target.config.seed
        try:
            with dspy.context(lm=self.target.lm, adapter=self.target.adapter()):
                out = self.reader(ask.demos)(
                    setting=READER_SETTING.get(ask.setting, ask.setting),
                    question=ask.question,
                    context=ask.context,
                    config=config,
                )
        except Exception as exc:  # noqa: BLE001 - an unparsed or failed answer is that ask's error
            return {
                **record,
                "prediction": None,
                "status": error_status(exc),
                "error": error_text(exc, 500),
                "seconds": round(time.perf_counter() - started, 3),
            }
        return {
            **record,
            "prediction": out.answer,
            "reasoning": out.reasoning,
            "status": "ok",
            "seconds": round(time.perf_counter() - started, 3),
        }
