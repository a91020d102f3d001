"""Does a text set before a reader of an unanswerable case still offer an answer to the question?

A background passage retrieved on the question's topic, and what is left of the seed passage once the answer
is taken out, must give a reader nothing to answer from. Read blind, what let readers answer was one of:

- *rival*: a name of the kind the answer is (typed by a tagger the caller runs: metrics import no model)
  in a sentence on the question's subject: "Jurist B. N. Rau ... prepared the original draft of the
  constitution" for who was the architect of India's constitution;
- *definition*: to a question that asks for a term (not who, where or when, nor a name the tagger types), a
  sentence defining or describing a term other than the question's own by the question's predicate:
  "Epidemiology is the study and analysis of the distribution and determinants of health and disease" for the
  study of the causes of disease;
- *table*: a table, list header or infobox row (NQ's passages are tokenised Wikipedia text whose tables
  are flattened into runs of fields) on the question's subject: "Release date ... 4 : TBA" for whether
  the fourth Divergent film was made;
- *list*: three or more short items of the answer's shape in a sentence on the subject, to an open
  question: "mashed potatoes , stuffing , and cranberry sauce";
- *follows*: a sentence from which the removed answer or a coarser form of it follows, as far as an overlap
  test can tell: a word derived from the answer's ("Manchus" for Manchuria, "sediments" for sedimentary
  rock), a comparison bounding a quantity asked about ("shorter than those of UV rays and typically longer
  than those of gamma rays" for the range of X-ray wavelengths), or a restatement of the removed evidence
  (most of its content words, without the answer).

A sentence is on the question's subject when it holds two of the question's subject words
(`evidence_checks.subject_words`; all, when there are fewer). Each check reads sentence by sentence and
returns the sentences it flags, so a caller can report them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .background_checks import _ABBREVIATION_END
from .checks import SENTENCE_BREAK, _stem, content_stems, mentions_any_form
from .evidence_checks import subject_words
from .normalize import answer_tokens
from .surface_forms import answer_kind

# A typed name in the text: (start, end, kind) with kinds as the caller's tagger reads them.
Entity = tuple[int, int, str]

RULES = ("rival", "definition", "table", "list", "follows")
SUBJECT_WORDS = 2


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence stands; a break after an initial or an abbreviation ("Jurist B. N. Rau") is none."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end, after in [(b.start(), b.end()) for b in SENTENCE_BREAK.finditer(text)] + [(len(text), len(text))]:
        if text[start:end].strip():
            if spans and _ABBREVIATION_END.search(text[spans[-1][0] : spans[-1][1]].rstrip()):
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        start = after
    return spans


def _sentences(text: str) -> list[str]:
    return [text[s:e].strip() for s, e in _sentence_spans(text)]


def _on_subject(sentence: str, question: str, outside: str = "") -> set[str]:
    """The question's subject words the sentence holds (outside the words of `outside`, a name it offers); two
    written as one count as both ("wavelengths" for "wave length", "X-ray" for "x rays")."""
    held = content_stems(sentence) - content_stems(outside)
    wanted = subject_words(question)
    found = wanted & held
    words = answer_tokens(question)
    for a, b in zip(words, words[1:], strict=False):
        if _stem(a + b) in held:
            found |= {_stem(a), _stem(b)} & wanted
    return found


def _about(sentence: str, question: str, outside: str = "") -> bool:
    """On the question's subject: two of its subject words (all, when it has fewer). One is the topic the
    passage was retrieved on: of the background sweeps' cases, names of the answer's kind beside one subject
    word stood in 36 read valid against 6 read invalid (docs/results/strength.md)."""
    return len(_on_subject(sentence, question, outside)) >= min(SUBJECT_WORDS, len(subject_words(question)))


# ------------------------------------------------------------------------------------------------------ rival


def rival_names(
    text: str, question: str, answers: list[str], entities: Iterable[Entity], kinds: Iterable[str]
) -> list[str]:
    """Sentences holding a name of one of `kinds` (the answer's kind, and those a tagger confuses with it)
    that is neither a form of the answer nor made of the question's words, on the question's subject: a
    reader unwilling to abstain takes that name for the answer."""
    wanted = set(kinds)
    asked = content_stems(question)
    found = []
    by_sentence = _sentence_spans(text)
    names = [(s, e) for s, e, kind in entities if kind in wanted]
    for start, end in by_sentence:
        sentence = text[start:end]
        for s, e in names:
            if not (start <= s and e <= end):
                continue
            name = text[s:e]
            stems = content_stems(name)
            if not stems or stems <= asked or mentions_any_form(name, answers):
                continue
            if _about(sentence, question, outside=name):
                found.append(sentence.strip())
                break
    return found


# ------------------------------------------------------------------------------------------------- definition

# "X is / are / was the ...", "X refers to ...", "X includes ...": a term and what it is. The term is at most
# eight words, opens the sentence and holds no verb of its own the pattern knows.
_DEFINING = re.compile(
    r"^\W*(?P<term>(?:[\w'’.-]+\s+){0,7}?[\w'’.-]+)\s*(?:\([^)]*\)\s*)?,?\s+"
    r"(?:is|are|was|were|refers?\s+to|referred\s+to|means|denotes|describes|includes?|involves?|"
    r"is\s+defined\s+as|is\s+known\s+as|is\s+called|consists?\s+of|comprises?)\s+(?P<body>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# A question asking what its own term is or means: then any definition of that term answers it. "What is X
# about" asks what X tells of, which a definition of X ("Bad is a song by U2") does not say.
_ASKS_DEFINITION = re.compile(
    r"^\W*(?:what\s+(?:is|are|was|were)\s+(?!(?:an?\s+|the\s+)?\w+\s+of\b)(?!.*\babout\b)|define\b"
    r"|what\s+does\b.*\bmean\b"
    r"|what\s+do\s+you\s+(?:mean|understand)\b|meaning\s+of\b)|\bthe\s+term\b|\bstand\s+for\b",
    re.IGNORECASE,
)
# Who, where and when ask for a name or a date, which the rival and date checks look for; a description
# ("... is the nineteenth episode of ... Family Guy") answers none of them.
_ASKS_NAME = re.compile(r"^\W*(?:who|whom|whose|where|when)\b", re.IGNORECASE)
_PRONOUNS = frozenset("it he she they this that these those there which who its his her their".split())
# The predicate must hold this many of the question's subject words: one is the topic, not the question.
DEFINITION_WORDS = 2


def defining_sentences(text: str, question: str, answers: list[str]) -> list[str]:
    """Sentences defining or describing a term that is not the question's own ("Epidemiology is the study
    and analysis of ... disease") by a predicate holding two of the question's subject words: another
    answer to a question that asks for the term ("the study of the causes of disease"). To a question asking
    what its own term is or means, any definition of that term ("Management includes the activities of
    setting the strategy of an organization ..." for what is understood by the term management)."""
    if (answers and answer_kind(answers[0]) in ("date", "number")) or _ASKS_NAME.search(question):
        return []
    wanted = subject_words(question)
    need = DEFINITION_WORDS
    asks_definition = bool(_ASKS_DEFINITION.search(question))
    found = []
    for sentence in _sentences(text):
        m = _DEFINING.match(sentence)
        if not m:
            continue
        term = m.group("term")
        words = answer_tokens(term)
        if not words or words[0] in _PRONOUNS or words[-1] in _PRONOUNS:
            continue
        term_stems = content_stems(term)
        if not term_stems:
            continue
        if term_stems & wanted or term_stems <= content_stems(question):
            # The question's own subject described: an answer only to a question asking what that term is.
            if asks_definition and term_stems <= content_stems(question):
                found.append(sentence)
            continue
        if len((wanted & content_stems(m.group("body"))) - term_stems) >= need:
            found.append(sentence)
    return found


# ------------------------------------------------------------------------------------------------------ table

# Field labels of Wikipedia's infoboxes and table headers, as NQ's flattened text writes them.
_FIELDS = re.compile(
    r"\b(?:Release\s+date|Released|Directed\s+by|Produced\s+by|Written\s+by|Screenplay\s+by|Story\s+by|"
    r"Starring|Music\s+by|Director|Screenwriter|[A-Z]\w+\s*\(\s*s\s*\)|Cinematography|Edited\s+by|Distributed\s+by|Running\s+time|Box\s+office|Budget|"
    r"Genre|Label|Length|Format|Recorded|Producer\s*\(\s*s\s*\)|Songwriter\s*\(\s*s\s*\)|Born|Died|"
    r"Occupation|Spouse\s*\(\s*s\s*\)|Years\s+active|Preceded\s+by|Succeeded\s+by|Founded|Headquarters|"
    r"Key\s+people|Website|Original\s+air\s+date|Original\s+release|No\s*\.\s+in\s+(?:series|season)|"
    r"Country\s+of\s+origin|Original\s+language|No\s*\.\s+of\s+(?:seasons|episodes)|Created\s+by|"
    r"Developed\s+by|Presented\s+by|Opening\s+theme|Network|Population|Area|Capital|Location|Date|"
    r"Venue|Winner|Champion|Runner\s*-\s*up|Result|Score|Position|Team|Season|Title|Episodes|Awards)\b"
)
# A cell of a flattened row: "4 : TBA", "Length 3 : 31".
_CELL = re.compile(r"(?:^|\s)[\w.]+\s:\s[\w$(`'-]")
FIELDS_IN_ROW = 3
CELLS_IN_ROW = 2
# A sentence this long with no finite verb the pattern knows reads as a row of fields, not prose.
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|did|will|would|can|could|may|might|shall|should)\b"
    r"|\b\w+(?:ed|es)\b",
    re.IGNORECASE,
)
ROW_WORDS = 25


def _row_like(sentence: str) -> bool:
    fields = len(_FIELDS.findall(sentence))
    cells = len(_CELL.findall(sentence))
    if fields >= FIELDS_IN_ROW or (cells >= CELLS_IN_ROW and fields >= 1):
        return True
    return len(sentence.split()) >= ROW_WORDS and not _VERB.search(sentence) and bool(_FIELDS.search(sentence))


def table_rows(text: str, question: str) -> list[str]:
    """Flattened table, list header or infobox rows holding a subject word of the question: a reader looks
    a value up there ("Release date ... 4 : TBA" for whether the fourth film was made)."""
    return [s for s in _sentences(text) if _row_like(s) and _about(s, question)]


# ------------------------------------------------------------------------------------------------------- list

# A word introducing examples, then three or more items separated by commas, the last after "and" / "or":
# "such as A , B , and C", "including A , B or C".
_OPENER = re.compile(r"\b(?:such\s+as|including|includes?|like|namely|are|were)\s+|:\s+", re.IGNORECASE)
_LAST = re.compile(r"^(?:(?P<before>.*?)\s+)?(?:and|or)\s+(?P<last>.+)$", re.DOTALL)
LIST_ITEMS = 3
ITEM_WORDS = 4
# The last item runs on to the sentence's end ("and cranberry sauce are served"): a little more room.
LAST_ITEM_WORDS = 6


def _items(listed: str) -> list[str]:
    """The items of a list opening the text, "A , B , and C" or "A , B or C"; empty when the text lists
    nothing (no "and" / "or" closing comma-separated items)."""
    items = []
    for part in re.split(r"\s*,\s*", re.split(r"[;(]|\s\.\s|\s\.$", listed)[0]):
        closing = _LAST.match(part.strip())
        if closing:
            items += [i.strip() for i in (closing.group("before"), closing.group("last")) if i and i.strip()]
            return items
        items.append(part.strip())
    return []


def _shape(text: str) -> str:
    return "name" if answer_kind(text) == "name" else "other"


def answering_lists(text: str, question: str, answers: list[str]) -> list[str]:
    """Sentences on the question's subject with a list of three or more short items of the answer's shape
    (names for a name, common nouns for a common noun) after a word that introduces examples ("such as",
    "including", "are"): each item answers an open question ("traditional dishes such as mashed potatoes ,
    stuffing , and cranberry sauce" for what is eaten at Thanksgiving). Items the question names are no
    answer to it: "three parts : ilium , ischium , and pubis" restates "where do the ilium the ischium and
    the pubis meet"."""
    if not answers or answer_kind(answers[0]) in ("date", "number"):
        return []
    shape = _shape(answers[0])
    asked = content_stems(question)
    found = []
    for sentence in _sentences(text):
        if not _about(sentence, question):
            continue
        for opener in _OPENER.finditer(sentence):
            items = _items(sentence[opener.end() :])
            if len(items) < LIST_ITEMS or any(len(i.split()) > ITEM_WORDS for i in items[:-1]):
                continue
            if sum(not content_stems(i) <= asked for i in items) < LIST_ITEMS:
                continue
            if len(items[-1].split()) <= LAST_ITEM_WORDS and all(_shape(i) == shape for i in items):
                found.append(sentence)
                break
    return found


# ---------------------------------------------------------------------------------------------------- follows

# Two words share a derivation when they share this many letters from the start and those letters are most of
# the shorter word: "Manchu" / "Manchuria", "sediments" / "sedimentary"; not "uterus" / "uterine".
SHARED_PREFIX = 5
PREFIX_SHARE = 0.75
# A comparison bounding a quantity by another thing: "shorter than those of UV rays"; not by a number ("less
# than 30 keV", "no more than one year"), which states a quantity of its own and is the number checks' business.
_BOUNDS = re.compile(
    r"\b(?:shorter|longer|smaller|larger|bigger|higher|lower|greater|fewer|less|more|heavier|lighter|"
    r"faster|slower|hotter|colder|wider|narrower|deeper|older|younger)\s+than\s+"
    r"(?!(?:a|an|about|around|some|one|two|three|four|five|six|seven|eight|nine|ten|half|twice)\b)(?:those|that|the|[A-Za-z])",
    re.IGNORECASE,
)
# Of the removed evidence's content words (less the answer's and the question's), a sentence holding this
# share, and at least this many, says what the evidence said.
RESTATE_SHARE = 0.6
RESTATE_WORDS = 4


def _derived(word: str, answer_word: str) -> bool:
    a, b = word.lower(), answer_word.lower()
    if _stem(a) == _stem(b):
        return False  # the answer's own word, inflected, is the form checks' business
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    if shared == min(len(a), len(b)) and abs(len(a) - len(b)) <= 1:
        return False  # a spelling of the answer's word ("something" for "Somethin"), not a derivation
    return shared >= SHARED_PREFIX and shared >= PREFIX_SHARE * min(len(a), len(b))


def derived_from_answer(text: str, question: str, answers: list[str]) -> list[str]:
    """Sentences with a word derived from a content word of the answer that the question does not hold
    ("Manchus" for Manchuria, "sediments" for sedimentary rock)."""
    asked = content_stems(question)
    answer_words = {w for a in answers for w in answer_tokens(a) if len(w) >= SHARED_PREFIX and _stem(w) not in asked}
    if not answer_words:
        return []
    found = []
    for sentence in _sentences(text):
        words = answer_tokens(sentence)
        if any(_derived(w, a) for w in words for a in answer_words if _stem(w) not in asked):
            found.append(sentence)
    return found


def bounding_comparisons(text: str, question: str, answers: list[str]) -> list[str]:
    """For a quantity answer, sentences on the question's subject that bound it by comparison: the coarse
    answer ("shorter than those of UV rays and typically longer than those of gamma rays")."""
    if not answers or answer_kind(answers[0]) != "number":
        return []
    return [s for s in _sentences(text) if _BOUNDS.search(s) and _about(s, question)]


def restating_evidence(text: str, evidence: str, question: str, answers: list[str]) -> list[str]:
    """Sentences holding most of what the removed evidence said besides the answer and the question's words:
    the same statement, from which the answer follows."""
    drop = content_stems(question) | {w for a in answers for w in content_stems(a)}
    said = content_stems(evidence) - drop
    if len(said) < RESTATE_WORDS:
        return []
    need = max(RESTATE_WORDS, RESTATE_SHARE * len(said))
    return [s for s in _sentences(text) if len(content_stems(s) & said) >= need]


def answer_follows(text: str, question: str, answers: list[str], evidence: str = "") -> list[str]:
    found = derived_from_answer(text, question, answers) + bounding_comparisons(text, question, answers)
    if evidence:
        found += restating_evidence(text, evidence, question, answers)
    return list(dict.fromkeys(found))


# --------------------------------------------------------------------------------------------------------- all


def offered_answers(
    text: str,
    question: str,
    answers: list[str],
    entities: Iterable[Entity] = (),
    kinds: Iterable[str] = (),
    evidence: str = "",
    rules: Iterable[str] = RULES,
) -> list[tuple[str, str]]:
    """(rule, sentence) for every way the text offers an answer, by the `rules` asked for; rules in `RULES`
    order. `kinds`: the kinds of name the answer is (none for an answer that is no name). `evidence`
    (background only): the sentences removed with the answer."""
    asked, kinds = set(rules), tuple(kinds)
    found = []
    if "rival" in asked:
        found += [("rival", s) for s in rival_names(text, question, answers, entities, kinds)]
    if "definition" in asked and not kinds:
        # A name is asked for, and a description ("FedExField is the home of the Washington Redskins" for the
        # stadium's city) names no other one; on the archived readings the 5 cases with a definition flagged
        # beside a name answer were all read valid.
        found += [("definition", s) for s in defining_sentences(text, question, answers)]
    if "table" in asked:
        found += [("table", s) for s in table_rows(text, question)]
    if "list" in asked:
        found += [("list", s) for s in answering_lists(text, question, answers)]
    if "follows" in asked:
        found += [("follows", s) for s in answer_follows(text, question, answers, evidence)]
    return found
