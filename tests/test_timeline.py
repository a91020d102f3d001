"""A date swap moves the years around the old one by the same step."""

from __future__ import annotations

from programs.timeline import shift_timeline

SEASON = (
    "Wednesday finished fifth at the end of the 2004 -- 05 season and won the final on 29 May 2005 . The club "
    "was founded in 1867 . It grew in the 1990s ."
)


def test_years_near_the_answer_move_with_it_and_seasons_keep_their_span():
    own = SEASON.index("29 May 2005")
    moved, moves = shift_timeline(SEASON, "when were they promoted", 2005, 2006, [(own, own + 11)])
    assert "2005 -- 06 season" in moved and "29 May 2005" in moved  # the answer itself is the swap's
    assert "founded in 1867" in moved and "the 1990s" in moved  # another event; a decade is no year
    assert len(moved) == len(SEASON) and [m["new"] for m in moves] == ["2005", "06"]


def test_a_year_the_question_names_stays():
    moved, moves = shift_timeline("The 2004 -- 05 season ended in 2005 .", "who won the 2004 cup", 2005, 2006, [])
    assert moved == "The 2004 -- 05 season ended in 2006 ." and [m["old"] for m in moves] == ["2005"]


def test_a_move_that_would_land_on_the_old_year_sends_the_swap_the_other_way():
    from programs.answer_swap import AnswerSwap

    context = "The act was passed in 1918 . It was repealed in 1919 over a veto ."
    out = AnswerSwap(distance="near")(question="when was the act passed", context=context, answers=["1918"])
    assert out.rejection is None and out.new_answer == "1919"
    assert out.context == "The act was passed in 1919 . It was repealed in 1920 over a veto ."
    assert [p["problem"] for p in out.proposals][: len(out.proposals) - 1] in ([], ["timeline_collides"])


def test_a_weekday_the_moved_year_no_longer_fits_rejects_the_swap():
    from programs.answer_swap import AnswerSwap

    context = "The first contest was held in Lugano , Switzerland , on Thursday 24 May 1956 ."
    out = AnswerSwap(distance="near")(question="when was the first contest held", context=context, answers=["1956"])
    assert out.rejection == "old_answer_trace:weekday"
