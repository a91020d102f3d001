"""A date swap moves the years around the old one by the same step."""

from __future__ import annotations

from programs.timeline import shift_timeline

SEASON = (
    "Wednesday finished fifth at the end of the 2004 -- 05 season and won the final on 29 May 2005 . The club "
    "was founded in 1867 . It grew in the 1990s ."
)


def test_every_year_moves_with_the_answer_and_seasons_keep_their_span():
    own = SEASON.index("29 May 2005")
    moved, moves = shift_timeline(SEASON, "when were they promoted", 2005, 2006, [(own, own + 11)])
    assert "2005 -- 06 season" in moved and "29 May 2005" in moved  # the answer itself is the swap's
    assert "founded in 1868" in moved and "the 1990s" in moved  # a decade is no year
    assert len(moved) == len(SEASON) and [m["new"] for m in moves] == ["2005", "06", "1868"]


def test_the_month_of_an_iso_date_is_no_season_and_stays():
    # Read invalid on fresh rows: "May 18 , 2018 ( 2018 - 06 - 18 )" where "2017 - 05" was moved as a season.
    context = "It ran from May 18 , 2017 ( 2017 - 05 - 18 ) and on 15 August 1990 ( 1990 - 08 - 15 ) ."
    moved, moves = shift_timeline(context, "when did it start", 2016, 2017, [])
    assert "May 18 , 2018 ( 2018 - 05 - 18 )" in moved and "( 1991 - 08 - 15 )" in moved
    assert [m["old"] for m in moves] == ["2017", "2017", "1990", "1990"]
    # A range that ends before it starts is no range either: only the year moves.
    assert shift_timeline("In 2017 - 05 , it grew .", "when", 2016, 2017, [])[0] == "In 2018 - 05 , it grew ."


def test_a_year_the_question_names_stays():
    moved, moves = shift_timeline("The 2004 -- 05 season ended in 2005 .", "who won the 2004 cup", 2005, 2006, [])
    assert moved == "The 2004 -- 05 season ended in 2006 ." and [m["old"] for m in moves] == ["2005"]


def test_a_move_onto_the_old_year_or_a_year_the_original_holds_is_passed_over_for_one_step_further():
    from programs.answer_swap import AnswerSwap

    context = "The act was passed in 1918 . It was repealed in 1919 over a veto ."
    out = AnswerSwap(distance="near")(question="when was the act passed", context=context, answers=["1918"])
    # 1917 would move the repeal onto 1918; 1919 is in the original passage; one step further is the fallback.
    assert {p["proposal"]: p["problem"] for p in out.proposals[:2]} == {
        "1917": "timeline_collides",
        "1919": "proposal_in_context",
    }
    assert out.rejection is None and out.new_answer in ("1916", "1920")
    assert "1918" not in out.context


def test_a_weekday_the_moved_year_no_longer_fits_rejects_the_swap():
    from programs.answer_swap import AnswerSwap

    context = "The first contest was held in Lugano , Switzerland , on Thursday 24 May 1956 ."
    out = AnswerSwap(distance="near")(question="when was the first contest held", context=context, answers=["1956"])
    assert out.rejection == "old_answer_trace:weekday"


def test_every_year_of_the_passage_moves_so_a_count_of_seasons_still_adds_up():
    from programs.answer_swap import AnswerSwap

    context = "The show premiered on September 13 , 1990 and completed its 20th and final season on May 24 , 2010 ."
    out = AnswerSwap(distance="near")(
        question="when did the show premiere", context=context, answers=["September 13 , 1990"]
    )
    assert out.rejection is None
    moved = out.new_answer[-4:]
    assert f"May 24 , {int(moved) + 20}" in out.context


def test_a_year_range_answer_moves_both_ends_and_is_not_scaled_like_a_quantity():
    from programs.distance_ladder import shifted_answers

    question = "when did the movement start"
    moved = shifted_answers("Between 1955 and 1968", "near", "k", question)
    assert sorted(moved[:2]) == ["Between 1954 and 1967", "Between 1956 and 1969"]
    # One step further each way, tried only after the step's own years.
    assert sorted(moved[2:]) == ["Between 1953 and 1966", "Between 1957 and 1970"]
    assert sorted(shifted_answers("spring 2018", "near", "k", "when will the season start")[:2]) == [
        "spring 2017",
        "spring 2019",
    ]


def test_a_decade_moves_by_whole_decades():
    from programs.distance_ladder import shifted_answers

    assert sorted(shifted_answers("1840s", "near", "k", "when was the term first used")) == ["1830s", "1850s"]
    assert sorted(shifted_answers("the late 1960s", "far", "k", "when")) == ["the late 1940s", "the late 1980s"]
    assert shifted_answers("1960s music", "near", "k", "what") == []  # a decade inside a phrase is no date


def test_a_unit_conversion_after_a_swapped_number_rejects_the_swap():
    from programs.answer_swap import AnswerSwap

    context = "Territorial waters extend at most 12 nautical miles ( 22.2 km ; 13.8 mi ) from the baseline ."
    out = AnswerSwap(distance="near")(
        question="how far do territorial waters extend", context=context, answers=["12 nautical miles"]
    )
    assert out.rejection == "old_answer_trace:conversion"
