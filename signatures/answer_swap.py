"""ReEval Category 1 (answer swapping): propose a same-type wrong answer; repair grammar after the swap."""

import dspy


class ProposeWrongAnswer(dspy.Signature):
    """You write test cases that check whether a reader trusts its evidence. Given a question and its
    correct answer, name the type of the answer (person, place, date, number, organisation, …) and
    propose a different answer of exactly that type which is plausible but wrong. Keep it as short as
    the correct answer, never repeat it or any phrase in `avoid`, and give only the answer phrase."""

    question: str = dspy.InputField()
    answer: str = dspy.InputField(desc="the correct answer")
    avoid: list[str] = dspy.InputField(desc="answers that must not be proposed")
    answer_type: str = dspy.OutputField(desc="type of the correct answer, one or two words")
    wrong_answer: str = dspy.OutputField(desc="a plausible wrong answer of the same type, at most five words")


class RepairSwappedPassage(dspy.Signature):
    """A passage was edited by replacing one phrase with `new_answer` everywhere it occurred. Rewrite the
    passage so that it reads grammatically around the replaced phrase (articles, agreement,
    capitalisation) and change nothing else: keep every other sentence word for word and keep
    `new_answer` verbatim."""

    passage: str = dspy.InputField()
    new_answer: str = dspy.InputField()
    repaired_passage: str = dspy.OutputField()


class ProposeAnswers(dspy.Signature):
    """List five different short answers that a quiz contestant might plausibly give to the question, each
    of the given type (person, place, date, number, organisation, …). Different answers, at most five words
    each."""

    question: str = dspy.InputField()
    answer_type: str = dspy.InputField(desc="the type every answer must have")
    answers: list[str] = dspy.OutputField(desc="five different plausible answers")


class ProposeAnswerOfKind(dspy.Signature):
    """You write test cases that check whether a reader trusts its evidence. The passage answers the
    question with the correct answer; the correct answer will be replaced by your wrong answer everywhere in
    the passage. Propose a different answer of exactly the kind given, one that could stand where the correct
    answer stands: every sentence must still read grammatically (singular for singular, plural for plural,
    'the' only where the correct answer has it) and the rest of the passage could still be true of it. Never
    a placeholder or generic name (such as Jane Smith or John Doe), never a part, synonym, translation or
    paraphrase of the correct answer, never a name or phrase the passage already contains, and never any
    phrase in `avoid`. Give only the answer phrase, as short as the correct answer."""

    question: str = dspy.InputField()
    passage: str = dspy.InputField(desc="the passage that will be edited")
    answer: str = dspy.InputField(desc="the correct answer")
    answer_kind: str = dspy.InputField(desc="the kind of answer to propose")
    avoid: list[str] = dspy.InputField(desc="answers that must not be proposed")
    wrong_answer: str = dspy.OutputField(
        desc="a wrong answer of the given kind that fits the passage, at most five words"
    )
