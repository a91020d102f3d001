"""SQuAD-style answer normalisation.

Every string metric in this package compares answers through this one function, so that EM,
F1, containment and keyword matching agree on what "the same answer" means. The rules are the
official SQuAD v1.1 evaluation script's, in its order: lowercase, drop punctuation, drop the
articles a/an/the, collapse whitespace. Punctuation is deleted rather than replaced by a space
(as SQuAD does), so "U.S." becomes "us" and "Jean-Paul" becomes "jeanpaul".
"""

import re
import string

# A frozenset is faster to probe per character than string.punctuation itself.
_PUNCTUATION = frozenset(string.punctuation)
# Articles are removed only as whole words: "theatre" and "another" must survive.
_ARTICLES = re.compile(r"\b(a|an|the)\b")
# Natural Questions text is tokenised ("the fund 's earnings", "do n't"): a model that writes
# "the fund's earnings" gives the same answer. Re-attach clitics before punctuation is dropped,
# otherwise "fund 's" → "fund s" and "fund's" → "funds" never match.
_CLITICS = re.compile(r"(\w) (?=(?:'s|'re|'ve|'ll|'d|'m|n't)\b)", re.IGNORECASE)


def normalize_answer(s: str | None) -> str:
    """Lowercase, remove punctuation and articles, collapse whitespace; None becomes ''."""
    if s is None:
        return ""
    text = _CLITICS.sub(r"\1", str(s)).lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(s: str | None) -> list[str]:
    """Whitespace tokens of the normalised answer (the unit of token F1 and containment)."""
    return normalize_answer(s).split()
