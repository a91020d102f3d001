"""metrics.validity: coverage of the prediction-powered intervals with simulated annotators and a
simulated judge of known error rates, stratum weighting, and the edge cases."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from metrics.validity import (
    JUDGE_ALONE,
    JudgedCase,
    judge_agreement,
    power_tuning,
    stratified_rate,
    stratified_ratio,
    validity_figures,
)

# -- simulation --------------------------------------------------------------------------------
# Two tasks (strata of judge-accepted cases) of different sizes and validity, so stratification
# is exercised too. Each case has a latent validity; three annotators each flip it with
# probability 0.1 and their majority is the human label; the estimand is the share that full
# review would find valid (the majority label over the whole population), since that is what
# the human labels measure. The judge's graded score is informative but noisy.
TASKS = {"answer_swap": (1200, 0.75), "context_enrich": (400, 0.55)}  # accepted cases, P(valid)
REVIEWED = {"answer_swap": 50, "context_enrich": 40}
ANNOTATOR_ERROR = 0.1


def _simulate(rng):
    pop_preds, labelled, ratio_pop, ratio_lab = {}, {}, {}, {}
    valid_all, fail_all = [], []
    for task, (n, p) in TASKS.items():
        latent = rng.random(n) < p
        flips = rng.random((3, n)) < ANNOTATOR_ERROR
        human = ((latent[None, :] ^ flips).sum(axis=0) >= 2).astype(float)
        # the judge's probability: right side of 0.5 about 80% of the time
        score = 1 / (1 + np.exp(-(1.6 * (2 * latent - 1) + rng.normal(0, 1.2, n))))
        # the target fails valid cases 40% of the time, invalid ones (often unanswerable-looking) 70%
        fail = (rng.random(n) < np.where(human == 1, 0.4, 0.7)).astype(float)
        idx = rng.choice(n, REVIEWED[task], replace=False)
        stratum = f"{task}/judge_accepted"
        pop_preds[stratum] = list(score)
        labelled[stratum] = list(zip(human[idx], score[idx], strict=True))
        ratio_pop[stratum] = list(zip(fail, score, strict=True))
        ratio_lab[stratum] = list(zip(human[idx], fail[idx], score[idx], strict=True))
        valid_all.append(human)
        fail_all.append(fail)
    valid_all, fail_all = np.concatenate(valid_all), np.concatenate(fail_all)
    truth_rate = valid_all.mean()
    truth_ratio = (valid_all * fail_all).sum() / valid_all.sum()
    return pop_preds, labelled, ratio_pop, ratio_lab, truth_rate, truth_ratio


@pytest.fixture(scope="module")
def coverage_runs():
    rng = np.random.default_rng(20240611)
    reps = 400
    started = time.perf_counter()
    out = {"rate": [], "ratio": []}
    for _ in range(reps):
        pop_preds, labelled, ratio_pop, ratio_lab, truth_rate, truth_ratio = _simulate(rng)
        ppi, classical = stratified_rate(labelled, pop_preds)
        out["rate"].append(
            (
                ppi.low <= truth_rate <= ppi.high,
                classical.low <= truth_rate <= classical.high,
                ppi.width,
                classical.width,
            )
        )
        ppi, classical = stratified_ratio(ratio_lab, ratio_pop)
        out["ratio"].append(
            (
                ppi.low <= truth_ratio <= ppi.high,
                classical.low <= truth_ratio <= classical.high,
                ppi.width,
                classical.width,
            )
        )
    out["seconds"] = time.perf_counter() - started
    out["reps"] = reps
    return out


def _summary(rows):
    arr = np.asarray(rows, dtype=float)
    return {
        "ppi_cover": arr[:, 0].mean(),
        "classical_cover": arr[:, 1].mean(),
        "ppi_width": arr[:, 2].mean(),
        "classical_width": arr[:, 3].mean(),
    }


def test_ppi_interval_of_the_valid_share_covers_about_95_percent(coverage_runs):
    s = _summary(coverage_runs["rate"])
    print("valid share:", s)
    # 400 reps: a true 95% coverage falls outside 0.90-0.99 with probability well under 0.1%.
    assert 0.90 <= s["ppi_cover"] <= 0.99
    assert 0.90 <= s["classical_cover"] <= 0.99


def test_ppi_interval_is_narrower_when_the_judge_is_informative(coverage_runs):
    s = _summary(coverage_runs["rate"])
    assert s["ppi_width"] < 0.95 * s["classical_width"]


def test_ppi_interval_of_attack_success_on_valid_cases_covers_about_95_percent(coverage_runs):
    s = _summary(coverage_runs["ratio"])
    print("attack success on valid cases:", s)
    assert 0.90 <= s["ppi_cover"] <= 0.99
    assert 0.90 <= s["classical_cover"] <= 0.99
    # the target outcome is known on every case: PPI uses all of them
    assert s["ppi_width"] < 0.95 * s["classical_width"]


# -- the pieces ----------------------------------------------------------------------------------


def test_a_constant_predictor_makes_ppi_the_classical_estimate():
    labelled = {"a/judge_accepted": [(1.0, 1.0)] * 7 + [(0.0, 1.0)] * 3}
    ppi, classical = stratified_rate(labelled, {"a/judge_accepted": [1.0] * 50})
    assert (ppi.estimate, ppi.low, ppi.high) == (classical.estimate, classical.low, classical.high)
    assert ppi.estimate == pytest.approx(0.7)
    assert ppi.lam == 0.0
    assert power_tuning(np.ones(5), np.ones(5), np.ones(9)) == 0.0


def test_recall_precision_and_kappa_weight_each_case_by_its_stratum():
    # Rejected cases are over-sampled (20 of 100) against accepted ones (10 of 100).
    reviewed = (
        [("t/judge_accepted", True, True)] * 8
        + [("t/judge_accepted", True, False)] * 2
        + [("t/judge_rejected", False, True)] * 10
        + [("t/judge_rejected", False, False)] * 10
    )
    out = judge_agreement(reviewed, {"t/judge_accepted": 100, "t/judge_rejected": 100}, n_resamples=200)
    # TP = 100*8/10 = 80, FP = 20, FN = 100*10/20 = 50, TN = 50
    assert out["precision"].estimate == pytest.approx(0.8)
    assert out["recall"].estimate == pytest.approx(80 / 130)  # unweighted it would be 8/18
    assert out["kappa"].estimate == pytest.approx(0.3)
    assert out["recall"].low < out["recall"].estimate < out["recall"].high


def _population(n_acc=30, n_rej=30, p_valid=None):
    cases = [JudgedCase(f"a{i}", "t/judge_accepted", True, p_valid) for i in range(n_acc)]
    cases += [
        JudgedCase(f"r{i}", "t/judge_rejected", False, None if p_valid is None else 1 - p_valid) for i in range(n_rej)
    ]
    return cases


def test_no_reviews_say_validity_is_the_judges_alone():
    fig = validity_figures(_population(20, 10), {})
    assert fig.judge_alone and fig.reviewed_n == 0
    assert fig.notes[0] == JUDGE_ALONE
    assert fig.judge_acceptance == pytest.approx(20 / 30)
    assert fig.accepted_valid_ppi is None and fig.judge_recall is None
    metrics = fig.to_metrics()
    assert metrics["validity.reviewed_n"] == 0
    assert not any(k.startswith("validity.ppi") for k in metrics)


def test_all_reviewed_cases_valid_gives_a_wilson_bound_not_certainty():
    human = {f"a{i}": True for i in range(20)} | {f"r{i}": True for i in range(20)}
    fig = validity_figures(_population(), human)
    assert fig.human_valid_rate == 1.0
    assert 0.8 < fig.human_valid_low < 1.0
    for est in (fig.accepted_valid_ppi, fig.accepted_valid_classical):
        assert est.estimate == 1.0 and est.high == 1.0
        assert 0.7 < est.low < 0.95  # 20 of 20 valid does not prove 100%
    assert fig.judge_precision.estimate == 1.0
    assert fig.judge_recall.estimate == pytest.approx(0.5)  # the judge rejects half of the (valid) population
    # one human label throughout: the judge's split of valid cases is chance agreement, kappa 0
    assert fig.judge_kappa.estimate == pytest.approx(0.0)


def test_a_stratum_with_no_reviewed_case_leaves_what_it_needs_undefined():
    human = {f"a{i}": i % 4 != 0 for i in range(12)}  # only the accepted stratum was reviewed
    fig = validity_figures(_population(), human)
    assert fig.judge_precision.defined and fig.judge_precision.estimate == pytest.approx(0.75)
    assert not fig.judge_recall.defined and "t/judge_rejected" in fig.judge_recall.note
    assert not fig.judge_kappa.defined
    assert fig.accepted_valid_ppi.defined
    # two tasks, and the second task's accepted cases were never reviewed: the share is not identified
    population = _population() + [JudgedCase(f"b{i}", "u/judge_accepted", True) for i in range(10)]
    fig = validity_figures(population, human)
    assert not fig.accepted_valid_ppi.defined and "u/judge_accepted" in fig.accepted_valid_ppi.note
    assert "validity.ppi.accepted_valid" not in fig.to_metrics()


def test_unsure_only_cases_are_left_out_and_counted():
    human = {"a0": None, "a1": None, "a2": True, "a3": False, "a4": True, "r0": None, "r1": False, "r2": True}
    fig = validity_figures(_population(), human)
    assert fig.reviewed_n == 5 and fig.undecided_n == 3
    assert fig.human_valid_rate == pytest.approx(3 / 5)
    assert any("no human majority" in n for n in fig.notes)
    assert fig.accepted_valid_classical.n_labelled == 3
    only_unsure = validity_figures(_population(), {"a0": None, "r0": None})
    assert only_unsure.judge_alone and only_unsure.undecided_n == 2


def test_attack_success_uses_the_target_outcome_on_every_accepted_case():
    rng = np.random.default_rng(3)
    population = [JudgedCase(f"a{i}", "t/judge_accepted", True) for i in range(200)]
    valid = rng.random(200) < 0.8
    fail = rng.random(200) < np.where(valid, 0.3, 0.9)
    human = {f"a{i}": bool(valid[i]) for i in range(40)}
    failures = {"m.open_book.greedy": {f"a{i}": bool(fail[i]) for i in range(200)}}
    fig = validity_figures(population, human, failures=failures)
    pair = fig.attack_success["m.open_book.greedy"]
    assert pair["ppi"].n_population == 200 and pair["ppi"].n_labelled == 40
    # even a binary judge (constant among accepted cases) narrows it: F is known everywhere
    assert pair["ppi"].width < pair["classical"].width
    sub = [i for i in range(40) if valid[i]]
    assert pair["classical"].estimate == pytest.approx(np.mean(fail[sub]))
    assert "validity.ppi.attack_success.m.open_book.greedy.lo" in fig.to_metrics()


def test_importing_ppi_py_does_not_silence_warnings():
    # ppi_py calls warnings.simplefilter("ignore") at import (a catch-all filter); a fresh
    # interpreter shows whether it leaks through our import. Re-executed unguarded, it does.
    code = (
        "import importlib, warnings\n"
        "def catch_all(): return any(f[0] == 'ignore' and f[1] is None and f[2] is Warning and f[3] is None"
        " for f in warnings.filters)\n"
        "from metrics.validity import _import_ppi\n"
        "ppi_py = _import_ppi()\n"
        "print(catch_all())\n"
        "importlib.reload(ppi_py.ppi)\n"
        "print(catch_all())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["False", "True"], result.stderr[-1000:]


def test_tests_is_this_projects_package_not_ppi_pythons():
    # ppi-python's wheel installs a top-level `tests` package; tests/__init__.py keeps ours first.
    import tests

    assert Path(tests.__file__).resolve().parent == Path(__file__).resolve().parent
