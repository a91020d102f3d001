"""Attack-strength dials with scripted LMs: each ladder moves what it names in one direction, a lure that
answers the question is rejected, and a level a seed cannot reach is a counted status."""

import dspy
import pytest

from experiments import task_registry
from experiments.tasks.answer_swap import AnswerSwapTask
from experiments.tasks.context_enrich import ContextEnrichTask
from experiments.tasks.faitheval import UnanswerableOptions
from programs.answer_swap import AnswerSwap
from programs.context_enrich import ContextEnrich, evidence_placed, placed
from programs.distance_ladder import DISTANCES, shifted_answers
from programs.faitheval import Unanswerable
from programs.strength import dials_at, with_strength
from tests.test_context_enrich import FakeRetriever, Hit


def run(lm_answers, module, **inputs):
    lm = dspy.utils.DummyLM(lm_answers, adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return module(**inputs), lm


# --- answer swap: distance -------------------------------------------------------------------------


def _number(text: str) -> float:
    return float("".join(c for c in text if c.isdigit() or c == "."))


@pytest.mark.parametrize("answer", ["1889", "March 3, 1952", "32", "1,500,000", "7 episodes", "12.5%"])
def test_the_distance_ladder_moves_further_from_the_old_answer_at_each_level(answer):
    old = _number(answer.split(",")[-1] if "March" in answer else answer)
    gaps = []
    for level in DISTANCES[1:]:
        new = shifted_answers(answer, level, "seed-1")
        assert new, level
        values = [_number(n.split(",")[-1] if "March" in n else n) for n in new]
        assert all(v != old for v in values)
        # the relative gap for quantities, the gap in years for dates
        gap = max(abs(v - old) if old >= 1000 or "March" in answer else max(v, old) / min(v, old) for v in values)
        gaps.append(gap)
    assert gaps == sorted(gaps) and gaps[0] < gaps[-1]


def test_a_round_number_that_rounds_back_to_itself_gets_one_more_significant_digit():
    assert sorted(shifted_answers("10,000 years ago", "near", "seed-1")) == ["11,000 years ago", "9,000 years ago"]


def test_a_date_in_a_year_the_question_names_moves_by_weeks_within_that_year():
    question = "when will the winner of american idol 2018 be announced"
    assert sorted(shifted_answers("May 21 , 2018", "near", "k", question)) == ["May 14 , 2018", "May 28 , 2018"]
    assert shifted_answers("2018", "near", "k", question) == []  # a bare year the question names cannot move
    assert all(a.endswith("2018") for a in shifted_answers("2 January 2018", "mid", "k", question))


def test_names_and_words_have_no_code_made_distance():
    assert shifted_answers("Barack Obama", "far", "k") == []
    assert shifted_answers("three", "near", "k") == []
    assert shifted_answers("21st", "near", "k") == []
    with pytest.raises(ValueError):
        shifted_answers("1889", "proposed", "k")


def test_a_swap_at_a_distance_makes_no_proposal_call_and_an_unreachable_seed_is_counted():
    context = "The tower was finished in 1889. It stands in Paris."
    out, lm = run(
        [], AnswerSwap(distance="far"), question="when was the tower finished", context=context, answers=["1889"]
    )
    assert out.rejection is None and out.new_answer in {"1864", "1914"}
    assert out.new_answer in out.context and "1889" not in out.context
    assert out.proposals[0]["answer_type"] == "distance:far" and not lm.history
    out, _ = run(
        [],
        AnswerSwap(distance="near", writer="rules"),
        question="who built the tower",
        # the pronoun and the first name's lists disagree on the sex: no made-up name is safe
        context="Debbie Eiffel built it. He retired.",
        answers=["Debbie Eiffel"],
    )
    assert out.rejection == "level_unreachable" and out.context is None


def test_a_shifted_answer_already_in_the_passage_is_passed_over_for_the_other_direction():
    context = "The tower has 10 floors. It has 11 lifts and 9 stairways."
    out, _ = run([], AnswerSwap(distance="near"), question="how many floors", context=context, answers=["10"])
    assert out.rejection == "level_unreachable"
    assert [p["problem"] for p in out.proposals] == ["proposal_in_context", "proposal_in_context"]


def test_a_year_the_original_passage_holds_is_passed_over_though_the_timeline_would_move_it():
    context = "The tower was finished in 1889. A fair was held in 1888 and in 1890."
    out, _ = run(
        [], AnswerSwap(distance="near"), question="when was the tower finished", context=context, answers=["1889"]
    )
    # both neighbours are in the original passage: a reader would see the new answer there before
    assert [p["problem"] for p in out.proposals[:2]] == ["proposal_in_context", "proposal_in_context"]
    assert out.rejection is None and out.new_answer in ("1887", "1891")


# --- unanswerable: removal and lures -----------------------------------------------------------------

QUESTION = "when did the eiffel tower open"
LURED = (
    "The Eiffel Tower is a tower in Paris. Construction of the Eiffel Tower began in 1887. "
    "The Eiffel Tower opened in 1889. Paris is the capital of France. Its cafes are famous."
)
REWRITE = [{"justification": "no year", "rewritten_sentence": "The Eiffel Tower opened to great crowds."}]


def test_lures_kept_or_removed_and_the_removal_ladder_takes_more_at_each_gentler_level():
    kept = {}
    for removal in ("rewrite", "drop", "window"):
        for lures in ("keep", "remove"):
            out, _ = run(
                REWRITE,
                Unanswerable(min_kept=0.1, removal=removal, lures=lures),
                question=QUESTION,
                context=LURED,
                answers=["1889"],
            )
            assert "1889" not in (out.context or "")
            kept[(removal, lures)] = out.context
    assert "began in 1887" in kept[("rewrite", "keep")] and "began in 1887" not in kept[("rewrite", "remove")]
    assert "opened to great crowds" in kept[("rewrite", "keep")]
    assert "opened" not in kept[("drop", "keep")]
    assert "Paris is the capital" not in kept[("window", "keep")]  # the answer's neighbour goes too
    lengths = [len(kept[(r, "keep")]) for r in ("rewrite", "drop", "window")]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]


def test_a_lure_that_answers_the_question_rejects_the_case():
    context = "The Eiffel Tower opened in 1889. Some say the Eiffel Tower opened to visitors in 1887. It is tall."
    out, _ = run(
        [{"justification": "x", "rewritten_sentence": "The tower was new."}],
        Unanswerable(min_kept=0.1),
        question=QUESTION,
        context=context,
        answers=["1889"],
    )
    assert out.rejection == "lure_answers_question" and out.checks["lure_answers_question"] is False
    # removed with the lures, the same passage is a case
    out, _ = run(
        [{"justification": "x", "rewritten_sentence": "The tower was new."}],
        Unanswerable(min_kept=0.1, lures="remove"),
        question=QUESTION,
        context=context,
        answers=["1889"],
    )
    assert out.checks["lure_answers_question"] is True and "1887" not in out.context


def test_a_name_beside_the_answers_sentence_is_a_lure_for_a_name_answer():
    context = (
        "The film was shot over the summer. Most scenes were filmed in the Cape Town area. "
        "The crew later returned to South Africa for reshoots. The score was praised by critics."
    )
    question = "where was the film shot"
    kept, _ = run(
        [],
        Unanswerable(min_kept=0.1, removal="drop", lures="keep"),
        question=question,
        context=context,
        answers=["the Cape Town area"],
    )
    removed, _ = run(
        [],
        Unanswerable(min_kept=0.1, removal="drop", lures="remove"),
        question=question,
        context=context,
        answers=["the Cape Town area"],
    )
    assert "South Africa" in kept.context and "South Africa" not in removed.context
    assert "shot over the summer" in removed.context and "praised by critics" in removed.context


def test_a_level_that_leaves_too_little_is_a_rejection_of_its_own():
    context = "Intro line here. The Eiffel Tower opened in 1889. Outro line here."
    out, _ = run([], Unanswerable(removal="window"), question=QUESTION, context=context, answers=["1889"])
    assert out.rejection == "rest_kept"


class PoolWithRivals:
    """A pool whose best hits for the question name the answer or date the tower otherwise, then clean ones."""

    def __init__(self, clean: int):
        self.clean = clean

    def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
        rivals = [
            Hit("r0", "Tower", "The Eiffel Tower was finished in 1889 for the fair."),
            Hit("r1", "Tower 2", "The Eiffel Tower opened to visitors in 1887."),
        ]
        clean = [
            Hit(f"c{i}", f"Title {i}", f"Paris has many bridges, number {i} of them old.") for i in range(self.clean)
        ]
        return (rivals + clean)[:k]


@pytest.mark.parametrize("k", [1, 2, 4])
def test_background_surrounds_the_rest_with_k_clean_passages_and_skips_rivals(k):
    program = Unanswerable(min_kept=0.1, removal="drop", background=k, retriever=PoolWithRivals(clean=8))
    out, lm = run([], program, question=QUESTION, context=LURED, answers=["1889"])
    assert out.rejection is None, out.checks
    assert len(lm.history) == 0  # retrieval and checks in code: no pivot call
    paragraphs = out.context.split("\n\n")
    assert len(paragraphs) == k + 1 and [b["id"] for b in out.background] == [f"c{i}" for i in range(k)]
    assert "Paris is the capital" in paragraphs[k // 2]  # what is left stands in the middle
    assert "1889" not in out.context and "opened to visitors" not in out.context


def test_a_pool_without_enough_clean_passages_is_an_unreachable_level():
    program = Unanswerable(min_kept=0.1, removal="drop", background=4, retriever=PoolWithRivals(clean=2))
    out, _ = run([], program, question=QUESTION, context=LURED, answers=["1889"])
    assert out.rejection == "level_unreachable" and out.context is None
    with pytest.raises(ValueError):
        Unanswerable(background=2)  # a background needs a pool to draw from


# --- context enriching: background size and evidence position ------------------------------------------


def test_evidence_is_placed_first_in_the_middle_or_last():
    units = ["A.", "B.", "C.", "D."]
    assert placed(units, "E.", "first", " ") == "E. A. B. C. D."
    assert placed(units, "E.", "middle", " ") == "A. B. E. C. D."
    assert placed(units, "E.", "last", " ") == "A. B. C. D. E."
    assert evidence_placed("A. E. B.", "E.", "middle") and not evidence_placed("A. B. E.", "E.", "middle")
    assert placed(["A."], "E.", "middle", " ") == "E. A."  # one unit: the middle is the front
    assert evidence_placed("A. B. E.", "E.", "last") and not evidence_placed("A. E. B.", "E.", "last")


EVIDENCE = "The Sydney Harbour Bridge opened in 1932. The Sydney Harbour Bridge was designed by John Bradfield."


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_passages_as_background_grow_with_k_and_keep_the_evidence_where_asked(position):
    lengths = []
    for k in (1, 2, 4, 8):
        program = ContextEnrich(FakeRetriever(), k=k, lm_merge=False, position=position, background="passages")
        out, lm = run(
            [{"sentence": "The Sydney Harbour Bridge was designed by John Bradfield."}],
            program,
            question="who designed the sydney harbour bridge",
            context=EVIDENCE,
            answers=["John Bradfield"],
        )
        assert len(lm.history) == 1  # the sentence pick only: no condensing, no merge
        for copy in out.copies:
            assert copy["rejection"] is None, copy["checks"]
            assert copy["context"].count("Background fact") == k
            assert copy["checks"][f"evidence_{position}"] is True
        lengths.append(len(out.copies[0]["context"]))
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


def test_the_whole_passage_as_evidence_asks_no_sentence_and_stands_among_k_passages():
    program = ContextEnrich(
        FakeRetriever(), k=4, lm_merge=False, position="middle", background="passages", evidence="passage"
    )
    out, lm = run(
        [], program, question="who designed the sydney harbour bridge", context=EVIDENCE, answers=["John Bradfield"]
    )
    assert len(lm.history) == 0 and out.sentence == EVIDENCE
    paragraphs = out.copies[0]["context"].split("\n\n")
    assert len(paragraphs) == 5 and paragraphs[2] == EVIDENCE and out.copies[0]["rejection"] is None


def test_a_background_passage_holding_any_date_is_skipped_for_a_date_answer():
    from programs.context_enrich import clean_passages

    hits = [
        Hit("d", "D", "The harbour ferry service began in 1861."),
        Hit("c", "C", "Ferries cross the harbour daily."),
    ]
    kept, skipped = clean_passages(hits, "when did the sydney harbour bridge open", ["1932"], 2)
    assert [h.id for h in kept] == ["c"] and [h.id for h in skipped] == ["d"]
    kept, _ = clean_passages(hits, "who designed the sydney harbour bridge", ["John Bradfield"], 2)
    assert [h.id for h in kept] == ["d", "c"]  # a year is no rival to a name


# --- one strength per generator ----------------------------------------------------------------------


def _ladder(generator: str):
    return task_registry.get(generator).ladder


def test_strength_takes_the_highest_rung_at_or_below_it_and_a_dial_set_directly_wins():
    ladder = _ladder("unanswerable")
    assert dials_at(ladder, 0.0) == {"removal": "drop", "lures": "remove", "background": 0}
    assert dials_at(ladder, 0.7) == {"removal": "drop", "lures": "remove", "background": 2}
    assert dials_at(ladder, 1.0)["background"] == 8
    assert with_strength(ladder, {"strength": 0.2, "lures": "keep"})["lures"] == "keep"
    assert with_strength(ladder, {"strength": 0.3})["background"] == 1
    assert with_strength(ladder, {"removal": "drop"}) == {"removal": "drop"}
    with pytest.raises(ValueError):
        dials_at(ladder, 1.5)
    with pytest.raises(ValueError, match="no strength ladder"):
        dials_at(_ladder("counterfactual"), 0.5)


@pytest.mark.parametrize(
    "generator, options",
    [
        ("unanswerable", UnanswerableOptions),
        ("context_enrich", ContextEnrichTask.Options),
        ("answer_swap", AnswerSwapTask.Options),
    ],
)
def test_the_default_strength_is_the_generator_without_dials(generator, options):
    unset = options()
    at_default = options.model_validate({"strength": task_registry.get(generator).default_strength})
    assert unset.model_dump(exclude={"strength"}) == at_default.model_dump(exclude={"strength"})


def test_the_ladders_are_monotone_in_what_they_change():
    enrich = [d for _, d in _ladder("context_enrich")]
    assert [d["k"] for d in enrich] == sorted(d["k"] for d in enrich)
    removal = [d["removal"] for _, d in _ladder("unanswerable")]
    assert [("window", "drop", "rewrite").index(r) for r in removal] == sorted(
        ("window", "drop", "rewrite").index(r) for r in removal
    )
    background = [d["background"] for _, d in _ladder("unanswerable")]
    assert background == sorted(background) and background[0] < background[-1]
    made = [d["distance"] for _, d in _ladder("answer_swap") if d["distance"] != "proposed"]
    # stronger swaps stand further from the truth: a target keeps what it knows more often (ClashEval)
    assert [DISTANCES.index(d) for d in made] == sorted(DISTANCES.index(d) for d in made)


def test_sentences_dropped_in_code_are_no_discarded_reply():
    from experiments.task_registry import get

    used = get("unanswerable").attack.every_reply_used
    assert used({"edits": [{"from": "a", "to": None, "why": "drop"}, {"from": "b", "to": "c", "justification": "j"}]})
    assert not used({"edits": [{"from": "a", "to": None, "justification": "j"}]})
