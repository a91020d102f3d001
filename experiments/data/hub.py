"""QA and multiple-choice records from the Hugging Face hub, for users with a network.

Unlike the local loaders, these never set the offline variables (``HF_DATASETS_OFFLINE``,
``HF_HUB_OFFLINE``): they exist to download. A hub dataset has no local file to hash, so pin
``revision`` and record the hub commit for a reproducible run.
"""

from __future__ import annotations

import logging

import dspy

from experiments.data.converters import arc_hub_row_to_record, mrqa_hub_row_to_record
from experiments.data.examples import mc_example, qa_example
from experiments.data.loaders import check_limit

logger = logging.getLogger(__name__)


def _hub_datasets():
    """``datasets`` as it is: these loaders download, so no offline defaults are set before the import."""
    import datasets

    return datasets


def load_qa_from_hub(
    name: str = "mrqa-workshop/mrqa",
    split: str = "validation",
    subset: str | None = None,
    *,
    limit: int | None = None,
    revision: str | None = None,
    streaming: bool = False,
) -> list[dspy.Example]:
    """MRQA questions from the Hugging Face hub as QA ``dspy.Example``s.

    ``subset`` keeps one MRQA source (compared case-insensitively, e.g. ``"NaturalQuestionsShort"``).
    Pin ``revision`` for reproducible runs and record the hub commit, since a hub dataset has
    no local file to hash. ``streaming=True`` avoids downloading the whole split when only
    ``limit`` rows are needed.
    """
    check_limit(limit)
    ds_mod = _hub_datasets()
    ds = ds_mod.load_dataset(name, split=split, revision=revision, streaming=streaming)
    want = subset.lower() if subset is not None else None
    out: list[dspy.Example] = []
    for i, row in enumerate(ds):
        if limit is not None and len(out) >= limit:
            break
        if want is not None and str(row.get("subset", "")).lower() != want:
            continue
        out.append(qa_example(mrqa_hub_row_to_record(row, f"hub:{name}[{split}] row {i}")))
    logger.info("loaded %d MRQA questions from hub %s[%s]", len(out), name, split)
    return out


def load_arc_from_hub(
    name: str = "allenai/ai2_arc",
    config: str = "ARC-Challenge",
    split: str = "test",
    *,
    limit: int | None = None,
    revision: str | None = None,
) -> list[dspy.Example]:
    """ARC questions from the Hugging Face hub as multiple-choice ``dspy.Example``s."""
    check_limit(limit)
    ds_mod = _hub_datasets()
    ds = ds_mod.load_dataset(name, config, split=split, revision=revision)
    source = config.lower().replace("-", "_")
    out: list[dspy.Example] = []
    for i, row in enumerate(ds):
        if limit is not None and len(out) >= limit:
            break
        out.append(mc_example(arc_hub_row_to_record(row, f"hub:{name}/{config}[{split}] row {i}", source=source)))
    logger.info("loaded %d ARC questions from hub %s/%s[%s]", len(out), name, config, split)
    return out
