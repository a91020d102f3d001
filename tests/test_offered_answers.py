"""Text beside an unanswerable case that still offers an answer: each rule of metrics.offered_answers, and the
generator skipping such background passages and refusing such a rest."""

import dspy
import pytest

from metrics.offered_answers import (
    answer_follows,
    answering_lists,
    defining_sentences,
    offered_answers,
    rival_names,
    table_rows,
)
from programs.entity_tagger import tagger
from programs.faitheval import Unanswerable, answer_kinds, offers
from tests.test_context_enrich import Hit

CONSTITUTION = "who was the architect of india 's constitution"
RAU = (
    "Jurist B. N. Rau , the constitutional adviser to the Constituent Assembly , prepared the original draft of the "
    "constitution of India in 1947 ."
)


def _span(text: str, name: str, kind: str) -> tuple[int, int, str]:
    start = text.index(name)
    return start, start + len(name), kind


def test_a_name_of_the_answers_kind_on_the_questions_subject_is_a_rival():
    entities = [_span(RAU, "B. N. Rau", "person"), _span(RAU, "the Constituent Assembly", "organisation")]
    assert rival_names(RAU, CONSTITUTION, ["B. R. Ambedkar"], entities, {"person"}) == [RAU]
    # Another kind of name, or a sentence off the subject, offers no rival person.
    assert rival_names(RAU, CONSTITUTION, ["B. R. Ambedkar"], entities[1:], {"person"}) == []
    off = "Jurist B. N. Rau was born in Karkala ."
    assert rival_names(off, CONSTITUTION, ["B. R. Ambedkar"], [_span(off, "B. N. Rau", "person")], {"person"}) == []
    # One subject word is the topic the passage was retrieved on: read blind, such names were no answer.
    one = "B. N. Rau read the constitution ."
    assert rival_names(one, CONSTITUTION, ["B. R. Ambedkar"], [_span(one, "B. N. Rau", "person")], {"person"}) == []


def test_the_generator_types_the_answer_and_the_passages_names_with_the_tagger():
    kinds = answer_kinds(CONSTITUTION, CONSTITUTION_CONTEXT, ["Bhimrao Ambedkar"], tagger)
    assert "person" in kinds
    assert ("rival", RAU) in offers(RAU, CONSTITUTION, ["Bhimrao Ambedkar"], kinds, tagger)


def test_a_definition_fitting_the_questions_predicate_is_another_answer():
    question = "what is the study of the causes of disease"
    epidemiology = (
        "Epidemiology is the study and analysis of the distribution and determinants of health and disease "
        "conditions in defined populations ."
    )
    assert defining_sentences(epidemiology, question, ["etiology"]) == [epidemiology]
    # The question's own subject described answers only a question asking what that term is.
    film = "The film is set in a city , a port ."
    assert defining_sentences(film, "where was the film set", ["Casablanca"]) == []
    management = "Management includes the activities of setting the strategy of an organization ."
    assert defining_sentences(management, "what do you understand by the term management", ["x"]) == [management]
    assert defining_sentences("Disease is common in winter .", question, ["etiology"]) == []


def test_an_infobox_or_table_row_on_the_subject_is_looked_up():
    question = "will there be a fourth divergent movie"
    row = (
        "Film U.S. release date Director ( s ) Screenwriter ( s ) Producer ( s ) Divergent March 21 , 2014 "
        "Neil Burger Evan Daugherty The Divergent Series : Ascendant , the fourth film 4 : TBA"
    )
    assert table_rows(row, question) == [row]
    assert table_rows("Divergent is a film that many people enjoyed in 2014 .", question) == []
    assert table_rows("Released 1983 Genre Rock Length 2 : 11 Label Warner Bros", question) == []  # off the subject


def test_a_list_of_the_answers_shape_on_the_subject_still_answers_an_open_question():
    question = "what food is traditionally eaten at thanksgiving"
    dishes = "Thanksgiving food includes traditional dishes such as mashed potatoes , stuffing , and cranberry sauce ."
    assert answering_lists(dishes, question, ["turkey"]) == [dishes]
    # Names for a common-noun answer are another shape; two items are no list.
    assert answering_lists("Traditional food such as Heinz , Kraft , and Nestle .", question, ["turkey"]) == []
    assert answering_lists("Traditional food such as potatoes and stuffing .", question, ["turkey"]) == []


def test_a_coarser_or_derived_answer_follows_from_what_is_left():
    question = "what is the range of wavelength of x rays"
    coarse = "X-ray wavelengths are shorter than those of UV rays and typically longer than those of gamma rays ."
    assert answer_follows(coarse, question, ["0.01 to 10 nanometers"]) == [coarse]
    # A comparison with a number states a quantity of its own.
    assert answer_follows("X-ray wavelengths of less than 30 nm are soft .", question, ["0.01 to 10 nanometers"]) == []
    manchus = "Nurhaci formed the Jurchen clans into a unified entity , which he renamed as the Manchus ."
    assert answer_follows(manchus, "where did the rulers of the qing dynasty originate", ["Manchuria"]) == [manchus]
    # An inflection of the answer's own word is the form checks' business, and unrelated words pass.
    assert answer_follows("The states elect them .", "who votes", ["state legislatures"]) == []
    evidence = "The Vikings last played in the Super Bowl in January 1977 , losing Super Bowl XI to the Raiders ."
    restated = "The Vikings played Super Bowl XI in January , losing to the Raiders ."
    assert answer_follows(restated, "when did the vikings last go to the super bowl", ["1977"], evidence) == [restated]


def test_every_rule_is_named_in_what_offered_answers_returns():
    text = "Epidemiology is the study and analysis of the determinants of health and disease ."
    assert offered_answers(text, "what is the study of the causes of disease", ["etiology"]) == [("definition", text)]


# --- the generator ------------------------------------------------------------------------------------------

XRAY = (
    "X-rays make up X-radiation , a form of electromagnetic radiation . Most X-rays have a wavelength ranging from "
    "0.01 to 10 nanometers , corresponding to frequencies in the range 30 petahertz to 30 exahertz . X-ray "
    "wavelengths are shorter than those of UV rays and typically longer than those of gamma rays . In many "
    "languages , X-radiation is referred to as Röntgen radiation , after the German scientist Wilhelm Röntgen ."
)


def run(module, **inputs):
    with dspy.context(lm=dspy.utils.DummyLM([], adapter=dspy.JSONAdapter()), adapter=dspy.JSONAdapter()):
        return module(**inputs)


def test_a_rest_that_still_bounds_the_answer_is_refused():
    inputs = {
        "question": "what is the range of wavelength of x rays",
        "context": XRAY,
        "answers": ["0.01 to 10 nanometers"],
    }
    out = run(Unanswerable(removal="drop", min_kept=0.1), **inputs)
    assert out.rejection == "offered_answer:follows"
    assert run(Unanswerable(removal="drop", min_kept=0.1, offered_answers=False), **inputs).rejection is None


CONSTITUTION_CONTEXT = (
    "The Constituent Assembly met for the first time in 1946 . Bhimrao Ambedkar was the chairman of the drafting "
    "committee and is called the chief architect of the constitution . The Assembly held eleven sessions ."
)


EPIDEMIOLOGY = "Epidemiology is the study and analysis of the distribution and determinants of health and disease ."
SPREAD = "what is the study of the causes and spread of disease in populations"


class PoolWithADefinition:
    """The question's best hits: a definition of another term by the question's predicate, then clean passages."""

    def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
        hits = [
            Hit("definition", "Epidemiology", EPIDEMIOLOGY),
            Hit("clean0", "Hospitals", "Hospitals keep records of their patients ."),
            Hit("clean1", "Records", "Records were kept on paper until the 1980s ."),
        ]
        return hits[:k]


@pytest.mark.parametrize("checked", [True, False])
def test_a_background_passage_defining_another_term_by_the_question_is_skipped(checked):
    context = (
        "Doctors read widely . Etiology is the study of the causes and spread of disease in populations . Nurses too ."
    )
    program = Unanswerable(
        removal="drop", min_kept=0.05, background=2, retriever=PoolWithADefinition(), offered_answers=checked
    )
    out = run(program, question=SPREAD, context=context, answers=["Etiology"])
    ids = [b["id"] for b in out.background]
    assert ids == (["clean0", "clean1"] if checked else ["definition", "clean0"]), out.checks
