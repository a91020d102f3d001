"""experiments/lm/shared_weights.py on a stand-in for llama-cpp-python's LlamaModel (no model is loaded); the
real model is in tests/test_local_lm.py (`-m local_lm`)."""

from types import SimpleNamespace

import pytest

internals = pytest.importorskip("llama_cpp._internals")

from experiments.lm.shared_weights import loaded_models, sharing_weights  # noqa: E402


class FakeModel:
    loads: list[str] = []
    frees: list[str] = []

    def __init__(self, *, path_model, params, verbose=True):
        FakeModel.loads.append(path_model)
        self.path_model, self.model = path_model, object()

    def n_vocab(self):
        return 7

    def close(self):
        FakeModel.frees.append(self.path_model)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(internals, "LlamaModel", FakeModel)
    monkeypatch.setattr(FakeModel, "loads", [])
    monkeypatch.setattr(FakeModel, "frees", [])
    return FakeModel


def params(load_mode=1):
    return SimpleNamespace(n_gpu_layers=0, split_mode=0, main_gpu=0, vocab_only=False, load_mode=load_mode)


def load(path, load_mode=1):
    # What Llama.__init__ does: look the class up on the module when it builds a model.
    with sharing_weights():
        return internals.LlamaModel(path_model=path, params=params(load_mode), verbose=False)


def test_contexts_of_one_file_borrow_one_model_freed_with_the_last(fake):
    a, b = load("a.gguf"), load("a.gguf")
    assert fake.loads == ["a.gguf"] and a.model is b.model and b.n_vocab() == 7
    assert loaded_models() == {"a.gguf": 2}
    a.close()
    a.close()  # a Llama closes its model once in close() and again when collected: counted once
    assert fake.frees == [] and loaded_models() == {"a.gguf": 1}
    b.close()
    assert fake.frees == ["a.gguf"] and loaded_models() == {}
    load("a.gguf").close()  # a later context loads it afresh
    assert fake.loads == ["a.gguf", "a.gguf"]


def test_other_files_or_load_parameters_get_their_own_model(fake):
    held = [load("a.gguf"), load("b.gguf"), load("a.gguf", load_mode=2)]
    assert fake.loads == ["a.gguf", "b.gguf", "a.gguf"]
    for model in held:
        model.close()
    assert sorted(fake.frees) == ["a.gguf", "a.gguf", "b.gguf"] and loaded_models() == {}


def test_outside_the_block_the_library_loads_as_it_always_did(fake):
    load("a.gguf").close()
    assert internals.LlamaModel is FakeModel
    internals.LlamaModel(path_model="a.gguf", params=params(), verbose=False)
    assert fake.loads == ["a.gguf", "a.gguf"] and loaded_models() == {}
