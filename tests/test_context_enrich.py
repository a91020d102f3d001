from dataclasses import dataclass

import dspy

from metrics.evidence_checks import carries_subject, competing_candidates, opens_with_pronoun
from programs.context_enrich import (
    ContextEnrich,
    clean_passages,
    complete_sentences,
    enrich_checks,
    insert_sentence,
    kept_evidence,
    supporting_sentence,
)

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

    def describe(self):
        return {"retrieval.corpus_sha256": "f" * 64, "retrieval.index": "Flat", "retrieval.passages": 3}


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


KEPT = "The bridge opened in 1932 after six years of work. It was designed by John Bradfield."


def test_two_copies_and_code_merge_when_lm_merge_paraphrases():
    # "It was designed by ..." opens with a pronoun: its antecedent sentence is kept with it (issue 11).
    retriever = FakeRetriever()
    lm = dspy.utils.DummyLM([
        {"sentence": "It was designed by John Bradfield."},
        {"background": "Harbours have ferries. Many bridges are steel."},
        {"passage": "Harbours have ferries. " + KEPT + " Many bridges are steel."},
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
    assert out.sentence == KEPT and out.sentences_kept == 2
    assert second["merge"].startswith("code") and KEPT in second["context"]
    assert second["rejection"] is None and len(second["retrieved"]) == 3


# --- issue 11 regressions: the kept sentence must still say what the question asks -------------

GRINCH = ("The Grinch is a bitter , grouchy , cave - dwelling creature with a heart `` two sizes too small '' who "
          "is living as a hermit on the snowy Mount Crumpit . His only companion is his unloved , but loyal dog , "
          "Max . From his cave , the Grinch can hear the noisy Christmas festivities .")


def test_pronoun_opening_keeps_its_antecedent():
    """"His only companion is ... Max" was kept alone and placed after a passage about another dog."""
    start = GRINCH.index("Max")
    kept = kept_evidence(GRINCH, "His only companion is his unloved , but loyal dog , Max .",
                         "dogs name in the grinch who stole christmas", ["Max"], start)
    assert kept.problem is None and kept.sentences == 2
    assert kept.text.startswith("The Grinch is a bitter") and kept.text.endswith("dog , Max .")
    assert opens_with_pronoun("His only companion is his dog.") and not opens_with_pronoun("Hissing is rude.")


def test_a_sentence_without_the_question_subject_is_refused():
    """An actor's birth date with no mention of the film does not answer "when was the star of X born"."""
    evidence = "Jane Roe starred in Night Harbour . Roe was born on 4 May 1970 in Leeds ."
    question = "when was the star of night harbour born"
    kept = kept_evidence(evidence, "Roe was born on 4 May 1970 in Leeds .", question, ["4 May 1970"], None)
    # The previous sentence names the film: it is kept too, and the pair says what the question asks.
    assert kept.problem is None and kept.text == evidence
    alone = kept_evidence("Roe was born on 4 May 1970 in Leeds .", "", question, ["4 May 1970"], None)
    assert alone.problem == "supporting_sentence_off_topic"


def test_victor_emmanuel_sentence_is_beyond_a_cheap_check():
    """"was King of Sardinia ... until 17 March 1861" for "who was named king of italy in 1861": the
    sentence shares "king" and "1861" with the question; only "Italy" is missing. A rule demanding every
    subject word would catch it but keeps 17% of NQ's gold sentences (measured), so the code rule (one
    subject word) lets it through; the judge must catch it."""
    evidence = ("Victor Emmanuel II ( Vittorio Emanuele Maria Alberto Eugenio Ferdinando Tommaso di Savoia ; 14 March "
                "1820 -- 9 January 1878 ) was King of Sardinia from 1849 until 17 March 1861 . At that point , he "
                "assumed the title of King of Italy and became the first king of a united Italy since the 6th "
                "century .")
    question = "who was named king of italy in 1861"
    kept = kept_evidence(evidence, "", question, ["Victor Emmanuel II"], 0)
    assert kept.problem is None and "Italy" not in kept.text  # not caught: documented limitation
    assert carries_subject(kept.text, question)


# --- retrieved background that offers another answer of the same type ---------------------------

def test_competing_candidates_by_answer_type():
    q = "when did the bridge open"
    assert competing_candidates("A second bridge opened on 3 June 1992 nearby.", q, ["1932"]) == ["3 June 1992"]
    # Scoped to sentences about the question's subject (two subject words): a tunnel is not the bridge.
    assert competing_candidates("A tunnel opened in 1992 .", q, ["1932"]) == []
    assert competing_candidates("The bridge opened in 1932 .", "when did the bridge open", ["1932"]) == []
    # a number beside a question word
    q = "how many episodes are in season 3 of the show"
    assert competing_candidates("Season 2 had 13 episodes .", q, ["22"]) == ["2", "13"]
    assert competing_candidates("The cast had 13 members in Toronto .", q, ["22"]) == []
    # a name where the question's subject is
    q = "who designed the sydney harbour bridge"
    assert competing_candidates("The Sydney Harbour Bridge was built by Dorman Long .", q, ["John Bradfield"]) == [
        "Dorman Long"]
    assert competing_candidates("Ferries cross Port Jackson daily .", q, ["John Bradfield"]) == []
    assert competing_candidates("The bridge was designed by John Bradfield .", q, ["John Bradfield"]) == []


def test_background_passages_offering_another_answer_are_replaced_by_the_next():
    hits = [Hit("p0", "A", "The harbour bridge opened in 1992 ."), Hit("p1", "B", "Ferries are green ."),
            Hit("p2", "C", "Bridges are tall ."), Hit("p3", "D", "Trains are fast .")]
    kept, skipped = clean_passages(hits, "when did the bridge open", ["1932"], 2)
    assert [h.id for h in kept] == ["p1", "p2"] and [h.id for h in skipped] == ["p0"]


def test_a_copy_with_only_competing_background_is_rejected():
    class DatedRetriever(FakeRetriever):
        def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
            return [Hit(f"p{i}", f"T{i}", f"Another bridge opened in {1900 + i} .") for i in range(k)]

    lm = dspy.utils.DummyLM([{"sentence": "The bridge opened in 1932 after six years of work."}],
                            adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ContextEnrich(DatedRetriever(), k=3)(question="when did the bridge open", context=EVIDENCE,
                                                   answers=["1932"])
    assert [c["rejection"] for c in out.copies] == ["background_has_other_candidate"] * 2
    assert len(out.copies[0]["skipped"]) == 12


def test_a_background_cut_off_by_the_token_limit_loses_its_fragment():
    # nq-context-enrich, "where did the king of france live before versailles": the condensed
    # background stopped at max_tokens and the key sentence was inserted after "officially".
    cut = ("Following the Treaties of Nijmegen in 1678 , he began to gradually move the court to Versailles . "
           "The court was officially")
    assert complete_sentences(cut).endswith("to Versailles .")
    whole = "It was built in 1661 . It was expanded ( later ) ."
    assert complete_sentences(whole) == whole
    assert complete_sentences("One fragment only") == "One fragment only"  # nothing better to keep
