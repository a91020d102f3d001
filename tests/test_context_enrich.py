from dataclasses import dataclass

import dspy
import pytest

from metrics.checks import content_stems
from metrics.evidence_checks import (
    carries_subject_by_name,
    competing_candidates,
    focus_word,
    leans_on_previous,
    names_all,
    opens_with_pronoun,
    question_names,
    restating_sentences,
    title_name,
)
from programs.context_enrich import (
    ContextEnrich,
    clean_passages,
    complete_sentences,
    enrich_checks,
    evidence_first,
    kept_evidence,
    supporting_sentence,
)
from programs.sentences import split_sentences

EVIDENCE = (
    "The bridge opened in 1932 after six years of work. It was designed by John Bradfield. "
    "Traffic grew quickly in the following decade."
)


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
        "It was designed by John Bradfield.",
        False,
    )
    # a paraphrase is not a sentence of the evidence: fall back to the sentence holding the span
    start = EVIDENCE.index("John Bradfield")
    assert supporting_sentence(EVIDENCE, "Bradfield designed it.", ["John Bradfield"], start) == (
        "It was designed by John Bradfield.",
        True,
    )


def test_checks_reject_extra_years_for_a_year_answer():
    sentence = "The bridge opened in 1932 after six years of work."
    ok = enrich_checks(sentence + " Harbours are old. Ferries ran often.", sentence, ["1932"], [])
    assert all(ok.values())
    assert enrich_checks("Harbours are old. " + sentence, sentence, ["1932"], [])["evidence_first"] is False
    bad = enrich_checks("A tunnel opened in 1992. " + sentence, sentence, ["1932"], [])
    assert bad["no_other_candidate"] is False
    wrong = enrich_checks("Some say Joseph Strauss built it. " + sentence, sentence, ["1932"], ["Joseph Strauss"])
    assert wrong["no_other_candidate"] is False


def test_the_copy_is_the_evidence_then_the_background():
    assert evidence_first("One. Two.", "KEY.") == "KEY. One. Two."


KEPT = "The bridge opened in 1932 after six years of work. It was designed by John Bradfield."


def test_two_copies_and_code_merge_when_lm_merge_paraphrases():
    # "It was designed by ..." opens with a pronoun: its antecedent sentence is kept with it.
    retriever = FakeRetriever()
    lm = dspy.utils.DummyLM(
        [
            {"sentence": "It was designed by John Bradfield."},
            {"background": "Harbours have ferries. Many bridges are steel."},
            {"passage": KEPT + " Harbours have ferries. Many bridges are steel."},
            {"background": "Sydney is a city. It has a harbour."},
            {"passage": "Sydney is a city designed by Bradfield."},  # paraphrased: code merge instead
        ],
        adapter=dspy.JSONAdapter(),
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ContextEnrich(retriever, k=3)(
            question="who designed the bridge", context=EVIDENCE, answers=["John Bradfield"]
        )
    assert [c["focus"] for c in out.copies] == ["question", "evidence"]
    assert retriever.queries[0][0] == "who designed the bridge" and retriever.queries[1][0] == EVIDENCE
    assert retriever.queries[0][1] == (EVIDENCE,) and retriever.queries[0][2] == ("John Bradfield",)
    first, second = out.copies
    assert first["merge"] == "lm" and first["rejection"] is None
    assert out.sentence == KEPT and out.sentences_kept == 2
    assert second["merge"].startswith("code") and KEPT in second["context"]
    assert second["rejection"] is None and len(second["retrieved"]) == 3


# --- regressions: the kept sentence must still say what the question asks -------------

GRINCH = (
    "The Grinch is a bitter , grouchy , cave - dwelling creature with a heart `` two sizes too small '' who "
    "is living as a hermit on the snowy Mount Crumpit . His only companion is his unloved , but loyal dog , "
    "Max . From his cave , the Grinch can hear the noisy Christmas festivities ."
)


def test_pronoun_opening_keeps_its_antecedent():
    """ "His only companion is ... Max" was kept alone and placed after a passage about another dog."""
    start = GRINCH.index("Max")
    kept = kept_evidence(
        GRINCH,
        "His only companion is his unloved , but loyal dog , Max .",
        "dogs name in the grinch who stole christmas",
        ["Max"],
        start,
    )
    # The question's "Christmas" is a name of the evidence too: the run reaches the sentence naming it.
    assert kept.problem is None and kept.sentences == 3
    assert kept.text.startswith("The Grinch is a bitter") and "dog , Max ." in kept.text
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


VICTOR = (
    "Victor Emmanuel II ( Vittorio Emanuele Maria Alberto Eugenio Ferdinando Tommaso di Savoia ; 14 March "
    "1820 -- 9 January 1878 ) was King of Sardinia from 1849 until 17 March 1861 . At that point , he "
    "assumed the title of King of Italy and became the first king of a united Italy since the 6th century ."
)
NAGARJUNA = (
    "Nagarjuna Sagar Dam , one of the world 's largest and tallest Masonry dam built across the Krishna river "
    "at Nagarjuna Sagar which is in Nalgonda District , Telangana State . Construction was between 1955 and "
    "1967 . The dam is 590 feet ( 180 m ) tall from its deepest foundation with 26 flood gates which are "
    "42 feet ( 13 m ) wide ."
)
LIGHTHOUSE = (
    "Lighthouse Point is a city in Broward County , Florida , United States . The city was named for the "
    "Hillsboro Inlet Lighthouse , which is located in nearby Hillsboro Beach . As of the 2010 census , the "
    "population of Lighthouse Point was 10,344 ."
)
COX = (
    "Laverne Cox is an American actress and LGBT advocate . She became known for her portrayal of Sophia Burset "
    "on the Netflix television series Orange Is the New Black , for which she became the first openly "
    "transgender person to be nominated for a Primetime Emmy Award in the acting category ."
)
CRICKET = (
    "The 2017 ICC Champions Trophy was the eighth ICC Champions Trophy , a cricket tournament for the eight "
    "top - ranked One Day International ( ODI ) teams in the world . It was held in England and Wales from "
    "1 June to 18 June 2017 . Pakistan won the competition for the first time with a 180 - run victory over "
    "India in the final at The Oval ."
)


@pytest.mark.parametrize(
    "evidence, question, answer, picked, expected",
    [
        # Reviewed invalid (run nq-context-enrich-d055601dc1): the kept sentence alone was "King of Sardinia
        # ... until 17 March 1861"; the next sentence is the one saying he became King of Italy.
        (VICTOR, "who was named king of italy in 1861", "Victor Emmanuel II", "", VICTOR),
        # "The dam is ... with 26 flood gates" was kept alone and read as the Ranjit Sagar Dam's.
        (
            NAGARJUNA,
            "how many gates are there in nagarjuna sagar dam",
            "26",
            "The dam is 590 feet ( 180 m ) tall from its deepest foundation with 26 flood gates which are "
            "42 feet ( 13 m ) wide .",
            None,
        ),
        # "The city was named for the ... Lighthouse" never named Lighthouse Point: the sentence before does.
        (
            LIGHTHOUSE,
            "where is the lighthouse in lighthouse point fl",
            "Hillsboro Beach",
            "The city was named for the Hillsboro Inlet Lighthouse , which is located in nearby Hillsboro Beach .",
            LIGHTHOUSE[: LIGHTHOUSE.index(" As of")],
        ),
        # "Laverne Cox is an American actress" says nothing of the series; the next sentence does.
        (
            COX,
            "orange is the new black cast transgender actress",
            "Laverne Cox",
            "Laverne Cox is an American actress and LGBT advocate .",
            COX,
        ),
        # The kept run opened with "It was held ...": its antecedent (the tournament) is kept too.
        (CRICKET, "who won the world cup in cricket 2017", "Pakistan", "", CRICKET),
    ],
)
def test_kept_evidence_names_what_the_question_asks_about(evidence, question, answer, picked, expected):
    kept = kept_evidence(evidence, picked, question, [answer], None)
    assert kept.problem is None
    if expected is None:  # several windows would do; what matters is what they must hold
        assert "Nagarjuna Sagar" in kept.text and "26 flood gates" in kept.text
    else:
        assert kept.text == expected
    assert not opens_with_pronoun(kept.text)
    assert names_all(kept.text, question_names(question, evidence))


def test_question_names_come_from_the_evidence_capitals():
    assert question_names("how many gates are there in nagarjuna sagar dam", NAGARJUNA) == [
        frozenset({"nagarjuna", "sagar"})
    ]
    assert question_names("orange is the new black cast transgender actress", COX) == [
        frozenset(content_stems("orange new black"))
    ]
    # "Construction" opens a sentence: capitalised by position, not a name (and not in the question anyway);
    # a generic word ("Series 3") is never a name.
    assert question_names("what construction is in series 3", "Construction began . In Series 3 it ended .") == []


def test_an_answer_sentence_that_cannot_name_the_subject_is_refused():
    """No window of the evidence both holds the answer and names Nagarjuna Sagar."""
    evidence = (
        "Nagarjuna Sagar is a town . It has a school . The school has a bus . The bus is red . "
        "The bus has a driver . The dam has 26 flood gates ."
    )
    kept = kept_evidence(evidence, "", "how many gates are there in nagarjuna sagar dam", ["26"], None)
    assert kept.problem == "supporting_sentence_off_topic"


KATH_AND_KIM = (
    "The title sequence shows the main five regular characters over a white background . "
    "Szubanski is credited as `` Special Guest Star , '' despite appearing in every episode . "
    "The theme song is `` The Joker , '' performed by Gina Riley . A re-recording of it debuted "
    "in the telemovie opening sequence ."
)
ALICE = (
    "The show 's theme was called `` There 's a New Girl in Town '' , with music by David Shire ; "
    "performed by Linda Lavin . Several different arrangements of this tune were used ."
)


def test_the_article_title_is_a_question_name_when_the_question_names_it():
    assert title_name("who sings the joker is me kath and kim", "Kath & Kim") == frozenset({"kath", "kim"})
    # the bracketed disambiguation is not part of the name
    assert title_name("who sings the theme song to the tv show alice", "Alice (TV series)") == frozenset({"alice"})
    assert title_name("who sings the theme song to the tv show alice", "Gilmore Girls") is None
    assert title_name("who sang it", "") is None


@pytest.mark.parametrize(
    "evidence, question, answer, title",
    [
        # reviewed invalid (a bench's generate.context_enrich stage): the evidence never names its show, so set
        # among another show's background "The theme song is ..." read as that show's
        (KATH_AND_KIM, "who sings the joker is me kath and kim", "Gina Riley", "Kath & Kim"),
        (ALICE, "who sings the theme song to the tv show alice", "Linda Lavin", "Alice (TV series)"),
    ],
)
def test_evidence_that_never_names_the_article_the_question_asks_about_is_refused(evidence, question, answer, title):
    assert kept_evidence(evidence, "", question, [answer], None).problem is None  # without the title: kept
    assert kept_evidence(evidence, "", question, [answer], None, title).problem == "supporting_sentence_off_topic"
    named = evidence.replace("The theme song is", f"The theme song of {title.split(' (')[0]} is").replace(
        "The show 's theme", f"The theme of {title.split(' (')[0]}"
    )
    assert kept_evidence(named, "", question, [answer], None, title).problem is None


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
        "Dorman Long"
    ]
    assert competing_candidates("Ferries cross Port Jackson daily .", q, ["John Bradfield"]) == []
    assert competing_candidates("The bridge was designed by John Bradfield .", q, ["John Bradfield"]) == []


def test_background_passages_offering_another_answer_are_replaced_by_the_next():
    hits = [
        Hit("p0", "A", "The harbour bridge opened in 1992 ."),
        Hit("p1", "B", "Ferries are green ."),
        Hit("p2", "C", "Bridges are tall ."),
        Hit("p3", "D", "Trains are fast ."),
    ]
    kept, skipped = clean_passages(hits, "when did the bridge open", ["1932"], 2)
    assert [h.id for h in kept] == ["p1", "p2"] and [h.id for h in skipped] == ["p0"]


def test_a_copy_with_only_competing_background_is_rejected():
    class DatedRetriever(FakeRetriever):
        def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
            return [Hit(f"p{i}", f"T{i}", f"Another bridge opened in {1900 + i} .") for i in range(k)]

    lm = dspy.utils.DummyLM(
        [{"sentence": "The bridge opened in 1932 after six years of work."}], adapter=dspy.JSONAdapter()
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ContextEnrich(DatedRetriever(), k=3)(
            question="when did the bridge open", context=EVIDENCE, answers=["1932"]
        )
    assert [c["rejection"] for c in out.copies] == ["background_has_other_candidate"] * 2
    assert len(out.copies[0]["skipped"]) == 12


def test_a_background_cut_off_by_the_token_limit_loses_its_fragment():
    # nq-context-enrich, "where did the king of france live before versailles": the condensed
    # background stopped at max_tokens and the key sentence was inserted after "officially".
    cut = (
        "Following the Treaties of Nijmegen in 1678 , he began to gradually move the court to Versailles . "
        "The court was officially"
    )
    assert complete_sentences(cut).endswith("to Versailles .")
    whole = "It was built in 1661 . It was expanded ( later ) ."
    assert complete_sentences(whole) == whole
    assert complete_sentences("One fragment only") == "One fragment only"  # nothing better to keep


GESTALT_Q = "today gestalt psychology ideas are part of which branch of psychology"
GESTALT_A = ["Berlin School of experimental psychology", "experimental psychology"]


def test_background_that_restates_the_question_without_its_answer_is_found():
    """Reviewed invalid: background recast Gestalt as Freud's "branch that deals with the
    unconscious mind", a second answer to "which branch" that no typed check sees."""
    freud = "Psychoanalysis is the branch of psychology founded by Freud that deals with the unconscious mind ."
    assert restating_sentences(freud + " Vienna is a city .", GESTALT_Q, GESTALT_A) == [freud]
    # naming the answer is not a rival answer
    assert (
        restating_sentences("Gestalt ideas shaped the Berlin School of experimental psychology .", GESTALT_Q, GESTALT_A)
        == []
    )
    # one subject word is a related topic, not a restatement
    assert restating_sentences("Freud founded psychoanalysis in Vienna .", GESTALT_Q, GESTALT_A) == []
    assert focus_word(GESTALT_Q) == "branch"
    assert focus_word("what type of circuit is used to tune a radio") == "circuit"
    assert focus_word("who sings man i feel like a woman") is None
    # without a focus word, most of the subject words are needed
    q = "when did the royal flying doctor service start"
    assert restating_sentences("A royal flying doctor service began in Cloncurry .", q, ["17 May 1928"])
    assert not restating_sentences("A doctor flew to Cloncurry .", q, ["17 May 1928"])
    # a name's words alone are the topic, not the question
    assert not restating_sentences("The Royal Flying Doctor Service flies from Cloncurry .", q, ["17 May 1928"])
    assert not restating_sentences(
        "Papua New Guinea became independent in 1975 .", "what is the currency of papua new guinea", ["The kina"]
    )


def test_passages_and_backgrounds_restating_the_question_are_skipped_then_rejected():
    freud = "Psychoanalysis is the branch of psychology that deals with the unconscious mind ."
    hits = [
        Hit("p0", "Freud", freud),
        Hit("p1", "Vienna", "Vienna is on the Danube ."),
        Hit("p2", "Koffka", "Koffka moved to the United States in 1927 ."),
    ]
    kept, skipped = clean_passages(hits, GESTALT_Q, GESTALT_A, 2)
    assert [h.id for h in kept] == ["p1", "p2"] and [h.id for h in skipped] == ["p0"]
    sentence = "Gestalt psychology is today seen as part of the Berlin School of experimental psychology ."
    checks = enrich_checks("Vienna is on the Danube . " + sentence + " " + freud, sentence, GESTALT_A, [], GESTALT_Q)
    assert checks["no_restated_question"] is False and checks["no_other_candidate"] is True
    checks = enrich_checks(sentence + " Vienna is on the Danube .", sentence, GESTALT_A, [], GESTALT_Q)
    assert all(checks.values())


def test_a_background_that_names_the_answer_itself_is_rejected():
    """The passages never name the answer (the retriever excludes them), so a condensed background that
    does wrote it from the question or memory (reviewed invalid: "... was known as sociological imagination")."""
    sentence = "The bridge opened in 1932 after six years of work ."
    checks = enrich_checks(
        "Bridges opened widely in 1932 . Ferries ran often . " + sentence,
        sentence,
        ["1932"],
        [],
        "when did the bridge open",
    )
    assert checks["background_free_of_answer"] is False
    checks = enrich_checks("Ferries ran often . " + sentence, sentence, ["1932"], [], "when did the bridge open")
    assert checks["background_free_of_answer"] is True


RHETT = (
    "Life Changes is the third studio album from American singer Thomas Rhett . Released on September 8 , "
    "2017 through Valory Music Group , Rhett produced the album alongside Dann Huff , Jesse Frasure , Julian "
    "Bunetta and Joe London . It includes the chart - topping singles `` Craving You '' with Maren Morris ."
)
RFDS = (
    "Qantas supplied the first aircraft to the fledgling organisation , VH - UER a De Havilland DH. 50 , dubbed "
    "`` Victory '' . On 17 May 1928 , two days after inception , the service 's first official flight piloted by "
    "Arthur Affleck departed from Cloncurry , 85 miles to Julia Creek in Central Queensland ."
)


def test_kept_evidence_keeps_the_sentence_a_definite_description_leans_on():
    """Reviewed invalid (both copies): "Rhett produced the album" kept alone, after background about
    Evanescence's album Fallen, made the album Fallen. The sentence introducing the album now comes along."""
    question = "when does thomas rhett's new album come out"
    assert leans_on_previous(split_sentences(RHETT)[1].text, split_sentences(RHETT)[0].text, question)
    kept = kept_evidence(RHETT, "", question, ["September 8 , 2017"], RHETT.index("September"))
    assert kept.problem is None and kept.text.startswith("Life Changes is the third studio album")
    # "The Joker" is a name, not a definite description
    assert not leans_on_previous("The Joker was a hit .", "A joker played cards .", "who sings the joker is me")


def test_evidence_naming_its_subject_only_as_the_thing_is_refused():
    """Reviewed invalid (two runs): "the service 's first official flight", set among background about
    Virgin Australia, read as the airline's flight; the evidence never names the Royal Flying Doctor Service."""
    question = "when did the royal flying doctor service start"
    assert not carries_subject_by_name(split_sentences(RFDS)[1].text, question)
    assert carries_subject_by_name("The Royal Flying Doctor Service flew from Cloncurry .", question)
    kept = kept_evidence(RFDS, "", question, ["17 May 1928"], RFDS.index("17 May"))
    assert kept.problem == "supporting_sentence_off_topic"


def test_a_background_holding_a_distinctive_word_of_the_answer_names_it():
    """Reviewed invalid: the condensed background said "Chandan Shetty emerged as the winner" for the
    answer "rapper Chandan Shetty"; the whole answer was never there, its name was."""
    sentence = "The finale took place 28 January 2018 , and rapper Chandan Shetty was declared the winner ."
    merged = "Chandan Shetty emerged as the winner of this season . " + sentence
    checks = enrich_checks(merged, sentence, ["rapper Chandan Shetty"], [], "who is the winner of bigg boss kannada")
    assert checks["background_free_of_answer"] is False


def test_definite_descriptions_do_not_depend_on_word_order():
    """context_enrich/8 allowed a word between "the" and the subject word, so "The bridge opened" counted as a
    definite description of "opened" when "open" was stripped before "bridge" (set order: a flaky test)."""
    assert carries_subject_by_name("The bridge opened in 1932 .", "when did the bridge open")
    assert not carries_subject_by_name("The bridge is long .", "when did the bridge open")
