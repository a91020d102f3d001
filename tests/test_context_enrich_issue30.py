"""Issue 30 regressions: every context-enriching copy read invalid on seeds the checks had not been
built from. Seeds come from the shipped NQ file; backgrounds are built from the issue's quoted text."""

import dspy

from metrics.background_checks import background_drops, without
from metrics.evidence_checks import question_names
from programs.context_enrich import ContextEnrich, kept_evidence
from tests.shipped import nq_row


def kept(question: str, title: str | None = None):
    row = nq_row(question)
    start = row["answer_starts"][0]
    return row, kept_evidence(
        row["context"], "", question, row["answers"], start, row["title"] if title is None else title
    )


def test_she_who_is_never_named_is_not_kept_alone():
    """ "After she discovered that her brother , Brian , was Missy 's killer" was set after The Last Song's
    plot, where "she" is Ronnie. The evidence never names her: no run can be kept (the title alone, which
    the evidence never names either, would refuse it too; checked without it)."""
    _, evidence = kept("who killed missy in a bend in the road", title="")
    assert evidence.problem == "supporting_sentence_off_topic"


def test_the_queen_and_her_niece_come_with_the_sentence_naming_queen_taramis():
    """ "Satisfied , she tells Conan ... the Queen 's niece" was kept without the Taramis sentences."""
    _, evidence = kept("who played the virgin in conan the destroyer")
    assert evidence.problem is None
    assert evidence.text.startswith("Conan ( Schwarzenegger )") and "Queen Taramis" in evidence.text
    assert "Jehnna ( Olivia d'Abo )" in evidence.text


def test_the_national_assembly_is_kept_with_pakistan():
    """ "The National Assembly ... 332 members" alone read as India's inside a Parliament of India passage."""
    _, evidence = kept("total number of mna in pakistan national assembly")
    assert evidence.problem is None and "Pakistan" in evidence.text and "332 members" in evidence.text


def test_this_feat_at_the_excerpts_start_is_not_kept():
    """The Chamberlain sentence was dropped and "This feat has been accomplished 68 times" pointed at
    Shearer's 100 goals; the only runs naming the NBA open on "This feat", whose referent was never kept."""
    _, evidence = kept("who scored the most points in a single game in the nba")
    assert evidence.problem == "supporting_sentence_off_topic"


def test_an_older_recording_by_another_singer_is_dropped_for_who_sang_first():
    row, evidence = kept("who sang a whiter shade of pale first")
    background = (
        "The song has been covered by many artists . The oldest known recording of the song is by "
        "Clarence Ashley and Gwen Foster ."
    )
    drops = background_drops(background, evidence.text, row["question"], row["answers"])
    assert [rule for rule, _ in drops] == ["priority"]
    assert without(background, drops) == "The song has been covered by many artists ."


def test_earlier_coin_issuers_are_dropped_for_who_issued_gold_coins_first():
    row, evidence = kept("who issued gold coins for the first time in india")
    background = (
        "Coins were minted across ancient India . The Satavahanas are among the earliest Indian rulers to "
        "issue their own coins ."
    )
    assert [rule for rule, _ in background_drops(background, evidence.text, row["question"], row["answers"])] == [
        "priority"
    ]


def test_a_release_date_against_the_premiere_is_dropped():
    """ "The season is set for release in 2019" beside "premiered on January 4 , 2018"."""
    row, evidence = kept("how many episodes are there in season six of nashville")
    names = question_names(row["question"], row["context"])
    for background, rule in [
        ("Nashville is an American drama . The season is set for release in 2019 .", "leaning"),
        ("Nashville returned to CMT in 2019 with new episodes .", "date"),
    ]:
        drops = background_drops(background, evidence.text, row["question"], row["answers"], names)
        assert [r for r, _ in drops] == [rule], background
    calm = "Nashville is an American drama . Callie Khouri wrote the pilot ."
    assert background_drops(calm, evidence.text, row["question"], row["answers"], names) == []


def test_session_musicians_of_another_single_do_not_follow_the_evidence():
    """The Wrecking Crew's Los Angeles session read as Procol Harum's single."""
    row, evidence = kept("who sang a whiter shade of pale first")
    background = (
        "The single was recorded in Los Angeles by session musicians known as the Wrecking Crew . "
        "The Carpenters were an American duo ."
    )
    drops = background_drops(background, evidence.text, row["question"], row["answers"])
    assert [r for r, _ in drops] == ["leaning"]


class Retriever:
    def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
        from tests.test_context_enrich import Hit

        return [Hit(f"p{i}", f"T{i}", f"Passage {i} about coins and kings .") for i in range(k)]


def test_the_copy_sets_the_evidence_first_and_drops_the_rival_claim():
    row = nq_row("who issued gold coins for the first time in india")
    background = (
        "Coins were minted across ancient India for centuries . The Satavahanas are among the earliest "
        "Indian rulers to issue their own coins ."
    )
    lm = dspy.utils.DummyLM(
        [{"sentence": row["context"]}, {"background": background}, {"background": background}],
        adapter=dspy.JSONAdapter(),
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = ContextEnrich(Retriever(), k=3, lm_merge=False)(
            question=row["question"],
            context=row["context"],
            answers=row["answers"],
            answer_start=row["answer_starts"][0],
            title=row["title"],
        )
    for copy in out.copies:
        assert copy["context"].startswith(out.sentence) and "Satavahanas" not in copy["context"]
        assert copy["background_dropped"][0]["rule"] == "priority" and copy["rejection"] is None
