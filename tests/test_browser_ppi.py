"""The audit narrows the corrected pass rate, in a real browser (Debian chromium, Playwright): on the
demo's accounts-g1 (one split run, every case agreed, no shipped labels) a queue with a 20% audit;
a first reviewer (through the library) decided the first 30 cases; the report card shows a PPI++
interval and the stopping rule's N. A second reviewer then decides the next cases on the Review
page with the keyboard on the review card, each as the judge said, with the option that says after
each decision how much it
narrowed the interval; back on the report card the interval is narrower and N smaller.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import re

import pytest
from browser_util import CARD, card_case, card_decide, card_key, card_saved, guard_page, start_app, type_name, wait_idle
from conftest import DEMO

from evalcore import LabelStore, Store
from evalcore import review as R
from evalcore.pairwise import close_session

pytestmark = pytest.mark.browser

GEN, RUN, CRITERION = "accounts-g1", "accounts-g1-split", "answers_question"
PRE_DECIDED = 30
BROWSER_DECISIONS = 9
INTERVAL = re.compile(r"\[(\d+\.\d)%, (\d+\.\d)%\]")
NEED = re.compile(r"(\d+) more labels expected to reach \+/- 5 points")


def judge_verdicts(store: Store) -> dict[tuple[str, int, str], bool]:
    return {
        (r[0], int(r[1]), r[2]): bool(r[3])
        for r in store.sql(
            "SELECT item_id, gen_round, criterion, passed FROM read_parquet(?) WHERE judge_round = 1",
            [store.path_of("run", RUN, "verdicts")],
        )
    }


def ppi_row(page) -> tuple[float, int]:
    """The half-width (points) and N of the run's PPI++ row of the criterion shown."""
    page.get_by_text("Corrected pass rate (PPI++)").first.wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    table = page.locator('[data-testid="stTable"]', has_text="stopping rule").first
    row = table.locator("tr", has_text=RUN).first.inner_text()
    (lo, hi), n = INTERVAL.findall(row)[0], NEED.search(row)
    assert n is not None, row
    return (float(hi) - float(lo)) / 2, int(n.group(1))


def test_deciding_audit_cases_narrows_the_interval_and_the_stopping_rules_n_falls(browser, tmp_path):
    if not (DEMO / "generations" / GEN).exists():
        pytest.skip("the bundled demo (data/demo) is not generated")
    state = tmp_path / "state"
    store = Store(DEMO, state)
    # accounts-g1 is an arm of the demo's open practice session, whose answers are sealed until it is
    # closed (docs/PAIRWISE.md, sealing): closed here, into this test's own state directory
    close_session(store, "accounts-practice", DEMO.parent / "demo-keys")
    q = R.build_queue(store, GEN, audit_rate=0.2, seed=1)
    verdict = judge_verdicts(store)
    # the first reviewer: every 5th case against the judge, so that the judge is measurably imperfect
    for k, c in enumerate(R.cases(store, q["queue_id"], limit=PRE_DECIDED)):
        key = (c["item_id"], int(c["gen_round"]), c["criterion"])
        passed = verdict.get(key, True) != (k % 5 == 4)
        R.decide(store, q["queue_id"], *key, "ann", value="pass" if passed else "fail")

    outside: list[str] = []
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    guard_page(page, outside)
    with start_app(DEMO, state) as base:
        page.goto(f"{base}/agreement?gen={GEN}")
        page.get_by_text(f"{CRITERION} (binary)").first.wait_for(timeout=60_000)
        before, need_before = ppi_row(page)

        page.goto(f"{base}/review?gen={GEN}")
        type_name(page, "hank")
        card_case(page)
        wait_idle(page)
        # the option is off by default (it reads the judges at each decision): on, in the options
        page.get_by_text("Queue, filters and options").first.click()
        page.get_by_text("Say how each decision narrows the corrected pass rate").first.click()
        wait_idle(page)
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        narrowed = []
        shown = None
        for _ in range(BROWSER_DECISIONS):
            shown = card_case(page, shown)
            key = card_key(shown)
            value = "pass" if verdict.get(key, True) else "fail"
            said = page.inner_text(f"{CARD} .ec-hint")
            card_decide(page, value)
            page.wait_for_function(
                f"(b) => {{ const t = document.querySelector('{CARD} .ec-hint').textContent;"
                " return t.includes('Corrected pass rate of') && t !== b; }",
                arg=said, timeout=60_000)
            text = page.inner_text(f"{CARD} .ec-hint")
            assert key[2] in text and RUN in text, text
            narrowed.append(text)
            card_saved(page)
        # a decision the judge agrees with narrows its criterion's interval: the page says by how much
        assert all("points narrower" in t for t in narrowed), narrowed
        assert sum("(+" in t for t in narrowed) >= BROWSER_DECISIONS - 1, narrowed

        page.goto(f"{base}/agreement?gen={GEN}")
        page.get_by_text(f"{CRITERION} (binary)").first.wait_for(timeout=60_000)
        after, need_after = ppi_row(page)
    ctx.close()
    assert outside == []
    assert after < before, (before, after)
    assert need_after < need_before, (need_before, need_after)
    mine = [e for e in LabelStore(store).history() if e["reviewer"] == "hank"]
    assert len(mine) == BROWSER_DECISIONS
