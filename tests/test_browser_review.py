"""The Review queue page in a real browser (Debian chromium, Playwright), without login, as one
reviewer works it on the review card: a name and Enter, then a decision key right away (it must
decide, not end up in the name); a note in one key (M, then Esc to leave it); B goes back to the
case just decided and a second key revises it; U undoes; S skips; T asks for a note and takes it
with Enter; a reload keeps the reviewer. The layout at two screen sizes: tests/test_browser_card.py.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import pytest
from browser_util import (
    CARD,
    card_case,
    card_choices,
    card_key,
    card_saved,
    guard_page,
    start_app,
    type_name,
    wait_idle,
)
from queue_world import make_queue_world

from evalcore import LabelStore, Store
from evalcore import review as R

pytestmark = pytest.mark.browser


@pytest.fixture
def world(tmp_path):
    data = make_queue_world(tmp_path / "data")
    state = tmp_path / "state"
    R.build_queue(Store(data, state), "qg", audit_rate=1.0, seed=3)
    return data, state


def test_name_enter_key_note_back_revise_undo_skip_test_wrong_and_reload(browser, world):
    data, state = world
    outside: list[str] = []
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    guard_page(page, outside)
    with start_app(data, state) as base:
        page.goto(f"{base}/review?gen=qg")
        type_name(page, "hank")
        page.keyboard.press("z")  # at once: no key may reach the name ("hankz")
        first = card_case(page)
        # a note in one key, and Esc gives the keys back
        page.keyboard.press("m")
        page.wait_for_function("() => (document.activeElement.getAttribute('aria-label') || '').startsWith('Note')")
        page.keyboard.type("checked against the reference")
        page.keyboard.press("Escape")
        page.wait_for_function("() => document.activeElement.tagName !== 'TEXTAREA'")
        values = card_choices(page)
        page.keyboard.press("1")
        second = card_case(page, first)
        # B: back to the case just decided; 2 revises it (a new edit superseding the first)
        page.keyboard.press("b")
        assert card_case(page) == first and "Your decision: decided " + values[0] in page.inner_text(CARD)
        page.keyboard.press("2")
        assert card_case(page, first) == second  # and on to the case that was next
        card_saved(page)
        # U: undo the revision; the first decision stands again
        page.keyboard.press("u")
        card_saved(page)
        # S skips the second case; T asks for a note first, then takes it with Enter
        page.wait_for_function(f"(c) => document.querySelector('{CARD}').dataset.case !== ''", arg=second)
        shown = card_case(page)
        page.keyboard.press("s")
        third = card_case(page, shown)
        page.keyboard.press("t")
        page.wait_for_function(f"() => document.querySelector('{CARD} .ec-hint').textContent.includes('what is wrong')")
        page.keyboard.type("the reference names the wrong page")
        page.keyboard.press("Enter")
        card_case(page, third)
        card_saved(page)
        # a reload keeps the reviewer
        page.reload()
        card_case(page)
        wait_idle(page)
        assert "hank" in page.get_by_text("Reviewing as").first.inner_text()
        assert page.get_by_label("Your name").count() == 0
    ctx.close()
    assert outside == []
    hist = LabelStore(Store(data, state)).history("qg")
    got = [(e["outcome"], e["value"], (e["item_id"], e["gen_round"], e["criterion"])) for e in hist]
    assert got[:3] == [("decided", values[0], card_key(first)), ("decided", values[1], card_key(first)),
                       ("withdrawn", None, card_key(first))]
    assert hist[0]["reviewer"] == "hank" and hist[0]["note"] == "checked against the reference"
    assert [e["outcome"] for e in hist[3:]] == ["skipped", "test_wrong"]
    assert hist[4]["note"] == "the reference names the wrong page"
    (standing,) = [e for e in LabelStore(Store(data, state)).standing("qg") if e["outcome"] == "decided"]
    assert (standing["edit_id"], standing["value"]) == (hist[0]["edit_id"], values[0])


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
        page.get_by_text("Other reviewers:").first.wait_for(timeout=30_000)  # the disputed case, on the card
        assert card_key(card_case(page)) == (key[0], int(key[1]), key[2])
        (state / "roles.toml").write_text('[users."hank@example.org"]\nroles = ["reviewer"]\n')  # revoked, toggle still on
        wait_idle(page, timeout=60_000)  # the toggle's script run over: the card holds the key, not a stale run
        page.keyboard.press("1")
        # the refusal comes back through a script run: on a busy CI machine that took over 30 s once
        page.wait_for_function(f"() => document.querySelector('{CARD} .ec-status').textContent.includes('not saved')",
                               timeout=120_000)
        said = page.inner_text(f"{CARD} .ec-status")
        assert "has no adjudicator role" in said and "hank@example.org" in said, said
        assert page.get_attribute(CARD, "data-pending") == "0"  # a refusal is final: not sent again
    ctx.close()
    assert outside == []
    assert len(LabelStore(store).history()) == before  # nothing recorded
