"""A small judged run for the review page's tests: one case per task, adversarial payloads in the
text fields, and records outside the review population (checks failed, judge unparsed, baseline).

The answer-swap contexts are Natural Questions paragraphs from tests/fixtures/answer_swap_accepted.jsonl
(Wikipedia text, CC BY-SA 3.0; see data/README.md); the rest is written for these tests.
"""

from __future__ import annotations

import json
from pathlib import Path

# Each payload would set a window-level marker (or open a dialog) if it ever ran.
SCRIPT = "<script>window.__xss_script=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__xss_img=1;alert(2)">'
JS_URL = "javascript:window.__xss_js=1;alert(3)"
SVG = '<svg onload="window.__xss_svg=1"></svg>'
MARKERS = ("__xss_script", "__xss_img", "__xss_js", "__xss_svg", "__xss_note")
NOTE_PAYLOAD = '</textarea><img src=x onerror="window.__xss_note=1;alert(4)">'

SATURN_ORIGINAL = (
    "Saturn is the sixth planet from the Sun and the second - largest in the Solar System , after Jupiter . "
    "It is a gas giant with an average radius about nine times that of Earth . It has only one - eighth the "
    "average density of Earth , but with its larger volume Saturn is over 95 times more massive . Saturn is "
    "named after the Roman god of agriculture ; its astronomical symbol ( ♄ ) represents the god 's sickle ."
)
ANDROID_ORIGINAL = (
    "In July 2005 , Google acquired Android Inc. for at least $50 million . Its key employees , including "
    "Rubin , Miner and White , joined Google as part of the acquisition . Not much was known about the "
    "secretive Android at the time , with the company having provided few details other than that it was "
    "making software for mobile phones ."
)


def _judge(ok_if, ok_only_if, if_reason, only_if_reason, p_valid=None):
    judge = {
        "if": ok_if,
        "if_reason": if_reason,
        "only_if": ok_only_if,
        "only_if_reason": only_if_reason,
        "judge": "qwen2.5-1.5b",
    }
    if p_valid is not None:
        judge.update(p_valid=p_valid, method="logprob")
    return judge


def review_records() -> list[dict]:
    swap_checks = {"new_answer_present": True, "old_answer_absent": True, "rest_unchanged": True}
    return [
        {
            "id": "-1012780730954675617:swap",
            "seed_id": "-1012780730954675617",
            "task": "answer_swap",
            "status": "accepted",
            "question": "what is the position of saturn in the solar system",
            "context": SATURN_ORIGINAL.replace("sixth planet from the Sun", "second planet from the Sun"),
            "answers": ["second planet from the Sun"],
            "original_context": SATURN_ORIGINAL,
            "original_answers": ["sixth planet from the Sun"],
            "pivot": "qwen2.5-1.5b",
            "program_version": "answer_swap/1",
            "checks": swap_checks,
            "judge": _judge(
                True,
                True,
                "The passage states Saturn is the second planet from the Sun.",
                "No other position is given.",
                p_valid=0.91,
            ),
        },
        {
            "id": "-1004168810822878148:swap",
            "seed_id": "-1004168810822878148",
            "task": "answer_swap",
            "status": "accepted",
            "question": "android operating system was acquired by google in",
            "context": ANDROID_ORIGINAL.replace("July 2005", "January 2005"),
            "answers": ["January 2005"],
            "original_context": ANDROID_ORIGINAL,
            "original_answers": ["July 2005"],
            "pivot": "qwen2.5-1.5b",
            "program_version": "answer_swap/1",
            "checks": swap_checks,
            "judge": _judge(True, True, "January 2005 is the acquisition date given.", "Only one date."),
        },
        {
            "id": "xss-1:swap",
            "seed_id": "xss-1",
            "task": "answer_swap",
            "status": "rejected:judge_only_if",
            "question": f"who wrote {SCRIPT} the letter {IMG}",
            "context": f"The letter was written by {JS_URL} in {IMG} 1901 {SVG}.",
            "answers": [JS_URL, IMG],
            "original_context": "The letter was written by Anna Smith in 1901.",
            "original_answers": [f"Anna {SCRIPT}"],
            "checks": swap_checks,
            "judge": _judge(True, False, f"ok {SCRIPT}", f"another answer {IMG} JUDGE-SECRET-REASON"),
        },
        {
            "id": "Mercury_7175875:counterfactual",
            "seed_id": "Mercury_7175875",
            "task": "counterfactual",
            "status": "accepted",
            "variant": "perturbed",
            # As experiments/tasks/faitheval.py writes it: the question followed by its lettered options.
            "question": f"Which property of a mineral can be determined just by looking at it?\nA. luster\n"
            f"B. mass\nC. weight\nD. hardness {SVG}",
            "options": ["luster", "mass", "weight", f"hardness {SVG}"],
            "choice_labels": ["A", "B", "C", "D"],
            "answers": ["mass"],
            "answer_label": "B",
            "original_answer_label": "A",
            "context": "Geologists often say that the mass of a mineral is plain to see.\n\nA glance at a "
            "crystal tells its mass, because heavier minerals look denser.",
            "checks": {"target_mentioned": True, "other_options_absent": True},
            "judge": _judge(True, True, "The passage supports mass.", "No other option is supported."),
        },
        {
            "id": "Mercury_7175875:closed-book",
            "seed_id": "Mercury_7175875",
            "task": "counterfactual",
            "status": "accepted",
            "variant": "original",
            "question": "Which property …",
            "context": "",
            "answers": ["luster"],
        },
        {
            "id": "-77:inconsistent",
            "seed_id": "-77",
            "task": "inconsistent",
            "status": "rejected:judge_if",
            "question": "when did the eiffel tower open",
            "context": "Document 1: The Eiffel Tower opened in 1889 for the World's Fair.\n\n"
            "Document 2: The Eiffel Tower opened in 1925 for the World's Fair.",
            "answers": ["conflict"],
            "new_answer": "1925",
            "original_context": "The Eiffel Tower opened in 1889 for the World's Fair.",
            "original_answers": ["1889"],
            "checks": {"new_answer_present": True},
            "judge": _judge(False, None, "The modified document does not say 1925.", None),
        },
        {
            "id": "-88:unanswerable",
            "seed_id": "-88",
            "task": "unanswerable",
            "status": "accepted",
            "question": "who painted the mona lisa",
            "context": "The Mona Lisa is a half-length portrait painting. It hangs in the Louvre.",
            "answers": ["unknown"],
            "original_answers": ["Leonardo da Vinci"],
            "original_context": "The Mona Lisa is a half-length portrait painting by Leonardo da Vinci. "
            "It hangs in the Louvre.",
            "checks": {"answer_removed": True},
            "judge": _judge(True, True, "The painter is not named.", "Nothing else answers it."),
        },
        # Outside the population: failed a string check, judge unparsed.
        {
            "id": "-99:swap",
            "seed_id": "-99",
            "task": "answer_swap",
            "status": "rejected:old_answer_present",
            "question": "q",
            "context": "c",
            "answers": ["a"],
            "checks": {"old_answer_absent": False},
        },
        {
            "id": "-98:swap",
            "seed_id": "-98",
            "task": "answer_swap",
            "status": "error:judge_unparsed",
            "question": "q",
            "context": "c",
            "answers": ["a"],
            "judge": _judge(None, None, "", ""),
        },
    ]


POPULATION_IDS = {
    "-1012780730954675617:swap",
    "-1004168810822878148:swap",
    "xss-1:swap",
    "Mercury_7175875:counterfactual",
    "-77:inconsistent",
    "-88:unanswerable",
}


def write_run(runs_root: Path, run_id: str = "review-fixture", records: list[dict] | None = None) -> Path:
    run_dir = Path(runs_root) / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps({"name": run_id}))
    with open(run_dir / "cases.jsonl", "w", encoding="utf-8") as f:
        for record in review_records() if records is None else records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return run_dir
