"""Run ids of the shipped configs are pinned: a refactor of the config schema, its validation or
the task registry must not turn a shipped config into a new run (its stored cases would no longer
be found, and a config from before could not be reproduced). The values are the digests the
configs had at commit 0b6e306; a deliberate change to a config's identity updates them here."""

from pathlib import Path

import pytest

from experiments.config import CONFIG_DIR
from experiments.config_loader import load_config

DIGESTS = {
    "arc_counterfactual.yaml": "25237e1b896d36fde509786a9d0bf910cbc3c0fe89fed4cfe2b6e46faacee0f4",
    # bench_local.yaml: changed on purpose (options.knowledge_conflict turned on), was ffe53603d99b…
    "bench_local.yaml": "9beff997efdf67ef1f92003653c192891581cf91441b0d237ed204ec88461c67",
    "bench_local_quick.yaml": "f57a580a0e6f2b480f4d1ae6212e0b032440eec8adc9fda96de04fdf8575bd91",
    "judge_calibration.yaml": "8d7330811bf325ab6a0f5cd9cdd49d5f47def6ece7a889f7e1b7b7ca5e8829e6",
    "nq_answer_swap.yaml": "f25972d03cf4a0b66811f3f808573a113e10354b85e5cdb76218c7a89bd65c32",
    "nq_answer_swap_eval.yaml": "1bfeef07779335a5023c2ea3f0059356e9e873bf976dbfec2475c5c1fd6824ba",
    "nq_compare_pivots.yaml": "96abf3ccb4cf1b290f34c2aceff0c7ccf61d60c0b9152cf734e67ef8b7e634b9",
    "nq_context_enrich.yaml": "3c592aa2672c0fb15c07ad989db520a1b91b2c2a316a328f8d10dc4f08b0bdac",
    "nq_inconsistent.yaml": "6cd0bc41af82e3a43c820717a0ec2e51738a8380297b5fdc2140b4572e45e8a1",
    "nq_optimize_answer_swap.yaml": "20dcb12750a38291df9e3fffa9de58679a22884e904199b7d0743afd78cfdccf",
    # nq_optimize_compare(_unanswerable).yaml: changed on purpose (12 training and 12 validation seeds, the strength
    # curve compiled with MIPROv2), were 75efbc5398d5… and f676c52690…
    "nq_optimize_compare.yaml": "0100ae4ef75537a65ebc7332db273b46609a2537aae07620128cb85f9059f249",
    "nq_optimize_compare_unanswerable.yaml": "aea4c891517c2a7de2d95610031f3cdf7fa1fc677fe2d0861098ad72967bd9b3",
    "nq_seed_selection.yaml": "de4a79e25edfe690381dc4abb7084759261bba3e5a660b29f1f67418b20e055a",
    "nq_unanswerable.yaml": "9250d20e3b37ab87fc7cfd62a14633a24116434d0d3e3202e6173ac5b1c75e73",
}


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_shipped_config_keeps_its_run_id(name):
    assert load_config(Path(CONFIG_DIR / name)).digest() == DIGESTS[name]
