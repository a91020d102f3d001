"""Cheap checks on enriched evidence: does a kept sentence still say what the question asks, and does
added background offer a second candidate answer?

The question's *subject words* are its content words (stemmed as `checks.content_stems`) minus
wh-words, function words and words that the shipped NQ questions use for every kind of topic ("play",
"first", "song", "season", "name", "wrote", ... : the content words found in roughly 1% or more of the
8.5k questions, verbs and role nouns kept out by hand). A text *carries the subject* when it holds at
least one subject word; a question with no subject word left falls back to any content word, and a
question with none at all is carried by any text. "At least one", not every subject word: the
sentence holding the gold answer seldom holds every one (docs/results/checks.md).

One subject word is too weak where the question names something: "The dam is 590 feet tall ... with 26
flood gates" carries "dam" and "gates" of "how many gates are there in nagarjuna sagar dam" but not the
dam's name, and set into background about another dam it reads as that dam's (reviewed run
nq-context-enrich-d055601dc1). So the kept evidence must also name every *question name*: a capitalised
phrase of the evidence whose content words all occur in the question (`question_names`). The window rule of
`programs.context_enrich.kept_evidence` takes up to four sentences around the answer, backwards first,
never opening on a pronoun.

A background *competes* with the answer when it holds another candidate of the answer's type:
- a date or year answer: another date or year in a sentence *about* the subject (two subject words,
  or all when fewer);
- a number answer: another number within a few words of a question word (a count "beside" what is
  counted: "22 episodes" for "how many episodes");
- a name answer: another capitalised name in a sentence about the subject.
Other answers (common-noun phrases) are not checked: no cheap rule says what a competitor looks like.
Dates and names are scoped to sentences about the subject: unscoped, they flag most retrieved passages
(docs/results/checks.md).
"""

from __future__ import annotations

import math
import re

from .checks import SENTENCE_BREAK, _stem, content_stems, mentions_any_form
from .normalize import normalize_answer
from .surface_forms import Unit, answer_kind, dates_or_years, find_forms, units_match, units_of

_GENERIC_QUESTION_WORDS = frozenset(
    _stem(w)
    for w in """
play played plays playing come came first name named song songs many much season seasons movie movies wrote write
written writes writer start started starts last won win wins winner sing sang sung sings singer time times film films
take took taken located location place places call called mean means meaning get got made make makes year years
episode episodes original series end ended type types show shows used use uses book books found founded become
became part parts number term kind form live lives go goes went day days voice air aired star stars game games
me my your us our new two people person born birth birthday die died dies death
""".split()
)


def subject_words(question: str) -> set[str]:
    words = content_stems(question)
    return (words - _GENERIC_QUESTION_WORDS) or words


def carries_subject(text: str, question: str) -> bool:
    wanted = subject_words(question)
    return not wanted or bool(wanted & content_stems(text))


def question_names(question: str, evidence: str) -> list[frozenset[str]]:
    """The names the question asks about, read off the evidence's capitalisation (NQ questions are
    lower-case): capitalised phrases of the evidence whose content words all occur in the question and
    are not all generic ("Nagarjuna Sagar Dam", "Orange Is the New Black", "Italy"), as stem sets. A
    one-word phrase opening a sentence is capitalised by position, not as a name, and is skipped. Of two
    names where one's stems hold the other's, the shorter is kept (naming it suffices)."""
    asked = content_stems(question)
    names: set[frozenset[str]] = set()
    for match in _CAPITALISED.finditer(evidence):
        stems = frozenset(content_stems(match.group()))
        if not stems or not stems <= asked or stems <= _GENERIC_QUESTION_WORDS:
            continue
        before = evidence[: match.start()].rstrip()
        if " " not in match.group().strip() and (not before or before[-1] in ".!?\"'`"):
            continue
        names.add(stems)
    return sorted((n for n in names if not any(other < n for other in names)), key=sorted)


def title_name(question: str, title: str) -> frozenset[str] | None:
    """The source article's title as a question name when the question names it ("kath and kim" for
    Kath & Kim, "alice" for "Alice (TV series)": the disambiguation in brackets is not part of the
    name). A passage inside an article often never names the article's subject ("The theme song is
    'The Joker', performed by Gina Riley"), so its capitalisation alone cannot say what the question
    asks about; set among background about another show, such evidence reads as that show's."""
    stems = frozenset(content_stems(re.sub(r"\([^)]*\)", " ", title or "")))
    if not stems or not stems <= content_stems(question) or stems <= _GENERIC_QUESTION_WORDS:
        return None
    return stems


def names_all(text: str, names: list[frozenset[str]]) -> bool:
    """Every name is in the text (all of its content words)."""
    stems = content_stems(text)
    return all(name <= stems for name in names)


def about_subject(text: str, question: str) -> bool:
    """Stricter than `carries_subject`, for background: two subject words (all, when there are fewer)."""
    wanted = subject_words(question)
    return len(wanted & content_stems(text)) >= min(2, len(wanted))


RESTATE_SHARE = 0.6  # of the question's subject words, with at least two
_FOCUS = re.compile(r"\b(?:which|what)\s+(?:(?:type|kind|sort|form|part|branch)\s+of\s+)?([a-z][\w'-]*)")


def focus_word(question: str) -> str | None:
    """What a "which / what X" question asks for, as a stem: "branch" of "which branch of psychology",
    "circuit" of "what type of circuit"; None for other questions or a generic X."""
    match = _FOCUS.search(question.lower())
    if not match:
        return None
    if "branch" in match.group(0):
        return "branch"
    stems = content_stems(match.group(1)) & subject_words(question)
    return next(iter(stems), None)  # one word: the group is a single word


def restating_sentences(passage: str, question: str, answers: list[str]) -> list[str]:
    """Sentences of background that restate the question without its answer, so that a reader finds
    another answer there: they name the answer in no form and hold either at least two, and at least
    60%, of the question's subject words, or what a "which / what X" question asks for together with
    another subject word ("the branch of psychology that deals with the unconscious mind"); a name's
    words alone do not restate anything. Background
    never holds the answer (the retriever excludes passages that name it), so what such a sentence says
    is another answer, often of a kind no typed check sees: Freud's "branch that deals with the
    unconscious mind" for "today gestalt psychology ideas are part of which branch of psychology" and a
    background restating the question as "... was known as ..." (both reviewed invalid in a blind read
    of a judged NQ context-enriching run)."""
    wanted = subject_words(question)
    if len(wanted) < 2:
        return []
    need = max(2, math.ceil(RESTATE_SHARE * len(wanted)))
    focus = focus_word(question)
    found = []
    for sentence in _sentences(passage):
        held = wanted & content_stems(sentence)
        # A name alone ("Papua New Guinea", "Dancing on Ice") is the topic, not the question: some word
        # of what is asked must stand in lower case, a subject word or the question's own verb ("Raviv
        # Ullman played Biff in Back to the Future." for "who played biff in back to the future", a
        # condensation the pivot wrote of a passage on another show; read invalid on held-out rows).
        lower = content_stems(_CAPITALISED.sub(" ", sentence))
        asked = (held & lower) or (content_stems(question) - wanted) & lower
        restates = (len(held) >= need and asked) or (focus in held and len(held) >= 2)
        if restates and not mentions_any_form(sentence, answers):
            found.append(sentence)
    return found


_PRONOUN_OPENING = re.compile(
    r"^\W*(he|she|it|they|his|her|hers|its|their|theirs|him|them|this|these|those|such|there|both|the latter|"
    r"the former)\b",
    re.IGNORECASE,
)


def opens_with_pronoun(sentence: str) -> bool:
    """The sentence leans on the one before it for its subject ("His only companion is ... Max")."""
    return bool(_PRONOUN_OPENING.match(sentence))


# What an excerpt's own first sentence may not open with: a person or "this / these / those / such" whose
# referent stood before the excerpt ("This feat has been accomplished 68 times"). "It" and "there" are
# left out ("It was confirmed that ...", "There are ..."), and so are quoted titles ("`` This Is Me ''").
_EXCERPT_OPENING = re.compile(
    r"^(he|she|his|her|hers|him|they|their|this|these|those|such|the latter|the former)\b", re.IGNORECASE
)


def opens_on_missing_referent(sentence: str) -> bool:
    return bool(_EXCERPT_OPENING.match(sentence.lstrip()))


def _definite(word: str) -> re.Pattern:
    # "the" right before the word, in lower case: "The Joker" is a song's name, "the service" names
    # nothing. No word between: "The bridge opened" is not a definite description of "opened".
    return re.compile(rf"\b[Tt]he\s+{re.escape(word)}[a-z]*\b")


def leans_on_previous(sentence: str, previous: str, question: str) -> bool:
    """The sentence refers back by a definite description to a subject word that the sentence before it
    introduced: "Rhett produced the album" after "Life Changes is the third studio album from ... Thomas
    Rhett". Kept without that sentence and set after background about another band's album, "the album"
    became that band's (reviewed invalid, twice)."""
    before = content_stems(previous)
    return any(_definite(word).search(sentence) for word in subject_words(question) if word in before)


def carries_subject_by_name(text: str, question: str) -> bool:
    """`carries_subject` with the subject words that stand only in a definite description ("the service")
    left out: such a phrase names nothing, so among background about an airline "the service 's first
    official flight" became the airline's (reviewed invalid: "when did the royal flying doctor service
    start")."""
    wanted = subject_words(question)
    if not wanted:
        return True
    bare = text
    for word in wanted:
        bare = _definite(word).sub(" ", bare)
    return bool(wanted & content_stems(bare))


# ------------------------------------------------------------------------------ competing answers

_NEAR = 4  # words either side of a question word within which a number counts as "beside" it
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|de|the|von|van|da|di|du|la|le)?\s*[A-Z][\w'’-]*)*")


def _sentences(text: str) -> list[str]:
    # A light splitter: good enough to scope "the same sentence", and fast (pysbd is ~10 ms a passage).
    return [s for s in SENTENCE_BREAK.split(text) if s.strip()]


def _is_answer_value(unit: Unit, answer_units: list[Unit]) -> bool:
    return any(units_match(a, unit) or units_match(unit, a) for a in answer_units)


def names_beside(sentence: str, question: str) -> list[str]:
    """Capitalised names of a sentence, other than its first word and the question's own words: what a reader
    could take for a name answer when it stands beside the answer's sentence."""
    asked = content_stems(question)
    lead = len(sentence) - len(sentence.lstrip())
    return [
        m.group()
        for m in _CAPITALISED.finditer(sentence)
        if m.start() != lead and not content_stems(m.group()) <= asked
    ]


def competing_candidates(passage: str, question: str, answers: list[str]) -> list[str]:
    """Candidates of the answer's type in the passage other than the answer itself (see module doc)."""
    if not answers:
        return []
    kind = answer_kind(answers[0])
    answer_units = [u for a in answers for u in units_of(a) if u.kind != "word"]
    found: list[str] = []
    if kind == "date":
        for sentence in _sentences(passage):
            if not about_subject(sentence, question):
                continue
            for unit in dates_or_years(sentence):
                if not _is_answer_value(unit, answer_units):
                    found.append(sentence[unit.start : unit.end])
        return found
    if kind == "number":
        question_words = content_stems(question)
        for sentence in _sentences(passage):
            units = list(units_of(sentence))
            near = [i for i, u in enumerate(units) if u.kind == "word" and _stem(u.value) in question_words]
            for i, unit in enumerate(units):
                if unit.kind not in ("num", "ord") or _is_answer_value(unit, answer_units):
                    continue
                if any(abs(i - j) <= _NEAR for j in near):
                    found.append(sentence[unit.start : unit.end])
        return found
    if kind == "name":
        own = {normalize_answer(w) for a in answers for w in a.split()} | content_stems(question)
        for sentence in _sentences(passage):
            if not about_subject(sentence, question):
                continue
            answer_spans = [(f.start, f.end) for a in answers for f in find_forms(sentence, a)]
            for m in _CAPITALISED.finditer(sentence):
                if m.start() == len(sentence) - len(sentence.lstrip()):
                    continue  # sentence-initial capital says nothing
                if any(s <= m.start() and m.end() <= e for s, e in answer_spans):
                    continue
                words = {normalize_answer(w) for w in m.group(0).split()} - {""}
                stems = {_stem(w) for w in words}
                if words and not (words <= own or stems <= own):
                    found.append(m.group(0))
        return found
    return []


# ------------------------------------------------------------------------------ pronouns kept evidence leans on

# People only: "they" and "their" point at plural things as often ("The two femurs ... where they articulate").
# Lower case, or capitalised where a sentence opens: "On Her Majesty 's Secret Service" is a title.
_PERSONAL = re.compile(r"\b(?:he|she|him|his|her|hers)\b|(?:^|(?<=[.!?]\s))(?:He|She|His|Her)\b")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_OPENERS = re.compile(r"(^|[.!?])[\s`'\"(\[]*$")


def _sentence_initial(text: str, start: int) -> bool:
    return bool(_OPENERS.search(text[:start]))


def _named_before(prefix: str, evidence: str) -> bool:
    """A name stands in `prefix`: a capitalised word that is not merely capitalised by its position (a
    sentence-initial word counts when the evidence also writes it capitalised mid-sentence: "Conan agrees")."""
    for m in _WORD.finditer(prefix):
        word = m.group()
        if not word[0].isupper() or word.lower() in _FUNCTION_WORDS_LOWER:
            continue
        if not _sentence_initial(prefix, m.start()):
            return True
        following = _WORD.match(prefix, m.end() + 1) if prefix[m.end() : m.end() + 1] == " " else None
        if following and following.group()[0].isupper():
            return True  # "Marin Čilić claimed his first title": a name of two capitalised words
        if any(
            not _sentence_initial(evidence, o.start())
            for o in re.finditer(rf"(?<![\w'’-]){re.escape(word)}(?![\w'’-])", evidence)
        ):
            return True
    return False


_FUNCTION_WORDS_LOWER = frozenset(
    """
a an the and or but of to in on at by for with from as into after before during when while since although though
if once because this that these those it its he she his her they their there here satisfied however meanwhile
""".split()
)


def unintroduced_pronoun(span: str, evidence: str) -> str | None:
    """The span's first personal pronoun ("she", "his", "their") when no name stands before it in the span:
    kept without the sentence that introduces her, "Satisfied , she tells Conan ... the Queen 's niece"
    set after a Daenerys passage made Daenerys the queen, and "After she discovered that her brother ,
    Brian , was Missy 's killer" after The Last Song's plot read as Ronnie (read invalid). "It"
    is left out: it mostly points at a thing of its own sentence."""
    found = _PERSONAL.search(span)
    if found is None or _named_before(span[: found.start()], evidence):
        return None
    return found.group()
