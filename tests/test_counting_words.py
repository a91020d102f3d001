"""One word for each thing the command line counts (experiments/run_store.py): rows of the data, records of
the checkpoint, cases a generator made. `show`, `validity` and `review` agree on a run's cases, and a run that
generated none (a seed selection) is said to have none by each of them."""

from types import SimpleNamespace

from typer.testing import CliRunner

from experiments import cli
from experiments.cli import app
from experiments.run_store import RunStore, is_case, run_counts
from experiments.validity.inputs import judged_population

SEEDS = "nq-seed-selection-test"
SWAP = "nq-answer-swap-test"


def _seed_record(i: int) -> dict:
    # What the seed_selection task writes: the pivot's scores, status accepted, no context of its own.
    return {
        "id": f"s{i}",
        "seed_id": f"s{i}",
        "question": f"question {i}",
        "answers": ["an answer"],
        "closed_answer": "x",
        "open_answer": "an answer",
        "cell": "open_correct__closed_wrong",
        "status": "accepted",
    }


def _swap_record(i: int, status: str, context: str | None = "") -> dict:
    record = {"id": f"s{i}:swap", "seed_id": f"s{i}", "task": "answer_swap", "status": status, "question": f"q{i}"}
    if context == "":
        context = f"Passage {i}, rewritten."
    if context is not None:
        record |= {
            "context": context,
            "answers": ["new"],
            "original_context": "The passage.",
            "original_answers": ["old"],
        }
    return record


def _store(run_id: str, records: list[dict], task: str) -> RunStore:
    store = RunStore(run_id)
    store.write_config({"name": run_id, "task": task, "data": {"source": "nq"}})
    store.append(records)
    store.close()
    return store


def test_a_case_is_a_record_holding_a_generated_context():
    assert is_case(_swap_record(0, "accepted"))
    assert is_case(_swap_record(0, "rejected:old_answer_kept"))
    assert not is_case(_swap_record(0, "rejected:seed_not_selected", context=None))
    assert not is_case(_seed_record(0))
    assert not is_case({**_swap_record(0, "accepted"), "target": "t"})  # a target's answer on a case
    assert not is_case({"id": "s0:closed-book", "context": "", "variant": "original", "status": "accepted"})


def test_counts_name_rows_records_and_cases():
    seeds = [_seed_record(i) for i in range(3)]
    assert run_counts(seeds) == "3 rows, 3 records, no cases (nothing generated)"
    swaps = [_swap_record(0, "accepted"), _swap_record(1, "rejected:x"), _swap_record(2, "error:parse", None)]
    assert run_counts(swaps) == "3 rows, 3 records, 2 cases (1 accepted)"
    assert run_counts(swaps[:1]) == "1 row, 1 record, 1 case (1 accepted)"
    # An evaluation's rows give several records each (a target's answers), none of them a case.
    answers = [{**_swap_record(0, "accepted"), "id": f"a{k}", "target": "t"} for k in range(4)]
    assert run_counts(answers) == "1 row, 4 records, no cases (nothing generated)"


def test_validity_counts_the_cases_review_samples_from():
    """The accepted records of a seed selection are scores, not cases: validity's population leaves them out,
    as the review sample does."""
    population, judged = judged_population([_seed_record(i) for i in range(20)])
    assert population == [] and not judged
    swaps = [_swap_record(0, "accepted"), _swap_record(1, "accepted", context=None)]
    assert [c.id for c in judged_population(swaps)[0]] == ["s0:swap"]


def test_show_validity_and_review_agree_on_a_run_without_cases(isolated):
    _store(SEEDS, [_seed_record(i) for i in range(20)], "seed_selection")
    from experiments import tracking

    with tracking.parent_run("reeval/test", SEEDS, {tracking.RUN_ID_TAG: SEEDS}):
        import mlflow

        mlflow.log_metrics({"records": 20})
    said = "20 rows, 20 records, no cases (nothing generated)"
    shown = CliRunner().invoke(app, ["show", SEEDS])
    assert shown.exit_code == 0, shown.output
    assert f"checkpoint: {said}" in shown.output and "nothing to validate" in shown.output
    assert "accepted cases" not in shown.output
    validity = CliRunner().invoke(app, ["validity", SEEDS])
    assert validity.exit_code == 1 and said in validity.output
    review = CliRunner().invoke(app, ["review", SEEDS, "--annotator", "ann"])
    assert review.exit_code == 2, review.output
    assert "has no accepted cases to review" in review.output and said in " ".join(review.output.split())


def test_show_and_review_count_the_same_accepted_cases(isolated):
    records = [_swap_record(i, "accepted") for i in range(3)] + [_swap_record(3, "rejected:x", context=None)]
    _store(SWAP, records, "answer_swap")
    from experiments import tracking

    with tracking.parent_run("reeval/test", SWAP, {tracking.RUN_ID_TAG: SWAP}):
        pass
    shown = CliRunner().invoke(app, ["show", SWAP])
    assert shown.exit_code == 0, shown.output
    assert "checkpoint: 4 rows, 4 records, 3 cases (3 accepted)" in shown.output
    assert "(3 accepted cases)" in " ".join(shown.output.split())
    sheet = CliRunner().invoke(app, ["review", SWAP, "--sheet", str(isolated / "sheet.md")])
    assert sheet.exit_code == 0, sheet.output
    assert "sheet of 3 case(s)" in sheet.output


def test_a_run_reports_the_rows_it_ran_and_the_records_it_holds(capsys):
    task = SimpleNamespace(table_rows=lambda records: (["status"], [["accepted"]]), dir=None)
    records = [{"id": f"a{k}", "seed_id": "s0", "target": "t"} for k in range(5)]
    result = SimpleNamespace(
        task=task, records=records, metrics={}, run_id="r-1", mlflow_run_id="m1", new_cases=1, seconds=2.0, notes=[]
    )
    cli._print_result(result)
    last = " ".join(capsys.readouterr().out.split()[-20:])
    assert "ran 1 row in 2.0s · 5 records · MLflow run m1" in last
