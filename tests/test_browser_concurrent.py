"""Four browsers opening four different pages of a freshly started server at the same moment, ten
times over: every page renders its own title, and none shows a traceback.

Streamlit runs each session's script inside ``modified_sys_path``, which puts the app's folder on
``sys.path`` only if it is absent and takes it away when that run ends; while ``pages/`` was a
namespace package (no ``__init__.py``), another session's run could find its path recomputed to
nothing and fail with ``ImportError: cannot import name '_ui' from 'pages' (unknown location)``
(3 of 4 pages in each of 3 trials before the fix)."""

from __future__ import annotations

import pytest
from browser_util import REPO, guard_page, start_app, wait_idle

pytestmark = pytest.mark.browser
DEMO = REPO / "data" / "demo"

# four pages, by URL path and title, whose first render imports different modules
PAGES = [
    ("attribution", "Failure attribution"),
    ("association", "Criteria association"),
    ("compare", "Compare configurations"),
    ("agreement", "Agreement and judge report card"),
]
TRIALS = 10


def test_four_pages_of_a_fresh_server_at_once_render_without_an_import_error(browser, tmp_path):
    failures: list[str] = []
    outside: list[str] = []
    for trial in range(TRIALS):
        with start_app(DEMO, tmp_path / f"state-{trial}") as base:
            contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in PAGES]
            pages = []
            for ctx in contexts:
                page = ctx.new_page()
                guard_page(page, outside)
                pages.append(page)
            # every navigation is sent before any is waited for: the four sessions' first script
            # runs overlap in the fresh server
            for page, (url, _title) in zip(pages, PAGES):
                page.goto(f"{base}/{url}", wait_until="commit")
            for page, (url, title) in zip(pages, PAGES):
                # the page's title, or the traceback that took its place
                page.locator('h1, [data-testid="stException"]').first.wait_for(timeout=120_000)
                wait_idle(page, timeout=120_000)
                errors = page.locator('[data-testid="stException"]').all_inner_texts()
                titles = page.locator("h1").all_inner_texts()
                if errors or title not in titles:
                    failures.append(f"trial {trial} /{url}: {(errors or titles or [''])[0][:300]!r}")
            for ctx in contexts:
                ctx.close()
    assert failures == []
    assert outside == []
