"""The win matrix's cells open their pairs, in a real browser (Debian chromium driven by
Playwright; issue 43: "the win matrix as a heatmap whose cells open their pairs").

A three-arm session graded by two people is closed; the results page, opened cold, opens a cell's
pairs three ways: the selectbox "Open the pairs of" (the keyboard path), a link with ``?cell=A,B``
and a click on the heatmap's cell. Each time the caption's counts are the cell's in the win
matrix `pairwise.report` computes, and the table lists the cell's pairs.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import html
import re

import pytest
from browser_util import click_chart, guard_page, start_app, wait_settled
from conftest import REPO
from test_pairs import make_world

from evalcore import pairwise as P

ARMS = ("arm-x", "arm-y", "arm-z")
N_ITEMS = 18  # one pair per item: three of each of the six ordered pairs of arms


@pytest.fixture(scope="module")
def closed(tmp_path_factory):
    """The session made of three generations, graded by two people (a fixed rotation of choices),
    closed with its key, and its report."""
    tmp = tmp_path_factory.mktemp("cells")
    w = make_world(tmp, ARMS, n_items=N_ITEMS, seed=7, styles=((120, 0.5, 0.4),) * 3)
    keys = tmp / "keys"
    P.make_session(w["store"], "three", [f"{a}={g}" for a, g in zip(ARMS, w["gens"])], keys_dir=keys,
                   n_perm=0, mirror=0.0, holdout=0, seed=3)  # fmt: skip
    for n, p in enumerate(P.load_pairs(w["store"], "three")):
        for who, shift in (("ann", 0), ("bo", n % 2)):
            P.record_judgment(w["store"], "three", p["pair_id"], who, ("left", "right", "same")[(n + shift) % 3])
    P.close_session(w["store"], "three", keys)
    report = P.report(w["store"], "three")
    assert isinstance(report, P.RankingReport) and report.people.reason is None
    return w, report


def _caption(report, a: str, b: str) -> str:
    (c,) = [c for c in report.people.win_matrix if (c.arm, c.against) == (a, b)]
    return f"{a} won {c.wins}, lost {c.losses}, tied {c.ties} of {c.wins + c.losses + c.ties} judgments"


def _shown(page, store, report, a: str, b: str) -> None:
    page.get_by_text(f"Pairs of {a} against {b}").wait_for(timeout=60_000)
    wait_settled(page)
    text = page.inner_text("body")
    n = len(P.cell_pairs(store, "three", a, b).pairs)
    assert f"{n} original pairs of {a} and {b}. Source people's majority: " + _caption(report, a, b) in text
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.app
def test_the_page_opens_a_cell_from_the_link_and_the_selectbox(closed, monkeypatch):
    """The same without a browser (Streamlit's AppTest): ``?cell=`` opens a cell, the selectbox
    another one and writes it into the link; "(none)" closes it and takes it out of the link."""
    from streamlit.testing.v1 import AppTest

    w, report = closed
    monkeypatch.setenv("EVALCORE_DATA", str(w["data"]))
    monkeypatch.setenv("EVALCORE_STATE", str(w["store"].state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)  # a ceiling: the first run loads the stack
    at.query_params.update(session="three", cell="arm-x,arm-y")
    at.switch_page("pages/8_pairwise_results.py").run()
    assert not at.exception, [e.value for e in at.exception]

    def caption() -> str:
        return next(html.unescape(c.value) for c in at.caption if "original pairs of" in html.unescape(c.value))

    (box,) = [s for s in at.selectbox if s.label == "Open the pairs of"]
    assert box.value == "arm-x,arm-y" and len(box.options) == 7
    assert _caption(report, "arm-x", "arm-y") in caption()
    box.set_value("arm-z,arm-y").run()
    assert not at.exception and at.query_params["cell"] == "arm-z,arm-y"
    assert _caption(report, "arm-z", "arm-y") in caption()
    table = at.dataframe[-1].value
    assert sorted(table["pair"]) == sorted(p.pair_id for p in P.cell_pairs(w["store"], "three", "arm-z", "arm-y").pairs)
    box.set_value("(none)").run()
    assert "cell" not in at.query_params and not any("original pairs of" in c.value for c in at.caption)


@pytest.mark.browser
def test_a_cell_opens_by_selectbox_link_and_click(browser, closed):
    w, report = closed
    outside: list[str] = []
    with start_app(w["data"], w["state"]) as base:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        guard_page(page, outside)
        # the keyboard path: the selectbox under the chart
        page.goto(f"{base}/pairwise_results?session=three")
        page.get_by_text("Win matrix (people's majority)").wait_for(timeout=90_000)
        wait_settled(page, timeout=90_000)
        box = page.get_by_role("combobox", name=re.compile("^Open the pairs of"))
        box.click()
        box.press_sequentially("arm-y against arm-z")  # as test_browser.choose: type, then click
        page.get_by_role("option", name="arm-y against arm-z", exact=True).click()
        _shown(page, w["store"], report, "arm-y", "arm-z")
        assert re.search(r"cell=arm-y(%2C|,)arm-z", page.url), page.url
        # a link opens the cell
        page.goto(f"{base}/pairwise_results?session=three&cell=arm-z,arm-x")
        _shown(page, w["store"], report, "arm-z", "arm-x")
        # a click on a cell of the heatmap: Vega draws it as SVG, each cell a path whose aria-label
        # names its arms; the click lands inside it beside its centred label (the text mark)
        chart = page.locator('[data-testid="stVegaLiteChart"]').first
        cell = chart.locator('path[aria-label^="against: arm-z; arm: arm-x;"]')
        cell.wait_for(timeout=60_000)
        cell.scroll_into_view_if_needed()
        wait_settled(page)
        cb, pb = chart.bounding_box(), cell.bounding_box()
        assert cb is not None and pb is not None
        until = "() => document.body.innerText.includes('Pairs of arm-x against arm-z')"
        click_chart(page, chart, pb["x"] - cb["x"] + 12, pb["y"] - cb["y"] + pb["height"] / 2, until)
        _shown(page, w["store"], report, "arm-x", "arm-z")
        assert re.search(r"cell=arm-x(%2C|,)arm-z", page.url), page.url
        ctx.close()
    assert outside == []
