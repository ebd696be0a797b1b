"""The Compare configurations and Ledger pages in a real browser (Debian's chromium through
Playwright) over the bundled SIMULATED demo: a deep link comparing the single-call and split
harnesses shows the diff first, labels the change a measurement change and names the rival
explanations; the two writer prompts pass the two-sided bar with the figures `evalcore compare`
prints; no request leaves 127.0.0.1. Skips without chromium unless EVALCORE_REQUIRE_BROWSER=1."""

from __future__ import annotations

import json
import subprocess

import pytest
from browser_util import REPO, guard_page, start_app, wait_idle
from conftest import EVALCORE

pytestmark = pytest.mark.browser

DEMO = REPO / "data" / "demo"


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory, browser):
    root = tmp_path_factory.mktemp("browser-compare")
    with start_app(DEMO, root / "state") as base:
        yield base


def _open(browser, url):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    page.goto(url)
    return ctx, page, outside


def test_measurement_change_and_rivals_are_named_first(browser, demo_app):
    ctx, page, outside = _open(browser, demo_app + "/compare?a=support-single&b=support-split")
    try:
        page.get_by_text("Measurement change, not a system change").wait_for(timeout=60_000)
        wait_idle(page, timeout=60_000)
        body = page.inner_text("body")
        assert "Rival explanations" in body and "harness mode (single → split)" in body
        assert body.index("What differs") < body.index("Verdict") < body.index("Per generation round")
    finally:
        ctx.close()
    assert outside == [], f"requests that would have left 127.0.0.1: {outside}"


def test_writer_prompts_pass_the_bar_with_the_cli_figures(browser, demo_app):
    c = json.loads(subprocess.run([EVALCORE, "--data", str(DEMO), "compare", "accounts-g2-split",
                                   "accounts-g1-split", "--json"], capture_output=True, text=True,
                                  check=True).stdout)
    ctx, page, outside = _open(browser, demo_app + "/compare?a=accounts-g2-split&b=accounts-g1-split")
    try:
        page.get_by_text("PASSES the two-sided bar").wait_for(timeout=60_000)
        page.get_by_text("Trend across runs").wait_for(timeout=60_000)  # the last section
        page.get_by_text("Minimum detectable effect").wait_for(timeout=60_000)
        wait_idle(page, timeout=60_000)
        body = page.inner_text("body")
        f = c["figures"]["all_pass"]
        assert f"Stable wins (all_pass): {f['stable_wins']}" in body
        assert f"Items paired: {f['delta']['items']}" in body
        assert f"{100 * f['power']['mde']:.1f} pts" in body
        assert "system change" in body
        assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 2  # rounds and trend
    finally:
        ctx.close()
    assert outside == [], f"requests that would have left 127.0.0.1: {outside}"
