"""The Pairwise grading page in a real browser (Debian chromium driven by Playwright), graded with
the keyboard alone while the keys directory has been moved away.

The arm names are random UUIDs. After every keystroke the page's HTML is searched for them (and
for their hex without dashes); so is the server's log at the end. Every request that would leave
127.0.0.1 is aborted and fails the test. Without chromium the test skips, unless
EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import shutil
import uuid

import pytest
from browser_util import guard_page, press_when_ready, start_app, wait_idle
from test_pairs import make_world

from evalcore import pairwise as P
from evalcore.storage.paths import default_keys_dir

pytestmark = pytest.mark.browser


def no_arm(html: str, arms) -> None:
    low = html.lower()
    for a in arms:
        assert a.lower() not in low and a.replace("-", "").lower() not in low, a


def progress_text(page) -> str:
    return page.locator('[data-testid="stProgress"]').first.inner_text()


def test_grading_with_the_keyboard_alone_and_the_keys_moved_away(browser, tmp_path):
    arms = (str(uuid.uuid4()), str(uuid.uuid4()))
    w = make_world(tmp_path, arms, n_items=10, seed=8)
    keys = default_keys_dir(w["data"])
    P.make_session(w["store"], "blind-1", [f"{arms[0]}={w['gens'][0]}", f"{arms[1]}={w['gens'][1]}"], n_perm=9,
                   mirror=0.2)
    total = len(P.load_pairs(w["store"], "blind-1"))
    moved = tmp_path / "elsewhere" / "keys"
    moved.parent.mkdir()
    shutil.move(str(keys), str(moved))  # the key is nowhere near the app
    assert not keys.exists() and (moved / "blind-1" / "key.parquet").is_file()

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    with start_app(w["data"], w["state"]) as base:
        # the link is the very first request of a fresh server (pages/_ui.py makes it go through app.py)
        page.goto(f"{base}/pairwise_grading?session=blind-1")
        page.get_by_text("Type your name").wait_for(timeout=30_000)
        wait_idle(page)
        no_arm(page.content(), arms)
        assert page.get_by_text("Page not found").count() == 0
        # Tab to the name field, type, Enter: no mouse
        for _ in range(60):
            if page.evaluate("() => document.activeElement && document.activeElement.getAttribute('aria-label')")\
                    == "Your name":
                break
            page.keyboard.press("Tab")
        else:
            pytest.fail("Tab never reached the name field")
        page.keyboard.type("Kim")
        page.keyboard.press("Enter")
        page.get_by_text(f"0 of {total} pairs graded").wait_for(timeout=20_000)
        wait_idle(page)
        # the name field is gone after Enter (no Tab needed: the focus is in no text field)
        assert page.get_by_role("textbox", name="Your name").count() == 0
        page.get_by_text("Grading as Kim").wait_for()
        no_arm(page.content(), arms)
        keys_pressed = ["a", "s", "d", "a", "d"]
        for k, key in enumerate(keys_pressed, start=1):
            press_when_ready(page, key, "Left better")
            page.get_by_text(f"{k} of {total} pairs graded").wait_for(timeout=20_000)
            wait_idle(page)
            no_arm(page.content(), arms)
        code = page.locator('[data-testid="stCode"]')
        assert code.count() >= 2  # the next pair's answers are on screen, as text
    ctx.close()
    assert outside == [], f"requests that would have left 127.0.0.1: {outside}"
    got = [j["choice"] for j in P.JudgmentStore(w["store"]).current("blind-1", "Kim")]
    assert got == [{"a": "left", "s": "same", "d": "right"}[k] for k in keys_pressed]
    logs = list(tmp_path.glob("streamlit-*.log"))
    assert logs
    no_arm("".join(p.read_text(errors="replace") for p in logs), arms)
    no_arm("".join(p.read_bytes().decode("latin-1") for p in w["state"].rglob("*") if p.is_file()), arms)
    # with the key back, the session closes and unblinds as ever
    P.close_session(w["store"], "blind-1", moved, n_perm=9)
    assert P.report(w["store"], "blind-1").judgments == len(keys_pressed)
