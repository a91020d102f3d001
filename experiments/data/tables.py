"""Records as a ``datasets.Dataset`` with one fixed schema per record form, whatever file they came from,
so they can be mapped, sharded or handed to other engines as Arrow tables.

``datasets`` is imported lazily and offline: :func:`offline_datasets` sets ``HF_DATASETS_OFFLINE`` and
``HF_HUB_OFFLINE`` as defaults (``os.environ.setdefault``) before importing it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from experiments.data.records import PASSAGE_FIELDS

if TYPE_CHECKING:  # pragma: no cover - typing only; ``datasets`` is imported lazily
    import datasets


def offline_datasets():
    """Import ``datasets`` with hub access off by default (setdefault, so users can override).

    ``datasets`` reads these variables when first imported; set them before that import.
    """
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    return datasets


def qa_features(ds_mod: Any) -> datasets.Features:
    """The columns of a QA table (:data:`~experiments.data.records.QA_FIELDS`)."""
    v = ds_mod.Value
    return ds_mod.Features(
        {
            "id": v("string"),
            "question": v("string"),
            "context": v("string"),
            "answers": [v("string")],
            "answer_starts": [v("int64")],
            "title": v("string"),
            "source": v("string"),
        }
    )


def mc_features(ds_mod: Any) -> datasets.Features:
    """The columns of a multiple-choice table (the checked record, before ``options`` and ``answer``)."""
    v = ds_mod.Value
    return ds_mod.Features(
        {
            "id": v("string"),
            "question": v("string"),
            "choices": [{"label": v("string"), "text": v("string")}],
            "answer_key": v("string"),
            "source": v("string"),
        }
    )


def passage_features(ds_mod: Any) -> datasets.Features:
    """The columns of the passage pool (:data:`~experiments.data.records.PASSAGE_FIELDS`)."""
    v = ds_mod.Value
    return ds_mod.Features({k: v("string") for k in PASSAGE_FIELDS})


def to_dataset(ds_mod: Any, records: list[dict[str, Any]], features: datasets.Features) -> datasets.Dataset:
    """Records → Dataset with a fixed schema (``from_list`` cannot build an empty table)."""
    if not records:
        return ds_mod.Dataset.from_dict({k: [] for k in features}, features=features)
    return ds_mod.Dataset.from_list(records, features=features)
