"""Tune attack strength: compile a generator program with DSPy optimizers against the attack metric.

Seeds are split once (seeded) into disjoint train / validation / test sets, recorded in every
record and in runs/<id>/splits.json. Each optimizer compiles the generator on train (MIPROv2
and GEPA also search on validation) with the pivot as the generator LM, scoring against the
optimisation targets only. Every variant — uncompiled and each compiled one — is then scored
on validation (which picks the `best` one) and evaluated on the test seeds against every
target, so held-out targets show whether the attack transfers. Only generator programs are
compiled; target-side prompts are never touched.
"""

from __future__ import annotations

import json
import logging
import random
import time
from pathlib import Path
from typing import Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from experiments import task_registry
from experiments.attack import AttackMetric, AttackScorer, attack_inputs, seed_case
from experiments.compiled import BEST, log_compiled_model, read_meta, save_compiled
from experiments.config import ConfigError
from experiments.errors import error_kind, error_status, error_text
from experiments.lm.registry import ResolvedLM
from experiments.report_page import Report, Section, write
from metrics.attack import attack_summary, flat_metrics, format_rate, setting_score
from programs.strength import dials_at

logger = logging.getLogger(__name__)

Optimizer = Literal["bootstrap_fewshot", "mipro_v2", "gepa"]
UNCOMPILED = "uncompiled"
# The uncompiled program at the dial settings the search chose (when options.dials is given).
DIALED = "dials"


class OptimizeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: str = Field(description="the generator compiled: a registered one that can be optimised")
    optimizers: list[Optimizer] = Field(
        ["bootstrap_fewshot", "mipro_v2"], description="DSPy optimizers, each compiling the generator"
    )
    strength: float = Field(
        0.5,
        ge=0,
        le=1,
        description="0: reward validity only; 1: reward only valid cases "
        "that make targets fail (see metrics/attack.py)",
    )
    train: int = Field(8, ge=1, description="seeds the optimizers learn from")
    val: int = Field(8, ge=1, description="seeds that choose between candidates and variants")
    test: int = Field(16, ge=1, description="held-out seeds for the compiled-vs-uncompiled comparison")
    split_seed: int = Field(
        0,
        description="draws the train, validation and test seeds (optimize_compare: which of the first train + val "
        "seeds in its scan order train)",
    )
    optimisation_targets: list[str] | None = Field(
        None,
        description="labels from models.targets (their names, unless two share one) the metric uses while "
        "compiling (default: the first); the others are held out and show transfer",
    )
    setting: Literal["open_book", "opinion", "task_instruction"] | None = Field(
        None,
        description="the targets' prompt setting (default: the generator's; unanswerable: the task instruction, "
        "under which a target can resist by saying unknown)",
    )
    judge_in_metric: bool | None = Field(
        None,
        description="the judge in the metric's validity term (default: where it was measured informative for the "
        "generator, experiments/attack.py)",
    )
    register_as: str | None = Field(
        None,
        description="registered MLflow model name for the best compiled program (logged with mlflow.dspy.log_model "
        "beside its JSON); a later config loads it with options.program: models:/<name>/<version>",
    )
    max_attempts: int = Field(3, ge=1, description="wrong-answer proposals tried per seed")
    max_demos: int = Field(3, ge=0, description="bootstrapped demonstrations per predictor")
    mipro_candidates: int = Field(3, ge=1, description="MIPROv2: instruction candidates proposed per predictor")
    mipro_trials: int = Field(6, ge=1, description="MIPROv2: combinations tried")
    gepa_metric_calls: int = Field(60, ge=1, description="GEPA: metric calls it may spend")
    dials: dict[str, list] = Field(
        default_factory=dict,
        description="the generator's dials searched on validation before compiling, as a grid: "
        "{removal: [drop, rewrite], lures: [remove, keep]}, or {strength: [0, 0.5, 1]} for its ladder",
    )

    @field_validator("generator")
    @classmethod
    def _optimisable(cls, generator: str) -> str:
        return task_registry.check_name(generator, lambda r: r.optimisable, "optimisable generator")

    @model_validator(mode="after")
    def _distinct(self) -> OptimizeOptions:
        if len(set(self.optimizers)) != len(self.optimizers):
            raise ValueError("optimizers: each optimizer once")
        for combination in dial_grid(self.generator, self.dials):
            try:
                task_registry.get(self.generator).Options.model_validate(combination)
            except ValidationError as exc:
                raise ValueError(f"dials: {combination}: {exc.errors()[0]['msg']}") from None
        return self


def dial_label(dials: dict) -> str:
    """A dial setting as an MLflow metric name can carry it: "lures-keep.removal-drop"."""
    return ".".join(f"{k}-{v}" for k, v in sorted(dials.items())) or "default"


def dial_grid(generator: str, dials: dict[str, list]) -> list[dict]:
    """Every combination of the dials' values, a strength read as its ladder's settings; [{}] without dials."""
    grid: list[dict] = [{}]
    for name, values in dials.items():
        grid = [{**g, name: v} for g in grid for v in values]
    ladder = task_registry.ladder(generator)
    return [{**dials_at(ladder, g.pop("strength"), repr(generator)), **g} if "strength" in g else g for g in grid]


@task_registry.task("optimize")
class OptimizeTask:
    roles = ("pivot", "judge", "targets")
    Options = OptimizeOptions

    def __init__(self, lms: dict, options: OptimizeOptions):
        self.options = options
        self.pivot: ResolvedLM = lms["pivot"]
        self.judge_lm: ResolvedLM = lms["judge"]
        self.targets: list[ResolvedLM] = lms["targets"]
        names = [t.config.label for t in self.targets]
        chosen = self.options.optimisation_targets or names[:1]
        unknown = sorted(set(chosen) - set(names))
        if unknown:
            raise ConfigError(f"options.optimisation_targets: {unknown} not among models.targets {names}")
        self.optimised_for = [t for t in self.targets if t.config.label in chosen]
        self.held_out = [t.config.label for t in self.targets if t.config.label not in chosen]
        self.generator = task_registry.get(self.options.generator).attack
        judged = self.options.judge_in_metric
        judged = self.generator.judge_informative if judged is None else judged
        self.scorer = AttackScorer(
            self.judge_lm if judged else None,
            self.targets,
            self.options.strength,
            self.options.setting or self.generator.setting,
        )
        self.variants: dict[str, dspy.Module] = {UNCOMPILED: self.generator.build(self.options.max_attempts)}
        self.split: dict[str, str] = {}
        self.val_scores: dict[str, float] = {}
        self.compile_seconds: dict[str, float] = {}
        self.compile_calls: dict[str, float] = {}
        self.failed: dict[str, str] = {}
        self.dials: dict = {}  # chosen by `_search_dials` on validation; every compiled program is built with them
        self.dial_scores: dict[str, float] = {}

    # -- optimisation (once per run; resumed from runs/<id>/compiled) -----------------------------

    def prepare(self, examples: list, run_dir: Path | None = None, *, ordered: bool = False) -> None:
        """Split the seeds and compile. `ordered`: the examples are a seeded order whose first train + val + test
        are the seeds (optimize_compare's scan order); otherwise the seeds are drawn from all of `examples`."""
        opts = self.options
        self.scorer.prepare(examples)
        need = opts.train + opts.val + opts.test
        if len(examples) < need:
            raise ConfigError(
                f"options: optimize needs train+val+test = {need} seeds, the data has {len(examples)}; "
                "lower options.train/val/test or raise data.limit"
            )
        if ordered:
            # The caller's list grows with options.test, so shuffling it whole redrew train and validation
            # whenever test changed (test 50 and 200 shared 8 of 40 validation seeds) and runs stopped being
            # comparable. Train and validation are its first train + val (shuffled between them), test what
            # follows in its order: the optimiser's seeds do not move and a smaller test is a prefix of a larger.
            head = sorted(examples[: opts.train + opts.val], key=lambda e: e.id)
            random.Random(opts.split_seed).shuffle(head)
            order = head + list(examples[opts.train + opts.val :])
        else:
            order = sorted(examples, key=lambda e: e.id)
            random.Random(opts.split_seed).shuffle(order)
        parts = {
            "train": order[: opts.train],
            "val": order[opts.train : opts.train + opts.val],
            "test": order[opts.train + opts.val : need],
        }
        self.split = {e.id: name for name, part in parts.items() for e in part}
        folder = (run_dir or Path(".")) / "compiled"
        folder.mkdir(parents=True, exist_ok=True)
        (folder.parent / "splits.json").write_text(
            json.dumps(
                {name: [e.id for e in part] for name, part in parts.items()}
                | {
                    "optimisation_targets": [t.config.label for t in self.optimised_for],
                    "held_out_targets": self.held_out,
                },
                indent=2,
            )
        )
        train, val = (_with_inputs(parts["train"]), _with_inputs(parts["val"]))
        if opts.dials:
            self._search_dials(val, folder)
        for optimizer in opts.optimizers:
            self._compile(optimizer, train, val, folder)
        self._choose_best(val, folder)

    def _assessed(self, program: dspy.Module, val: list) -> list[dict | None]:
        """Each validation seed's case, judged and put to the optimisation targets (None: it errored)."""
        out: list[dict | None] = []
        for example in val:
            try:
                with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
                    prediction = program(**attack_inputs(example))
                    case = {**seed_case(example), **self.generator.to_case(example, prediction)}
                    out.append(self.scorer.assess(case, self.optimised_for))
            except Exception:  # noqa: BLE001 - a case that errors scores nothing
                logger.debug("validation case %s failed", example.id, exc_info=True)
                out.append(None)
        return out

    def _val_score(self, program: dspy.Module, val: list) -> float:
        """The mean attack score of the validation seeds (the metric the optimizers compile against)."""
        scores = [a["attack_score"] if a else 0.0 for a in self._assessed(program, val)]
        return sum(scores) / len(scores)

    def _dial_score(self, program: dspy.Module, val: list) -> float:
        """The setting's score on validation (metrics.attack.setting_score): its yield of valid cases against
        how often they fool the optimisation targets, weighed by the run's strength."""
        assessed = self._assessed(program, val)
        valid = [bool(a and a["valid"]) for a in assessed]
        failure = []
        for a in assessed:
            if a and a["valid"]:
                wrong = [
                    not t["perturbed_correct"] for t in a["targets"].values() if t["perturbed_correct"] is not None
                ]
                failure.append(sum(wrong) / len(wrong) if wrong else 0.0)
        return setting_score(valid, failure, self.options.strength)

    def _search_dials(self, val: list, folder: Path) -> None:
        """The dial settings whose uncompiled program scores best on validation (a grid: the dials are few and
        discrete, and each setting costs one pass over the validation seeds; ties go to the earlier setting).
        A setting is scored as a whole (`_dial_score`), not as the mean of its seeds' attack scores. The
        optimizers then compile the program at those settings."""
        saved = folder / "dial_search.json"
        if saved.exists():  # resumed
            found = json.loads(saved.read_text())
            self.dials, self.dial_scores = found["chosen"], found["scores"]
        else:
            grid = {dial_label(d): d for d in dial_grid(self.generator.name, self.options.dials)}
            for key, dials in grid.items():
                self.dial_scores[key] = self._dial_score(self.generator.build(self.options.max_attempts, **dials), val)
            best = max(self.dial_scores, key=lambda k: (self.dial_scores[k], -list(self.dial_scores).index(k)))
            self.dials = grid[best]
            saved.write_text(json.dumps({"chosen": self.dials, "scores": self.dial_scores}, indent=2))
        self.variants[DIALED] = self.generator.build(self.options.max_attempts, **self.dials)

    def _compile(self, optimizer: str, train: list, val: list, folder: Path) -> None:
        meta = read_meta(folder, optimizer)
        program = self.generator.build(self.options.max_attempts, **self.dials)
        if meta is not None:  # resumed: compiled before this process started
            program.load(str(folder / f"{optimizer}.json"))
            self.variants[optimizer] = program
            self.compile_seconds[optimizer] = meta["compile_seconds"]
            self.compile_calls[optimizer] = meta.get("compile_calls", float("nan"))
            return
        started, calls = time.perf_counter(), self.lm_calls()
        try:
            with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
                compiled = self._optimizer(optimizer).compile(program, **self._compile_args(optimizer, train, val))
        except Exception as exc:  # noqa: BLE001 - one optimizer failing leaves the others' results standing
            logger.exception("optimizer %s failed", optimizer)
            self.failed[optimizer] = f"{error_kind(exc)}: {str(exc)[:300]}"
            return
        self.compile_seconds[optimizer] = round(time.perf_counter() - started, 1)
        self.compile_calls[optimizer] = self.lm_calls() - calls
        save_compiled(compiled, folder, optimizer, self._meta(optimizer))
        self.variants[optimizer] = compiled

    def lm_calls(self) -> float:
        """Real calls every role's LM has made so far (local engines and metered providers count them)."""
        lms = [self.pivot, self.judge_lm, *self.targets]
        return float(sum(lm.usage().get("calls", 0) for lm in {id(lm): lm for lm in lms}.values()))

    def _optimizer(self, name: str):
        opts, metric = self.options, AttackMetric(self.generator, self.scorer, self.optimised_for)
        if name == "bootstrap_fewshot":
            return dspy.BootstrapFewShot(
                metric=metric, max_bootstrapped_demos=opts.max_demos, max_labeled_demos=0, max_rounds=1
            )
        if name == "mipro_v2":
            # Instructions are proposed by the judge, the strongest model in the run: a 0.5B pivot
            # proposing its own instructions wrote "The king of France lived before Versailles in 1940."
            return dspy.MIPROv2(
                metric=metric,
                prompt_model=self.judge_lm.lm,
                task_model=self.pivot.lm,
                auto=None,
                num_candidates=opts.mipro_candidates,
                max_bootstrapped_demos=opts.max_demos,
                max_labeled_demos=0,
                num_threads=1,
                seed=opts.split_seed,
                verbose=False,
            )
        # GEPA reflects on the metric's feedback; the judge (the strongest model) does the reflecting.
        return dspy.GEPA(
            metric=AttackMetric(self.generator, self.scorer, self.optimised_for, feedback=True),
            max_metric_calls=opts.gepa_metric_calls,
            reflection_lm=self.judge_lm.lm,
            num_threads=1,
            reflection_minibatch_size=3,
            seed=opts.split_seed,
            use_merge=False,
        )

    def _compile_args(self, name: str, train: list, val: list) -> dict:
        if name == "bootstrap_fewshot":
            return {"trainset": train}
        if name == "mipro_v2":
            # The proposer's dataset and program summaries cost many calls and a small pivot
            # writes them poorly; instructions are proposed from the demos and tips alone.
            return {
                "trainset": train,
                "valset": val,
                "num_trials": self.options.mipro_trials,
                "minibatch": False,
                "data_aware_proposer": False,
                "program_aware_proposer": False,
            }
        return {"trainset": train, "valset": val}

    def _meta(self, variant: str, **extra) -> dict:
        return {
            "generator": self.generator.name,
            "optimizer": variant,
            "strength": self.options.strength,
            "pivot": self.pivot.identity(),
            "judge": self.judge_lm.config.label,
            "optimisation_targets": [t.config.label for t in self.optimised_for],
            "compile_seconds": self.compile_seconds.get(variant, 0.0),
            "compile_calls": self.compile_calls.get(variant, 0.0),
            "splits": {name: sorted(i for i, s in self.split.items() if s == name) for name in ("train", "val")},
            "dials": {} if variant == UNCOMPILED else self.dials,
            **extra,
        }

    def _choose_best(self, val: list, folder: Path) -> None:
        """Every variant scored on validation with the same metric; ties go to the simpler one."""
        for name, program in self.variants.items():
            self.val_scores[name] = self._val_score(program, val)
        best = max(self.variants, key=lambda n: (self.val_scores[n], -list(self.variants).index(n)))
        save_compiled(
            self.variants[best],
            folder,
            BEST,
            self._meta(best, val_score=self.val_scores[best], val_scores=self.val_scores),
        )
        self.best = best

    def log_models(self, folder: Path) -> str:
        """The best variant as an MLflow model of the active run, registered under options.register_as."""
        meta = read_meta(folder, BEST) or {}
        return log_compiled_model(self.variants[self.best], BEST, meta, self.options.register_as)

    # -- held-out evaluation, one test seed at a time (checkpointed by the runner) ---------------

    def programs(self) -> dict[str, dspy.Module]:
        return {f"{self.generator.name}.{name}": program for name, program in self.variants.items()} | {
            "judge": self.scorer.judge
        }

    def process(self, example: dspy.Example) -> list[dict]:
        split = self.split.get(example.id, "unused")
        if split != "test":
            return [{"id": f"{example.id}:{split}", "split": split, "status": f"split:{split}"}]
        records = []
        for name, program in self.variants.items():
            base = {
                "id": f"{example.id}:{name}",
                "variant": name,
                "split": "test",
                **seed_case(example),
                "generator": self.generator.name,
                "pivot": self.pivot.config.label,
            }
            started, calls = time.perf_counter(), self.lm_calls()
            try:
                with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
                    prediction = program(**attack_inputs(example))
                case = self.scorer.assess({**base, **self.generator.to_case(example, prediction)})
            except Exception as exc:  # noqa: BLE001 - that variant's case errored; the others stand
                case = {**base, "status": error_status(exc), "error": error_text(exc, 500)}
            # Calls the LMs really made (cached ones are free); exact with one case at a time (run.threads 1).
            spent = self.lm_calls() - calls
            records.append({**case, "seconds": round(time.perf_counter() - started, 3), "lm_calls": spent})
        return records

    def summarize(self, records: list[dict]) -> dict[str, float]:
        test = [r for r in records if r.get("split") == "test"]
        metrics: dict[str, float] = {
            f"split.{name}": sum(s == name for s in self.split.values()) for name in ("train", "val", "test")
        }
        names = [t.config.label for t in self.targets]
        for variant in self.variants:
            summary = attack_summary([r for r in test if r["variant"] == variant], names)
            metrics.update(flat_metrics(f"test.{variant}", summary))
            metrics[f"val.{variant}.score"] = self.val_scores.get(variant, float("nan"))
        metrics.update({f"compile.{k}.seconds": v for k, v in self.compile_seconds.items()})
        metrics.update({f"compile.{k}.lm_calls": v for k, v in self.compile_calls.items()})
        metrics.update({f"compile.{k}.failed": 1.0 for k in self.failed})
        metrics.update({f"dials.val_score.{k}": v for k, v in self.dial_scores.items()})
        return metrics

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        test = [r for r in records if r.get("split") == "test"]
        names = [t.config.label for t in self.targets]
        rows = []
        for variant in self.variants:
            summary = attack_summary([r for r in test if r["variant"] == variant], names)
            for name in names:
                role = "held-out" if name in self.held_out else "optimised"
                rates = summary["targets"][name]
                rows.append(
                    [
                        variant,
                        f"{self.val_scores.get(variant, float('nan')):.2f}",
                        format_rate(summary["validity"]),
                        f"{name} ({role})",
                        format_rate(rates["success"]),
                        format_rate(rates["flip"]),
                    ]
                )
        return ["variant", "val score", "validity [95% CI]", "target", "attack success [95% CI]", "flip [95% CI]"], rows

    def write_artifacts(self, records: list[dict], out_dir: Path, run_info: dict) -> Path:
        info = {
            "best": getattr(self, "best", None),
            "failed": self.failed,
            "held_out_targets": self.held_out,
            "optimisation_targets": [t.config.label for t in self.optimised_for],
            **run_info,
        }
        page = OptimisationPage(str(run_info.get("run_id", "")), *self.table_rows(records), info)
        return write(page, out_dir).markdown_path


class OptimisationPage(Report):
    """The optimisation's page: each variant's attack figures, then the run's information as JSON."""

    name = "optimisation"

    def __init__(self, title: str, header: list[str], rows: list[list[str]], info: dict):
        self.title, self.header, self.rows, self.info = title, header, rows, info

    def sections(self) -> list[Section]:
        table = Section("", self.header, self.rows)
        return [table, Section("", code=json.dumps(self.info, indent=2, default=str), code_language="json")]


def _with_inputs(examples: list) -> list[dspy.Example]:
    return [e.with_inputs("question", "context", "answers") for e in examples]
