"""Human review of generated cases.

- :mod:`.verdicts` — verdict files (read, majority vote, agreement, apply), spreadsheet export;
- :mod:`.sample` — the stratified review sample of a run, drawn once (``review/sample.json``);
- :mod:`.verdict_log` — one annotator's append-only, fsynced verdict file;
- :mod:`.view` — what the page shows of a case (word-level diff against the original, documents);
- :mod:`.server` — the blind review page (``reeval review``);
- :mod:`.label_studio` — the same sample as Label Studio tasks, and its exports back as verdicts;
- :mod:`.sheet` — a blind plain-text sheet for a reader without the page (the key kept apart), and the
  reader's verdict lines back.

The Python functions re-exported here are the API; the page, Label Studio and the sheet are three ways of
filling the same ``runs/<run-id>/review/<annotator>.jsonl`` files.
"""

from experiments.review.verdicts import (
    HUMAN_REJECTION,
    LABELS,
    UNSURE,
    VERDICTS,
    ReviewFormatError,
    Verdict,
    VoteResult,
    _fleiss_kappa,
    agreement,
    apply_review,
    export_for_review,
    load_verdicts,
    majority_vote,
)

__all__ = [
    "HUMAN_REJECTION",
    "LABELS",
    "UNSURE",
    "VERDICTS",
    "ReviewFormatError",
    "Verdict",
    "VoteResult",
    "_fleiss_kappa",
    "agreement",
    "apply_review",
    "export_for_review",
    "load_verdicts",
    "majority_vote",
]
