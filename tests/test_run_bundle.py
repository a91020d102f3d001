"""A run packed on one machine resumes on another: `reeval pack` / `reeval unpack` round-trip a bench's
checkpoint, and unpacking never replaces a run that is as far or further along, or another config's run."""

import json
import logging
import tarfile

import pytest
from typer.testing import CliRunner

from experiments import launch
from experiments.cli import app
from experiments.run_bundle import BundleError, pack, unpack
from experiments.run_store import RunStore
from tests.test_knowledge_conflict import kc_config


def test_a_packed_bench_resumes_elsewhere_with_every_stage_reused(world, isolated, monkeypatch, caplog):
    config = kc_config(isolated)
    first = launch.run_experiment(config, progress=False)
    bundle = isolated / "kc.tar.gz"
    result = CliRunner().invoke(app, ["pack", first.run_id, "--out", str(bundle)])
    assert result.exit_code == 0, result.output
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
    assert f"{first.run_id}/stages.json" in names and all(n.startswith(first.run_id) for n in names)

    monkeypatch.setenv("REEVAL_RUNS_DIR", str(isolated / "elsewhere"))
    result = CliRunner().invoke(app, ["unpack", str(bundle)])
    assert result.exit_code == 0, result.output
    caplog.set_level(logging.INFO, logger="experiments.bench.stages")
    caplog.clear()  # only what the resumed run logs
    again = launch.run_experiment(config, progress=False)
    assert again.run_id == first.run_id
    reused = [r.getMessage() for r in caplog.records if "finished earlier, reused" in r.getMessage()]
    ran = [r.getMessage() for r in caplog.records if "released" in r.getMessage()]
    assert reused and not ran
    assert (
        again.metrics["conflict.smollm2-135m.answer_swap.known.open_book.memory"]
        == (first.metrics["conflict.smollm2-135m.answer_swap.known.open_book.memory"])
    )


def _run(root, run_id, cases, config=None):
    store = RunStore(run_id, root=root)
    store.write_config(config or {"name": "x"})
    store.append([{"id": str(i), "seed_id": str(i), "status": "accepted"} for i in range(cases)])
    store.close()


def test_unpack_refuses_to_go_backwards_or_mix_configs(tmp_path):
    _run(tmp_path / "a", "r-1", 3)
    pack("r-1", tmp_path / "r.tar.gz", root=tmp_path / "a")
    _run(tmp_path / "b", "r-1", 3)  # as far along
    with pytest.raises(BundleError, match="not behind"):
        unpack(tmp_path / "r.tar.gz", tmp_path / "b")
    _run(tmp_path / "c", "r-1", 1, {"name": "y"})  # behind, but another config
    with pytest.raises(BundleError, match="another config"):
        unpack(tmp_path / "r.tar.gz", tmp_path / "c")
    _run(tmp_path / "d", "r-1", 1)  # behind: restored
    assert unpack(tmp_path / "r.tar.gz", tmp_path / "d") == ("r-1", 3)
    assert len(RunStore("r-1", root=tmp_path / "d").records()) == 3


def test_a_superseded_stage_is_left_out_and_a_strange_tar_refused(tmp_path):
    _run(tmp_path / "a", "r-2", 1)
    aside = tmp_path / "a" / "r-2" / "knowledge.t.superseded-abc"
    aside.mkdir()
    (aside / "cases.jsonl").write_text(json.dumps({"id": "9"}) + "\n")
    files, cases = pack("r-2", tmp_path / "r.tar.gz", root=tmp_path / "a")
    assert (files, cases) == (2, 1)
    with tarfile.open(tmp_path / "evil.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "a" / "r-2" / "config.json", arcname="../escape.json")
    with pytest.raises(BundleError, match="not a packed run"):
        unpack(tmp_path / "evil.tar.gz", tmp_path / "z")
    with pytest.raises(BundleError, match="nothing to pack"):
        pack("missing", tmp_path / "m.tar.gz", root=tmp_path / "a")
