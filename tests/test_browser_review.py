"""The Review queue page in a real browser (Debian chromium, Playwright), without login, as one
reviewer works it: a name and Enter, then a decision key right away (it must decide, not end up in
the name); the decision controls in view without scrolling at 1400x900 and at 1024 px wide; a note
in one key (M, then Esc to leave it); a reload keeps the reviewer and the case.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from browser_util import guard_page, press_when_ready, start_app, type_name, wait_idle
from queue_world import make_queue_world

from evalcore import LabelStore, Store
from evalcore import review as R

pytestmark = pytest.mark.browser

KEYS = {"pass": "p", "fail": "f", "correct": "1", "partial": "2", "wrong": "3"}


def case_of(page) -> tuple[str, str, str]:
    q = parse_qs(urlsplit(page.url).query)
    return q["item"][0], q.get("round", ["1"])[0], q["criterion"][0]


def first_key(page) -> str:
    label = page.locator('[data-testid="stBaseButton-primary"]').first.inner_text().split("\n")[0]
    value = label.removeprefix("Revise: ").strip()
    return KEYS.get(value, value)


@pytest.fixture
def world(tmp_path):
    data = make_queue_world(tmp_path / "data")
    state = tmp_path / "state"
    R.build_queue(Store(data, state), "qg", audit_rate=1.0, seed=3)
    return data, state


@pytest.mark.parametrize("width", [1400, 1024])
def test_name_enter_key_layout_note_and_reload(browser, world, width):
    data, state = world
    outside: list[str] = []
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    guard_page(page, outside)
    with start_app(data, state) as base:
        page.goto(f"{base}/review?gen=qg")
        type_name(page, "hank")
        page.keyboard.press("z")  # at once: no key may reach the name ("hankz")
        page.get_by_text("Keys: ").first.wait_for(timeout=20_000)
        wait_idle(page)
        first = case_of(page)
        # the decision controls are in view without scrolling, above the item they decide
        for name in ("review_decide", "Undo my last edit", "Next case"):
            loc = (page.locator('[data-testid="stBaseButton-primary"]').first if name == "review_decide"
                   else page.get_by_role("button", name=name).first)
            b = loc.bounding_box()
            assert b is not None and b["y"] + b["height"] <= 900 and b["x"] + b["width"] <= width, (name, b)
        # a note in one key, and Esc gives the keys back
        # the page's key script is in and no field has the focus (Streamlit's own rule for shortcut keys)
        page.wait_for_function("() => document.__evalcoreNoteKeys === true && !['INPUT', 'TEXTAREA']"
                               ".includes((document.activeElement || {}).tagName)", timeout=20_000)
        page.keyboard.press("m")
        page.wait_for_function("() => (document.activeElement.getAttribute('aria-label') || '').startsWith('Note')")
        page.keyboard.type("checked against the reference")
        page.keyboard.press("Escape")
        page.wait_for_function("() => document.activeElement.tagName !== 'TEXTAREA'")
        label = page.locator('[data-testid="stBaseButton-primary"]').first.inner_text().split("\n")[0].strip()
        press_when_ready(page, first_key(page), label)
        page.wait_for_function("(c) => new URL(location.href).searchParams.get('item') + '|' + "
                               "new URL(location.href).searchParams.get('criterion') !== c",
                               arg=f"{first[0]}|{first[2]}", timeout=20_000)
        wait_idle(page)
        second = case_of(page)
        # a reload keeps the reviewer and the case
        page.reload()
        page.get_by_text("Keys: ").first.wait_for(timeout=30_000)
        wait_idle(page)
        assert page.get_by_text("Reviewing as").first.is_visible()
        assert "hank" in page.get_by_text("Reviewing as").first.inner_text()
        assert case_of(page) == second
        assert page.get_by_label("Your name").count() == 0
    ctx.close()
    assert outside == []
    (e,) = LabelStore(Store(data, state)).history()
    assert (e["reviewer"], e["item_id"], e["criterion"]) == ("hank", first[0], first[2])
    assert e["note"] == "checked against the reference"


def test_a_revoked_adjudicator_key_press_is_refused_and_nothing_is_recorded(browser, tmp_path):
    """Issue 38.3: the Adjudicate toggle on, the roles file takes the role away, the next key press is
    refused in one line on the page (the core checks the role when it writes) and nothing is recorded."""
    data = make_queue_world(tmp_path / "data")
    state = tmp_path / "state"
    state.mkdir()
    (state / "roles.toml").write_text('[users."hank@example.org"]\nroles = ["reviewer", "adjudicator"]\n')
    store = Store(data, state)
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=2)
    case = next(c for c in R.cases(store, q["queue_id"]) if c["criterion"] == "ok")
    key = (case["item_id"], case["gen_round"], case["criterion"])
    R.decide(store, q["queue_id"], *key, "ann", value="pass")
    R.decide(store, q["queue_id"], *key, "ben", value="fail")  # a disagreement waits for an adjudicator
    before = len(LabelStore(store).history())
    outside: list[str] = []
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    guard_page(page, outside)
    with start_app(data, state) as base:
        page.goto(f"{base}/review?gen=qg")
        type_name(page, "hank@example.org")
        toggle = page.get_by_text("Adjudicate: cases whose reviewers disagree").first
        toggle.wait_for(timeout=30_000)
        wait_idle(page)
        toggle.click()
        page.evaluate("() => document.activeElement && document.activeElement.blur()")  # keys go to the page
        page.wait_for_function("() => new URL(location.href).searchParams.get('item') !== null", timeout=30_000)
        wait_idle(page)
        (state / "roles.toml").write_text('[users."hank@example.org"]\nroles = ["reviewer"]\n')  # revoked, toggle still on
        label = page.locator('[data-testid="stBaseButton-primary"]').first.inner_text().split("\n")[0].strip()
        press_when_ready(page, first_key(page), label)
        refusal = page.locator('[data-testid="stAlertContentError"]').filter(has_text="has no adjudicator role")
        refusal.first.wait_for(timeout=30_000)
        assert "hank@example.org" in refusal.first.inner_text().replace("\u2060", "")  # md_escape keeps @ from linking
    ctx.close()
    assert outside == []
    assert len(LabelStore(store).history()) == before  # nothing recorded
