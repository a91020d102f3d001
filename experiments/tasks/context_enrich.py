"""ReEval Category 2 as an experiment: two enriched copies (question- and evidence-focused) per seed."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

import dspy
from pydantic import ConfigDict, Field

from experiments import corpus, task_registry
from experiments.lm.registry import ResolvedLM
from experiments.tasks.dialled import DialledOptions
from experiments.tasks.seed_selection import SEED_RULES, select_seed
from experiments.tasks.seeded import JudgedTask
from programs.context_enrich import VERSION, ContextEnrich
from programs.seed_selection import SeedSelection

# More text around the evidence, the evidence away from the front; past the default the seed's passage is kept
# whole, since trimmed to its answer sentence among raw passages it read 63-77% valid, whole 95-100%
# (docs/results/strength.md).
LADDER = (
    (0.0, {"k": 1, "background": "condensed", "position": "first"}),
    (0.25, {"k": 3, "background": "condensed", "position": "first"}),
    (0.5, {"k": 4, "background": "passages", "position": "middle", "evidence": "passage"}),
    (0.75, {"k": 8, "background": "passages", "position": "middle", "evidence": "passage"}),
    (1.0, {"k": 16, "background": "passages", "position": "middle", "evidence": "passage"}),
)


# Not judged in a bench: on enriched copies the local judge's agreement with blind review is at chance and
# its rejections are mostly valid copies, while the string checks alone kept 95% valid
# (docs/results/validity.md).
@task_registry.task(
    "context_enrich",
    label="context enrich",
    version=VERSION,
    generator=True,
    seeded=True,
    rejudgeable=True,
    guidance="Valid if the passage still supports the expected answer (its key sentence answers the "
    "question) and states no other answer.",
    review_fields=(("kept supporting sentence", "supporting_sentence"),),
    bench_settings=("closed_book", "open_book", "opinion", "few_shot_clean", "few_shot_adversarial"),
    sweep_settings=("open_book",),
    ladder=LADDER,
    default_strength=0.25,
    card_text="ReEval context enriching: the sentence that answers the question is kept verbatim and merged with "
    "condensed retrieved passages, so the answer stays the same in a longer, noisier passage",
    paper="ReEval (Yu et al., 2023, arXiv:2310.12516)",
    arxiv="2310.12516",
    knowledge_conflict=task_registry.ConflictRole("control", {"k": 3, "lm_merge": False}),
    # Retrieved Wikipedia passages are written into its cases.
    extra_sources=("wiki_passages",),
    keeps_answer=True,
)
class ContextEnrichTask(JudgedTask):
    class Options(DialledOptions):
        model_config = ConfigDict(extra="forbid")
        generator: ClassVar[str] = "context_enrich"
        seeds: Literal["open_correct", "open_correct_closed_wrong", "all"] = Field(
            "open_correct_closed_wrong",
            description="which seed-table cells to perturb: read right open-book, and wrong closed-book too, "
            "or every seed",
        )
        k: int = Field(3, ge=1, le=16, description="retrieved passages per copy, from distinct titles")
        embedder: str = Field("all-MiniLM-L6-v2", description="all-MiniLM-L6-v2, all-mpnet-base-v2 or a hub id")
        # torch: configs written before the ONNX backends reproduce their runs, and it was the fastest
        # backend per CPU second that kept the float32 top 10 (docs/results/retrieval_at_scale.md).
        backend: Literal["torch", "onnx", "onnx-int8", "openvino"] = Field(
            "torch",
            description="how passages and queries are encoded: torch, onnx, onnx-int8 or openvino "
            "(bfloat16 on CPUs that have it: about 2x torch)",
        )
        corpus: str = Field(
            "wiki_passages",
            description="wiki_passages, JSONL/Parquet shards (a glob or directory) or hf:org/name@revision[:split]",
        )
        seed: int = Field(0, description="unused since context_enrich/10: the key evidence always comes first")
        lm_merge: bool = Field(
            True,
            description="ask the pivot to merge; a merge failing the checks falls back "
            "to inserting the key sentence in code (with the evidence first in a condensed background only)",
        )
        position: Literal["first", "middle", "last"] = Field(
            "first", description="where the kept evidence stands among the background"
        )
        evidence: Literal["sentence", "passage"] = Field(
            "sentence",
            description="what of the seed's passage is kept: the answer's sentence with what it leans on, or the "
            "whole passage (with background: passages, the seed's passage among k retrieved ones)",
        )
        background: Literal["condensed", "passages"] = Field(
            "condensed",
            description="the retrieved passages condensed by the pivot into one paragraph, or the passages "
            "themselves, one paragraph each (grows with k; no condensing call)",
        )

    def __init__(self, lms: dict[str, ResolvedLM], options: Options | None = None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.retriever = corpus.default_retriever(
            self.options.embedder, backend=self.options.backend, corpus=self.options.corpus
        )
        self.program = ContextEnrich(
            self.retriever,
            self.options.k,
            self.options.seed,
            self.options.lm_merge,
            position=self.options.position,
            background=self.options.background,
            evidence=self.options.evidence,
        )

    def tracking_params(self) -> dict:
        """Logged with the run: which corpus, embedder and index produced the retrieved passages."""
        return self.retriever.describe()

    def programs(self) -> dict[str, dspy.Module]:
        return {"seed_selection": self.seeds, "context_enrich": self.program, "judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        base = {
            **seed,
            "task": self.name,
            "program_version": VERSION,
            "pivot": self.pivot.config.label,
            "embedder": self.options.embedder,
            "embedder_backend": self.options.backend,
            "answers": list(example.answers),
        }
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return [{**base, "id": f"{example.id}:enrich", "status": "rejected:seed_not_selected"}]
        starts = [s for s in (example.get("answer_starts") or []) if s is not None]
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(
                question=example.question,
                context=example.context,
                answers=list(example.answers),
                answer_start=starts[0] if starts else None,
                known_wrong=[seed["pivot_closed_answer"]],
                title=example.get("title") or "",
            )
        seconds = round(time.perf_counter() - started, 3)
        if out.rejection:
            return [{**base, "id": f"{example.id}:enrich", "status": f"rejected:{out.rejection}", "seconds": seconds}]
        return self._validate(
            [
                {
                    **base,
                    "id": f"{example.id}:enrich-{copy['focus']}",
                    "supporting_sentence": out.sentence,
                    "sentence_fallback": out.sentence_fallback,
                    **{k: v for k, v in copy.items() if k != "rejection"},
                    "status": f"rejected:{copy['rejection']}" if copy["rejection"] else "accepted",
                    "seconds": seconds,
                }
                for copy in out.copies
            ]
        )

    def summarize(self, records: list[dict]) -> dict[str, float]:
        metrics = super().summarize(records)
        generated = [r for r in records if "focus" in r]
        if generated:
            metrics["sentence_fallback_rate"] = sum(r["sentence_fallback"] for r in generated) / len(generated)
            metrics["lm_merge_rate"] = sum(r["merge"] == "lm" for r in generated) / len(generated)
            # Retrieved passages skipped for offering another candidate of the answer's type, per copy.
            skipped = sum(len(r.get("skipped") or []) for r in generated)
            metrics["background_skipped_per_copy"] = skipped / len(generated)
        by_seed: dict[str, list[bool]] = {}
        for record in generated:
            by_seed.setdefault(record["seed_id"], []).append(record["status"] == "accepted")
        metrics["seeds_both_copies_accepted"] = sum(len(v) == 2 and all(v) for v in by_seed.values())
        return metrics
