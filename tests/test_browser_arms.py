"""A session of three arms in a real browser (Debian chromium driven by Playwright; issue 43).

A grader grades every pair of a three-arm session by keyboard (A left, D right, S same) on the
grading page; while the session is open no arm name and no generation id is anywhere in the page
the grader is served, after every key. The session is then closed with its key (as
`evalcore pairs close` does) and the results page, opened cold, draws the ranking of the three
arms: their names, the Bradley-Terry rankings of people's majority and of the grader from the
judgments `pairwise.report` counts, each a table, and the win matrix as a chart.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import uuid

import pytest
from browser_util import guard_page, press_when_ready, start_app, wait_settled
from test_pairs import make_world

from evalcore import pairwise as P

pytestmark = pytest.mark.browser

N_ITEMS = 9  # one pair per item: three pairs of each of the three pairs of arms
KEYS = "adsdaadsdaad"  # left, right, same: the grader's choices in turn


def test_a_three_arm_session_is_graded_by_keyboard_closed_and_ranked(browser, tmp_path):
    arms = tuple(str(uuid.uuid4()) for _ in range(3))
    w = make_world(tmp_path, arms, n_items=N_ITEMS, seed=7, styles=((120, 0.5, 0.4),) * 3)
    keys = tmp_path / "keys"
    P.make_session(w["store"], "three", [f"{a}={g}" for a, g in zip(arms, w["gens"])], keys_dir=keys,
                   n_perm=0, mirror=0.0, holdout=0, seed=3)
    st = w["store"]
    total = len(P.load_pairs(st, "three"))
    assert total == N_ITEMS
    secret = [*arms, *w["gens"]]

    def no_arm(page) -> None:
        low = page.content().lower()
        for a in secret:
            assert a.lower() not in low and a.replace("-", "").lower() not in low, a

    with start_app(w["data"], w["state"]) as base:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        outside: list[str] = []
        guard_page(page, outside)
        page.goto(f"{base}/pairwise_grading?session=three")
        box = page.get_by_role("textbox", name="Your name")
        box.wait_for(timeout=60_000)
        wait_settled(page)
        no_arm(page)
        box.click()
        page.keyboard.type("gina")
        page.keyboard.press("Enter")
        page.get_by_text("Grading as gina").wait_for(timeout=30_000)
        for k, key in enumerate(KEYS[:total], start=1):
            press_when_ready(page, key, "Left better", timeout=60_000)
            if k < total:
                page.get_by_text(f"{k} of {total} pairs graded by gina").wait_for(timeout=60_000)
            wait_settled(page)
            no_arm(page)
        page.get_by_text("graded every pair").wait_for(timeout=60_000)
        wait_settled(page)
        no_arm(page)
        ctx.close()
        choices = [j["choice"] for j in P.JudgmentStore(st).current("three", "gina")]
        want = {"a": "left", "d": "right", "s": "same"}
        assert sorted(choices) == sorted(want[c] for c in KEYS[:total])

        P.close_session(st, "three", keys)
        report = P.report(st, "three")
        assert isinstance(report, P.RankingReport) and sorted(report.arms) == sorted(arms)

        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        guard_page(page, outside)
        page.goto(f"{base}/pairwise_results?session=three")
        page.get_by_text("Win matrix (people's majority)").wait_for(timeout=90_000)
        wait_settled(page, timeout=90_000)
        text = page.inner_text("body")
        assert f"3 arms ({', '.join(report.arms)})" in text  # closed: the names are the point of this page
        people = report.people
        assert people.reason is None and len(people.arms) == 3
        assert f"from {people.judgments} judgments on {people.items} items" in text
        assert "Ranking: people's majority" in text and "Ranking: reviewer gina" in text
        # each ranking is a table (a data grid, drawn on a canvas) and the win matrix a chart
        assert page.locator('[data-testid="stDataFrame"]').count() >= 2
        assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 1
        assert page.locator('[data-testid="stException"]').count() == 0
        ctx.close()
    assert outside == []
