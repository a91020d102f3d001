from dataclasses import dataclass

import dspy

from programs.context_enrich import ContextEnrich, enrich_checks, insert_sentence, supporting_sentence

EVIDENCE = ("The bridge opened in 1932 after six years of work. It was designed by John Bradfield. "
            "Traffic grew quickly in the following decade.")


@dataclass
class Hit:
    id: str
    title: str
    text: str
    score: float = 1.0


class FakeRetriever:
    def __init__(self):
        self.queries = []

    def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
        self.queries.append((query, tuple(exclude_texts), tuple(exclude_answers)))
        return [Hit(f"p{i}", f"Title {i}", f"Background fact number {i} about harbours.") for i in range(k)]


def test_supporting_sentence_accepts_verbatim_and_falls_back():
    assert supporting_sentence(EVIDENCE, "It was designed by John Bradfield.", ["John Bradfield"], None) == (
        "It was designed by John Bradfield.", False)
    # a paraphrase is not a sentence of the evidence: fall back to the sentence holding the span
    start = EVIDENCE.index("John Bradfield")
    assert supporting_sentence(EVIDENCE, "Bradfield designed it.", ["John Bradfield"], start) == (
        "It was designed by John Bradfield.", True)


def test_checks_reject_extra_years_for_a_year_answer():
    sentence = "The bridge opened in 1932 after six years of work."
    ok = enrich_checks("Harbours are old. " + sentence + " Ferries ran often.", sentence, ["1932"], [])
    assert all(ok.values())
    bad = enrich_checks("A tunnel opened in 1992. " + sentence, sentence, ["1932"], [])
    assert bad["no_other_candidate"] is False
    wrong = enrich_checks("Some say Joseph Strauss built it. " + sentence, sentence, ["1932"], ["Joseph Strauss"])
    assert wrong["no_other_candidate"] is False


def test_insert_sentence_is_seeded():
    background = "One. Two. Three."
    assert insert_sentence(background, "KEY.", 0) == insert_sentence(background, "KEY.", 0)
    assert "KEY." in insert_sentence(background, "KEY.", 3)


def test_two_copies_and_code_merge_when_lm_merge_paraphrases():
    retriever = FakeRetriever()
    lm = dspy.utils.DummyLM([
        {"sentence": "It was designed by John Bradfield."},
        {"background": "Harbours have ferries. Many bridges are steel."},
        {"passage": "Harbours have ferries. It was designed by John Bradfield. Many bridges are steel."},
        {"background": "Sydney is a city. It has a harbour."},
        {"passage": "Sydney is a city designed by Bradfield."},  # paraphrased: code merge instead
    ], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ContextEnrich(retriever, k=3)(question="who designed the bridge", context=EVIDENCE,
                                            answers=["John Bradfield"])
    assert [c["focus"] for c in out.copies] == ["question", "evidence"]
    assert retriever.queries[0][0] == "who designed the bridge" and retriever.queries[1][0] == EVIDENCE
    assert retriever.queries[0][1] == (EVIDENCE,) and retriever.queries[0][2] == ("John Bradfield",)
    first, second = out.copies
    assert first["merge"] == "lm" and first["rejection"] is None
    assert second["merge"].startswith("code") and "It was designed by John Bradfield." in second["context"]
    assert second["rejection"] is None and len(second["retrieved"]) == 3
