"""A run resumed on an edited data file is refused, in one line that says what changed and how to go on."""

import json

from experiments.config_loader import load_config
from experiments.run_store import RunStore
from tests.run_faults import assert_each_case_once, only_line, scripted_lms, seed_config
from tests.test_cli_errors import CONTEXT, invoke, run


def _rows(question: str = "When was tower {i} completed?") -> str:
    return "".join(
        json.dumps(
            {"id": f"q{i}", "question": question.format(i=i), "context": f"{CONTEXT} Row {i}.", "answers": ["1889"]}
        )
        + "\n"
        for i in range(6)
    )


def test_a_run_resumed_on_an_edited_data_file_is_refused(isolated, monkeypatch):
    data = isolated / "seeds.jsonl"
    data.write_text(_rows())
    config_path = seed_config(isolated, source=str(data))
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    scripted_lms(monkeypatch)
    assert run(config_path).exit_code == 0
    inputs = json.loads((store.dir / "inputs.json").read_text())
    assert inputs["data"]["path"] == str(data) and len(inputs["data"]["sha256"]) == 64
    assert inputs["config_sha256"] == config.digest()

    data.write_text(_rows("In which year was tower {i} completed?"))
    before = store.cases_path.read_bytes()
    for result in (run(config_path), invoke("resume", store.run_id, "--log-level", "WARNING")):
        line = only_line(result)
        assert line.startswith(f"{store.dir / 'inputs.json'}: the data changed since run {store.run_id!r} started: ")
        assert f"{data} has sha256 " in line and "6 finished cases were made from the rows as they were" in line
        assert "`reeval run <its config> --fresh`" in line
    assert store.cases_path.read_bytes() == before  # nothing added to the run
    assert_each_case_once(store.cases_path)

    fresh = run(config_path, "--fresh")
    assert fresh.exit_code == 0, fresh.output
    assert "ran 6 rows" in fresh.stdout


def test_a_run_from_before_the_inputs_were_kept_records_them_on_resume(isolated, monkeypatch):
    data = isolated / "seeds.jsonl"
    data.write_text(_rows())
    config_path = seed_config(isolated, source=str(data))
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    scripted_lms(monkeypatch)
    assert run(config_path).exit_code == 0
    (store.dir / "inputs.json").unlink()
    again = run(config_path)
    assert again.exit_code == 0, again.output
    assert "ran 0 rows" in again.stdout
    assert json.loads((store.dir / "inputs.json").read_text())["data"]["path"] == str(data)


def test_a_run_resumed_on_an_edited_config_is_refused(isolated, monkeypatch):
    """`reeval resume` reads the run's own config.json: an edit of that file is caught against inputs.json."""
    config_path = seed_config(isolated)
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    scripted_lms(monkeypatch)
    assert run(config_path).exit_code == 0
    inputs = json.loads((store.dir / "inputs.json").read_text())
    assert inputs["config"] == config.identity()

    stored = json.loads((store.dir / "config.json").read_text())
    stored["data"]["limit"] = 8
    (store.dir / "config.json").write_text(json.dumps(stored))
    before = store.cases_path.read_bytes()
    line = only_line(invoke("resume", store.run_id, "--log-level", "WARNING"))
    assert line == (
        f"{store.dir / 'inputs.json'}: the config changed since run {store.run_id!r} started (data.limit: 6 then, "
        "8 now), and 6 finished cases were made with it as it was; start a new run with `reeval run <its config> "
        f"--fresh`, or put {store.dir / 'config.json'} back as it was to resume"
    )

    # Inputs kept before the config's keys were: the digests say that it changed, not what.
    (store.dir / "inputs.json").write_text(json.dumps({k: v for k, v in inputs.items() if k != "config"}))
    line = only_line(invoke("resume", store.run_id, "--log-level", "WARNING"))
    assert f"started (its digest was {config.digest()[:12]}…, it is " in line
    assert store.cases_path.read_bytes() == before  # nothing added to the run
    assert_each_case_once(store.cases_path)

    stored["data"]["limit"] = 6
    (store.dir / "config.json").write_text(json.dumps(stored))
    again = invoke("resume", store.run_id, "--log-level", "WARNING")
    assert again.exit_code == 0, again.output
    assert "ran 0 rows" in again.stdout
    assert_each_case_once(store.cases_path)
