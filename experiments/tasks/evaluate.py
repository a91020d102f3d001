"""Re-evaluation of target models on original and perturbed cases, paired in the same run.

One unit of work is one case: every target × prompt setting × decoding answers its original
and its perturbed version, so drops are paired. Scores, tables and the report come from
`metrics.scores`, `metrics.evaluation`, `metrics.transfer` and `experiments.report`.
"""

from __future__ import annotations

from typing import Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field

from experiments import task_registry
from experiments.errors import error_status, error_text
from experiments.lm.registry import ResolvedLM
from experiments.nli import build_nli
from experiments.readers import DECODINGS, readers_for
from experiments.report import report_tables, scored_records, write_report
from experiments.report_metrics import is_detail, report_metrics
from metrics.evaluation import accuracy_table, answer_position, paired_drop
from metrics.scores import score_record

Setting = Literal["closed_book", "open_book", "few_shot", "opinion", "cot", "task_instruction"]


class EvaluateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    settings: list[Setting] = Field(
        ["closed_book", "open_book", "opinion"], description="prompt settings every case is asked in"
    )
    decodings: list[Literal["greedy", "sampled"]] = Field(
        ["greedy"], description="greedy, and sampled (temperature 0.3, top-p 0.9)"
    )
    k_shots: int = Field(5, ge=0, description="demonstrations in the few_shot setting")
    demo_source: str = Field(
        "nq",
        description="pool for demonstrations (disjoint from the cases); "
        "run:<id> uses that run's accepted adversarial cases",
    )
    nli: str = Field(
        "none",
        description="entailment backend: none, judge (needs models.judge), or "
        "cross-encoder:<hub id or local directory>",
    )
    seed: int = Field(0, description="draws the few-shot demonstrations")


@task_registry.task("evaluate")
class EvaluateTask:
    roles = ("targets",)
    optional_roles = ("judge",)
    Options = EvaluateOptions
    # A benchmark file is measured as published: no seed filters unless the config asks (data.reeval_filters).
    evaluates_files_as_given = True

    def __init__(self, lms: dict, options: EvaluateOptions | None = None):
        self.options = options or EvaluateOptions()
        self.targets: list[ResolvedLM] = lms["targets"]
        self.nli = build_nli(self.options.nli, lms.get("judge"))
        self.prepare([])

    def prepare(self, examples: list, run_dir=None) -> None:
        """Demonstrations come from a pool disjoint from the cases under evaluation."""
        self.readers = readers_for(
            self.targets,
            examples,
            self.options.k_shots if "few_shot" in self.options.settings else 0,
            self.options.demo_source,
            self.options.seed,
        )

    def programs(self) -> dict[str, dspy.Module]:
        return {f"reader.{name}": reader for name, reader in self.readers.items()}

    def variants(self, example) -> list[tuple[str, str, list[str]]]:
        """(variant, context, answers): a case with its original is paired (original, perturbed);
        a file's row without one is evaluated once, as given ("external")."""
        if example.get("original_context") is None:
            return [("external", example.context, list(example.answers))]
        return [
            ("original", example.original_context, list(example.original_answers or [])),
            ("perturbed", example.context, list(example.answers)),
        ]

    def process(self, example: dspy.Example) -> list[dict]:
        records = []
        for target in self.targets:
            reader = self.readers[target.config.label]
            for decoding in self.options.decodings:
                for setting in self.options.settings:
                    for variant, context, answers in self.variants(example):
                        if setting == "closed_book" and variant == "perturbed":
                            continue  # without a context the perturbation does not exist
                        records.append(self._ask(target, reader, example, setting, decoding, variant, context, answers))
        return records

    def _ask(self, target, reader, example, setting, decoding, variant, context, answers) -> dict:
        record = {
            "id": f"{example.id}|{target.config.label}|{setting}|{decoding}|{variant}",
            "case_id": example.id,
            "seed_id": example.get("seed_id", example.id),
            "task": example.get("task") or "external",
            "task_answer": task_registry.task_answer(example.get("task") or "external"),
            "generator": example.get("generator", ""),
            "target": target.config.label,
            "setting": setting,
            "decoding": decoding,
            "variant": variant,
            "source": example.get("source", ""),
            "question": example.question,
            "context": "" if setting == "closed_book" else context,
            "answers": answers,
            "options": example.get("options"),
            "answer_label": example.get("answer_label")
            if variant != "original"
            else example.get("original_answer_label"),
            "answer_position": answer_position(context, answers[0]) if answers and context else None,
        }
        config = dict(DECODINGS[decoding])
        if decoding == "sampled":
            config["rollout_id"] = target.config.seed
        try:
            with dspy.context(lm=target.lm, adapter=target.adapter()):
                out = reader(setting=setting, question=example.question, context=context, config=config)
        except Exception as exc:  # noqa: BLE001 - an unparsed or failed answer is that record's error
            return {**record, "prediction": None, "status": error_status(exc), "error": error_text(exc, 500)}
        return score_record(
            {**record, "prediction": out.answer, "reasoning": out.reasoning, "status": "ok"}, nli=self.nli
        )

    def summarize(self, records: list[dict]) -> dict[str, float]:
        """Counts, and every figure of the report under a name one can filter on (experiments.report_metrics)."""

        metrics: dict[str, float] = {
            "evaluations": len(records),
            "errors": sum(r["status"].startswith("error:") for r in records),
        }
        metrics.update(report_metrics(self._report_tables(records)))
        return metrics

    def summary_metrics(self, metrics: dict[str, float]) -> dict[str, float]:
        """What `reeval run` prints: the headline accuracies; the report's other figures are in MLflow."""

        return {k: v for k, v in metrics.items() if not is_detail(k)}

    def _report_tables(self, records: list[dict]) -> dict:
        """The report's tables, computed once for the metrics and the page of the same records."""

        if getattr(self, "_tables_of", (None,))[0] is not records:
            self._tables_of = (records, report_tables(scored_records(records)))
        return self._tables_of[1]

    def write_artifacts(self, records: list[dict], out_dir, run_info: dict):
        backend = self.nli.name if self.nli else "none (entailment not computed; EM, F1, containment and keywords are)"
        info = {
            **run_info,
            "nli_backend": backend,
            "settings": ", ".join(self.options.settings),
            "decodings": ", ".join(self.options.decodings),
        }
        return write_report(
            records,
            out_dir,
            title=f"reeval — {run_info.get('run_id', '')}",
            run_info=info,
            tables=self._report_tables(records),
        )

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        """The paired drops; for cases without originals (a file evaluated unpaired), the accuracy."""

        drops = paired_drop(records, "task_correct")
        if drops:
            rows = [
                [
                    r["target"],
                    r["setting"],
                    r["decoding"],
                    f"{r['original']:.2f}",
                    f"{r['perturbed']:.2f}",
                    f"{r['drop']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]",
                    str(r["n"]),
                ]
                for r in drops
            ]
            return ["target", "setting", "decoding", "original", "perturbed", "drop [95% CI]", "pairs"], rows
        rows = [
            [
                r["target"],
                r["setting"],
                r["decoding"],
                r["variant"],
                "—" if not r["n"] else f"{r['rate']:.2f} [{r['low']:.2f}, {r['high']:.2f}]",
                str(r["n"]),
                str(r["errors"]),
            ]
            for r in accuracy_table(records, metric="task_correct")
        ]
        return ["target", "setting", "decoding", "variant", "accuracy [95% CI]", "n", "errors"], rows
