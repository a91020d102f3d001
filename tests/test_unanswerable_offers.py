"""The unanswerable generator keeps only text that offers no answer: each rule of metrics.offered_answers removes
a background passage (or refuses a rest) that answers and keeps one that does not. The tagger is a fake: a blank
spaCy pipeline whose entities are the names each test lists, so what is typed is what the test says."""

from dataclasses import dataclass

import dspy
import pytest
import spacy

from metrics.offered_answers import answering_lists, defining_sentences, offered_answers
from programs.faitheval import REST_RULES, Unanswerable, offers


class FakeTagger:
    """text -> a Doc whose entities are the listed names wherever they stand (spaCy's tokenizer, no model)."""

    def __init__(self, labels: dict[str, str]):
        self.labels, self.nlp = labels, spacy.blank("en")

    def __call__(self, text: str):
        doc = self.nlp(text)
        spans = []
        for name, label in self.labels.items():
            start = text.find(name)
            while start != -1:
                span = doc.char_span(start, start + len(name), label=label)
                if span is not None and not any(s.start < span.end and span.start < s.end for s in spans):
                    spans.append(span)
                start = text.find(name, start + 1)
        doc.ents = sorted(spans, key=lambda s: s.start)
        return doc


def tagging(labels: dict[str, str]):
    fake = FakeTagger(labels)
    return lambda: fake


@dataclass
class Hit:
    id: str
    title: str
    text: str
    score: float = 1.0


class Pool:
    """Fixed hits, best first, whatever the query."""

    def __init__(self, *texts: str):
        self.hits = [Hit(f"p{i}", f"title {i}", text) for i, text in enumerate(texts)]

    def search(self, query, k=3, exclude_texts=(), exclude_answers=()):
        return self.hits[:k]


def run(module, **inputs):
    with dspy.context(lm=dspy.utils.DummyLM([], adapter=dspy.JSONAdapter()), adapter=dspy.JSONAdapter()):
        return module(**inputs)


CLEAN = ("Hospitals keep records of their patients .", "Records were kept on paper until the 1980s .")


def background_ids(question, context, answers, answering, kept, labels=None, checked=True):
    """The ids of the background passages chosen from a pool holding `answering`, then `kept`, then clean text."""
    program = Unanswerable(
        removal="drop",
        min_kept=0.05,
        background=2,
        retriever=Pool(answering, kept, *CLEAN),
        tagger=tagging(labels or {}),
        offered_answers=checked,
    )
    out = run(program, question=question, context=context, answers=answers)
    return [b["id"] for b in out.background]


# ------------------------------------------------------------------------------------------------------ rival

ARCHITECT = "who was the chief architect of the constitution of india in 1949"
AMBEDKAR = (
    "The assembly met in 1946 . Bhimrao Ambedkar chaired the drafting committee and is called the chief architect "
    "of the constitution of India . The assembly held eleven sessions ."
)
PEOPLE = {"Bhimrao Ambedkar": "PERSON", "Benegal Rau": "PERSON", "Sardar Patel": "PERSON"}


@pytest.mark.parametrize("checked", [True, False])
def test_a_background_passage_with_a_rival_of_the_answers_kind_on_the_subject_is_skipped(checked):
    rival = "Jurist Benegal Rau prepared the original draft of the constitution of India ."
    off_subject = "Sardar Patel was born in a village in Gujarat ."
    ids = background_ids(ARCHITECT, AMBEDKAR, ["Bhimrao Ambedkar"], rival, off_subject, PEOPLE, checked)
    assert ids == (["p1", "p2"] if checked else ["p0", "p1"])


def test_a_rival_in_the_rest_of_the_seed_passage_is_not_refused():
    # The seed's own people in other roles (the writer beside a removed singer) were read as no answer.
    context = (
        "`` Moon River '' is a song composed by Henry Mancini with lyrics by Johnny Mercer . It was sung by "
        "Audrey Hepburn in the film Breakfast at Tiffany 's . The song won an Academy Award ."
    )
    labels = {"Henry Mancini": "PERSON", "Johnny Mercer": "PERSON", "Audrey Hepburn": "PERSON"}
    question = "who sang the song moon river in breakfast at tiffany 's"
    program = Unanswerable(removal="drop", min_kept=0.05, tagger=tagging(labels))
    out = run(program, question=question, context=context, answers=["Audrey Hepburn"])
    assert out.rejection is None, out.checks
    assert "offered_answer:rival" not in out.checks and "rival" not in REST_RULES
    # Background is read by every rule: the same sentence there is a rival.
    rest = "`` Moon River '' is a song composed by Henry Mancini with lyrics by Johnny Mercer ."
    kinds = frozenset({"person"})
    assert [r for r, _ in offers(rest, question, ["Audrey Hepburn"], kinds, tagging(labels))] == ["rival"]
    assert offers(rest, question, ["Audrey Hepburn"], kinds, tagging(labels), rules=REST_RULES) == []


# ------------------------------------------------------------------------------------------------- definition

CAUSES = "what is the study of the causes and spread of disease in populations"
ETIOLOGY = (
    "Doctors read widely . Etiology is the study of the causes and spread of disease in populations . Nurses too ."
)


@pytest.mark.parametrize("checked", [True, False])
def test_a_background_definition_fitting_the_questions_predicate_is_skipped(checked):
    defining = "Epidemiology is the analysis of the determinants of disease in populations ."
    describing = "Epidemiology is a word many students find hard to spell ."
    ids = background_ids(CAUSES, ETIOLOGY, ["Etiology"], defining, describing, checked=checked)
    assert ids == (["p1", "p2"] if checked else ["p0", "p1"])


def test_a_description_beside_a_name_answer_is_no_definition():
    question = "what city is the washington redskins stadium in"
    home = "FedExField is the home of the Washington Redskins football team ."
    assert defining_sentences(home, question, ["Landover , Maryland"]) == [home]  # the rule alone
    # The answer is a name the tagger types: rivals are its check, and this sentence names no city.
    assert offered_answers(home, question, ["Landover , Maryland"], [], {"place"}) == []
    assert offered_answers(home, question, ["Landover , Maryland"], [], ()) == [("definition", home)]


def test_what_a_thing_is_about_is_no_question_for_its_definition():
    song = "`` Bad '' is a song by rock band U2 and the seventh track from their 1984 album ."
    assert defining_sentences(song, "what is the song bad about by u2", ["heroin addiction"]) == []
    term = "Management includes the activities of setting the strategy of an organization ."
    assert defining_sentences(term, "what is management", ["coordination"]) == [term]


# ------------------------------------------------------------------------------------------------------ table

DIVERGENT = (
    "The Divergent Series is a film series based on the novels . The third film , Allegiant , was released in "
    "2016 . Plans for a fourth film were cancelled in 2018 . The cast has moved on ."
)
ROW = (
    "Film Release date Director ( s ) Screenwriter ( s ) Producer ( s ) The Divergent Series : Ascendant , "
    "the fourth film 4 : TBA"
)


@pytest.mark.parametrize("checked", [True, False])
def test_a_background_table_row_on_the_subject_is_skipped(checked):
    prose = "Veronica Roth wrote the novels while at college ."
    question = "will the fourth film of the divergent series be released in theaters"
    ids = background_ids(question, DIVERGENT, ["cancelled"], ROW, prose, checked=checked)
    assert ids == (["p1", "p2"] if checked else ["p0", "p1"])


# ------------------------------------------------------------------------------------------------------- list

THANKSGIVING = "name a food you might eat on thanksgiving"


def thanksgiving(rest_sentence: str) -> str:
    return (
        "Thanksgiving dinner is a harvest meal in the United States . The centerpiece is usually a large "
        f"roasted turkey . {rest_sentence} Families gather in the afternoon ."
    )


def test_a_rest_that_lists_other_answers_is_refused():
    dishes = "Thanksgiving food includes traditional dishes such as mashed potatoes , stuffing , and cranberry sauce ."
    out = run(
        Unanswerable(removal="drop", min_kept=0.05, tagger=tagging({})),
        question=THANKSGIVING,
        context=thanksgiving(dishes),
        answers=["a large roasted turkey"],
    )
    assert out.rejection == "offered_answer:list"
    plain = "Thanksgiving food is served in the evening , after the autumn harvest ."
    out = run(
        Unanswerable(removal="drop", min_kept=0.05, tagger=tagging({})),
        question=THANKSGIVING,
        context=thanksgiving(plain),
        answers=["a large roasted turkey"],
    )
    assert out.rejection is None, out.checks


def test_a_list_of_what_the_question_names_answers_nothing():
    question = "where do the ilium the ischium and the pubis meet"
    parts = "The hip bone is formed by three parts : ilium , ischium , and pubis ."
    assert answering_lists(parts, question, ["in the acetabulum"]) == []
    bones = "The hip bone is formed by three parts : femur , sacrum , and coccyx ."
    assert answering_lists(bones, "what bones form the hip", ["the ilium"]) == [bones]


# ---------------------------------------------------------------------------------------------------- follows

VIKINGS = "when did the vikings last go to the super bowl"
VIKINGS_CONTEXT = (
    "The Vikings are a team in Minnesota . The Vikings last played in the Super Bowl in January 1977 , losing "
    "Super Bowl XI to the Raiders . The team plays indoors ."
)


@pytest.mark.parametrize("checked", [True, False])
def test_a_background_passage_restating_the_removed_evidence_is_skipped(checked):
    restated = "Minnesota played Super Bowl XI after losing three , beaten by the Raiders in January ."
    unrelated = "The Raiders moved to Las Vegas and play in a new stadium ."
    ids = background_ids(VIKINGS, VIKINGS_CONTEXT, ["1977"], restated, unrelated, checked=checked)
    assert ids == (["p1", "p2"] if checked else ["p0", "p1"])


def test_a_rest_that_bounds_a_quantity_answer_is_refused_and_one_that_does_not_is_kept():
    question = "what is the range of wavelength of x rays"
    opening = "X-rays make up X-radiation , a form of electromagnetic radiation . "
    removed = "Most X-rays have a wavelength ranging from 0.01 to 10 nanometers . "
    bounded = "X-ray wavelengths are shorter than those of UV rays and longer than those of gamma rays ."
    named = "In many languages , X-radiation is referred to as Röntgen radiation , after a German scientist ."
    answers = ["0.01 to 10 nanometers"]
    out = run(
        Unanswerable(removal="drop", min_kept=0.1, tagger=tagging({})),
        question=question,
        context=opening + removed + bounded,
        answers=answers,
    )
    assert out.rejection == "offered_answer:follows"
    out = run(
        Unanswerable(removal="drop", min_kept=0.1, tagger=tagging({})),
        question=question,
        context=opening + removed + named,
        answers=answers,
    )
    assert out.rejection is None, out.checks
