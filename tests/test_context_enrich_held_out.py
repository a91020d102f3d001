"""Regressions: every context-enriching copy read invalid on seeds the checks had not been
built from. Seeds come from the shipped NQ file; backgrounds are built from the issue's quoted text."""

import json
from pathlib import Path

import dspy
import pytest

from metrics.background_checks import background_drops, without
from metrics.evidence_checks import question_names
from metrics.question_relation import Relation, holds, relation_words
from programs.context_enrich import ContextEnrich, KeptEvidence, kept_evidence
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
        "`` House of the Rising Sun '' has been covered by many artists . The oldest known recording of the "
        "song is by Clarence Ashley and Gwen Foster ."
    )
    drops = background_drops(background, evidence.text, row["question"], row["answers"])
    assert [rule for rule, _ in drops] == ["priority"]
    assert without(background, drops) == "`` House of the Rising Sun '' has been covered by many artists ."


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


# Held-out reading of context_enrich/10 (docs/reviews/nq-context-enrich-f6b021e81d): the copies read
# invalid and the valid ones beside them, rebuilt from the archived records (source evidence, question,
# gold, condensed background as the run kept it).
HELD_OUT_RUN = Path(__file__).resolve().parents[1] / "docs" / "reviews" / "nq-context-enrich-f6b021e81d"


def archived(question: str, focus: str) -> dict:
    for line in (HELD_OUT_RUN / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["question"] == question and case.get("focus") == focus:
            return case
    raise KeyError((question, focus))


def drops_of(case: dict) -> list[tuple[str, str]]:
    return background_drops(
        case["background"],
        case["supporting_sentence"],
        case["question"],
        case["original_answers"],
        question_names(case["question"], case["original_context"]),
    )


def test_another_singers_version_is_dropped():
    """ "Springfield 's version ... her first album" read as a cover of "Nice One Cyril"."""
    case = archived("who sang nice one cyril nice one son", "question")
    assert [rule for rule, _ in drops_of(case)] == ["work"]
    assert without(case["background"], drops_of(case)) == ""


def test_lyrics_and_song_of_another_work_are_dropped_whole():
    """ "The lyrics were written by Theodor `` Dr. Seuss '' Geisel ... the song was performed by Thurl
    Ravenscroft": dropped as one sentence, not cut after "Dr." into a fragment that stays."""
    case = archived("who sang nice one cyril nice one son", "evidence")
    drops = drops_of(case)
    assert [rule for rule, _ in drops] == ["work", "work"]
    assert "Thurl Ravenscroft" in drops[0][1] and without(case["background"], drops) == ""


def test_a_single_nobody_named_is_dropped_until_the_background_names_its_song():
    """ "The single became a gold record ... from 1969" read as Dylan's song; once the background names
    `` Spirit in the Sky '', "The song was featured on the 1969 album" is that song's and stays."""
    case = archived("who sang the original version of knocking on heavens door", "question")
    drops = drops_of(case)
    assert [rule for rule, _ in drops] == ["work", "work", "leaning"]
    left = without(case["background"], drops)
    assert left.startswith("Rolling Stone ranked `` Spirit in the Sky ''") and "The song was featured" in left
    assert "gold record" not in left and "No. 22" not in left


def test_the_lyrics_after_a_dropped_sentence_are_dropped_anywhere_in_the_sentence():
    """ "In a later interview , Hendrix commented that the lyrics represent ..." read as the lyricist of
    "Mary , Did You Know ?" speaking; the reference is not at the sentence's opening."""
    case = archived("who wrote the words to the song mary did you know", "question")
    assert [rule for rule, _ in drops_of(case)] == ["work"]


def test_a_work_named_before_the_reference_is_not_dropped():
    introduced = [
        "Say You Won't Let Go is played often . The song 'Hung Up' by Isaac Hayes was a hit . The song charted .",
        "Rolling Stone ranked `` Spirit in the Sky '' No. 333 . The song was featured on the 1969 album .",
        "Slasher was the first original series by Chiller , which premiered the series in 2016 .",
        "Pat Garrett was scored for the 1973 film Pat Garrett and Billy the Kid .",
        "Just Got Started Lovin ' You 's a song recorded by James Otto . It was the first single from his album .",
    ]
    for background in introduced:
        assert [r for r, _ in background_drops(background, "X was recorded by Y .", "who sang x", ["Y"])] == [], (
            background
        )


def test_valid_copies_without_work_references_keep_their_background():
    """Read valid: background about another actress of another series, about Australia's six states, about
    units of area. None refers to a work by a definite description, so nothing new is dropped."""
    for question, focus in [
        ("who was the original actor in walking tall", "question"),
        ("how many countries are still in the british commonwealth", "evidence"),
        ("what is the unit of measurement for vo2max", "question"),
    ]:
        assert drops_of(archived(question, focus)) == [], question


def test_the_show_of_another_series_is_dropped():
    """Read valid, but "the show" took the original series' ratings as Dr. Crusher's series': the rule
    drops every such sentence and the copy is lost (longer_than_sentence), a cost counted in
    docs/results/held_out.md."""
    case = archived("where did dr crusher go in season 2", "evidence")
    assert {rule for rule, _ in drops_of(case)} == {"work"}
    assert without(case["background"], drops_of(case)) == ""


def kept_from_archive(question: str) -> KeptEvidence:
    case = archived(question, "evidence")
    row = nq_row(question)
    return kept_evidence(
        case["original_context"], "", question, case["original_answers"], row["answer_starts"][0], row["title"]
    )


def test_the_longest_serving_sentence_is_kept_not_only_the_first_one():
    """ "The first was Jawaharlal Nehru" answers who was first; the kept run now reaches "Nehru remains
    India 's longest - serving prime minister"."""
    kept = kept_from_archive("who was longest serving prime minister of india")
    assert kept.problem is None and "longest - serving prime minister" in kept.text
    assert kept.text.startswith("The first was Jawaharlal Nehru")


def test_the_win_and_most_recent_are_kept_for_the_last_win():
    """The 1967 Finals' sentence alone says who played, not who won or that it was the last win."""
    kept = kept_from_archive("when did toronto maple leafs last win the stanley cup")
    assert kept.problem is None and "ended up winning the series" in kept.text
    assert "most recent Stanley Cup championship" in kept.text


def test_qualifiers_and_the_words_they_qualify():
    assert relation_words("who was longest serving prime minister of india") == [
        Relation(frozenset({"longest"})),
        Relation(frozenset(), frozenset({"serv"})),
    ]
    last, win = relation_words("when did toronto maple leafs last win the stanley cup")
    assert holds("this is Toronto 's most recent title", last) and not holds("The 1967 Finals", last)
    assert holds("The Maple Leafs ended up winning", win)
    assert relation_words("who won the 2nd season of the voice")[0].words == {"2nd", "second"}
    assert relation_words("who issued gold coins for the first time in india") == [relation_words("who was first")[0]]
    assert relation_words("what is the capital of the west of france") == []


def test_a_qualifier_out_of_reach_is_not_asked_and_one_no_run_can_keep_refuses():
    evidence = (
        "Ann Lee was the first mayor of Springfield . Ann Lee held office from 1901 to 1905 . Tom Ray was mayor "
        "next . Ray is the longest serving mayor of Springfield ."
    )
    kept = kept_evidence(evidence, "", "who was the first mayor of springfield", ["Ann Lee"], 0)
    assert kept.problem is None and kept.text == "Ann Lee was the first mayor of Springfield ."
    # In reach: the run grows to the sentence holding "longest serving".
    extended = kept_evidence(evidence, "", "who was the longest serving mayor of springfield", ["Ann Lee"], 0)
    assert extended.problem is None and extended.sentences == 4
    # Out of reach (more than four sentences away): not asked.
    far = evidence.replace("Tom Ray was mayor next .", "Tom Ray was mayor next . " + "The hall was rebuilt . " * 4)
    assert kept_evidence(far, "", "who was the longest serving mayor of springfield", ["Ann Lee"], 0).sentences == 1
    # In reach only through the excerpt's first sentence, which leans on text nobody kept: refused.
    leaning = "This office was held longest by Tom Ray . Ann Lee was the first mayor of Springfield ."
    refused = kept_evidence(leaning, "", "who was the longest mayor of springfield", ["Ann Lee"], 38)
    assert refused.problem == "supporting_sentence_lacks_relation"


# Held-out reading of context_enrich/11 (docs/reviews/nq-context-enrich-08f109b83e): the copies read
# invalid, rebuilt from the archived records, and sentences a reader takes as background, kept.
HELD_OUT_RUN_11 = HELD_OUT_RUN.parent / "nq-context-enrich-08f109b83e"


def archived_11(case_id: str) -> dict:
    for line in (HELD_OUT_RUN_11 / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return case
    raise KeyError(case_id)


def test_a_version_named_by_a_bare_apostrophe_is_another_singers():
    """ "James ' version also was issued ... The best - known early 1952 version of the song" read as
    earlier versions of "My Way": a rival first singer. "James '" is a possessive like "Springfield 's",
    and "version of the song" names a version of the song referred to, not a work of its own; with both
    gone, the pronouns after them have nothing to lean on but the evidence."""
    case = archived_11("-3259763875899122163:enrich-evidence")
    drops = drops_of(case)
    assert [rule for rule, _ in drops] == ["work", "work", "leaning", "leaning"]
    assert drops[0][1].startswith("James ' version") and without(case["background"], drops) == ""


def test_an_apostrophe_closing_a_quote_or_a_named_work_is_not_a_reference():
    evidence, question, answers = "X was recorded by Y .", "who sang x", ["Y"]
    kept_backgrounds = [
        "In 1991 , James '' Bucky '' Barnes is sent to Siberia .",
        "Jones ' song `` Hello '' was a hit in 1990 .",
        "`` Hey Jude '' is a song by the Beatles . A live version of the song was released in 1970 .",
    ]
    for background in kept_backgrounds:
        assert background_drops(background, evidence, question, answers) == [], background
    for background in ["Jones ' song was a hit in 1990 .", "Charles ' album was a hit ."]:
        assert [r for r, _ in background_drops(background, evidence, question, answers)] == ["work"], background


def test_another_date_of_the_season_the_evidence_dates_is_dropped():
    """ "A sixth season , scheduled to debut August 17 , 2018" after Voltron's sixth season premiering on
    June 15 , 2018: neither `date` (no question name, and 2018 is a year the evidence holds) nor the
    competing-candidate check (it asks two of the question's subject words; "season" is generic) caught
    it. "A fifth season of the show" is a season of the show referred to, not a work of its own."""
    case = archived_11("-3223271450149228060:enrich-evidence")
    drops = drops_of(case)
    assert [rule for rule, _ in drops] == ["work", "rival_date"]
    assert drops[1][1].startswith("A sixth season, scheduled to debut August 17, 2018")
    assert without(case["background"], drops) == ""


def test_a_date_the_evidence_holds_or_of_something_else_is_kept():
    case = archived_11("-3223271450149228060:enrich-evidence")
    evidence, question, answers = case["supporting_sentence"], case["question"], case["original_answers"]
    kept_backgrounds = [
        "Voltron is produced by DreamWorks Animation . A sixth season was set for June 15 , 2018 .",
        "Voltron is produced by DreamWorks Animation , founded in 1994 .",
        "Voltron is produced by DreamWorks . The Season of the Witch premiered in 1998 .",
    ]
    for background in kept_backgrounds:
        assert background_drops(background, evidence, question, answers) == [], background
    rival = "Voltron is produced by DreamWorks Animation . A sixth season is set for 2019 ."
    assert [r for r, _ in background_drops(rival, evidence, question, answers)] == ["rival_date"]
    # Not a when-question: another season's date is no rival answer.
    assert background_drops(rival, evidence, "how many episodes are in season 6 of voltron", ["seven"]) == []


def test_the_evidences_people_at_another_time_are_dropped_for_when_it_takes_place():
    """ "In the present day , ... Steve Rogers , Natasha Romanoff ..." (Captain America : Civil War, never
    named) read as The First Avenger's setting. "In 1991 , the brainwashed super-soldier James `` Bucky ''
    Barnes ..." names nobody the evidence names and stays: not caught."""
    for copy in ("enrich-question", "enrich-evidence"):
        case = archived_11(f"-3262454703602519857:{copy}")
        drops = drops_of(case)
        assert [rule for rule, _ in drops] == ["setting"], copy
        assert drops[0][1].startswith("In the present day") and "Steve Rogers" in drops[0][1]
        assert without(case["background"], drops).startswith("In 1991")


def test_a_time_the_evidence_holds_or_a_year_that_only_dates_is_kept():
    case = archived_11("-3262454703602519857:enrich-evidence")
    evidence, question, answers = case["supporting_sentence"], case["question"], case["original_answers"]
    kept_backgrounds = [
        "During World War II , Steve Rogers fights the Red Skull in Europe .",
        "Chris Evans played Steve Rogers in a 2011 film .",
        "In the present day , the Hulk fights in New York .",
    ]
    for background in kept_backgrounds:
        assert background_drops(background, evidence, question, answers) == [], background
    for background in [
        "A later part is set in the 1990s , when Steve Rogers wakes .",
        "In 2014 , Steve Rogers wakes .",
    ]:
        assert [r for r, _ in background_drops(background, evidence, question, answers)] == ["setting"], background


def test_another_purpose_of_the_flag_salute_is_dropped():
    """ "The Supreme Court 's flag salute served as a way to acknowledge the Queen 's commission" states
    another function of the salute the question asks about. "The salute is given to acknowledge the
    Queen 's commission" holds one of the question's words before its purpose and stays: not caught."""
    case = archived_11("-3286246443988479280:enrich-question")
    drops = drops_of(case)
    assert [rule for rule, _ in drops] == ["purpose", "leaning"]
    assert drops[0][1].startswith("The Supreme Court's flag salute served as a way to")
    assert "The salute is given to acknowledge" in without(case["background"], drops)


def test_a_ruling_or_a_purpose_of_something_else_is_kept():
    """The evidence copy of the same seed, read valid: a ruling, no purpose of the salute."""
    assert drops_of(archived_11("-3286246443988479280:enrich-evidence")) == []
    case = archived_11("-3286246443988479280:enrich-question")
    evidence, question, answers = case["supporting_sentence"], case["question"], case["original_answers"]
    kept_backgrounds = [
        "The Pledge of Allegiance is used to open school days in many states .",
        "The Supreme Court ruled that the flag salute could not be compelled .",
    ]
    for background in kept_backgrounds:
        assert background_drops(background, evidence, question, answers) == [], background
    purpose = "A flag salute is used to honour the nation ."
    assert [r for r, _ in background_drops(purpose, evidence, question, answers)] == ["purpose"]
    # Not a question asking what something is for.
    assert background_drops(purpose, evidence, "who wrote the flag salute ruling", ["Felix Frankfurter"]) == []


@pytest.mark.parametrize(
    "question, sentence",
    [
        # read invalid on held-out rows under context_enrich/12: the pivot's condensation of a passage on
        # Phil of the Future, and of another actor's passage (not in the review sample, the same kind)
        ("who played biff in back to the future", "Raviv Ullman played Biff in Back to the Future."),
        ("who plays leroy in once upon a time", "Samuel George Claflin plays Leroy in Once Upon a Time."),
    ],
)
def test_a_background_restating_the_question_with_its_verb_is_refused(question, sentence):
    from metrics.evidence_checks import restating_sentences

    assert restating_sentences(sentence, question, ["Thomas Francis Wilson Jr."]) == [sentence]


def test_a_name_alone_still_restates_nothing():
    from metrics.evidence_checks import restating_sentences

    # the topic's name with no word of what is asked in lower case
    assert (
        restating_sentences("Back to the Future is a 1985 film.", "who played biff in back to the future", ["X"]) == []
    )
