"""The review page in a real browser (Debian's chromium, headless, through Playwright): keyboard
answers, resume after reload, the verdict file, blind reveal, and no adversarial payload runs."""

import json

import pytest

from experiments.review import load_verdicts
from experiments.review.server import ReviewSession, create_app
from tests.browser import chromium_page, require_chromium, running_server
from tests.review_cases import MARKERS, NOTE_PAYLOAD, POPULATION_IDS, write_run

pytestmark = pytest.mark.browser
RUN = "review-fixture"


def test_keyboard_review_resumes_and_nothing_generated_executes(tmp_path):
    require_chromium()
    write_run(tmp_path / "runs", RUN)
    session = ReviewSession.open(RUN, "alice", runs_root=tmp_path / "runs")
    ids = [str(c["id"]) for c in session.cases]
    verdict_file = tmp_path / "runs" / RUN / "review" / "alice.jsonl"
    dialogs, console_errors = [], []

    with running_server(create_app(session)) as base, chromium_page() as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)

        def answer(key, note=None):
            """Press a verdict key on the current case and wait for the page to come back revealed."""
            if note is not None:
                page.keyboard.press("n")
                assert page.evaluate("document.activeElement.id") == "note"
                page.keyboard.type(note)
                page.keyboard.press("Escape")
            with page.expect_navigation():
                page.keyboard.press(key)
            page.wait_for_selector("#your-verdict")

        page.goto(base + "/")
        assert page.url == base + "/case/0"
        assert page.locator("#progress-text").inner_text() == "0 / 6 answered"
        # Blind: nothing of the judge or the status is on the page before the answer.
        assert page.locator("#judge-hidden").is_visible()
        assert page.locator("#judge").count() == 0 and page.locator("#case-status").count() == 0

        answer("v", note="reads fine " + NOTE_PAYLOAD)
        assert page.locator("#your-verdict").inner_text() == "valid"
        assert page.locator("#case-status").is_visible() and page.locator("#judge-hidden").count() == 0
        assert page.locator("#note").input_value() == "reads fine " + NOTE_PAYLOAD
        assert page.locator("#progress").get_attribute("value") == "1"

        page.keyboard.press("ArrowRight")
        page.wait_for_url(base + "/case/1")
        assert page.locator("#judge-hidden").is_visible()
        answer("i")
        page.keyboard.press("ArrowRight")
        page.wait_for_url(base + "/case/2")
        answer("u")
        page.keyboard.press("ArrowLeft")
        page.wait_for_url(base + "/case/1")

        # Reopening resumes at the first unanswered case.
        page.goto(base + "/")
        assert page.url == base + "/case/3"
        page.reload()
        assert page.locator("#progress-text").inner_text() == "3 / 6 answered"

        lines = [json.loads(line) for line in verdict_file.read_text().splitlines()]
        assert [(x["id"], x["annotator"], x["verdict"]) for x in lines] == [
            (ids[0], "alice", "valid"),
            (ids[1], "alice", "invalid"),
            (ids[2], "alice", "unsure"),
        ]
        assert lines[0]["note"] == "reads fine " + NOTE_PAYLOAD and all(x["at"].endswith("Z") for x in lines)

        # Visit every case, answer the rest (each reveal renders the judge's adversarial reasons too).
        for index in range(3, 6):
            page.goto(f"{base}/case/{index}")
            answer("i")
        page.goto(base + "/case/0")
        answer("i")  # a changed verdict is appended; the later line wins
        for index in range(6):
            page.goto(f"{base}/case/{index}")
            if page.locator("#original").count():  # the collapsed original, opened
                page.locator("#original summary").click()
                assert page.locator("#original .context").is_visible()
            fired = page.evaluate("names => names.filter(n => window[n] !== undefined)", list(MARKERS))
            assert fired == [], f"payload ran on case {index}: {fired}"
            assert page.locator("img").count() == 0 and page.locator("svg").count() == 0
            assert page.locator("a[href^='javascript']").count() == 0

        # The context reads as the model reads it; removed words appear on `d`, and stay on across cases.
        next(i for i in range(6) if page.goto(f"{base}/case/{i}") and page.locator(".context del").count())
        removed = page.locator(".context del").first
        assert not removed.is_visible() and page.locator(".context ins").first.is_visible()
        page.keyboard.press("d")
        assert removed.is_visible() and page.locator("#show-removed").is_checked()
        page.reload()
        assert page.locator(".context del").first.is_visible()
        page.keyboard.press("d")
        assert not page.locator(".context del").first.is_visible()

        xss = ids.index("xss-1:swap")
        page.goto(f"{base}/case/{xss}")
        assert "<script>window.__xss_script=1;alert(1)</script>" in page.locator("#question").inner_text()
        assert "JUDGE-SECRET-REASON" in page.locator("#judge").inner_text()

    assert dialogs == []
    assert not [e for e in console_errors if "Content Security Policy" in e]  # nothing even tried inline
    verdicts = {v.id: v.verdict for v in load_verdicts(verdict_file)}
    assert set(verdicts) == POPULATION_IDS and verdicts[ids[0]] == "invalid" and verdicts[ids[2]] == "unsure"
