"""A tiny bench world for tests: three NQ-like seeds, three ARC-like questions, and llama.cpp stand-ins
that answer by reading their prompt (what a scripted model would say given the fields it was sent).

The models go through the real LM engine (experiments.lm.engine) and DSPy's cache, so the engine's
call counts are the ones a real run reports, and a cached re-run really makes no call.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from experiments import corpus
from experiments.lm import engine, registry, roster

SEEDS = [
    (
        "t1",
        "who built the old tower of portvale",
        "Alice Smith",
        "The old tower of Portvale stands near the harbour wall of the town. The old tower of Portvale was built "
        "by Alice Smith in the spring. Visitors climb the tower every summer to watch the ships.",
    ),
    (
        "t2",
        "who painted the blue door of kelmar",
        "Carol Brown",
        "The blue door of Kelmar is the best known door of the village. The blue door of Kelmar was painted by "
        "Carol Brown after the storm. Tourists take pictures of the door every day.",
    ),
    (
        "t3",
        "who wrote the song of the river marn",
        "Diana Green",
        "The song of the river Marn is sung at every local festival. The song of the river Marn was written by "
        "Diana Green for her sister. Children learn the song at school.",
    ),
]
QUESTIONS = [
    (
        "q1",
        "Which gas do plants take in from the air to make food?",
        ["oxygen", "carbon dioxide", "nitrogen", "helium"],
        "B",
    ),
    ("q2", "Which organ pumps blood through the body?", ["lungs", "heart", "stomach", "liver"], "B"),
    ("q3", "What makes a compass needle point north?", ["gravity", "magnetism", "friction", "wind"], "B"),
]
# The seeds' people are women, as the swap's first name is: a new name must take the passage's pronouns.
SWAPPED = "Zora Quinn"  # the pivot's wrong answer for answer swapping
CONFLICTING = "Yuri Vance"  # ... and for the inconsistent document
FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.S)


def write_data(folder) -> tuple[str, str]:
    nq = folder / "seeds.jsonl"
    nq.write_text(
        "".join(json.dumps({"id": i, "question": q, "context": c, "answers": [a]}) + "\n" for i, q, a, c in SEEDS)
    )
    arc = folder / "questions.jsonl"
    arc.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "question": q,
                    "answerKey": key,
                    "choices": [{"label": chr(65 + n), "text": t} for n, t in enumerate(options)],
                }
            )
            + "\n"
            for i, q, options, key in QUESTIONS
        )
    )
    return str(nq), str(arc)


def gold(question: str) -> str | None:
    """What the question's right answer is (an NQ answer or a right option's text)."""
    for _, q, answer, _ in SEEDS:
        if q in question:
            return answer
    for _, q, options, key in QUESTIONS:
        if q in question:
            return options[ord(key) - 65]
    return None


def option_texts(question: str) -> list[str]:
    return [line[3:] for line in question.split("\n")[1:] if re.match(r"^[A-Z]\. ", line)]


def read_context(fields: dict, question: str) -> str:
    """What a model that follows the evidence answers."""
    context = fields.get("context", "")
    if not context:
        return "no idea"
    options = option_texts(question)
    if options:
        named = [o for o in options if o.lower() in context.lower()]
        return max(named, key=len) if named else "no idea"
    if "Document 2:" in context:
        return "conflict"
    for answer in (gold(question), SWAPPED):
        if answer and answer in context:
            return answer
    return "unknown"


def follower(fields: dict, outputs: list[str], system: str) -> dict:
    """Follows the evidence in every setting; knows nothing without it."""
    answer = read_context(fields, fields.get("question", ""))
    return {"answer": answer, **({"reasoning": "r"} if "reasoning" in outputs else {})}


def stubborn(fields: dict, outputs: list[str], system: str) -> dict:
    """Answers what it knows, whatever the evidence says; only the opinion prompt makes it read."""
    question = fields.get("question", "")
    answer = read_context(fields, question) if "Bob said" in question else gold(question)
    return {"answer": answer or "no idea", **({"reasoning": "r"} if "reasoning" in outputs else {})}


def pivot_and_judge(fields: dict, outputs: list[str], system: str) -> dict:
    context, question = fields.get("context", ""), fields.get("question", "")
    if outputs == ["answer"]:  # seed selection: knows nothing closed-book, reads open-book
        return {"answer": gold(question) if "context" in fields else "no idea"}
    if "wrong_answer" in outputs:
        conflicting = "justification" in outputs
        return {
            "answer_type": "person",
            "wrong_answer": CONFLICTING if conflicting else SWAPPED,
            **({"justification": "j"} if conflicting else {}),
        }
    if outputs == ["sentence"]:
        return {"sentence": "not a sentence of the evidence"}
    if outputs == ["background"]:
        return {"background": "Harbours have ferries. Bridges are made of steel."}
    if "rewritten_sentence" in outputs:
        return {"justification": "j", "rewritten_sentence": "Nothing is said here about who did it."}
    if outputs == ["paragraph", "justification"]:
        target = fields["target_option"]
        return {
            "paragraph": f"Green things take in {target} through tiny pores. Leaves use {target} in daylight.",
            "justification": "j",
        }
    if outputs == ["next_paragraph"]:
        return {"next_paragraph": "Leaves are flat and green. Many gardens grow tall trees."}
    if outputs == ["choice"]:  # the judge on a multiple-choice case: the option the context names
        lines = [re.match(r"^([A-F])\) (.*)$", line) for line in fields["options"].split("\n")]
        named = [
            (m.group(1), m.group(2))
            for m in lines
            if m and m.group(2) != "none of these" and m.group(2).lower() in context.lower()
        ]
        none = next(m.group(1) for m in lines if m and m.group(2) == "none of these")
        return {"choice": max(named, key=lambda x: len(x[1]))[0] if named else none}
    if outputs == ["reason", "verdict"]:
        if "expected_answer" not in fields:  # answerability
            return {"reason": "r", "verdict": "answerable" if gold(question) in context else "unanswerable"}
        if "only the expected answer" in system:
            return {"reason": "r", "verdict": "only_expected"}
        return {"reason": "r", "verdict": "yes" if fields["expected_answer"] in context else "no"}
    raise AssertionError(f"unscripted call: {outputs} {sorted(fields)}")


class PromptReadingLlama:
    """Stands in for llama_cpp.Llama: parses the fields of the last user message and replies with the
    policy's JSON. `interrupt_after` calls, it raises KeyboardInterrupt (a kill, as the run sees it)."""

    def __init__(self, policy):
        self.policy = policy
        self.calls: list[dict] = []
        self.interrupt_after: int | None = None

    def create_chat_completion(self, messages, **kwargs):
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise KeyboardInterrupt
        user = messages[-1]["content"]
        fields = {name: value for name, value in FIELD.findall(user)}
        order = re.search(r"order of fields: (.*)\.$", user.strip())
        outputs = re.findall(r"`(\w+)`", order.group(1)) if order else []
        self.calls.append({"fields": fields, "outputs": outputs, "prompt": json.dumps(messages)})
        reply = self.policy(fields, outputs, messages[0]["content"])
        return {
            "id": "fake",
            "choices": [{"message": {"content": json.dumps(reply)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        }

    def seed_selection_calls(self) -> int:
        return sum(c["outputs"] == ["answer"] for c in self.calls)


POLICIES = {"qwen2.5-1.5b": pivot_and_judge, "qwen2.5-0.5b": follower, "smollm2-135m": stubborn}
_INSTALLED: dict[str, PromptReadingLlama] = {}


def install_fakes(weights_dir: str) -> dict[str, PromptReadingLlama]:
    """In a process of its own (a Ray actor), what the `world` fixture of tests/test_bench.py patches in
    the test's process: the models of POLICIES behind the real engine, their weights' paths, the retriever."""
    from tests.test_context_enrich import FakeRetriever

    if not _INSTALLED:
        _INSTALLED.update({name: PromptReadingLlama(policy) for name, policy in POLICIES.items()})
        engine.new_llama = lambda name, n_ctx, n_threads, cache: _INSTALLED[name]
        engine.choice_logprobs = lambda *args, **kwargs: None
        roster.model_path = lambda name: Path(weights_dir) / f"{name}.gguf"
        corpus.default_retriever = lambda embedder, **options: FakeRetriever()
    return _INSTALLED


class ActorModels:
    """A picklable `build_lm` (experiments.bench.driver.build_lm) whose models Ray actors build too: in
    another process than the test's it installs the fakes first, then builds as the registry does."""

    def __init__(self, weights_dir):
        self.test_pid = os.getpid()
        self.weights_dir = str(weights_dir)

    def __call__(self, config, role, split=None):
        if os.getpid() != self.test_pid:
            install_fakes(self.weights_dir)
        return registry.build_lm(config, role, split)
