"""The app in a real browser: Debian's chromium driven by Playwright against `streamlit run app.py`.

Every request the page makes is routed: anything whose host is not 127.0.0.1/localhost is aborted
and recorded, and every test fails if one was attempted. Without chromium these tests skip, unless
EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run), where they fail.

* The Runs page on the bundled demo (and on a small test world) shows the same runs, statuses and
  mean pass rates as `evalcore runs --json`, with partial and polluted runs flagged.
* A hostile answer (an <img> and a markdown image pointing at a loopback recording server, a
  <script>) is shown as literal text: no script runs, the recording server gets no request.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from browser_util import (
    REPO,
    RUN_POLLUTED,
    RUN_SINGLE,
    VENV_BIN,
    guard_page,
    make_world,
    start_app,
    wait_idle,
    wait_settled,
)

pytestmark = pytest.mark.browser

DEMO = REPO / "data" / "demo"




@pytest.fixture
def page(browser):
    """A fresh page whose non-local requests are aborted; the test fails if there was any."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    outside: list[str] = []
    guard_page(pg, outside)
    yield pg
    ctx.close()
    assert outside == [], f"requests that would have left 127.0.0.1: {outside}"


class Recorder:
    """A tiny HTTP server on a second loopback port that records every request it gets."""

    def __init__(self):
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def do_GET(self):  # noqa: N802
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def recorder():
    r = Recorder()
    yield r
    r.close()


def hostile_text(port: int) -> str:
    return (f'<img src="http://127.0.0.1:{port}/img.png"> <script>window.__pwned=1</script> '
            f'![x](http://127.0.0.1:{port}/md.png)')


@pytest.fixture(scope="module")
def world_app(tmp_path_factory, recorder, browser):
    """The app over a small world whose answer to q1 is hostile."""
    root = tmp_path_factory.mktemp("browser-world")
    data = make_world(root / "data", hostile=hostile_text(recorder.port), hostile_item="q1")
    with start_app(data, root / "state") as base:
        yield base, data


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory, browser):
    """The app over the bundled demo, read in place; state in a temporary directory."""
    if not (DEMO / "runs").is_dir():
        pytest.fail(f"the bundled demo is missing: {DEMO} (make demo)")
    root = tmp_path_factory.mktemp("browser-demo")
    with start_app(DEMO, root / "state") as base:
        yield base, DEMO


# --------------------------------------------------------------------------- reading the page


def open_runs_table(page, base: str) -> list[dict[str, str]]:
    """Load the Runs page, open the plain table and read its cells from the DOM."""
    page.goto(base + "/runs")
    exp = page.get_by_text("Runs as a plain table (copyable text)")
    exp.wait_for(timeout=30_000)
    wait_idle(page)
    exp.click()
    table = page.locator('[data-testid="stTable"] table').first
    table.wait_for(state="visible", timeout=10_000)
    return table.evaluate("""t => {
        const head = [...t.querySelectorAll('thead th')].map(c => c.innerText.trim());
        return [...t.querySelectorAll('tbody tr')].map(tr => {
            const cells = [...tr.querySelectorAll('th, td')].map(c => c.innerText.trim());
            return Object.fromEntries(head.map((h, i) => [h, cells[i]]));
        });
    }""")


def choose(page, label: str, option: str) -> None:
    """Pick an option of a Streamlit selectbox (a react-aria combobox): type, then click it."""
    box = page.get_by_role("combobox", name=re.compile("^" + re.escape(label)))  # not "Only these item classes"
    box.click()
    box.press_sequentially(option)
    page.get_by_role("option", name=option, exact=True).click()


def code_blocks(page, text: str):
    return page.locator('[data-testid="stCode"]').filter(has_text=text)


def cli_runs(data: Path) -> list[dict]:
    out = subprocess.run([str(VENV_BIN / "evalcore"), "--data", str(data), "runs", "--json"], capture_output=True,
                         text=True, check=True, cwd=REPO)
    return json.loads(out.stdout)


def check_runs_match_cli(page, base: str, data: Path) -> list[dict]:
    shown = open_runs_table(page, base)
    expected = cli_runs(data)
    assert len(shown) == len(expected) > 0
    by_id = {r["run"]: r for r in shown}
    assert sorted(by_id) == sorted(r["run_id"] for r in expected)
    for r in expected:
        row = by_id[r["run_id"]]
        flag = "complete" if r["status"] == "complete" else f"⚠ {r['status']}"
        assert row["status"] == flag, r["run_id"]
        ap = r["all_pass"]
        want = "-" if ap is None else f"{100 * ap['rate']:.1f}% [{100 * ap['ci95'][0]:.1f}, {100 * ap['ci95'][1]:.1f}]"
        assert row["all pass"] == want, r["run_id"]
        for i, rate in enumerate(r["all_pass_by_round"], 1):
            assert row[f"all pass r{i}"] == ("-" if rate is None else f"{100 * rate:.1f}%"), (r["run_id"], i)
        assert row["calls"] == str(r["calls"])
    flagged = [r["run_id"] for r in expected if r["status"] != "complete"]
    warning = page.locator('[data-testid="stAlertContentWarning"]').first.inner_text()
    for run_id in flagged:
        assert f"{run_id} is {next(r['status'] for r in expected if r['run_id'] == run_id)}" in warning
    return expected


# --------------------------------------------------------------------------- tests


def test_runs_table_matches_the_cli_on_the_test_world(page, world_app):
    base, data = world_app
    expected = check_runs_match_cli(page, base, data)
    assert {r["status"] for r in expected} == {"complete", "partial", "polluted"}


def test_runs_table_matches_the_cli_on_the_bundled_demo(page, demo_app):
    base, data = demo_app
    expected = check_runs_match_cli(page, base, data)
    status = {r["run_id"]: r["status"] for r in expected}
    assert status.get("support-polluted") == "polluted" and status.get("support-partial") == "partial"
    body = page.inner_text("body")
    assert "SIMULATED demo data" in body


def test_an_arm_of_the_open_practice_session_is_withheld_on_the_runs_page(page, demo_app):
    """The demo's practice session is open: an answer of its arm accounts-g1, opened by link on
    the Runs page, reads as the withheld line, not as the answer (docs/PAIRWISE.md, sealing)."""
    import pyarrow.parquet as pq

    base, data = demo_app
    out = pq.read_table(data / "generations" / "accounts-g1" / "outputs.parquet").to_pylist()
    first = next(r for r in out if r["round"] == 1 and r["output"])
    page.goto(f"{base}/?run=accounts-g1-split&item={first['item_id']}&round=1")
    page.get_by_text("withheld").first.wait_for(timeout=30_000)
    wait_idle(page)
    text = page.inner_text("body")
    assert "open pairwise session accounts-practice" in text
    assert first["output"].splitlines()[0] not in text


def test_hostile_answer_is_shown_as_text_and_loads_nothing(page, world_app, recorder):
    base, _ = world_app
    recorder.hits.clear()
    page.goto(f"{base}/?run={RUN_SINGLE}&item=q1&round=1")
    page.get_by_text("Verdicts, judge round 3").wait_for(timeout=30_000)
    # st.code is drawn a moment after its label; wait for all 9 reasons (3 criteria x 3 judge rounds)
    page.wait_for_function("() => (document.body.innerText.match(/reason:/g) || []).length >= 9", timeout=10_000)
    wait_settled(page)  # any image has loaded or failed (none may be drawn)
    text = page.inner_text("body")
    assert "<script>window.__pwned=1</script>" in text
    assert f'<img src="http://127.0.0.1:{recorder.port}/img.png">' in text
    assert f"![x](http://127.0.0.1:{recorder.port}/md.png)" in text
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator(f'img[src*=":{recorder.port}"]').count() == 0
    assert recorder.hits == []


def test_hostile_run_id_in_a_link_is_an_inert_error(page, world_app, recorder):
    base, _ = world_app
    recorder.hits.clear()
    bad = f"![x](http://127.0.0.1:{recorder.port}/err.png)"
    page.goto(f"{base}/?run={bad}&item=q1")
    err = page.locator('[data-testid="stAlertContentError"]').first
    err.wait_for(timeout=30_000)
    wait_settled(page)
    assert bad in err.inner_text() and "is not a valid run id" in err.inner_text()
    assert recorder.hits == []


def test_choosing_a_run_and_item_puts_them_in_the_link(page, world_app):
    base, _ = world_app
    page.goto(base + "/runs")
    page.get_by_text("Runs as a plain table (copyable text)").wait_for(timeout=30_000)
    wait_idle(page)
    choose(page, "Run", RUN_POLLUTED)
    page.wait_for_url(f"**run={RUN_POLLUTED}**", timeout=15_000)
    wait_idle(page)
    choose(page, "Item", "q2")
    page.wait_for_url("**item=q2**", timeout=15_000)
    code_blocks(page, "error: provider timeout after 3 attempts").first.wait_for(timeout=10_000)
