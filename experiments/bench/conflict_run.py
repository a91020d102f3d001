"""The knowledge-conflict stages of a bench, in order (each a nested MLflow run, checkpointed, resumable):

1. `knowledge.<target>` — the target's knowledge scan (experiments.bench.knowledge);
2. `conflict.generate.<task>.<pivot>` — answer swaps on every target's known and comparison seeds,
   context enriching on the first known ones (checks and judge as in any generation stage);
3. `conflict.evaluate.<target>` — the target on the perturbed cases of its own seeds, in every setting;

4. `conflict.prior.<target>` — a local target's prior: the probability of its closed-book answer of each of
   its seeds (experiments.bench.conflict_prior; none for a provider's model);

then the memory / evidence / other table (experiments.bench.conflict), the same on known-seed swaps by the old
answer's kind (experiments.bench.conflict_kinds), and the share that follows the passage by prior bin, each
logged to MLflow and the report, the prior curve drawn beside it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import partial

import dspy

from experiments.bench import conflict_prior, units
from experiments.bench.answering import TargetAsker
from experiments.bench.cases import accepted_cases
from experiments.bench.conflict import (
    TargetSeeds,
    classified,
    conflict_asks,
    conflict_tasks,
    replay_records,
    seeds_to_generate,
    table,
)
from experiments.bench.conflict_kinds import ENOUGH_SWAPS, kind_table
from experiments.bench.conflict_prior import BINS, PriorProbe, plot_prior_curve, prior_bins, with_priors
from experiments.bench.conflict_prior import VERSION as PRIOR_VERSION
from experiments.bench.demos import DemoBook
from experiments.bench.generate import program_version
from experiments.bench.knowledge import VERSION, KnowledgeProbe, scan_order, scan_summary, scan_until_known
from experiments.bench.placement import UnitRecipe
from experiments.bench.scan_archive import start_from_archive
from experiments.bench.sharing import passage_order
from experiments.bench.stages import digest, run_cases
from experiments.bench.summary import validity_figure
from experiments.report import jsonable
from experiments.report_page import Section
from experiments.runner import load_data
from programs.target_reader import VERSION as READER_VERSION

logger = logging.getLogger(__name__)


@dataclass
class ConflictResult:
    scans: dict[str, dict[str, float]] = field(default_factory=dict)  # target -> scan summary
    seeds: dict[str, TargetSeeds] = field(default_factory=dict)
    generation: dict[str, dict[str, float]] = field(default_factory=dict)  # "task.pivot" -> stage metrics
    validity: dict[str, str] = field(default_factory=dict)  # "task.pivot" -> validity figure
    cases: dict[str, int] = field(default_factory=dict)  # task -> accepted cases
    records: list[dict] = field(default_factory=list)  # classified answers
    rows: list[dict] = field(default_factory=list)  # the table
    kind_rows: list[dict] = field(default_factory=list)  # the table on known-seed swaps, by answer-kind group
    kinds_left_out: list[str] = field(default_factory=list)  # targets with too few known-seed swaps for it
    prior_rows: list[dict] = field(default_factory=list)  # the evidence share by prior bin
    no_prior: dict[tuple, int] = field(default_factory=dict)  # (target, seeds, setting) -> answers without one

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for target, scan in self.scans.items():
            out.update({f"conflict.scan.{target}.{k}": v for k, v in scan.items()})
        for row in self.rows:
            key = f"conflict.{row['target']}.{row['task']}.{row['seeds']}.{row['setting']}"
            out[f"{key}.n"] = float(row["n"])
            for label in ("evidence", "memory", "other"):
                out[f"{key}.{label}"] = row[f"{label}_share"]
        for row in self.kind_rows:
            key = f"conflict.by_kind.{row['target']}.{row['setting']}.{row['answer_group'].replace(' ', '_')}"
            out[f"{key}.n"] = float(row["n"])
            for label in ("evidence", "memory", "other"):
                out[f"{key}.{label}"] = row[f"{label}_share"]
        for row in self.prior_rows:
            key = f"conflict.prior.{row['target']}.{row['seeds']}.{row['setting']}.{row['low']:.1f}"
            out[f"{key}.n"] = float(row["n"])
            out[f"{key}.evidence"] = row["evidence_share"]
        return out


class ConflictRun:
    def __init__(self, bench):
        self.bench = bench
        self.options = kc = bench.options.knowledge_conflict
        data = bench.config.data.model_copy(update={"source": kc.source, "split": kc.split, "limit": None, "offset": 0})
        self.data_config = data
        self.data = load_data(bench.config.model_copy(update={"data": data}))
        self.by_id = {str(e.id): e for e in self.data.examples}
        ordered = scan_order(self.data.examples, kc.seed)
        self.ordered = ordered[: kc.max_rows] if kc.max_rows else ordered
        self.order = [str(e.id) for e in self.ordered]

    def run(self, calibration: dict[str, float]) -> ConflictResult:
        result = ConflictResult()
        for name, target in self.bench.targets.items():
            records = self.scan(name, target)
            result.scans[name] = scan_summary(records, len(self.ordered))
            result.seeds[name] = TargetSeeds.from_scan(records, self.order, self.options)
            logger.info("knowledge scan %s: %d rows, knows %d seeds", name, len(records), len(result.seeds[name].known))
        if self.options.scan_only:
            return result
        wanted = seeds_to_generate(result.seeds, self.order, self.options.control_seeds)
        cases, kinds = {}, {}
        for task in conflict_tasks():
            cases[task] = []
            for pivot_name, pivot in self.bench.pivots.items():
                examples = [self.by_id[s] for s in wanted[task]]
                stage = self.generate(task, pivot_name, pivot, examples)
                store = self.bench.stages.store(stage)
                result.generation[f"{task}.{pivot_name}"] = self.bench.stages.ledger.stages[stage]["metrics"]
                result.validity[f"{task}.{pivot_name}"] = validity_figure(
                    store.run_id, self.bench.calibration_of(task, calibration)
                )
                cases[task].extend(accepted_cases(store, examples))
                kinds.update({r["id"]: r["answer_kind"] for r in store.records() if r.get("answer_kind")})
            result.cases[task] = len(cases[task])
        book = DemoBook(
            {f"conflict.{t}": c for t, c in cases.items()}, self.bench.options.k_shots, self.bench.options.seed
        )
        asks, uses = conflict_asks(cases, result.seeds, list(self.options.settings), book, kinds)
        answers = {}
        for name, target in self.bench.targets.items():
            answers.update(self.evaluate(name, target, book, [a for a in asks.values() if a.target == name]))
        priors = {name: self.priors(name, target, result.seeds[name]) for name, target in self.bench.targets.items()}
        result.records = with_priors(classified(uses, answers), priors)
        result.rows = table(result.records)
        result.kind_rows, result.kinds_left_out = kind_table(result.records)
        result.prior_rows, result.no_prior = prior_bins(result.records)
        return result

    def priors(self, name: str, target, seeds: TargetSeeds) -> dict[str, float]:
        """seed id -> the target's prior of its closed-book answer, for the seeds it is asked on; empty for a
        target whose engine gives no log-probabilities of a text."""
        build = conflict_prior.scorer_for(target)  # through the module: a test world puts a fake scorer there
        if build is None:
            return {}
        items = [
            dspy.Example(id=s, seed_id=s, question=self.by_id[s].question, closed_answer=seeds.closed[s])
            for s in dict.fromkeys([*seeds.known, *seeds.unknown])
            if seeds.closed.get(s)
        ]
        if not items:
            return {}
        stage = f"conflict.prior.{name}"
        b = self.bench
        b.stages.run(
            stage,
            digest([PRIOR_VERSION, [(e.id, e.question, e.closed_answer) for e in items]]),
            partial(self._prior_stage, stage=stage, probe=PriorProbe(name, build), items=items),
            uses=[target],
        )
        return {
            str(r["seed_id"]): r["prior"]
            for r in b.stages.store(stage).records()
            if r.get("status") == "ok" and r.get("prior") is not None
        }

    def _prior_stage(self, store, *, stage: str, probe: PriorProbe, items: list) -> dict[str, float]:
        b = self.bench
        records, new = run_cases(probe, items, store, b.loop_config(stage), b.retry_errors, b.progress)
        ok = sum(r.get("status") == "ok" for r in records)
        return {"items": float(len(records)), "new_items": float(new), "errors": float(len(records) - ok)}

    def scan(self, name: str, target) -> list[dict]:
        kc = self.options
        stage = f"knowledge.{name}"
        inputs = digest(
            [VERSION, READER_VERSION, self.data.sha256, self.order, kc.known_per_target, kc.table_rows, kc.block]
        )
        self.bench.stages.run(stage, inputs, partial(self._scan_stage, stage=stage, target=target), uses=[target])
        return self.bench.stages.store(stage).records()

    def _scan_stage(self, store, *, stage: str, target) -> dict[str, float]:
        kc, b = self.options, self.bench
        table_ids = set(self.order[: kc.table_rows])
        probe = KnowledgeProbe.for_target(target, table_ids)
        start_from_archive(
            store,
            data=self.data_config,
            target=target,
            data_sha256=self.data.sha256,
            examples=self.ordered,
            table_ids=table_ids,
        )
        recipe = UnitRecipe(partial(units.probe_unit, table_ids=table_ids), {"target": f"target/{target.config.label}"})
        # one executor for every block: on Ray the actors keep the target loaded from block to block
        with b.placement.executor(probe, recipe) as executor:
            records, new = scan_until_known(
                probe,
                self.ordered,
                store,
                b.loop_config(stage),
                block=kc.block,
                enough=kc.known_per_target,
                retry_errors=b.retry_errors,
                progress=b.progress,
                executor=executor,
            )
        return {**scan_summary(records, len(self.ordered)), "items": len(records), "new_items": new}

    def generate(self, task: str, pivot_name: str, pivot, examples: list) -> str:
        b = self.bench
        stage = f"conflict.generate.{task}.{pivot_name}"
        options = {**self.options.generators.get(task, {}), "seeds": "all"}
        inputs = digest([[e.id for e in examples], options, program_version(task), b.judge_params_for(task)])
        b.stages.run(
            stage,
            inputs,
            partial(
                b._generate_stage,
                stage=stage,
                task=task,
                pivot=pivot,
                options=options,
                replay=replay_records(examples),
                examples=examples,
                data=self.data_config,
            ),
            uses=[pivot, b.judge_lm_for(task)] if b.judge_lm_for(task) else [pivot],
        )
        return stage

    def evaluate(self, name: str, target, book: DemoBook, asks: list) -> dict[str, dict]:
        b = self.bench
        stage = f"conflict.evaluate.{name}"
        asks = passage_order(asks)
        b.stages.run(
            stage,
            digest([READER_VERSION, *(a.id for a in asks)]),
            partial(b._evaluate_stage, stage=stage, asker=TargetAsker(target, book), asks=asks),
            uses=[target],
        )
        return {r["id"]: r for r in b.stages.store(stage).records()}


def _share(row: dict, label: str) -> str:
    if not row["n"]:
        return "—"
    return f"{row[f'{label}_share']:.2f} [{row[f'{label}_low']:.2f}, {row[f'{label}_high']:.2f}]"


def _prior_share(row: dict) -> str:
    if not row["n"]:
        return "—"
    return f"{row['evidence_share']:.2f} [{row['evidence_low']:.2f}, {row['evidence_high']:.2f}]"


def _outcome_cells(row: dict) -> list[str]:
    """The cells every conflict table ends on: n, the three outcome shares, no-conflict answers and errors."""
    return [
        str(row["n"]),
        _share(row, "evidence"),
        _share(row, "memory"),
        _share(row, "other"),
        str(row["no_conflict"]),
        str(row["errors"]),
    ]


def _kind_section(result: ConflictResult) -> Section:
    """The memory / evidence / other table on known-seed swaps, by the old answer's kind."""
    kind_rows = [
        [
            r["target"],
            r["setting"],
            r["answer_group"],
            *_outcome_cells(r),
        ]
        for r in result.kind_rows
    ]
    return Section(
        "Knowledge conflict: by answer kind",
        ["target", "setting", "answer kind", "n", "evidence", "memory", "other", "no conflict", "errors"],
        kind_rows,
        note="Answer swaps on the seeds each target knows, by the reading group of the old answer's kind "
        "(people / places and organisations / works and things / dates and numbers; untyped: a case "
        "written before kinds were read), on every swap the checks and the judge accepted. Shares with "
        f"95% Wilson intervals; a target with fewer than {ENOUGH_SWAPS} labelled known-seed swaps in a "
        "setting is left out.",
        extra=[f"Too few known-seed swaps for the table: {', '.join(result.kinds_left_out)}."]
        if result.kinds_left_out
        else [],
    )


def _prior_section(result: ConflictResult) -> Section:
    """The share of answers that follow the passage, by the target's prior of its closed-book answer."""
    prior_rows = [
        [
            r["target"],
            r["seeds"],
            r["setting"],
            f"[{r['low']:.1f}, {r['high']:.1f}{']' if r['high'] >= 1 else ')'}",
            str(r["n"]),
            str(r["evidence"]),
            _prior_share(r),
        ]
        for r in result.prior_rows
    ]
    no_prior = [
        f"{' · '.join(map(str, key))}: {n} answers without a prior, left out of the bins"
        for key, n in result.no_prior.items()
        if n
    ]
    return Section(
        "Knowledge conflict: the target's prior",
        ["target", "seeds", "setting", "prior", "n", "from the passage", "share"],
        prior_rows,
        note="The target's prior (ClashEval): P(its closed-book answer | 'Question: … Answer:'), the "
        "product of the answer's token probabilities from llama.cpp's logits, against the share of its "
        f"answers to the swapped passage that follow the passage, in {BINS} equal bins, with 95% Wilson "
        "intervals. A provider's model has no prior; its answers are counted apart, not as 0. The curve: "
        "prior_curve.png beside this report.",
        extra=no_prior,
    )


def conflict_sections(result: ConflictResult) -> list[Section]:
    """The report's part: each target's scan, the memory / evidence / other table, the cases' validity."""
    scan_rows = []
    for target, s in result.scans.items():
        scan_rows.append(
            [
                target,
                f"{int(s['rows_scanned'])} of {int(s['rows_available'])}"
                + (f" ({int(s['from_archive'])} from the archive)" if s.get("from_archive") else ""),
                f"{s['closed_book_accuracy']:.3f}",
                str(int(s["known"])),
                str(len(result.seeds[target].unknown)),
                " / ".join(
                    str(int(s.get(f"table.{c}", 0)))
                    for c in (
                        "open_correct__closed_correct",
                        "open_correct__closed_wrong",
                        "open_wrong__closed_correct",
                        "open_wrong__closed_wrong",
                    )
                ),
                str(int(s["table_rows"])),
            ]
        )
    table_rows = [
        [
            r["target"],
            r["task"].replace("_", " "),
            r["seeds"],
            r["setting"],
            *_outcome_cells(r),
        ]
        for r in result.rows
    ]
    validity_rows = [
        [
            key,
            str(int(result.generation[key].get("cases_accepted", 0))),
            str(int(result.generation[key].get("seeds_selected", 0))),
            figure,
        ]
        for key, figure in result.validity.items()
    ]
    return [
        Section(
            "Knowledge conflict: what each target knows",
            [
                "target",
                "rows scanned",
                "closed-book accuracy",
                "known seeds",
                "comparison seeds",
                "4-way table of the table rows: OC·CC / OC·CW / OW·CC / OW·CW",
                "table rows",
            ],
            scan_rows,
            note="Each target asked closed-book on held-out rows in one shuffled order until it knew enough seeds; "
            "known = right closed-book (strict match) and open-book. The 4-way table covers the first rows "
            "of the order, asked both ways (O = open-book, C = closed-book, C = correct, W = wrong).",
        ),
        Section(
            "Knowledge conflict: memory or evidence",
            ["target", "task", "seeds", "setting", "n", "evidence", "memory", "other", "no conflict", "errors"],
            table_rows,
            note="Answers to perturbed evidence: the answer the evidence states, the target's own closed-book "
            "answer (memory), or neither. Shares with 95% Wilson intervals. Known seeds: the target answers "
            "them right from memory; unknown: only from the evidence. Context enriching keeps the original "
            "answer (the control): its 'evidence' share is the answer surviving the added text.",
        ),
        _kind_section(result),
        _prior_section(result),
        Section("Knowledge conflict: the cases", ["stage", "accepted", "seeds", "validity"], validity_rows),
    ]


def write_conflict_files(out_dir, result: ConflictResult) -> None:
    """conflict.json (scans and tables), conflict_answers.jsonl (every classified answer) and prior_curve.png
    (where some answer has a prior) beside the report."""
    payload = {
        "scans": result.scans,
        "seeds": {t: {"known": len(s.known), "unknown": len(s.unknown)} for t, s in result.seeds.items()},
        "cases": result.cases,
        "validity": result.validity,
        "table": result.rows,
        "by_kind": result.kind_rows,
        "kinds_left_out": result.kinds_left_out,
        "prior_bins": result.prior_rows,
        "no_prior": [{"target": t, "seeds": k, "setting": s, "n": n} for (t, k, s), n in result.no_prior.items()],
    }
    (out_dir / "conflict.json").write_text(json.dumps(jsonable(payload), indent=1, default=str), encoding="utf-8")
    with open(out_dir / "conflict_answers.jsonl", "w", encoding="utf-8") as handle:
        for record in result.records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    plot_prior_curve(result.prior_rows, out_dir / "prior_curve.png")
