"""Who is grading without a login, and the pairwise step after the last pair, in a real browser
(Debian chromium driven by Playwright).

* The name is asked once: type it, press Enter, and the text box is replaced by "Grading as NAME"
  with a "Change name" button, so a key pressed at once never reaches the name and the next
  shortcut key grades under the typed name; a reload keeps the reviewer and the pair on screen.
* Undo (U) takes back the last choice and shows that pair again; after the last pair the grading
  keys answer nothing: the probe is entered with its own button; there the same keys answer it
  (issue 39), as its legend says.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import uuid

import pytest
from browser_util import guard_page, press_when_ready, start_app, wait_idle, wait_settled
from test_pairs import make_world

from evalcore import pairwise as P

pytestmark = pytest.mark.browser


def session(tmp_path, n_items: int) -> dict:
    arms = (str(uuid.uuid4()), str(uuid.uuid4()))
    w = make_world(tmp_path, arms, n_items=n_items, seed=4)
    P.make_session(w["store"], "blind-1", [f"{arms[0]}={w['gens'][0]}", f"{arms[1]}={w['gens'][1]}"], n_perm=9,
                   mirror=0.0, keys_dir=tmp_path / "keys")
    return w


def shown_answers(page) -> list[str]:
    """The question, the left and the right answer, once all three are drawn (a script run may
    still be drawing them when the progress line above them is on the page)."""
    blocks = page.locator('[data-testid="stCode"]')
    blocks.nth(2).wait_for(timeout=30_000)
    return blocks.all_inner_texts()


def no_arm(page, arms) -> None:
    low = page.content().lower()
    for a in arms:
        assert a.lower() not in low and a.replace("-", "").lower() not in low


def open_page(browser, base: str, url: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    page.goto(base + url)
    return ctx, page, outside


def test_the_name_then_enter_then_a_key_grades_under_that_name_and_a_reload_keeps_both(browser, tmp_path):
    w = session(tmp_path, 8)
    st, total = w["store"], 8
    with start_app(w["data"], w["state"]) as base:
        ctx, page, outside = open_page(browser, base, "/pairwise_grading?session=blind-1")
        box = page.get_by_role("textbox", name="Your name")
        box.wait_for(timeout=60_000)
        wait_idle(page)
        box.click()
        page.keyboard.type("hank")
        page.keyboard.press("Enter")
        page.keyboard.press("a")  # at once, before the page has answered: must not reach the name
        page.get_by_text("Grading as hank").wait_for(timeout=20_000)
        wait_idle(page)
        assert page.get_by_role("textbox", name="Your name").count() == 0  # the text box is gone
        press_when_ready(page, "a", "Left better")
        page.get_by_text(f"1 of {total} pairs graded by hank").wait_for(timeout=20_000)
        wait_idle(page)
        js = P.JudgmentStore(st)
        assert [(j["reviewer"], j["choice"]) for j in js.current("blind-1")] == [("hank", "left")]
        assert "hanka" not in page.content()
        before = shown_answers(page)  # the question, the left and the right answer
        view = P.pair_view(st, "blind-1", P.progress(st, "blind-1", "hank").next_pair)
        assert len(before) == 3 and " ".join(view.left_text.split()) == " ".join(before[1].split())
        # a reload: the same reviewer, the same pair, and the keys still grade under the name
        page.reload()
        page.get_by_text(f"1 of {total} pairs graded by hank").wait_for(timeout=30_000)
        wait_idle(page)
        assert page.get_by_text("Grading as hank").count() == 1
        assert page.get_by_role("textbox", name="Your name").count() == 0
        assert shown_answers(page) == before
        press_when_ready(page, "d", "Left better")
        page.get_by_text(f"2 of {total} pairs graded by hank").wait_for(timeout=20_000)
        # "Change name" brings the text box back, empty
        page.get_by_role("button", name="Change name").click()
        page.get_by_role("textbox", name="Your name").wait_for(timeout=20_000)
        assert page.get_by_role("textbox", name="Your name").input_value() == ""
        no_arm(page, w["arms"])
        ctx.close()
    assert outside == []
    assert [(j["reviewer"], j["choice"]) for j in P.JudgmentStore(st).current("blind-1")] == [
        ("hank", "left"), ("hank", "right")]


def test_undo_and_the_probe_step_that_no_grading_key_reaches(browser, tmp_path):
    w = session(tmp_path, 4)
    st = w["store"]
    with start_app(w["data"], w["state"]) as base:
        ctx, page, outside = open_page(browser, base, "/pairwise_grading?session=blind-1&reviewer=uma")
        page.get_by_text("0 of 4 pairs graded by uma").wait_for(timeout=60_000)
        for k, key in enumerate("asd", start=1):
            press_when_ready(page, key, "Left better")
            page.get_by_text(f"{k} of 4 pairs graded").wait_for(timeout=20_000)
        third = P.JudgmentStore(st).current("blind-1", "uma")[-1]["pair_id"]
        # U takes back the last choice: that pair is on screen again
        press_when_ready(page, "u", "Undo my last choice")
        page.get_by_text("2 of 4 pairs graded").wait_for(timeout=20_000)
        page.get_by_text("Took back your choice").wait_for(timeout=20_000)
        assert P.progress(st, "blind-1", "uma").next_pair == third
        press_when_ready(page, "a", "Left better")
        page.get_by_text("3 of 4 pairs graded").wait_for(timeout=20_000)
        press_when_ready(page, "s", "Left better")
        page.get_by_text("graded every pair").wait_for(timeout=20_000)
        wait_idle(page)
        # the grading keys pressed once too often answer nothing
        for key in "asdasd":
            page.keyboard.press(key)
        wait_settled(page)
        assert P.JudgmentStore(st).probes("blind-1") == []
        assert page.get_by_role("button", name="X wrote the left one").count() == 0
        # the probe step: entered with its button; there the grading keys answer, as the legend says
        page.get_by_role("button", name="Answer the probe").click()
        page.get_by_role("button", name="X wrote the left one").wait_for(timeout=20_000)
        # the keys pressed before the click were handled before it: still no probe answered, no choice added
        assert P.JudgmentStore(st).probes("blind-1") == []
        assert len(P.JudgmentStore(st).current("blind-1", "uma")) == 4
        page.get_by_text("Keys: A = X wrote the left one, S = can't tell, D = X wrote the right one.").wait_for(
            timeout=20_000)
        press_when_ready(page, "a", "X wrote the left one")
        page.get_by_text("1 of").last.wait_for(timeout=20_000)
        wait_idle(page)
        assert [p["guess"] for p in P.JudgmentStore(st).probes("blind-1", "uma")] == ["left"]
        # a reload stays in the probe step
        page.reload()
        page.get_by_role("button", name="Can't tell").wait_for(timeout=30_000)
        no_arm(page, w["arms"])
        ctx.close()
    assert outside == []
    cur = P.JudgmentStore(st).current("blind-1", "uma")
    assert [j["choice"] for j in cur] == ["left", "same", "left", "same"]
    hist = P.JudgmentStore(st).history("blind-1")
    assert [j["withdrawn"] for j in hist] == [0, 0, 1, 0, 0]
