"""Where each user lands, and the navigation, in a real browser (Debian chromium driven by
Playwright; issue 39, "landing by role"):

* logged in through Streamlit's st.login against a local OpenID Connect provider
  (``oidc-provider-mock`` on 127.0.0.1), a reviewer lands on the Review page and an adjudicator on
  Home, which says what waits for them;
* no section of the navigation is folded away behind Streamlit's "View N more": the Decide
  section's Compare, Cost and Ledger links are in the sidebar;
* a fresh server's first page never shows a navigation of file names (Streamlit's pages-folder
  mode), and its first run says "Loading evalcore…" until the page draws its title, also on a page
  that stops early (st.stop: nothing drawn after it reaches the browser). The run is held on a read
  of the roles file (a named pipe the test serves), so the line is seen whatever the machine's speed:
  a fast first run may draw its title before the line ever reaches the browser.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import threading
from pathlib import Path

import pytest
from browser_util import REPO, auth_secrets, guard_page, log_in, make_world, start_app, start_oidc_provider, wait_idle

pytestmark = pytest.mark.browser

REVIEWER, ADJUDICATOR = "rita@example.org", "adam@example.org"
USERS = {
    REVIEWER: {"email": REVIEWER, "name": "Rita Reviewer", "roles": ["reviewer"]},
    ADJUDICATOR: {"email": ADJUDICATOR, "name": "Adam Adjudicator", "roles": ["adjudicator"]},
}
SIDEBAR_NAV = '[data-testid="stSidebarNav"]'


def titles() -> set[str]:
    """The page titles of app.py's PAGES (what the navigation may show)."""
    tree = ast.parse((REPO / "app.py").read_text())
    (pages,) = [n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES"]
    return {ast.literal_eval(row.elts[2]) for row in pages.elts}  # type: ignore[attr-defined]


@pytest.fixture
def world(tmp_path):
    return {"data": make_world(tmp_path / "data"), "state": tmp_path / "state"}


@pytest.fixture
def provider():
    with start_oidc_provider(USERS) as issuer:
        yield issuer


def h1(page) -> str:
    return page.locator("h1").first.inner_text().strip()


def test_a_reviewer_lands_on_the_review_page_and_an_adjudicator_on_home(browser, world, provider):
    outside: list[str] = []
    with start_app(world["data"], world["state"], secrets=auth_secrets(provider)) as base:
        for who, title in ((REVIEWER, "Review queue"), (ADJUDICATOR, "evalcore")):
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            page = ctx.new_page()
            guard_page(page, outside)
            log_in(page, base, who)  # back on "/" after the provider's form
            page.locator("h1").first.wait_for(timeout=30_000)
            wait_idle(page)
            assert page.url.rstrip("/") == base
            assert h1(page) == title, who
            if who == ADJUDICATOR:
                page.get_by_text("Waiting for Adam Adjudicator").wait_for(timeout=10_000)
                # one button per part: the runs, the queue (none yet: who can build one is said)
                assert page.get_by_text("4 runs, 2 not complete", exact=False).count() == 1
                assert page.get_by_role("link", name="Runs", exact=True).count() >= 1
            ctx.close()
    assert [u for u in outside if not u.startswith("https://cdn.jsdelivr.net/npm/@picocss/")] == []


def test_no_section_of_the_navigation_is_folded_away(browser, world):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    with start_app(world["data"], world["state"]) as base:
        page.goto(base + "/runs")
        page.locator(SIDEBAR_NAV).wait_for(timeout=30_000)
        wait_idle(page)
        nav = page.locator(SIDEBAR_NAV)
        more = nav.get_by_text(re.compile(r"View \d+ more"))
        assert more.count() == 0, nav.inner_text()
        for name in ("Compare configurations", "Cost", "Ledger"):
            assert nav.get_by_role("link", name=name, exact=True).is_visible(), name
    ctx.close()


# Every text the sidebar's navigation and the main area show, from the first DOM change on (a
# MutationObserver installed before the page's own scripts run).
RECORD = """
window.__nav = new Set(); window.__main = new Set();
new MutationObserver(() => {
  const nav = document.querySelector('[data-testid="stSidebarNav"]');
  if (nav) nav.querySelectorAll('a, span').forEach(e => { const t = e.innerText.trim(); if (t) window.__nav.add(t); });
  const main = document.querySelector('[data-testid="stMain"]');
  if (main) main.querySelectorAll('p, h1').forEach(e => { const t = e.innerText.trim(); if (t) window.__main.add(t); });
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


@contextlib.contextmanager
def held_roles_file(state: Path):
    """The state directory's roles file as a named pipe that the test serves: every read of it
    blocks until ``release`` is set (a slow file system, held for as long as the test needs), then
    each read gets an empty roles file. A session's first run reads it (app.py, before any page draws)
    once the "Loading evalcore…" line is sent, so the test sees the line without racing the run."""
    state.mkdir(parents=True, exist_ok=True)
    path = state / "roles.toml"
    os.mkfifo(path)
    release, stop = threading.Event(), threading.Event()

    def serve() -> None:
        release.wait()
        while not stop.is_set():
            fd = os.open(path, os.O_WRONLY)  # blocks until a reader opens the pipe
            with contextlib.suppress(BrokenPipeError):  # the closing reader below reads nothing
                os.write(fd, b"# no roles: every role to a typed name\n")
            os.close(fd)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield release
    finally:
        release.set()
        stop.set()
        with contextlib.suppress(OSError):  # let a writer blocked in open() go
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(timeout=30)


@pytest.mark.parametrize("path", ["", "/attribution", "/pairwise_grading"])  # the last one stops early (st.stop)
def test_a_fresh_servers_first_page_shows_no_file_names_and_says_it_is_loading(browser, world, path):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.add_init_script(RECORD)
    with held_roles_file(world["state"]) as release, start_app(world["data"], world["state"]) as base:
        page.goto(base + path)  # a fresh server: this is its first session
        # the run waits on the roles file: what the person sees meanwhile is the loading line
        page.get_by_text("Loading evalcore…").wait_for(timeout=60_000)
        assert page.locator("h1").count() == 0
        release.set()
        page.locator("h1").first.wait_for(timeout=60_000)
        page.locator(SIDEBAR_NAV).wait_for(timeout=30_000)
        wait_idle(page)
        nav = set(page.evaluate("[...window.__nav]"))
        main = set(page.evaluate("[...window.__main]"))
        assert nav and nav <= titles() | {"Browse", "Adjudicate", "Pairwise", "Decide"}, sorted(nav - titles())
        assert "Loading evalcore…" in main, sorted(main)[:20]
        assert page.get_by_text("Loading evalcore…").count() == 0  # gone once the page is drawn
    ctx.close()
