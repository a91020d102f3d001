"""The judge's methods, its control cases, the fitting of its parameters and their resolution."""

import ctypes
import json
import math

import dspy
import numpy as np
import pytest

from experiments.config import LMConfig
from experiments.judging import controls as ctl
from experiments.judging.calibration import calibrate, calibration_metrics
from experiments.judging.fit import auc, fit_and_measure, fit_threshold, markdown
from experiments.judging.params import JudgeParamsError, describe, make_judge, resolve_params
from experiments.lm import engine as llama_engine
from experiments.lm.registry import ResolvedLM
from experiments.validation import judge_record
from programs.judge import (
    NONE_OPTION,
    CaseJudge,
    choice_rivals,
    extraction_signals,
    option_probabilities,
    ordered_options,
    rest_of_context,
    score,
    verdict_probability,
)

CONTEXT = (
    "The Eiffel Tower was finished in 1889 . It stands in Paris on the Champ de Mars . "
    "Millions of people visit it every year , and it was the tallest structure in the world until 1930 ."
)


def _example(i, question, context, answer):
    return dspy.Example(id=f"s{i}", question=question, context=context, answers=[answer])


# -- verdict probabilities -----------------------------------------------------------------------


def test_verdict_probability_from_provider_style_token_logprobs():
    logprobs = {
        "content": [
            {"token": '{"', "logprob": -0.01, "top_logprobs": []},
            {"token": "verdict", "logprob": -0.01, "top_logprobs": []},
            {"token": ' "', "logprob": -0.01, "top_logprobs": []},
            {
                "token": "yes",
                "logprob": math.log(0.6),
                "top_logprobs": [
                    {"token": "yes", "logprob": math.log(0.6)},
                    {"token": "no", "logprob": math.log(0.2)},
                    {"token": "Yes", "logprob": math.log(0.1)},
                    {"token": "maybe", "logprob": math.log(0.1)},
                ],
            },
        ]
    }
    assert verdict_probability(logprobs, ("yes", "no")) == pytest.approx(0.7 / 0.9)
    # a key missing from the top list counts as at most half the least likely listed token
    only_yes = {
        "content": [
            {
                "token": "yes",
                "logprob": -0.1,
                "top_logprobs": [
                    {"token": "yes", "logprob": math.log(0.9)},
                    {"token": "sure", "logprob": math.log(0.1)},
                ],
            }
        ]
    }
    assert verdict_probability(only_yes, ("yes", "no")) == pytest.approx(0.9 / 0.95)
    assert verdict_probability(None, ("yes", "no")) is None
    multi = {
        "content": [
            {
                "token": "other",
                "logprob": -0.2,
                "top_logprobs": [
                    {"token": "only", "logprob": math.log(0.25)},
                    {"token": "other", "logprob": math.log(0.75)},
                ],
            }
        ]
    }
    assert verdict_probability(multi, ("only_expected", "other_answer_supported")) == pytest.approx(0.25)


class _ScoringLlama:
    """Just enough of llama_cpp.Llama for choice_logprobs: a character tokenizer and set logits."""

    def __init__(self, prompt, logits):
        self.input_ids = np.array([ord(c) for c in prompt] + [0] * 64, dtype=np.intc)
        self.n_tokens = len(prompt)
        self.evaluated = []
        self._logits = np.array(logits, dtype=np.float32)
        self._ctx = self

    def tokenize(self, data, add_bos=False, special=False):
        return [ord(c) for c in data.decode()]

    def n_vocab(self):
        return len(self._logits)

    def eval(self, tokens):
        self.evaluated.append(list(tokens))
        self.n_tokens += len(tokens)

    def get_logits_ith(self, i):
        return self._logits.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def test_engine_reads_the_choice_distribution_at_the_value_position():
    logits = np.full(256, -50.0)
    logits[ord("y")], logits[ord("n")] = 2.0, 0.0
    llama = _ScoringLlama("PROMPT", logits)
    schema = {"properties": {"reason": {"type": "string"}, "verdict": {"enum": ["yes", "no"], "type": "string"}}}
    text = '{"reason": "it says so", "verdict": "yes"}'
    [entry] = llama_engine.choice_logprobs(llama, len("PROMPT"), text, schema)
    # only the generated text up to the value's opening quote is evaluated again
    assert "".join(map(chr, llama.evaluated[0])) == '{"reason": "it says so", "verdict": "'
    probs = {top.token: math.exp(top.logprob) for top in entry.top}
    assert entry.token == "yes" and probs["yes"] == pytest.approx(math.exp(2) / (math.exp(2) + 1), rel=1e-4)
    assert llama_engine.enum_fields(schema) == {"verdict": ("yes", "no")}
    assert llama_engine.choice_logprobs(llama, 6, '{"reason": "cut off', schema) is None


# -- extraction and scores -----------------------------------------------------------------------


def test_extraction_signals_compare_in_code_and_ignore_answers_not_in_the_context():
    assert extraction_signals(["1889"], CONTEXT, "1889", None) == {
        "e_any": 1.0,
        "e_support": 1.0,
        "e_other": 0.0,
        "e_original": 0.0,
    }
    two = extraction_signals(["1889", "in 1930"], CONTEXT, "1889", None)
    assert two["e_support"] == 1.0 and two["e_other"] == 1.0
    # "1887" is nowhere in the context: answered from memory, not read off it
    assert extraction_signals(["1887"], CONTEXT, "1889", None)["e_any"] == 0.0
    assert extraction_signals(["1889"], CONTEXT, "unknown", "1889")["e_original"] == 1.0


def test_scores_per_method_and_missing_signals():
    assert score("answer", {"e_support": 1.0, "e_other": 0.0}, {"method": "extract"}) == 1.0
    assert score("answer", {"e_support": 1.0, "e_other": 1.0}, {"method": "extract"}) == 0.5
    assert score("unanswerable", {"e_any": 1.0, "e_original": 1.0}, {"method": "extract"}) == 0.0
    assert score("answer", {"p_support": 0.9, "p_other": 0.5}, {"method": "checks"}) == pytest.approx(0.45)
    assert score("answer", {"r_support": 0.9}, {"method": "reasoned"}) == 0.0  # only-if never asked: invalid
    assert score("answer", {}, {"method": "checks"}) is None
    assert score("answer", {"c_expected": 0.7}, {"method": "choose"}) == 0.7
    assert score("unanswerable", {"c_original": 0.9}, {"method": "choose"}) == pytest.approx(0.1)
    stacked = {"method": "stacked", "weights": {"answer": [0.0, 2.0, -2.0, 0.0, 0.0]}}
    assert score("answer", {"c_expected": 1.0, "c_none": 0.0, "e_support": 0, "e_other": 0}, stacked) > 0.8
    assert score("answer", {"c_expected": 0.0, "c_none": 1.0, "e_support": 0, "e_other": 0}, stacked) < 0.2
    with pytest.raises(ValueError, match="unknown judge method"):
        CaseJudge({"method": "vibes"})


def _resolved(lm):
    return ResolvedLM("judge", LMConfig(name="dummy/judge"), lm, None)


def test_extract_judge_end_to_end_with_a_scripted_lm():
    lm = dspy.utils.DummyLM([{"answers": ["1889", "1930"]}, {"answers": ["1889"]}], adapter=dspy.JSONAdapter())
    judge = CaseJudge({"method": "extract", "thresholds": {"answer": 0.75, "unanswerable": 0.75}})
    record = {
        "id": "x",
        "question": "when was the tower finished",
        "context": CONTEXT,
        "answers": ["1889"],
        "status": "accepted",
    }
    two = judge_record(_resolved(lm), judge, record)
    assert two["status"] == "rejected:judge_only_if" and two["judge"]["p_valid"] == 0.5
    assert two["judge"]["method"] == "extract" and "1930" in two["judge"]["if_reason"]
    one = judge_record(_resolved(lm), judge, {**record, "context": CONTEXT + " "})
    assert one["status"] == "accepted" and one["judge"]["signals"]["e_other"] == 0.0
    unparsed = judge_record(
        _resolved(dspy.utils.DummyLM([{"nothing": 1}] * 3, adapter=dspy.JSONAdapter())), judge, record
    )
    assert unparsed["status"] == "error:judge_unparsed"


def test_option_probabilities_read_the_letters_and_fall_back_to_the_choice():
    logprobs = {
        "content": [
            {"token": "{", "logprob": 0.0, "top_logprobs": []},
            {
                "token": "B",
                "logprob": math.log(0.6),
                "top_logprobs": [
                    {"token": "B", "logprob": math.log(0.6)},
                    {"token": "A", "logprob": math.log(0.2)},
                    {"token": "D", "logprob": math.log(0.1)},
                ],
            },
        ]
    }
    assert option_probabilities(logprobs, "B", 3) == pytest.approx([0.25, 0.75, 0.0])  # D is past the options
    assert option_probabilities(None, "C", 3) == [0.0, 0.0, 1.0]  # a provider without logprobs


def test_choice_rivals_are_grounded_distinct_and_never_the_focus():
    found = ["1930", "in 1930", "1889", "1887", "Paris", "the Champ de Mars", "Millions"]
    assert choice_rivals(found, CONTEXT, "1889") == ["1930", "Paris"]  # 1887 is not in the context
    a = ordered_options(["1889", "1930", "Paris"], "when")
    assert a == ordered_options(["Paris", "1930", "1889"], "when")  # where the expected one stands is not a tell
    assert [s for s in rest_of_context(CONTEXT, ["1889"]) if "1889" in s] == []


def test_choose_judge_end_to_end_with_a_scripted_lm():
    question = "when was the tower finished"
    letters = dict(zip(ordered_options(["1889", "1930"], question), "AB", strict=True))
    script = [
        {"answers": ["1930"]},
        {"choice": letters["1889"]},  # rest of context, then the choice
        {"answers": ["1930"]},
        {"choice": letters["1930"]},
    ]
    lm = dspy.utils.DummyLM(script, adapter=dspy.JSONAdapter())
    judge = CaseJudge({"method": "choose", "thresholds": {"answer": 0.5, "unanswerable": 0.5}})
    record = {"id": "x", "question": question, "context": CONTEXT, "answers": ["1889"], "status": "accepted"}
    ok = judge_record(_resolved(lm), judge, record)
    assert ok["status"] == "accepted" and ok["judge"]["signals"]["c_expected"] == 1.0
    other = judge_record(_resolved(lm), judge, {**record, "context": CONTEXT + " "})
    assert other["status"] == "rejected:judge_only_if" and other["judge"]["signals"]["c_other"] == 1.0
    # an expected answer the context names in no form: not supported, and no call spent on it
    absent = judge_record(
        _resolved(dspy.utils.DummyLM([], adapter=dspy.JSONAdapter())), judge, {**record, "answers": ["1925"]}
    )
    assert absent["status"] == "rejected:judge_if" and absent["judge"]["signals"]["c_none"] == 1.0
    assert NONE_OPTION == "none of these"


def test_choose_judge_on_unanswerable_cases_asks_about_the_removed_answer():
    question = "when was the tower finished"
    letters = dict(zip(ordered_options(["1889"], question) + [NONE_OPTION], "AB", strict=True))
    judge = CaseJudge({"method": "choose", "thresholds": {"answer": 0.5, "unanswerable": 0.5}})
    record = {
        "id": "u",
        "question": question,
        "context": CONTEXT,
        "answers": ["unknown"],
        "original_answers": ["1889"],
        "status": "accepted",
        "judge_kind": "unanswerable",
    }
    still = dspy.utils.DummyLM([{"answers": []}, {"choice": letters["1889"]}], adapter=dspy.JSONAdapter())
    out = judge_record(_resolved(still), judge, record)
    assert out["status"] == "rejected:judge_only_if" and out["judge"]["signals"]["c_original"] == 1.0
    gone = dspy.utils.DummyLM([{"answers": []}, {"choice": letters[NONE_OPTION]}], adapter=dspy.JSONAdapter())
    out = judge_record(_resolved(gone), judge, {**record, "context": CONTEXT + " "})
    assert out["status"] == "accepted" and out["judge"]["p_valid"] == 1.0


def test_a_multiple_choice_case_is_judged_on_its_own_options_with_the_bare_question():
    from programs.judge import OPTION_LETTERS
    from programs.multiple_choice import lettered

    question, options = "when was the tower finished", ["1930", "1889", "1925"]
    letters = dict(zip(ordered_options(options, question) + [NONE_OPTION], OPTION_LETTERS, strict=False))
    lm = dspy.utils.DummyLM([{"choice": letters["1889"]}, {"choice": letters["1930"]}], adapter=dspy.JSONAdapter())
    judge = CaseJudge({"method": "stacked", "weights": {}, "thresholds": {"option": 0.5}})
    record = {
        "id": "cf",
        "question": lettered(question, ["A", "B", "C"], options),
        "options": options,
        "choice_labels": ["A", "B", "C"],
        "context": CONTEXT,
        "answers": ["1889"],
        "status": "accepted",
    }
    ok = judge_record(_resolved(lm), judge, record)
    assert ok["status"] == "accepted" and ok["judge"]["signals"]["c_expected"] == 1.0
    prompt = lm.history[0]["messages"][-1]["content"]
    assert "C. 1925" not in prompt and "when was the tower finished" in prompt  # the options once, re-lettered
    assert all(f"{letters[o]}) {o}" in prompt for o in options) and f"{letters[NONE_OPTION]}) {NONE_OPTION}" in prompt
    other = judge_record(_resolved(lm), judge, {**record, "context": CONTEXT + " "})
    assert other["status"] == "rejected:judge_only_if" and other["judge"]["signals"]["c_other"] == 1.0
    assert len(lm.history) == 2  # one call per case: no extraction for a multiple choice


# -- controls ------------------------------------------------------------------------------------


def test_controls_cover_every_condition_with_known_verdicts():
    pool = [_example(i, "when did the war end", f"Some text {i} .", str(1800 + i)) for i in range(20)]
    example = _example(99, "when was the eiffel tower finished", CONTEXT, "1889")
    controls = {c["condition"]: c for c in ctl.controls_for(example, pool)}
    assert set(controls) == set(ctl.CONDITIONS)
    two = controls["two_answers"]
    assert two["answers"] == ["1889"] and not two["expected_valid"]
    other_year = [y for y in (str(1800 + i) for i in range(20)) if y in two["context"]]
    assert len(other_year) == 1 and "1889" in two["context"]
    removed = controls["answer_removed"]
    assert "1889" not in removed["context"] and removed["expected_valid"] and removed["judge_kind"] == "unanswerable"
    assert controls["other_answer"]["answers"][0] not in CONTEXT and not controls["other_answer"]["expected_valid"]
    assert {c["half"] for c in controls.values()} == {ctl.half_of("s99")}
    # "when" needs a date-like answer: a name never stands in for a year
    assert ctl._same_type_answers(example, [_example(1, "who built it", "x", "Gustave Eiffel")]) == []
    # an answer of no checkable type (date, number, name) gets no two-answer control: "the eighth
    # season" is no second answer to "what is bigger, the atlantic or the pacific"
    ocean = _example(
        2, "what is bigger the atlantic or pacific ocean", "The Pacific Ocean is the largest .", "The Pacific Ocean"
    )
    assert ctl._same_type_answers(ocean, [_example(3, "what is the eighth season", "x", "the eighth season")]) == []
    guitar = _example(
        4, "what is the song tennessee flattop box about", "It is about a guitar .", "a steel stringed acoustic guitar"
    )
    assert ctl._same_type_answers(guitar, [_example(5, "what is a lute", "x", "a plucked string instrument")]) == []


def test_option_controls_ask_the_same_multiple_choice_with_the_gold_or_another_option_expected():
    from programs.multiple_choice import unlettered

    pool = [
        _example(
            i, "when did the war end", f"The war in Flanders ended in {1800 + i} after a long siege .", str(1800 + i)
        )
        for i in range(20)
    ]
    seen_distractor = False
    for j in range(12):
        example = _example(100 + j, "when was the eiffel tower finished", CONTEXT, "1889")
        controls = {c["condition"]: c for c in ctl.controls_for(example, pool)}
        gold, other = controls["option_gold"], controls["option_other"]
        assert gold["expected_valid"] and not other["expected_valid"]
        assert gold["judge_kind"] == other["judge_kind"] == "option"
        assert gold["context"] == other["context"] and gold["options"] == other["options"]
        assert 3 <= len(gold["options"]) <= 4 and "1889" in gold["options"]
        assert gold["answers"] == ["1889"] and other["answers"][0] in gold["options"] and other["answers"][0] != "1889"
        assert other["answers"][0] not in CONTEXT and other["inserted_answer"] == other["answers"][0]
        assert other["options"][other["choice_labels"].index(other["answer_label"])] == other["answers"][0]
        assert unlettered(gold["question"], gold["choice_labels"], gold["options"]) == example.question
        # the harder half: a sentence from another passage names the other option without answering
        if gold["context"] != CONTEXT:
            seen_distractor = True
            assert f"The war in Flanders ended in {other['answers'][0]} after" in gold["context"]
            assert all(s in gold["context"] for s in CONTEXT.split(" . "))
    assert seen_distractor
    # a sentence that opens with a pronoun, or talks about the question's own subject, is no distractor
    assert ctl._distractor_sentence(_example(1, "q", "It ended in 1850 .", "1850"), "1850", "when did it end") is None
    tower = _example(2, "q", "The Eiffel tower was finished again in 1850 .", "1850")
    assert ctl._distractor_sentence(tower, "1850", "when was the eiffel tower finished") is None


def test_answer_removed_control_removes_every_form_of_the_answer():
    context = (
        "The treaty was signed on March 31 , 1889 in Paris . Copies were printed in Lyon . "
        "The archive lists the date as ( 1889 - 03 - 31 ) . Nobody objected at the time . "
        "Historians later studied the treaty at length and wrote many books about its terms and effects ."
    )
    example = _example(7, "when was the treaty signed", context, "March 31 , 1889")
    removed = ctl._answer_removed_context(example)
    assert removed and "1889" not in removed and "Lyon" in removed


def test_calibration_seeds_are_disjoint_from_what_generation_configs_perturb():
    from experiments.config_loader import load_config
    from experiments.runner import load_data

    seeds = ctl.calibration_seeds("nq")
    generated = load_data(load_config("experiments/configs/nq_answer_swap.yaml", {"data.limit": 200})).examples
    assert not {e.id for e in seeds} & {e.id for e in generated}
    study = load_data(load_config("experiments/configs/judge_calibration.yaml")).examples
    assert [e.id for e in study[:5]] == [e.id for e in seeds[:5]]
    halves = [ctl.half_of(e.id) for e in seeds[:200]]
    assert 70 < halves.count("held_out") < 130
    held = ctl.control_cases(seeds, 3, pool=ctl.other_answer_pool("nq"), half="held_out")
    assert {c["half"] for c in held} == {"held_out"}
    assert all(sum(c["condition"] == k for c in held) == 3 for k in ctl.CONDITIONS)


def test_the_stored_controls_are_what_the_code_makes():
    """A run reads the stored set (data/judge_controls/); after a change to how controls are made, run
    `python3 scripts/make_judge_controls.py` again."""
    from experiments.judging.control_set import PER_CONDITION, read_controls, read_header

    assert read_header("nq")["per_condition"] == PER_CONDITION
    assert read_controls("nq", 3) == ctl.held_out_controls("nq", 3)


# -- fitting -------------------------------------------------------------------------------------


def _control(i, condition, half, **signals):
    return {
        "id": f"{i}:{condition}",
        "condition": condition,
        "half": half,
        "expected_valid": ctl.VALID[condition],
        "judge": {"signals": signals},
    }


def _study():
    """Extraction separates every condition; reasoned rejects half of the gold controls."""
    rows = []
    for i in range(40):
        half = "calibration" if i % 2 else "held_out"
        reason_only = 0.9 if i % 4 < 2 else 0.1
        rows += [
            _control(
                i,
                "gold_answer",
                half,
                e_support=1,
                e_other=0,
                e_any=1,
                e_original=1,
                r_support=0.95,
                r_only=reason_only,
            ),
            _control(i, "other_answer", half, e_support=0, e_other=1, e_any=1, e_original=0, r_support=0.05),
            _control(i, "two_answers", half, e_support=1, e_other=1, e_any=1, e_original=1, r_support=0.9, r_only=0.2),
            _control(
                i,
                "answer_removed",
                half,
                e_any=i % 3 == 0,
                e_original=0,
                e_support=0,
                e_other=0,
                r_answerable=0.2,
                r_support_original=0.1,
            ),
            _control(
                i,
                "original_as_unanswerable",
                half,
                e_any=1,
                e_original=1,
                e_support=0,
                e_other=1,
                r_answerable=0.6,
                r_support_original=0.8,
            ),
        ]
    return rows


def test_fit_chooses_on_the_calibration_half_and_reports_the_held_out_half():
    fitted = fit_and_measure(_study())
    assert fitted["chosen"] == "extract"
    extract = fitted["results"]["extract"]
    assert all(a["accuracy"] == 1.0 for a in extract["held_out"].values() if a["n"])
    assert extract["params"]["thresholds"]["answer"] == pytest.approx(0.75)
    as_is = fitted["results"]["reasoned_as_is"]
    assert as_is["held_out"]["gold_answer"]["accuracy"] == 0.5 and "thresholds" not in as_is["params"]
    assert extract["auc"]["gold_answer_vs_two_answers"] == 1.0
    assert "checks" not in fitted["results"]  # no checks signals were collected
    table = markdown(fitted)
    assert "**(chosen)**" in table and table.count("\n") == 1 + len(fitted["results"])


def test_a_condition_every_method_scores_alike_does_not_decide_the_method():
    # multiple-choice controls are judged by the same choice whatever the method: make them the worst
    # condition of every method, half right, and the choice must still follow the other conditions
    options = [
        _control(900 + i, c, half, c_expected=p)
        for half in ("calibration", "held_out")
        for i, (c, p) in enumerate(
            [("option_gold", 0.9), ("option_gold", 0.2), ("option_other", 0.1), ("option_other", 0.8)]
        )
    ]
    fitted = fit_and_measure(_study() + options)
    assert fitted["chosen"] == "extract"
    assert {
        min(r["calibration"][c]["accuracy"] for c in ("option_gold", "option_other"))
        for r in fitted["results"].values()
    } == {0.5}


def test_threshold_maximises_the_worst_condition_not_the_overall_accuracy():
    rows = [_control(i, "gold_answer", "calibration") for i in range(4)] + [
        _control(i, c, "calibration") for i in range(10) for c in ("other_answer", "two_answers")
    ]
    scores = [0.6] * 4 + [0.1, 0.7] * 10
    # overall accuracy prefers rejecting everything above 0.65; the worst condition needs 0.55
    assert fit_threshold(rows, scores, "answer") == pytest.approx(0.35)
    assert auc(rows, scores, "gold_answer", "other_answer") == 1.0
    assert auc(rows, scores, "gold_answer", "two_answers") == 0.0


def test_calibration_metrics_per_condition_and_warning(caplog):
    controls = ctl.control_cases(ctl.calibration_seeds("nq"), 2, pool=ctl.other_answer_pool("nq"), half="held_out")
    judged = [{**c, "status": "accepted"} for c in controls]
    metrics = calibration_metrics(judged)
    assert metrics["judge_calibration.gold_answer.accuracy"] == 1.0
    assert metrics["judge_calibration.two_answers.accuracy"] == 0.0
    assert metrics["judge_calibration.worst_condition_accuracy"] == 0.0
    lm = dspy.utils.DummyLM([{"answers": []}] * 40, adapter=dspy.JSONAdapter())
    with caplog.at_level("WARNING"):
        result = calibrate(_resolved(lm), CaseJudge({"method": "extract"}), 2, min_accuracy=0.7, progress=False)
    # a judge that reads no answer anywhere: unanswerable looks valid everywhere, answers never do
    assert result["judge_calibration.answer_removed.accuracy"] == 1.0
    assert result["judge_calibration.gold_answer.accuracy"] == 0.0
    assert any("gold_answer" in r.getMessage() for r in caplog.records if "BELOW THRESHOLD" in r.getMessage())


# -- parameters ----------------------------------------------------------------------------------


def test_params_resolution(tmp_path, monkeypatch):
    from experiments.judging import params as params_module
    from experiments.lm.registry import build_lm

    local = build_lm(LMConfig(name="qwen2.5-1.5b"), "judge")
    fitted = {
        "judge": {"file_sha256": local.identity()["file_sha256"]},
        "params": {"method": "extract", "thresholds": {"answer": 0.75, "unanswerable": 0.25}},
    }
    monkeypatch.setattr(params_module, "SHIPPED", tmp_path / "experiments" / "judging" / "params")
    params_module.SHIPPED.mkdir(parents=True)
    (params_module.SHIPPED / "qwen2.5-1.5b.json").write_text(json.dumps(fitted))
    auto = resolve_params(local, "auto")
    assert auto["method"] == "extract" and auto["source"].endswith("qwen2.5-1.5b.json")
    assert make_judge(local).method == "extract" and make_judge(local, "reasoned").method == "reasoned"
    (params_module.SHIPPED / "qwen2.5-1.5b.json").write_text(json.dumps({**fitted, "judge": {"file_sha256": "0" * 64}}))
    assert resolve_params(local, "auto")["method"] == "reasoned"  # fitted for another file: not used
    assert resolve_params(_resolved(None), "auto")["method"] == "reasoned"  # no shipped params for this judge
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"params": {"method": "vibes"}}))
    with pytest.raises(JudgeParamsError, match="params.method"):
        resolve_params(local, str(bad))
    with pytest.raises(JudgeParamsError, match="no such"):
        resolve_params(local, str(tmp_path / "missing.json"))
    assert describe(auto)["judge.threshold.answer"] == 0.75 and describe(auto)["judge.method"] == "extract"


def test_params_per_task_and_per_method(tmp_path, monkeypatch):
    from experiments.judging import params as params_module
    from experiments.lm.registry import build_lm

    local = build_lm(LMConfig(name="qwen2.5-1.5b"), "judge")
    fitted = {
        "judge": {"file_sha256": local.identity()["file_sha256"]},
        "params": {"method": "stacked", "weights": {"answer": [0.0] * 5}, "thresholds": {"answer": 0.7}},
        "task_methods": {"answer_swap": "extract"},
        "methods": {
            "extract": {"params": {"method": "extract", "thresholds": {"answer": 0.75}}},
            "choose": {"params": {"method": "choose", "thresholds": {"answer": 0.56}}},
        },
    }
    monkeypatch.setattr(params_module, "SHIPPED", tmp_path / "experiments" / "judging" / "params")
    params_module.SHIPPED.mkdir(parents=True)
    (params_module.SHIPPED / "qwen2.5-1.5b.json").write_text(json.dumps(fitted))
    # auto: the method measured for the task, else the study's choice
    swap = resolve_params(local, "auto", "answer_swap")
    assert swap["method"] == "extract" and swap["thresholds"] == {"answer": 0.75}
    assert "measured for answer_swap" in swap["source"]
    assert resolve_params(local, "auto", "counterfactual")["method"] == "stacked"
    assert resolve_params(local, "auto")["method"] == "stacked"
    # a method asked for by name: that method's fitted parameters, whatever the task
    assert resolve_params(local, "auto", "answer_swap", "stacked")["thresholds"] == {"answer": 0.7}
    assert resolve_params(local, "auto", "unanswerable", "choose")["thresholds"] == {"answer": 0.56}
    assert resolve_params(local, "auto", "answer_swap", "reasoned")["method"] == "reasoned"
    with pytest.raises(JudgeParamsError, match="no fitted parameters for judge method 'checks'"):
        resolve_params(local, "auto", "answer_swap", "checks")
    with pytest.raises(JudgeParamsError, match="judge_params: reasoned"):
        resolve_params(local, "reasoned", "answer_swap", "extract")
    # a calibration run's file has no task_methods: its choice judges every task
    study = tmp_path / "judge_params.json"
    study.write_text(json.dumps({k: v for k, v in fitted.items() if k != "task_methods"}))
    assert resolve_params(local, str(study), "answer_swap")["method"] == "stacked"
    assert resolve_params(local, str(study), "answer_swap", "extract")["method"] == "extract"


def test_shipped_judge_reads_answer_swaps_with_one_call_and_keeps_the_stacked_judge_for_unanswerable():
    """The shipped qwen2.5-1.5b parameters judge the tasks where the extraction carries the stacked judge's
    decision with that one call (docs/results/judge.md); unanswerable keeps the stacked judge (it catches
    more rewrites that still give the answer) and counterfactual the study's choice."""
    from experiments.judging.params import judge_from
    from experiments.lm.registry import build_lm

    local = build_lm(LMConfig(name="qwen2.5-1.5b"), "judge")
    for task in ("answer_swap", "inconsistent", "context_enrich"):
        assert resolve_params(local, "auto", task)["method"] == "extract"
    for task in ("unanswerable", "counterfactual"):
        assert resolve_params(local, "auto", task)["method"] == "stacked"
    swap = {"id": "x", "question": "when was the tower finished", "context": CONTEXT, "answers": ["1889"]}
    cases = [
        ({**swap, "status": "accepted"}, ["1889"], "accepted"),
        ({**swap, "status": "accepted"}, ["1889", "1930"], "rejected:judge_only_if"),
    ]
    for record, extracted, status in cases:
        lm = dspy.utils.DummyLM([{"answers": extracted}] * 3, adapter=dspy.JSONAdapter())
        judged = judge_record(_resolved(lm), judge_from(resolve_params(local, "auto", "answer_swap")), record)
        assert judged["status"] == status, (extracted, judged["judge"])
        assert len(lm.history) == 1  # one extraction call, no choice and no second extraction


def test_shipped_parameters_are_what_the_shipped_study_fits():
    """The default judge's parameters are reproducible from the recorded study, with no LM call."""
    from experiments.judging.params import SHIPPED

    fitted_file, signals_file = SHIPPED / "qwen2.5-1.5b.json", SHIPPED / "qwen2.5-1.5b.signals.jsonl"
    shipped = json.loads(fitted_file.read_text())
    records = [json.loads(line) for line in signals_file.read_text().splitlines()]
    assert {r["condition"] for r in records} == set(ctl.CONDITIONS)
    refit = fit_and_measure(records)
    assert refit["chosen"] == shipped["chosen"] and refit["params"]["method"] == shipped["params"]["method"]
    # Equal to the last few bits only: a fresh install's numpy / scikit-learn round the logistic fit's
    # last digits differently (seen: -1.093894763436768 against -1.0938947634367677).
    for kind, weights in shipped["params"].get("weights", {}).items():
        assert refit["params"]["weights"][kind] == pytest.approx(weights, rel=1e-9, abs=1e-12)
    assert refit["params"]["thresholds"] == pytest.approx(shipped["params"]["thresholds"], rel=1e-9)
    assert set(refit["params"]) == set(shipped["params"])
    for variant, result in shipped["methods"].items():
        for condition, accuracy in result["held_out"].items():
            assert refit["results"][variant]["held_out"][condition]["n"] == accuracy["n"]
            assert refit["results"][variant]["held_out"][condition]["accuracy"] == pytest.approx(accuracy["accuracy"])


def test_a_run_judges_with_the_method_of_the_generator_it_runs(isolated):
    from experiments.config import CONFIG_DIR
    from experiments.config_loader import load_config
    from experiments.resolved_run import resolve_run

    def judged_task(config):
        return resolve_run(config).judged_task

    assert judged_task(load_config(CONFIG_DIR / "nq_unanswerable.yaml")) == "unanswerable"
    compare = load_config(CONFIG_DIR / "nq_compare_pivots.yaml")
    assert judged_task(compare) == compare.options.get("generator", "answer_swap") == "answer_swap"
    optimize = load_config(CONFIG_DIR / "nq_optimize_answer_swap.yaml")
    assert judged_task(optimize.model_copy(update={"options": {**optimize.options, "generator": "unanswerable"}})) == (
        "unanswerable"
    )
