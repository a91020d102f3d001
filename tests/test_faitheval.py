import dspy
import pytest

from experiments.config import LMConfig
from experiments.lm.registry import ResolvedLM
from experiments.validation import judge_record
from programs.faitheval import Counterfactual, Inconsistent, Unanswerable, counterfactual_checks
from programs.judge import SKIPPED, CaseJudge, judge_status

CONTEXT = "The tower was finished in 1889. It stands in Paris. Millions visit it every year."


def run(lm_answers, module, **inputs):
    lm = dspy.utils.DummyLM(lm_answers, adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return module(**inputs)


def test_unanswerable_rewrites_only_the_carrying_sentence_and_drops_leaks():
    out = run(
        [{"justification": "no year", "rewritten_sentence": "The tower took years to finish."}],
        Unanswerable(),
        question="when was the tower finished",
        context=CONTEXT,
        answers=["1889"],
    )
    assert out.rejection is None
    assert out.context == "The tower took years to finish. It stands in Paris. Millions visit it every year."
    leak = run(
        [{"justification": "x", "rewritten_sentence": "It was done in 1889."}],
        Unanswerable(),
        question="when was the tower finished",
        context=CONTEXT,
        answers=["1889"],
    )
    assert "1889" not in leak.context and leak.edits[0]["to"] is None and leak.rejection is None


def test_unanswerable_removes_every_form_of_the_answer():
    """A date written twice (NQ's table layout) and a surname alone both give the answer away."""
    context = "It aired on July 18 , 2018 ( 2018 - 07 - 18 ) . Ratings were low ."
    out = run(
        [{"justification": "no date", "rewritten_sentence": "It aired in summer ( 2018 - 07 - 18 ) ."}],
        Unanswerable(),
        question="when did it air",
        context=context,
        answers=["July 18 , 2018"],
    )
    assert out.edits[0]["to"] is None and "2018" not in out.context  # the rewrite kept the ISO form: dropped
    context = "The novel is by Sherman Alexie . Alexie grew up in Wellpinit . It won an award ."
    out = run(
        [
            {"justification": "x", "rewritten_sentence": "The novel is by an author ."},
            {"justification": "x", "rewritten_sentence": "The author grew up in Wellpinit ."},
        ],
        Unanswerable(),
        question="who wrote the novel",
        context=context,
        answers=["Sherman Alexie"],
    )
    assert "Alexie" not in out.context and out.checks["old_name_part_absent"] is True and out.rejection is None


def test_inconsistent_concatenates_in_seeded_order_and_keeps_the_modified_copy():
    answers = [{"answer_type": "year", "wrong_answer": "1901", "justification": "plausible"}]
    out = run(answers, Inconsistent(seed=0), question="when", context=CONTEXT, answers=["1889"], case_id="c1")
    again = run(answers, Inconsistent(seed=0), question="when", context=CONTEXT, answers=["1889"], case_id="c1")
    assert out.order == again.order
    assert out.modified_context == CONTEXT.replace("1889", "1901")
    assert out.context.count("Document") == 2 and CONTEXT in out.context and out.modified_context in out.context
    assert out.proposals[0]["justification"] == "plausible"


def test_counterfactual_checks():
    question, target = "What shows evaporation?", "Water droplets disappear from the grass."
    passage = "Plants need light.\n\nWater droplets disappear from the grass in the sun."
    ok = counterfactual_checks(passage, question, target, ["Rain falls from the sky."])
    assert all(ok.values())
    bad = counterfactual_checks(passage + " Rain falls from the sky.", question, target, ["Rain falls from the sky."])
    assert bad["other_options_absent"] is False
    meta = counterfactual_checks(passage + " This supports the target option.", question, target, ["Rain."])
    assert meta["no_task_talk"] is False and meta["other_options_absent"] is True


# From a real run (qwen2.5-1.5b): background paragraphs that the judge passed but that argue for
# another option in other words.
FOSSIL_Q = (
    "What is the best conclusion that can be made upon discovering a fossil of a freshwater fish in a desert area?"
)
FOSSIL_TARGET = "The fish migrated from the ocean"
FOSSIL_BACKGROUND = (
    "The fossil of a freshwater fish in a desert area suggests that the area was once a wetland "
    "with a river running through it. However, the fish's inability to reproduce suggests that the "
    "area was not suitable for reproduction."
)


def test_an_option_paraphrased_counts_as_mentioned():
    from metrics.checks import echoes_option

    assert echoes_option(FOSSIL_BACKGROUND, "A river used to run through this area", FOSSIL_Q, FOSSIL_TARGET)
    # a single shared word ("mountain" here, "day" or "liquid" elsewhere) is too weak a sign
    assert not echoes_option(
        FOSSIL_BACKGROUND + " A mountain stood nearby.", "A mountain used to be in this area", FOSSIL_Q, FOSSIL_TARGET
    )
    # words the option shares with the question or the target do not count
    assert not echoes_option(
        "A freshwater fish lived in the desert area.", "A fish lived in the desert area once", FOSSIL_Q, FOSSIL_TARGET
    )
    seasons = "Summer days are warmer because the Earth is tilted towards the Sun during the summer."
    assert echoes_option(
        seasons,
        "Earth's northern hemisphere is tilted toward the Sun during the summer.",
        "Why are summer days warmer than winter days?",
        "The Sun is closer to Earth in the summer.",
    )


def test_talk_about_the_test_is_caught_but_a_question_in_the_topic_is_not():
    from metrics.checks import talks_about_the_test

    assert talks_about_the_test("This is a clear fact that supports the target option.")
    assert talks_about_the_test("In the context of the given question, a hypothesis could be tested.")
    assert talks_about_the_test("Another option would be water.")
    assert not talks_about_the_test("Sam could test the question of what causes erosion.")
    assert not talks_about_the_test("Water droplets disappear from the grass as the sun warms it.")


def test_counterfactual_retries_each_paragraph_until_its_checks_pass():
    options = ["Rain falls from the sky.", "Water droplets disappear from the grass."]
    out = run(
        [
            {
                "paragraph": "Rain falls from the sky, and water droplets disappear from the grass.",
                "justification": "j",
            },
            {"paragraph": "In the morning sun, water droplets disappear from the grass.", "justification": "first"},
            {"next_paragraph": "Rain falls from the sky most days."},
            {"next_paragraph": "Dew forms on cool nights when air meets cold leaves."},
        ],
        Counterfactual(max_attempts=3),
        question="What happens to dew?",
        options=options,
        target_index=1,
    )
    assert out.rejection is None and [a["step"] for a in out.attempts] == [
        "support",
        "support",
        "detail",
        "detail",
    ]
    assert out.context.count("\n\n") == 1 and "water droplets disappear" in out.context
    assert "Rain falls" not in out.context and out.justification == "first"
    # the second paragraph is asked to continue the supporting one, never shown the question
    lm = dspy.utils.DummyLM(
        [
            {"paragraph": "In the morning sun, water droplets disappear from the grass.", "justification": "j"},
            {"next_paragraph": "Dew forms on cool nights when air meets cold leaves."},
        ],
        adapter=dspy.JSONAdapter(),
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        Counterfactual(max_attempts=1)(question="What happens to dew?", options=options, target_index=1)
    detail_prompt = str(lm.history[-1]["messages"])
    assert "water droplets disappear from the grass" in detail_prompt and "What happens to dew?" not in detail_prompt
    stubborn = run(
        [{"paragraph": "Rain falls from the sky.", "justification": "j"}] * 2,
        Counterfactual(max_attempts=2),
        question="q?",
        options=options,
        target_index=1,
    )
    assert stubborn.rejection == "support_paragraph_failed" and stubborn.context is None


def test_judge_verdicts_and_unparsed_is_unjudged():
    judge_lm = dspy.utils.DummyLM(
        [{"reason": "stated", "verdict": "yes"}, {"reason": "only one", "verdict": "only_expected"}],
        adapter=dspy.JSONAdapter(),
    )
    resolved = ResolvedLM("judge", LMConfig(name="dummy/judge"), judge_lm, None)
    record = {"id": "x", "question": "when", "context": CONTEXT, "answers": ["1889"], "status": "accepted"}
    judged = judge_record(resolved, CaseJudge(), record)
    assert judged["status"] == "accepted" and judged["judge"]["if"] is True and judged["judge"]["only_if"] is True
    garbage = dspy.utils.DummyLM([{"nothing": "here"}, {"nothing": "here"}], adapter=dspy.JSONAdapter())
    unparsed = judge_record(ResolvedLM("judge", LMConfig(name="dummy/j"), garbage, None), CaseJudge(), record)
    assert unparsed["status"] == "error:judge_unparsed" and unparsed["judge"]["if"] is None
    assert judge_status(True, False) == "rejected:judge_only_if" and judge_status(False, True) == "rejected:judge_if"
    assert judge_status(False, None) == "rejected:judge_if"  # only-if is not asked once "if" fails


def test_only_if_is_not_asked_when_if_fails():
    judge_lm = dspy.utils.DummyLM([{"reason": "not stated", "verdict": "no"}], adapter=dspy.JSONAdapter())
    resolved = ResolvedLM("judge", LMConfig(name="dummy/judge"), judge_lm, None)
    record = {"id": "x", "question": "when", "context": CONTEXT, "answers": ["1777"], "status": "accepted"}
    judged = judge_record(resolved, CaseJudge(), record)
    assert judged["status"] == "rejected:judge_if" and judged["judge"]["only_if"] is None
    assert judged["judge"]["only_if_reason"] == SKIPPED and len(judge_lm.history) == 1


def test_every_run_is_calibrated_on_the_held_out_cases_of_the_calibration_study():
    """Comparable judge accuracy across runs, never on the half its parameters were fitted on, and the
    study's cached calls serve every run's calibration."""
    from experiments.config_loader import load_config
    from experiments.judging.controls import (
        CONDITIONS,
        calibration_seeds,
        control_cases,
        controls_for,
        other_answer_pool,
    )
    from experiments.runner import load_data
    from experiments.tasks.judge_calibration import JudgeCalibrationTask

    task = JudgeCalibrationTask({"judge": None})
    seeds = load_data(load_config("experiments/configs/judge_calibration.yaml")).examples[:12]
    from_study = [c for e in seeds for c in controls_for(e, task.pool, task.options.seed) if c["half"] == "held_out"]
    in_runs = control_cases(calibration_seeds("nq"), 2, pool=other_answer_pool("nq"), half="held_out")
    assert len(in_runs) == 2 * len(CONDITIONS) and all(c in from_study for c in in_runs)


def test_unanswerable_rejects_a_context_whose_numbers_still_add_up_to_the_answer():
    """Reviewed invalid and accepted by the judge: the count gone, 5 × 13 + 21 left."""
    context = (
        "The series consists of a total of 86 episodes over six seasons . The first five seasons each "
        "consist of thirteen episodes , and the sixth season twenty - one ."
    )
    out = run(
        [{"justification": "no count", "rewritten_sentence": "The series ran over six seasons ."}],
        Unanswerable(),
        question="how many episodes of the sopranos are there",
        context=context,
        answers=["86"],
    )
    assert out.rejection == "old_answer_not_derivable" and out.checks["old_answer_not_derivable"] is False


# --- an unanswerable rewrite leaves no description of the answer and no arithmetic that yields it


def test_a_rewrite_that_keeps_her_brother_is_dropped():
    """Read invalid: "Brian" removed, "her brother" left, and "who killed Missy" still answered."""
    from tests.shipped import nq_row

    row = nq_row("who killed missy in a bend in the road")
    out = run(
        [
            {
                "justification": "no name",
                "rewritten_sentence": "After she discovered that her brother was Missy 's killer she was torn apart .",
            }
        ],
        Unanswerable(),
        question=row["question"],
        context=row["context"],
        answers=row["answers"],
    )
    assert out.edits[0]["to"] is None and "her brother" not in out.context and out.rejection is None


def test_a_description_left_in_another_sentence_rejects_the_context():
    context = (
        "The band 's lead singer , Chris Martin , wrote the song . The band 's lead singer grew up in Devon . "
        "It charted in 2000 ."
    )
    out = run(
        [{"justification": "x", "rewritten_sentence": "The song was written in a studio ."}],
        Unanswerable(),
        question="who wrote the song",
        context=context,
        answers=["Chris Martin"],
    )
    assert out.rejection == "old_answer_trace:description"


@pytest.mark.parametrize(
    "opening, answer, subject",
    [
        ("George Herman `` Babe '' Ruth Jr. ( February 6 , 1895 ) was a baseball player .", "Babe Ruth", True),
        ("The novel is by Sherman Alexie .", "Sherman Alexie", False),
        ("The band 's lead singer , Chris Martin , wrote the song .", "Chris Martin", False),
        ("The tower was finished in 1889 .", "1889", False),
    ],
)
def test_an_answer_that_is_the_passage_subject_is_refused_before_any_removal(opening, answer, subject):
    from programs.faitheval import answer_is_subject

    assert answer_is_subject(opening, [answer]) is subject


def test_a_decade_or_century_that_holds_the_answer_year_and_a_derived_word_reject_the_context():
    out = run(
        [],
        Unanswerable(removal="drop"),
        question="when was the song first released",
        context="The song was released in 1973 . The band recorded it in the 1970s in London .",
        answers=["1973"],
    )
    assert out.rejection == "old_answer_trace:coarse_date"
    out = run(
        [],
        Unanswerable(removal="drop"),
        question="which belief holds that god is the universe",
        context="The belief is pantheism . Pantheist belief does not recognise a personal god .",
        answers=["pantheism"],
    )
    assert out.rejection in ("old_answer_trace:derived_word", "old_answer_trace:description")


def test_a_majority_that_gives_the_chamber_size_rejects_the_context():
    """Read invalid: "332 members" removed, "A political party must secure 172 seats to obtain and preserve a
    majority" left."""
    from tests.shipped import nq_row

    row = nq_row("total number of mna in pakistan national assembly")
    rewrite = (
        "The National Assembly is a democratically elected body whose members are referred to as Members of "
        "the National Assembly ( MNAs ) ."
    )
    out = run(
        [{"justification": "no count", "rewritten_sentence": rewrite}],
        Unanswerable(),
        question=row["question"],
        context=row["context"],
        answers=row["answers"],
    )
    assert out.rejection == "old_answer_trace:majority"


def test_a_rewrite_keeping_the_year_of_a_date_answer_is_dropped():
    """Read invalid on held-out rows: only the day removed, "… to Namibia on March 1994" left."""
    from tests.shipped import nq_row

    row = nq_row("when did walvis bay become part of namibia")
    carrying = next(s for s in row["context"].split(" . ") if "1 March 1994" in s)
    out = run(
        [{"justification": "no day", "rewritten_sentence": carrying.replace("1 March 1994", "March 1994") + " ."}],
        Unanswerable(),
        question=row["question"],
        context=row["context"],
        answers=row["answers"],
    )
    assert out.edits[0]["to"] is None
    assert "1994" not in out.context and out.rejection is None


def test_the_year_of_a_date_answer_left_in_another_sentence_rejects_the_context():
    """Read invalid (development rows): "17 May 1928" removed, the founding year left elsewhere."""
    context = (
        "The Royal Flying Doctor Service was founded on 17 May 1928 by John Flynn . "
        "Its first flight left Cloncurry in 1928 , carrying Dr Kenyon St Vincent Welch ."
    )
    out = run(
        [
            {
                "justification": "no date",
                "rewritten_sentence": "The Royal Flying Doctor Service was founded by John Flynn .",
            }
        ],
        Unanswerable(),
        question="when did the royal flying doctor service start",
        context=context,
        answers=["17 May 1928"],
    )
    assert out.rejection == "old_answer_trace:date_year"


def test_another_day_of_the_answer_year_elsewhere_is_not_a_trace():
    """ "premiered on April 25 , 2018" is another event than the finale of July 18 , 2018 (read valid)."""
    context = "The third season premiered on April 25 , 2018 . The last episode aired on July 18 , 2018 , on CBS ."
    out = run(
        [{"justification": "no date", "rewritten_sentence": "The last episode aired on CBS ."}],
        Unanswerable(min_kept=0.1),
        question="when did the last episode of code black air",
        context=context,
        answers=["July 18 , 2018"],
    )
    assert out.rejection is None and "April 25 , 2018" in out.context


def test_a_year_the_question_names_is_not_a_trace():
    context = "Hell in a Cell ( 2018 ) was a wrestling event . It took place on September 16 , 2018 , in San Antonio ."
    out = run(
        [{"justification": "no date", "rewritten_sentence": "It took place in San Antonio ."}],
        Unanswerable(min_kept=0.1),
        question="when does hell in a cell come on 2018",
        context=context,
        answers=["September 16 , 2018"],
    )
    assert out.rejection is None and "September" not in out.context


def test_an_unanswerable_rewrite_off_the_topic_or_about_the_question_is_dropped():
    """Both written by a compiled generator into cases the checks and the judge passed (read invalid)."""
    context = "On September 9 , 2012 , Akers kicked a 63 - yard field goal . The record was set by Dempsey ."
    off_topic = run(
        [{"justification": "x", "rewritten_sentence": "The child-resistant locking closure was invented in 1967."}],
        Unanswerable(min_kept=0.1),
        question="when did david akers kick the 63 yard field goal",
        context=context,
        answers=["September 9 , 2012"],
    )
    assert off_topic.edits[0]["to"] is None and "child-resistant" not in off_topic.context
    talk = run(
        [{"justification": "x", "rewritten_sentence": "The sentence does not provide the date of the field goal."}],
        Unanswerable(min_kept=0.1),
        question="when did david akers kick the 63 yard field goal",
        context=context,
        answers=["September 9 , 2012"],
    )
    assert talk.edits[0]["to"] is None
    kept = run(
        [{"justification": "x", "rewritten_sentence": "Akers once kicked a 63 - yard field goal ."}],
        Unanswerable(min_kept=0.1),
        question="when did david akers kick the 63 yard field goal",
        context=context,
        answers=["September 9 , 2012"],
    )
    assert kept.edits[0]["to"] == "Akers once kicked a 63 - yard field goal ." and kept.rejection is None


FOSTER = (
    "`` Jeanie with the Light Brown Hair '' is a parlor song by Stephen Foster ( 1826 -- 1864 ) . It was "
    "published by Firth , Pond & Co. of New York in 1854 . Foster wrote the song with his estranged wife in mind ."
)


def test_a_masked_name_becomes_what_it_is_in_every_sentence():
    """Dropping Foster's sentences leaves one of three; masking keeps them without the name."""
    question = "who wrote the text for jeanie with the light brown hair"
    dropped = Unanswerable(removal="drop", lures="keep")(question=question, context=FOSTER, answers=["Stephen Foster"])
    assert dropped.context == "It was published by Firth , Pond & Co. of New York in 1854 ."
    out = Unanswerable(removal="mask", lures="keep")(question=question, context=FOSTER, answers=["Stephen Foster"])
    assert out.rejection is None
    assert "a parlor song by a person ( 1826 -- 1864 )" in out.context
    assert "The person wrote the song with his estranged wife" in out.context
    assert "Foster" not in out.context and out.edits[-1] == {"from": "Stephen Foster", "to": "person", "why": "mask"}


def test_a_subject_is_masked_by_the_kind_the_question_names_and_an_article_of_the_text_stays():
    from programs.faitheval import masked

    context = "The Move were an English rock band . The second single by the Move reached number five ."
    out = Unanswerable(removal="mask", lures="keep")(
        question="which band sang i can hear the grass grow", context=context, answers=["The Move"]
    )
    assert out.rejection is None
    # The text's own "The" stays before the mask.
    assert out.context == "The band were an English rock band . The second single by the band reached number five ."
    # Drop refuses the same passage: it is about the answer itself.
    dropped = Unanswerable(removal="drop")(question="which band sang it", context=context, answers=["The Move"])
    assert dropped.rejection == "answer_is_subject"
    assert masked("It opened in Paris . Paris grew .", ["Paris"], "city") == "It opened in a city . The city grew ."


def test_an_answer_that_is_no_name_is_dropped_under_mask():
    context = "The bridge opened in 1932 . It is long . It is painted red . Ships pass below it ."
    out = Unanswerable(removal="mask", lures="keep")(
        question="when did the bridge open", context=context, answers=["1932"]
    )
    assert out.rejection is None and "1932" not in out.context and "opened" not in out.context
    assert out.edits[0]["to"] is None


def test_an_answer_that_is_no_name_and_most_of_its_passage_is_rewritten_by_the_pivot_under_mask():
    """Dropping would leave "Ships pass ." of a long passage: the pivot writes the sentences without the year."""
    context = "The bridge opened in 1932 after a long build that began in 1923 and ran late . Ships pass ."
    question = "when did the bridge open"
    rewritten = {"justification": "no year", "rewritten_sentence": "The bridge opened after a long and late build ."}
    out = run(
        [rewritten], Unanswerable(removal="mask", lures="keep"), question=question, context=context, answers=["1932"]
    )
    assert out.rejection is None, out.checks
    assert out.context == "The bridge opened after a long and late build . Ships pass ."
    assert out.edits[0]["to"] == rewritten["rewritten_sentence"]


def test_a_mask_leaves_no_gloss_of_the_name_and_calls_a_known_place_by_its_type():
    from programs.faitheval import glosses_left

    sweet = "Stevia ( / ˈstiːviə / ) is a sweetener made from a plant . Stevia is sold in shops . It is sweet ."
    out = Unanswerable(removal="mask", lures="keep")(
        question="what is the sweetener made from the plant", context=sweet, answers=["Stevia"]
    )
    assert glosses_left(sweet, "A place ( / ˈstiːviə / ) is a sweetener .", ["Stevia"]) == [" / ˈstiːviə / "]
    assert out.rejection in ("old_answer_trace:gloss", "answer_is_subject"), out.rejection
    film = "The film is set in Casablanca , a port . Casablanca was in French Morocco then . The cast loved it ."
    out = Unanswerable(removal="mask", lures="keep")(
        question="where was the film set", context=film, answers=["Casablanca"]
    )
    assert out.rejection is None and out.context.startswith("The film is set in a city , a port . The city was in")
    country = "Indonesia has the most Muslims of any country . Indonesian Islam is mostly Sunni . It lies in Asia ."
    out = Unanswerable(removal="mask", lures="keep")(
        question="which country has the most muslims", context=country, answers=["Indonesia"]
    )
    assert out.rejection == "old_answer_trace:derived_word" and out.context.startswith("A country has the most")


@pytest.mark.parametrize(
    "context, question, answers",
    [
        (
            "Over the next four years , St. Florian 's design was built . Friedrich St. Florian was its architect .",
            "who designed the memorial",
            ["Friedrich St. Florian"],
        ),
        (
            "The character first met Rocket Raccoon in 1976 . Raccoon then joined the team .",
            "what animal is rocket in guardians of the galaxy",
            ["Raccoon"],
        ),
    ],
)
def test_a_mask_inside_a_longer_name_is_refused(context, question, answers):
    out = Unanswerable(removal="mask", lures="keep")(question=question, context=context, answers=answers)
    assert out.rejection == "old_answer_trace:split_name" and out.context is None


def test_a_persons_first_name_or_shorter_name_standing_alone_is_masked_too():
    from programs.faitheval import masked

    text = "Ramsay Snow is the son of Roose Bolton . Ramsay 's cruelty is known ."
    masked_text = masked(text, ["Ramsay Snow"], "person")
    assert masked_text == "A person is the son of Roose Bolton . The person 's cruelty is known ."
    text = "The poem is by Mary Elizabeth Frye . Later , Mary Frye 's authorship was confirmed ."
    masked_text = masked(text, ["Mary Elizabeth Frye"], "person")
    assert masked_text.endswith("Later , the person 's authorship was confirmed .")
    # A part inside another name names someone or something else, and stays (the check then refuses the case).
    text = "James Taylor wrote it . He sang it at James Bay , and King James was not there ."
    assert masked(text, ["James Taylor"], "person").endswith("at James Bay , and King James was not there .")
