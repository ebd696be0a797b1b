"""The review card in a real browser (Debian chromium, Playwright): the case and its keys on one
screen at 1400x900 and 1024x768; a key press draws the next case from the batch the browser holds,
before the server has answered; one key map (1, 2, 3...) for every kind; a wrong key and N on an
undecided case say why; decisions not yet acknowledged survive a closed tab and are written once.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import pytest
from browser_util import CARD, guard_page, start_app, type_name, wait_idle
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


def open_card(page, base: str, name: str) -> str:
    page.goto(f"{base}/review?gen=qg&card=1")
    type_name(page, name)
    page.wait_for_function(f"() => (document.querySelector('{CARD}') || {{dataset: {{}}}}).dataset.state === 'case'",
                           timeout=60_000)
    wait_idle(page)
    return page.get_attribute(CARD, "data-case")


def box_of(page, selector: str):
    """The element's box; the card redraws its keys when the server's answer comes, so an element
    read at that instant is looked up again."""
    for _ in range(5):
        loc = page.locator(selector).first
        loc.wait_for(state="visible")
        box = loc.bounding_box()
        if box is not None:
            return box
    return None


def inside(page, box, h: int, w: int) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 24) <= h and box["x"] + box["width"] <= w


@pytest.mark.parametrize("size", [(1400, 900), (1024, 768)])
def test_the_case_and_its_keys_are_on_one_screen(browser, world, size):
    data, state = world
    w, h = size
    outside: list[str] = []
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    guard_page(page, outside)
    with start_app(data, state) as base:
        open_card(page, base, "hank")
        for sel in (".ec-crit-name", ".ec-choice", ".ec-output"):
            box = box_of(page, f"{CARD} {sel}")
            assert inside(page, box, h, w), (sel, box)
        assert page.locator(f"{CARD} .ec-output").inner_text().strip()
    ctx.close()
    assert outside == []


def test_keys_draw_the_next_case_in_the_browser_and_each_decision_is_written_once(browser, world):
    data, state = world
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    with start_app(data, state) as base:
        first = open_card(page, base, "hank")
        legend = page.locator(f"{CARD} .ec-choice").all_inner_texts()
        assert legend[0].startswith("1") and legend[1].startswith("2")  # one key map: 1, 2, ... for every kind
        # a wrong key says so, on the card
        page.keyboard.press("z")
        page.wait_for_function(f"() => document.querySelector('{CARD} .ec-hint').textContent.includes('does nothing here')")
        # N on an undecided case says why it waits
        page.keyboard.press("n")
        page.wait_for_function(f"() => document.querySelector('{CARD} .ec-hint').textContent.includes('waits for your decision')")
        assert page.get_attribute(CARD, "data-case") == first
        # the next case is drawn by the key press itself: checked in the same task as the press
        seen = []
        for _ in range(4):
            before = page.get_attribute(CARD, "data-case")
            after = page.evaluate(
                f"""() => {{ const c = document.querySelector('{CARD}');
                window.dispatchEvent(new KeyboardEvent('keydown', {{key: '1', bubbles: true, cancelable: true}}));
                return c.dataset.case; }}"""
            )
            assert after and after != before  # drawn synchronously, no server round trip between
            seen.append(before)
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '0'", timeout=60_000)
        wait_idle(page)
    ctx.close()
    mine = [e for e in LabelStore(Store(data, state)).history("qg") if e["reviewer"] == "hank"]
    assert sorted((e["item_id"], str(e["gen_round"]), e["criterion"]) for e in mine) == sorted(
        tuple(k.split("\x1f")) for k in seen
    )
    assert len(mine) == 4 and all(e["outcome"] == "decided" for e in mine)


def test_a_closed_tab_keeps_its_pending_decisions_and_sends_them_once(browser, world):
    data, state = world
    with start_app(data, state) as base:
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        page = ctx.new_page()
        first = open_card(page, base, "hank")
        # the server is not told: the send is cut off, then the tab is closed with the decision pending
        page.evaluate("() => { window.__ecActive.send = () => {}; }")
        page.keyboard.press("1")
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '1'")
        pending = page.evaluate("() => localStorage.getItem(window.__ecActive.lsKey)")
        storage = ctx.storage_state()
        ctx.close()
        assert LabelStore(Store(data, state)).history("qg") == []  # nothing reached the server
        assert first.split("\x1f")[0] in pending
        # the same browser profile comes back: the pending decision is sent, and written once
        ctx = browser.new_context(viewport={"width": 1400, "height": 900}, storage_state=storage)
        page = ctx.new_page()
        open_card(page, base, "hank")
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '0'", timeout=60_000)
        page.reload()
        page.wait_for_function(f"() => (document.querySelector('{CARD}') || {{dataset: {{}}}}).dataset.state === 'case'",
                               timeout=60_000)
        wait_idle(page)
        ctx.close()
    mine = LabelStore(Store(data, state)).history("qg")
    assert [(e["item_id"], str(e["gen_round"]), e["criterion"]) for e in mine] == [tuple(first.split("\x1f"))]


def test_a_server_restart_mid_run_loses_no_decision_and_writes_none_twice(browser, world):
    """Two decisions acknowledged, then the server goes away with a third pending: a new server on
    the same port, the same tab reconnects, and the store holds the three decisions once each."""
    from browser_util import card_case, card_saved, free_port

    data, state = world
    port = free_port()
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    seen = []
    with start_app(data, state, port=port) as base:
        shown = open_card(page, base, "hank")
        for _ in range(2):
            seen.append(shown)
            page.keyboard.press("1")
            shown = card_case(page, shown)
        card_saved(page)
        page.evaluate("() => { window.__ecActive.send = () => {}; }")  # this one does not get out
        seen.append(shown)
        page.keyboard.press("1")
        page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '1'")
    assert len(LabelStore(Store(data, state)).history("qg")) == 2
    with start_app(data, state, port=port):
        # the tab reconnects by itself; its pending decision goes to the new server
        page.wait_for_function(
            f"() => {{ const c = document.querySelector('{CARD}'); return c && c.dataset.pending === '0'; }}",
            timeout=120_000)
        card_case(page)
        wait_idle(page)
    ctx.close()
    mine = LabelStore(Store(data, state)).history("qg")
    assert sorted((e["item_id"], str(e["gen_round"]), e["criterion"]) for e in mine) == sorted(
        tuple(k.split("\x1f")) for k in seen)


@pytest.mark.parametrize("size", [(1400, 900), (1024, 768)])
def test_the_demos_cases_are_on_one_screen(browser, tmp_path, size):
    """The demo's own cases (support-g1, whose answers run to a few hundred characters): for each of
    the first eight, the criterion, the decision keys and the answer's first line in the viewport."""
    from browser_util import card_case
    from conftest import DEMO

    state = tmp_path / "state"
    R.build_queue(Store(DEMO, state), "support-g1", audit_rate=0.05, seed=0)
    w, h = size
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    with start_app(DEMO, state) as base:
        page.goto(f"{base}/review?gen=support-g1")
        type_name(page, "hank")
        shown = card_case(page)
        for _ in range(8):
            for sel in (".ec-crit-name", ".ec-choice", ".ec-output"):
                box = box_of(page, f"{CARD} {sel}")
                assert inside(page, box, h, w), (shown, sel, box)
            page.keyboard.press("s")  # skip: the next case
            shown = card_case(page, shown)
    ctx.close()


def _case(n: int) -> dict:
    return {"key": f"i{n}\x1f1\x1fc", "item": f"i{n}", "round": 1, "criterion": "c", "rank": n, "description": "d",
            "choices": [{"key": "1", "letter": "P", "value": "pass"}, {"key": "2", "letter": "F", "value": "fail"}],
            "output": "o", "input": "i", "context": "", "reference": "", "must_have": [], "wrong_if": [],
            "mine": None, "withheld": None, "abstained": False}  # fmt: skip


def test_a_late_cleanup_of_a_replaced_render_leaves_the_card_its_keys(browser):
    """Streamlit runs a render's cleanup late, once that render has loaded, when newer data replaced
    it meanwhile (its BidiComponent effect: a cleanup returned after the effect was torn down is run
    at once). The card's module, loaded as Streamlit loads it (its default export over the card's
    HTML), is rendered twice and then the first render's cleanup runs: the keys still decide."""
    from pages._card import HTML, JS

    page = browser.new_page()
    # an origin of its own, for the card's localStorage (served by Playwright; nothing leaves the browser)
    page.route("http://card.test/", lambda route: route.fulfill(body=f"<div id='host'>{HTML}</div>",
                                                               content_type="text/html"))
    page.goto("http://card.test/")
    data = {"queue": "q", "reviewer": "r", "role": "reviewer", "cases": [_case(1), _case(2)], "acks": {},
            "revealed": {}, "progress": "", "exhausted": False, "empty_text": "", "blind": False,
            "adjudicating": False, "reveal_after": False, "notice": None, "link": "?"}  # fmt: skip
    shown = page.evaluate(
        """async ([js, data]) => {
          const m = await import("data:text/javascript;charset=utf-8," + encodeURIComponent(js));
          const args = (d) => ({ data: d, parentElement: document.getElementById("host"), setTriggerValue: () => {} });
          const first = m.default(args(data));
          m.default(args({ ...data, progress: "newer" }));  // newer data, rendered on the same card
          first();  // the replaced render's cleanup, run late
          return document.querySelector(".ec-card").dataset.case;
        }""",
        [JS, data],
    )
    assert shown == "i1\x1f1\x1fc"
    page.keyboard.press("1")
    assert page.get_attribute(".ec-card", "data-case") == "i2\x1f1\x1fc"  # the key decided case 1
    assert page.get_attribute(".ec-card", "data-pending") == "1"
    page.close()
