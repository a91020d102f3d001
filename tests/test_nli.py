"""Entailment backends: the cross-encoder path (with a stand-in model) and the judge-LM fallback."""

import dspy
import numpy as np
import pytest

from experiments import nli
from experiments.config import LMConfig
from experiments.lm.registry import ResolvedLM
from metrics.scores import score_record


class FakeCrossEncoder:
    """Stands in for sentence_transformers.CrossEncoder: labels in the deberta NLI order."""

    def __init__(self, model, device):
        self.config = type("C", (), {"id2label": {0: "contradiction", 1: "entailment", 2: "neutral"}})()
        self.calls = []

    def predict(self, pairs, batch_size, apply_softmax):
        self.calls.append(len(pairs))
        return np.array([[0.1, 0.8, 0.1] if "Paris" in h else [0.7, 0.1, 0.2] for _, h in pairs])


def test_cross_encoder_reads_the_entailment_column_and_batches(monkeypatch):
    import sentence_transformers

    monkeypatch.setattr(sentence_transformers, "CrossEncoder", FakeCrossEncoder)
    backend = nli.build_nli("cross-encoder:/models/nli-deberta")
    assert backend.name == "cross-encoder:/models/nli-deberta"
    assert backend.batch([("q Paris", "q Paris"), ("q Lyon", "q Lyon")]) == [0.8, 0.1]
    assert backend.model.calls == [2]
    record = {
        "question": "capital?",
        "prediction": "It is Paris",
        "answers": ["Paris"],
        "status": "ok",
        "task": "external",
        "variant": "external",
    }
    assert score_record(record, nli=backend)["entailment"] is True


def test_judge_fallback_and_unknown_backend():
    lm = dspy.utils.DummyLM([{"verdict": "entailment"}, {"verdict": "not_entailment"}], adapter=dspy.JSONAdapter())
    backend = nli.build_nli("judge", ResolvedLM("judge", LMConfig(name="dummy/judge"), lm, None))
    assert backend("a", "b") == 1.0 and backend("c", "d") == 0.0
    assert backend.name == "judge-lm:dummy/judge"
    assert nli.build_nli("none") is None
    with pytest.raises(ValueError, match="needs models.judge"):
        nli.build_nli("judge")
    with pytest.raises(ValueError, match="unknown nli backend"):
        nli.build_nli("roberta")
