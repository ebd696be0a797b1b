"""A deep link as the very first request to a freshly started server still goes through app.py.

Streamlit treats an app beside a ``pages/`` folder as a v1 multipage app until ``st.navigation`` has
run once in the process, so without pages/_ui.py's switch the first request for /attribution would
run that page alone: no page config, no SIMULATED badge, raw file names in the sidebar."""

from __future__ import annotations

import os

import pytest
from browser_util import REPO, chromium_path, guard_page, launch, start_app, wait_idle

pytestmark = pytest.mark.browser
DEMO = REPO / "data" / "demo"


def test_first_request_deep_link_runs_through_app_py(tmp_path):
    if chromium_path() is None:
        if os.environ.get("EVALCORE_REQUIRE_BROWSER") == "1":
            pytest.fail("Debian chromium is not installed (EVALCORE_REQUIRE_BROWSER=1)")
        pytest.skip("Debian chromium is not installed (/usr/bin/chromium or `chromium` on PATH)")
    from playwright.sync_api import sync_playwright

    with start_app(DEMO, tmp_path / "state") as base, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        outside: list[str] = []
        guard_page(page, outside)
        page.goto(base + "/attribution?run=support-polluted")
        page.get_by_text("SIMULATED demo data").wait_for(timeout=60_000)
        wait_idle(page, timeout=60_000)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "Failure attribution" in sidebar and "Review queue" in sidebar
        assert "_ui" not in sidebar and "ui\n" not in sidebar
        page.get_by_text("is polluted").first.wait_for(timeout=60_000)  # the run from the link, warned about
        browser.close()
        assert outside == []
