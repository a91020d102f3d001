"""Validity of generated cases from a small human-reviewed sample plus the judge on every case.

Inputs are the judge's output for the whole judged population (accept/reject, and a graded
``p_valid`` in [0, 1] when the judge gives one) and human decisions on a *stratified* sample:
the strata are ``<task>/judge_accepted`` and ``<task>/judge_rejected`` (or ``<task>/accepted`` for a
run without a judge), each with a known population size and its own sampling rate. So:

- the judge's precision, recall and Cohen's kappa against the humans weight each reviewed case
  by population/reviewed of its stratum (a sample that over-samples rejected cases would
  otherwise make the judge look like it throws away more valid cases than it does);
- "share of judge-accepted cases that are valid" and "attack success on valid cases" are
  prediction-powered estimates (PPI++, Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023;
  Angelopoulos, Duchi, Zrnic 2023) computed with the ``ppi_py`` package, each next to the
  classical estimate that uses the humans alone, so a reader sees what the judge bought.

Choices where the papers leave room (each documented where it is made):

- Strata are estimated separately and combined with population shares (stratified estimator,
  variances added with squared shares). Within a stratum the reviewed cases are taken as a
  simple random sample; a reviewed case without a human majority (a tie, or "unsure" only) is
  treated as missing at random within its stratum.
- The power-tuning weight lambda is the PPI++ choice for a mean, computed here (the same
  formula as ``ppi_py``'s) so that a predictor without variance gets lambda = 0 instead of 0/0
  (``ppi_py`` returns NaN there). Lambda = 0 *is* the classical estimate.
- Intervals are normal (CLT), 95% by default, clipped to [0, 1]. When every reviewed case of a
  stratum got the same human label the CLT variance of that stratum is 0 and the interval
  would claim certainty from, say, 40 valid out of 40; there the stratum's standard error is
  floored at the one implied by the Wilson bound (a single stratum then reports Wilson's bound).
- The estimand is the share among *this run's* cases. The unlabelled set is the whole stratum
  (reviewed cases included) and no finite-population correction is applied, so the interval is
  conservative when most of a stratum was reviewed.

Pure functions: no imports of programs or experiments. ``ppi_py`` (with numba, statsmodels) is
imported lazily, inside a guard: importing it calls ``warnings.simplefilter("ignore")``, which
would silence every warning of the whole process.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from .intervals import wilson_interval

NAN = float("nan")
JUDGE_ALONE = "validity is the judge's alone: no human review of this run"
CHECKS_ALONE = "validity rests on the string checks alone: no judge and no human review of this run"


@dataclass(frozen=True)
class JudgedCase:
    """One case of the judged population.

    ``accepted`` is the judge's verdict (True for every case of an unjudged run); ``p_valid``
    the judge's probability that the case is valid, when it gives one.
    """

    id: str
    stratum: str
    accepted: bool
    p_valid: float | None = None

    @property
    def prediction(self) -> float:
        """What PPI uses as the judge's prediction of validity: p_valid if given, else the verdict."""
        return float(self.p_valid) if self.p_valid is not None else float(self.accepted)


@dataclass(frozen=True)
class Estimate:
    """A rate with its (1 - alpha) interval; NaN where the data do not identify it (see ``note``)."""

    estimate: float
    low: float
    high: float
    n_labelled: int  # reviewed cases with a human decision that the estimate uses
    n_population: int  # cases the estimate is about
    method: str  # "ppi" or "classical"
    lam: float | None = None  # PPI++ power-tuning weight per stratum, averaged by population share
    note: str = ""

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def defined(self) -> bool:
        return not math.isnan(self.estimate)


@dataclass
class ValidityFigures:
    judged_n: int  # cases in the population (the judge decided them; every accepted case if unjudged)
    judge_accepted_n: int
    judge_acceptance: float  # share of the population the judge accepted
    reviewed_n: int  # reviewed cases with a human majority (valid or invalid)
    undecided_n: int  # reviewed cases without one (a tie, "unsure" only)
    human_valid_n: int
    human_valid_rate: float  # of the reviewed sample, unweighted
    human_valid_low: float
    human_valid_high: float
    judged: bool  # the run had a judge (else precision/recall/kappa are not defined)
    judge_precision: Estimate | None = None
    judge_recall: Estimate | None = None
    judge_kappa: Estimate | None = None
    accepted_valid_ppi: Estimate | None = None
    accepted_valid_classical: Estimate | None = None
    # key "<target>.<setting>.<decoding>" -> {"ppi": Estimate, "classical": Estimate}
    attack_success: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def judge_alone(self) -> bool:
        return self.reviewed_n == 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["judge_alone"] = self.judge_alone
        return out

    def to_metrics(self, prefix: str = "validity") -> dict[str, float]:
        """Flat metric names (``validity.reviewed_n``, ``validity.ppi.accepted_valid.lo``, ...);
        undefined (NaN) figures are left out, so a missing metric means "not identified"."""
        m: dict[str, float] = {
            f"{prefix}.judged_n": self.judged_n,
            f"{prefix}.judge_accepted_n": self.judge_accepted_n,
            f"{prefix}.judge_acceptance": self.judge_acceptance,
            f"{prefix}.reviewed_n": self.reviewed_n,
            f"{prefix}.undecided_n": self.undecided_n,
            f"{prefix}.human_valid_rate": self.human_valid_rate,
            f"{prefix}.human_valid_rate.lo": self.human_valid_low,
            f"{prefix}.human_valid_rate.hi": self.human_valid_high,
        }
        for name, est in (
            ("judge_precision", self.judge_precision),
            ("judge_recall", self.judge_recall),
            ("judge_kappa", self.judge_kappa),
        ):
            if est is not None:
                m.update(_estimate_metrics(f"{prefix}.{name}", est))
        for method, est in (("ppi", self.accepted_valid_ppi), ("classical", self.accepted_valid_classical)):
            if est is not None:
                m.update(_estimate_metrics(f"{prefix}.{method}.accepted_valid", est))
        for key, pair in self.attack_success.items():
            for method, est in pair.items():
                m.update(_estimate_metrics(f"{prefix}.{method}.attack_success.{key}", est))
        return {k: float(v) for k, v in m.items() if v is not None and not math.isnan(float(v))}


def _estimate_metrics(name: str, est: Estimate) -> dict[str, float]:
    return {name: est.estimate, f"{name}.lo": est.low, f"{name}.hi": est.high}


# --------------------------------------------------------------------------------------------
# Small helpers


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1 - alpha / 2)


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _undefined(method: str, n_labelled: int, n_population: int, note: str) -> Estimate:
    return Estimate(NAN, NAN, NAN, n_labelled, n_population, method, None, note)


def _import_ppi():
    # ppi_py calls warnings.simplefilter("ignore") at import: keep that from leaking out.
    with warnings.catch_warnings():
        import ppi_py
    return ppi_py


def power_tuning(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1].

    lambda = Cov(Y, Yhat) / ((1 + n/N) Var(Yhat)) over the labelled cases (Var over labelled and
    unlabelled predictions), as ``ppi_py`` computes it; a predictor without variance gets 0
    (it cannot help, and ``ppi_py`` would divide 0 by 0).
    """
    n, big_n = len(y), len(yhat_unlabelled)
    if n < 2:
        return 0.0
    var = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if var <= 1e-12:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def _wilson_floor_se(k: int, n: int, z: float) -> float:
    """The standard error implied by Wilson's bound on the side away from k/n = 0 or 1."""
    low, high = wilson_interval(k, n, alpha=2 * (1 - NormalDist().cdf(z)))
    p = k / n
    return max(p - low, high - p) / z


# --------------------------------------------------------------------------------------------
# One stratum of a mean (the share of valid cases)


@dataclass(frozen=True)
class _StratumMean:
    ppi: float
    ppi_se: float
    classical: float
    classical_se: float
    lam: float


def _stratum_mean(y: np.ndarray, yhat: np.ndarray, yhat_all: np.ndarray, z: float) -> _StratumMean:
    """PPI++ and classical estimates of one stratum's mean; needs len(y) >= 2."""
    ppi_py = _import_ppi()
    alpha = 2 * (1 - NormalDist().cdf(z))
    n, k = len(y), int(round(float(y.sum())))
    classical = float(y.mean())
    classical_se = float(y.std()) / math.sqrt(n)  # ppi_py's classical CLT (ddof 0)
    degenerate = k in (0, n) and np.all((y == 0) | (y == 1))
    if degenerate:
        classical_se = max(classical_se, _wilson_floor_se(k, n, z))
    lam = power_tuning(y, yhat, yhat_all)
    if lam == 0.0:
        # A predictor that cannot help (constant, or uncorrelated with the humans): PPI is classical.
        return _StratumMean(classical, classical_se, classical, classical_se, 0.0)
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_all, lam=lam))[0])
    low, high = (float(np.ravel(b)[0]) for b in ppi_py.ppi_mean_ci(y, yhat, yhat_all, alpha=alpha, lam=lam))
    se = (high - low) / (2 * z)
    if degenerate:
        se = max(se, classical_se)  # no invalid case seen: the rectifier's CLT variance is not evidence
    return _StratumMean(point, se, classical, classical_se, lam)


def stratified_rate(
    labelled: Mapping[str, Sequence[tuple[float, float]]],
    population: Mapping[str, Sequence[float]],
    *,
    alpha: float = 0.05,
) -> tuple[Estimate, Estimate]:
    """(PPI, classical) estimates of a population share from strata.

    ``labelled``: stratum -> [(human label 0/1, judge prediction)] of the reviewed cases;
    ``population``: stratum -> the judge's prediction for every case of the stratum (reviewed
    ones included). Strata are combined with their population shares. A stratum with fewer than
    two labelled cases leaves the share undefined (NaN, with a note naming it).

    With a constant predictor (the binary verdict inside the judge-accepted stratum, say) the
    power-tuning weight is 0 and PPI collapses to the classical estimate: still correct, just no
    narrower. A graded ``p_valid`` is what lets the judge narrow the interval.
    """
    z = _z(alpha)
    n_pop, n_lab, undefined = _too_few(
        labelled, population, "no cases in the population", "fewer than 2 reviewed cases with a human decision in "
    )
    if undefined:
        return undefined
    ppi = cls = ppi_var = cls_var = lam = 0.0
    for stratum, preds in population.items():
        if not preds:
            continue
        share = len(preds) / n_pop
        pairs = np.asarray(labelled[stratum], dtype=float)
        s = _stratum_mean(pairs[:, 0], pairs[:, 1], np.asarray(preds, dtype=float), z)
        ppi += share * s.ppi
        cls += share * s.classical
        ppi_var += share**2 * s.ppi_se**2
        cls_var += share**2 * s.classical_se**2
        lam += share * s.lam
    return (
        _interval(ppi, ppi_var, z, n_lab, n_pop, "ppi", lam),
        _interval(cls, cls_var, z, n_lab, n_pop, "classical", 0.0),
    )


def _too_few(labelled: Mapping, population: Mapping, empty: str, short_prefix: str):
    """(population size, labelled size, the undefined (PPI, classical) pair or None): a stratum with
    cases needs at least two labelled ones for a variance."""
    n_pop = sum(len(v) for v in population.values())
    n_lab = sum(len(labelled.get(s, ())) for s in population)
    if n_pop == 0:
        return n_pop, n_lab, (_undefined("ppi", n_lab, 0, empty), _undefined("classical", n_lab, 0, empty))
    short = sorted(s for s, rows in population.items() if rows and len(labelled.get(s, ())) < 2)
    if short:
        note = short_prefix + ", ".join(short)
        return n_pop, n_lab, (_undefined("ppi", n_lab, n_pop, note), _undefined("classical", n_lab, n_pop, note))
    return n_pop, n_lab, None


def _interval(
    point: float, var: float, z: float, n_lab: int, n_pop: int, method: str, lam: float | None, note: str = ""
) -> Estimate:
    half = z * math.sqrt(max(var, 0.0))
    return Estimate(_clip01(point), _clip01(point - half), _clip01(point + half), n_lab, n_pop, method, lam, note)


# --------------------------------------------------------------------------------------------
# A ratio of means: attack success on valid cases


def stratified_ratio(
    labelled: Mapping[str, Sequence[tuple[float, float, float]]],
    population: Mapping[str, Sequence[tuple[float, float]]],
    *,
    alpha: float = 0.05,
) -> tuple[Estimate, Estimate]:
    """(PPI, classical) estimates of  sum(V * F) / sum(V)  over a population, V = valid (known on
    the reviewed cases only, predicted by the judge), F = the target failed (known everywhere).

    ``labelled``: stratum -> [(V, F, prediction)] of reviewed cases; ``population``: stratum ->
    [(F, prediction)] for every case of the stratum.

    Estimator: PPI on the numerator mean(V F) (predicted by prediction x F) and on the denominator
    mean(V) (predicted by the prediction), one power-tuning weight per stratum for both, strata
    combined by population share, the ratio of the two. Interval: the delta method. The ratio is
    linearised as Z = (V F - theta V) / mean(V), predicted by Zhat = (pred F - theta pred) /
    mean(V); its standard error is that of a PPI mean of Z, computed by ``ppi_py.ppi_mean_ci``
    with the stratum's lambda (lambda itself is PPI++'s choice for Z). lambda = 0 gives the
    classical ratio estimator over reviewed cases with its delta-method interval. The delta
    method is used rather than a bootstrap: it is deterministic and fast, and it is what PPI's
    own CLT intervals are. Even with a binary judge (a constant prediction among accepted cases)
    PPI helps here, because F is known on every case.
    """
    ppi_py = _import_ppi()
    z = _z(alpha)
    n_pop, n_lab, undefined = _too_few(
        labelled, population, "no evaluated cases", "fewer than 2 reviewed, evaluated cases with a human decision in "
    )
    if undefined:
        return undefined
    strata = []
    for stratum, rows in population.items():
        if not rows:
            continue
        lab = np.asarray(labelled[stratum], dtype=float)
        unl = np.asarray(rows, dtype=float)
        strata.append((len(rows) / n_pop, lab[:, 0], lab[:, 1], lab[:, 2], unl[:, 0], unl[:, 1]))
    if sum(share * v.sum() for share, v, *_ in strata) == 0:
        note = "no reviewed case was judged valid by the humans"
        return _undefined("ppi", n_lab, n_pop, note), _undefined("classical", n_lab, n_pop, note)
    ratio = _StratifiedRatio(ppi_py, strata, z, n_lab, n_pop)
    return ratio.estimate([1.0] * len(strata), "ppi"), ratio.estimate([0.0] * len(strata), "classical")


@dataclass
class _StratifiedRatio:
    """The ratio estimator of ``stratified_ratio`` over its strata, each a row
    (population share, V, F, prediction of the reviewed cases, F, prediction of every case)."""

    ppi_py: Any
    strata: list[tuple]
    z: float
    n_lab: int
    n_pop: int

    def parts(self, lams: Sequence[float]) -> tuple[float, float]:
        """The PPI numerator mean(V F) and denominator mean(V), strata combined by population share."""
        num = den = 0.0
        for (share, v, f, p, f_all, p_all), lam in zip(self.strata, lams, strict=True):
            num += share * float(np.ravel(self.ppi_py.ppi_mean_pointestimate(v * f, p * f, p_all * f_all, lam=lam))[0])
            den += share * float(np.ravel(self.ppi_py.ppi_mean_pointestimate(v, p, p_all, lam=lam))[0])
        return num, den

    @staticmethod
    def linearised(theta: float, den: float, share_row: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Z, its prediction on the reviewed cases and on every case: the delta method's linear ratio."""
        _, v, f, p, f_all, p_all = share_row
        return (v * f - theta * v) / den, (p * f - theta * p) / den, (p_all * f_all - theta * p_all) / den

    def estimate(self, lams: list[float], method: str) -> Estimate:
        num, den = self.parts(lams)
        if den <= 0:
            return _undefined(method, self.n_lab, self.n_pop, "the estimated share of valid cases is not positive")
        theta = num / den
        if method == "ppi":  # PPI++'s lambda for the linearised ratio, then the estimate again
            lams = [power_tuning(*self.linearised(theta, den, row)) for row in self.strata]
            num, den = self.parts(lams)
            if den <= 0:
                return _undefined(method, self.n_lab, self.n_pop, "the estimated share of valid cases is not positive")
            theta = num / den
        var, note = self.variance(theta, den, lams, method)
        mean_lam = sum(row[0] * lam for row, lam in zip(self.strata, lams, strict=True))
        return _interval(theta, var, self.z, self.n_lab, self.n_pop, method, mean_lam, note)

    def variance(self, theta: float, den: float, lams: list[float], method: str) -> tuple[float, str]:
        """The ratio's delta-method variance, strata added with squared shares, and a note when it is floored."""
        ci_alpha = 2 * (1 - NormalDist().cdf(self.z))
        var = 0.0
        for row, lam in zip(self.strata, lams, strict=True):
            zl, zhat, zhat_all = self.linearised(theta, den, row)
            bounds = self.ppi_py.ppi_mean_ci(zl, zhat, zhat_all, alpha=ci_alpha, lam=lam)
            low, high = (float(np.ravel(b)[0]) for b in bounds)
            se = (high - low) / (2 * self.z)
            var += row[0] ** 2 * se**2
        note = ""
        valid_f = np.concatenate([row[2][row[1] == 1] for row in self.strata])
        if valid_f.size and np.all(valid_f == valid_f[0]) and (method == "classical" or var <= 1e-15):
            # Every reviewed valid case agrees (all failed, or none did): the classical CLT variance
            # is 0, so floor it as for a rate; PPI only when its variance is 0 too.
            k = int(valid_f.sum())
            var = max(var, _wilson_floor_se(k, valid_f.size, self.z) ** 2)
            note = "every reviewed valid case had the same outcome: interval floored at Wilson's bound"
        return var, note


# --------------------------------------------------------------------------------------------
# The judge against the humans


def judge_agreement(
    reviewed: Sequence[tuple[str, bool, bool]],
    stratum_population: Mapping[str, int],
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Precision, recall and Cohen's kappa of the judge against the human majority.

    ``reviewed``: (stratum, judge accepted, human valid) per reviewed case with a decision;
    ``stratum_population``: cases per stratum in the population. Each case weighs
    population/reviewed of its stratum, so the confusion matrix estimates the population's.
    Intervals: a stratified percentile bootstrap (resampling within each stratum, seeded).
    A figure whose strata are not all reviewed is undefined (NaN, with a note): precision needs
    every accepted stratum, recall and kappa every stratum, since an unreviewed rejected stratum
    hides the valid cases the judge threw away.
    """
    z = _z(alpha)
    by_stratum: dict[str, list[tuple[bool, bool]]] = {}
    for stratum, accepted, valid in reviewed:
        by_stratum.setdefault(stratum, []).append((bool(accepted), bool(valid)))
    n_lab = len(reviewed)
    n_pop = sum(stratum_population.values())
    populated = [s for s, size in stratum_population.items() if size > 0]
    missing = sorted(s for s in populated if not by_stratum.get(s))
    # A stratum's judge verdict is the same for all its cases; name-based fallback for unsampled ones.
    missing_accepted = [s for s in missing if s.endswith("accepted")]

    def confusion(groups: Mapping[str, np.ndarray]) -> np.ndarray:
        """Weighted [[TP, FN], [FP, TN]] (rows: human valid/invalid; cols: judge accept/reject)."""
        cm = np.zeros((2, 2))
        for stratum, rows in groups.items():
            if not len(rows):
                continue
            weight = stratum_population.get(stratum, len(rows)) / len(rows)
            acc, val = rows[:, 0], rows[:, 1]
            cm[0, 0] += weight * np.sum(val & acc)
            cm[0, 1] += weight * np.sum(val & ~acc)
            cm[1, 0] += weight * np.sum(~val & acc)
            cm[1, 1] += weight * np.sum(~val & ~acc)
        return cm

    def figures(cm: np.ndarray) -> tuple[float, float, float]:
        tp, fn, fp, tn = cm[0, 0], cm[0, 1], cm[1, 0], cm[1, 1]
        total = cm.sum()
        precision = tp / (tp + fp) if tp + fp > 0 else NAN
        recall = tp / (tp + fn) if tp + fn > 0 else NAN
        if total == 0:
            return precision, recall, NAN
        p_o = (tp + tn) / total
        p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / total**2
        kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 - 1e-12 else NAN
        return precision, recall, kappa

    groups = {s: np.asarray(rows, dtype=bool) for s, rows in by_stratum.items()}
    point = figures(confusion(groups))
    rng = np.random.default_rng(seed)
    boots = np.empty((n_resamples, 3))
    for b in range(n_resamples):
        sample = {s: rows[rng.integers(0, len(rows), len(rows))] for s, rows in groups.items()}
        boots[b] = figures(confusion(sample))
    names = ("precision", "recall", "kappa")
    out: dict[str, Estimate] = {}
    for i, name in enumerate(names):
        if name == "precision" and missing_accepted:
            out[name] = _undefined("stratified", n_lab, n_pop, "no reviewed case in " + ", ".join(missing_accepted))
            continue
        if name != "precision" and missing:
            out[name] = _undefined("stratified", n_lab, n_pop, "no reviewed case in " + ", ".join(missing))
            continue
        if math.isnan(point[i]):
            out[name] = _undefined("stratified", n_lab, n_pop, f"{name} is undefined on the reviewed cases")
            continue
        finite = boots[:, i][~np.isnan(boots[:, i])]
        tail = 1 - NormalDist().cdf(z)
        low, high = np.quantile(finite, [tail, 1 - tail]) if finite.size else (NAN, NAN)
        out[name] = Estimate(float(point[i]), float(low), float(high), n_lab, n_pop, "stratified")
    return out


# --------------------------------------------------------------------------------------------
# Everything for one run


def validity_figures(
    population: Sequence[JudgedCase],
    human: Mapping[str, bool | None],
    stratum_population: Mapping[str, int] | None = None,
    *,
    failures: Mapping[str, Mapping[str, bool]] | None = None,
    judged: bool = True,
    alpha: float = 0.05,
    seed: int = 0,
) -> ValidityFigures:
    """The validity figures of one run.

    ``population``: every case the judge decided (every accepted case of an unjudged run).
    ``human``: reviewed case id -> True (valid), False (invalid) or None (reviewed but no
    majority: a tie or "unsure" only). Reviewed ids outside ``population`` are ignored.
    ``stratum_population``: cases per stratum for the weights (default: counted in ``population``).
    ``failures``: ``<target>.<setting>.<decoding>`` -> case id -> the target failed the perturbed
    case, for the judge-accepted cases an evaluation scored.
    Without a decided review the figures say so (``judge_alone``) and hold only the judge's
    acceptance.
    """
    by_id = {c.id: c for c in population}
    counted: dict[str, int] = {}
    for c in population:
        counted[c.stratum] = counted.get(c.stratum, 0) + 1
    sizes = dict(stratum_population) if stratum_population is not None else counted
    notes: list[str] = []
    reviewed = {i: v for i, v in human.items() if i in by_id}
    if len(reviewed) < len(human):
        notes.append(f"{len(human) - len(reviewed)} reviewed case(s) are not in the judged population; ignored")
    decided = {i: bool(v) for i, v in reviewed.items() if v is not None}
    undecided = len(reviewed) - len(decided)
    accepted = [c for c in population if c.accepted]
    n_valid = sum(decided.values())
    low, high = wilson_interval(n_valid, len(decided), alpha) if decided else (NAN, NAN)
    fig = ValidityFigures(
        judged_n=len(population),
        judge_accepted_n=len(accepted),
        judge_acceptance=len(accepted) / len(population) if population else NAN,
        reviewed_n=len(decided),
        undecided_n=undecided,
        human_valid_n=n_valid,
        human_valid_rate=n_valid / len(decided) if decided else NAN,
        human_valid_low=low,
        human_valid_high=high,
        judged=judged,
        notes=notes,
    )
    if undecided:
        notes.append(
            f"{undecided} reviewed case(s) have no human majority (tie or unsure only): "
            "left out, as if missing at random within their stratum"
        )
    if not decided:
        # An unjudged run (no judge ran) must not be said to rest on the judge.
        notes.insert(0, JUDGE_ALONE if judged else CHECKS_ALONE)
        return fig

    if judged:
        agree = judge_agreement(
            [(by_id[i].stratum, by_id[i].accepted, v) for i, v in decided.items()], sizes, alpha=alpha, seed=seed
        )
        fig.judge_precision, fig.judge_recall, fig.judge_kappa = agree["precision"], agree["recall"], agree["kappa"]

    fig.accepted_valid_ppi, fig.accepted_valid_classical = _accepted_valid_share(accepted, decided, by_id, alpha)
    fig.attack_success.update(_attack_success(failures or {}, decided, by_id, alpha))
    return fig


def _accepted_valid_share(
    accepted: Sequence[JudgedCase], decided: Mapping[str, bool], by_id: Mapping[str, JudgedCase], alpha: float
) -> tuple[Estimate, Estimate]:
    """(PPI, classical) share of judge-accepted cases that are valid."""
    pop_preds: dict[str, list[float]] = {}
    for c in accepted:
        pop_preds.setdefault(c.stratum, []).append(c.prediction)
    lab: dict[str, list[tuple[float, float]]] = {}
    for i, v in decided.items():
        c = by_id[i]
        if c.accepted:
            lab.setdefault(c.stratum, []).append((float(v), c.prediction))
    return stratified_rate(lab, pop_preds, alpha=alpha)


def _attack_success(
    failures: Mapping[str, Mapping[str, bool]],
    decided: Mapping[str, bool],
    by_id: Mapping[str, JudgedCase],
    alpha: float,
) -> dict[str, dict[str, Estimate]]:
    """Attack success on valid accepted cases, per target x setting x decoding: (PPI, classical) each."""
    success = {}
    for key, failed in sorted(failures.items()):
        pop_rows: dict[str, list[tuple[float, float]]] = {}
        lab_rows: dict[str, list[tuple[float, float, float]]] = {}
        for case_id, fail in failed.items():
            c = by_id.get(case_id)
            if c is None or not c.accepted:
                continue
            pop_rows.setdefault(c.stratum, []).append((float(fail), c.prediction))
            if case_id in decided:
                lab_rows.setdefault(c.stratum, []).append((float(decided[case_id]), float(fail), c.prediction))
        ppi, classical = stratified_ratio(lab_rows, pop_rows, alpha=alpha)
        success[key] = {"ppi": ppi, "classical": classical}
    return success
