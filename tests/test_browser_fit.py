"""Layout findings of issue 39 in a real browser (Debian's chromium through Playwright) over the
bundled demo:

* at 1024x768 every chart of the Cost page ends inside the viewport and inside the page's main
  column (the projection's charts ran 246 px past it), and every table of it that cannot fit
  says so in the line below it (four were cut at the page's edge without a word);
* at 1400x900 the Agreement page opens on its headline, and its per-criterion detail starts
  within :data:`AGREEMENT_DETAIL_BOUND` px of the top of the page (it started at 2,858 px, below
  all-pass rates, contradictions and two long tables).

Skips without chromium unless EVALCORE_REQUIRE_BROWSER=1."""

from __future__ import annotations

import pytest
from browser_util import REPO, guard_page, start_app, wait_idle

pytestmark = pytest.mark.browser

DEMO = REPO / "data" / "demo"
#: where the Agreement page's per-criterion detail may start at 1400x900, in px from the top of the page
AGREEMENT_DETAIL_BOUND = 1_800

#: every drawn chart: its right edge and the main column's
CHART_EDGES = """() => {
  const block = document.querySelector('[data-testid="stMainBlockContainer"]');
  const right = block.getBoundingClientRect().right - parseFloat(getComputedStyle(block).paddingRight);
  return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(el => {
    const drawn = [el, ...el.querySelectorAll('svg, canvas')].map(e => e.getBoundingClientRect().right);
    return {right: Math.max(...drawn), main: right, title: (el.innerText || '').slice(0, 40)};
  });
}"""

#: every canvas table wider than its box, with the text of the element after it
SCROLLED = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(d => {
  const s = d.querySelector('.dvn-scroller');
  const box = d.closest('[data-testid="stElementContainer"]');
  const next = box && box.nextElementSibling;
  return {wide: !!s && s.scrollWidth > s.clientWidth + 1, head: [...d.querySelectorAll('th')].slice(0, 2)
          .map(t => t.textContent).join('|'), after: next ? next.innerText : ''};
}).filter(t => t.wide)"""

#: an element's top in px from the top of the page (the main block scrolls, not the window)
TOP = """el => {
  const main = document.querySelector('[data-testid="stMain"]');
  return el.getBoundingClientRect().top - main.getBoundingClientRect().top + main.scrollTop;
}"""


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory):
    if not (DEMO / "runs").is_dir():
        pytest.fail(f"the bundled demo is missing: {DEMO} (make demo)")
    root = tmp_path_factory.mktemp("browser-fit")
    with start_app(DEMO, root / "state") as base:
        yield base


def _open(browser, url: str, ready: str, width: int, height: int):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    page.goto(url)
    page.get_by_text(ready).first.wait_for(timeout=120_000)
    wait_idle(page, timeout=120_000)
    return ctx, page, outside


@pytest.mark.parametrize("run", ["support-split", "support-grouped"])
def test_cost_charts_end_inside_the_viewport_at_1024(browser, demo_app, run):
    ctx, page, outside = _open(browser, f"{demo_app}/cost?run={run}", "Projection: single, grouped and split",
                               1024, 768)
    try:
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        page.get_by_text("Assumptions: ").first.scroll_into_view_if_needed()  # the end of the page
        charts.nth(1).wait_for(timeout=60_000)  # per criterion, and the projection
        for k in range(charts.count()):
            charts.nth(k).scroll_into_view_if_needed()
            charts.nth(k).locator("svg, canvas").first.wait_for(timeout=30_000)
        edges = page.evaluate(CHART_EDGES)
        assert len(edges) == charts.count()
        over = [e for e in edges if e["right"] > min(1024, e["main"]) + 1]
        assert over == [], over
    finally:
        ctx.close()
    assert outside == []


def test_cost_tables_that_cannot_fit_say_so_at_1024(browser, demo_app):
    ctx, page, outside = _open(browser, f"{demo_app}/cost?run=support-split", "Projection: single, grouped and split",
                               1024, 768)
    try:
        page.get_by_text("Assumptions: ").first.scroll_into_view_if_needed()
        page.locator('[data-testid="stDataFrame"]').nth(4).wait_for(timeout=60_000)
        wide = page.evaluate(SCROLLED)
        assert len(wide) >= 3  # the per-configuration table, the run's totals, per criterion, the projection
        silent = [t for t in wide if "wider than the page on a narrow screen" not in t["after"]]
        assert silent == [], silent
    finally:
        ctx.close()
    assert outside == []


def test_agreement_opens_on_its_headline_and_its_detail_is_near(browser, demo_app):
    ctx, page, outside = _open(browser, f"{demo_app}/agreement?gen=support-g1", "Judges at a glance", 1400, 900)
    try:
        head = page.get_by_text("Judges at a glance").first
        assert page.evaluate(TOP, head.element_handle()) < 900 - 100  # the headline's words on the first screen
        detail = page.locator('[data-testid="stRadio"]').filter(has_text="Criterion").first
        detail.wait_for(timeout=30_000)
        top = page.evaluate(TOP, detail.element_handle())
        print(f"Agreement at 1400x900: per-criterion detail starts at {top:.0f} px")
        assert top <= AGREEMENT_DETAIL_BOUND, top
    finally:
        ctx.close()
    assert outside == []
