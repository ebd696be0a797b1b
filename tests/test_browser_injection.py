"""Every string that comes from data or from people is shown as text on every page.

A world whose every free string field holds HTML, Markdown images and links, a ``javascript:``
URL, autolinks and a Streamlit icon shortcode (item id, item class, criterion descriptions, judge
and generator model names, knob values, descriptions, call errors, the shipped annotator), with a
reviewer, a note and a ledger entry in the state directory that hold the same, is opened in
Debian's chromium on every page of the app (with a run, an item and a queue chosen where a page
needs them). Each payload points at a recording server on a second loopback port and at
example.org, tagged with its field. A page fails on any request to the recorder or off the
machine (the page guard records those), and on any live element made from a payload: an ``<img>``
or ``<a>`` whose target is the recorder, a ``javascript:`` link, a ran ``<script>``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from urllib.parse import quote

import pytest
from browser_util import RUN_SINGLE, guard_page, make_world, start_app, type_name, wait_idle, wait_settled
from test_browser import Recorder

pytestmark = pytest.mark.browser


def payload(port: int, tag: str) -> str:
    t = re.sub(r"[^a-z0-9]+", "-", tag)
    return (f' <img src="http://127.0.0.1:{port}/{t}.png"> ![m](http://127.0.0.1:{port}/{t}-md.png)'
            f" ![e](https://example.org/{t}.png) [go](javascript:window.__pwned={t!r}) [l](http://127.0.0.1:{port}/{t}-a)"
            f" <http://127.0.0.1:{port}/{t}-auto> www.example.org/{t} :material/home: <b>bold-{t}</b>"
            f" <script>window.__pwned={t!r}</script>")


@pytest.fixture(scope="module")
def recorder():
    r = Recorder()
    yield r
    r.close()


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory, recorder, browser):
    root = tmp_path_factory.mktemp("injection")
    port = recorder.port
    data = make_world(root / "data", strings=lambda tag: payload(port, tag), simulated=False)
    state = root / "state"
    hostile_item = "q4" + payload(port, "item_id")
    env_args = ["--data", str(data), "--state", str(state)]

    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "evalcore", *env_args, *args], capture_output=True, text=True)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout

    reviewer = "rev" + payload(port, "reviewer")
    cli("labels", "add", "--item", hostile_item, "--criterion", "grounded", "--value", "fail", "--reviewer", reviewer,
        "--note", "note" + payload(port, "note"), "--gen", "t-gen", "--tag", "tag" + payload(port, "label tag"))
    for k, it in enumerate(["q1", "q2", "q3", hostile_item]):  # a second reviewer, who disagrees on some
        for who, value in ((reviewer, "pass" if k % 2 else "fail"), ("rev2" + payload(port, "reviewer two"), "pass")):
            cli("labels", "add", "--item", it, "--criterion", "complete", "--value", value, "--reviewer", who,
                "--gen", "t-gen", "--note", "n" + payload(port, "note two"))
    cli("queue", "build", "t-gen")
    cli("ledger", "add", "--title", "title" + payload(port, "ledger title"), "--by", "by" + payload(port, "ledger by"),
        "--baseline", "t-split", "--candidate", RUN_SINGLE, "--note", "lnote" + payload(port, "ledger note"))
    queues = json.loads(cli("queue", "list", "--json"))
    with start_app(data, state) as base:
        yield base, hostile_item, queues[0]["queue_id"]


def _pages(item: str, queue: str) -> list[str]:
    it = quote(item, safe="")
    return [
        "/",
        f"/?run={RUN_SINGLE}&item={it}&round=1",
        "/runs?run=t-polluted&item=q2&round=1",
        f"/attribution?run={RUN_SINGLE}",
        "/association",
        f"/association?runs={RUN_SINGLE},t-split",
        "/harness",
        f"/review?queue={queue}",
        f"/review?queue={queue}&item={it}&criterion=grounded&round=1",
        f"/agreement?run={RUN_SINGLE}",
        "/labels",
        "/suites",
        "/pairwise_grading",
        "/pairwise_results",
        "/compare",
        f"/cost?run={RUN_SINGLE}",
        "/ledger",
    ]


_LIVE = """port => {
  const bad = [];
  for (const el of document.querySelectorAll('img[src], a[href], iframe, source, video, audio, link[href]')) {
    const url = el.getAttribute('src') || el.getAttribute('href') || '';
    if (url.includes(':' + port) || /^\\s*javascript:/i.test(url) || url.includes('example.org'))
      bad.push(el.tagName + ' ' + url);
  }
  for (const el of document.querySelectorAll('b')) if (/^bold-/.test(el.textContent)) bad.push('B ' + el.textContent);
  if (typeof window.__pwned !== 'undefined') bad.push('script ran: ' + window.__pwned);
  return bad;
}"""


def test_every_page_shows_every_data_string_as_text(browser, hostile_app, recorder):
    base, item, queue = hostile_app
    problems: dict[str, list[str]] = {}
    shown: dict[str, list[str]] = {}  # the payloads each page showed, as text
    for path in _pages(item, queue):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        outside: list[str] = []
        guard_page(page, outside)
        recorder.hits.clear()
        page.goto(base + path)
        wait_idle(page, timeout=60_000)
        if path.startswith("/review"):  # a reviewer's name opens the case
            type_name(page, "tester")
            wait_idle(page, timeout=60_000)
        wait_settled(page, timeout=60_000)  # any image has loaded or failed
        # open every expander so what is drawn inside them is in the DOM too
        for exp in page.locator('[data-testid="stExpander"] summary').all():
            try:
                exp.click(timeout=2000)
            except Exception:
                pass
        wait_idle(page, timeout=60_000)
        # an opened expander draws its content a moment after the click: wait until each has some
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('[data-testid=\"stExpander\"] details')].every((d) => !d.open"
                " || ((d.querySelector('[data-testid=\"stExpanderDetails\"]') || {}).innerText || '').trim())",
                timeout=30_000)
        except Exception:
            pass  # an expander with nothing in it: the looks below still wait for the page to settle
        # what a page draws a moment after its run (code blocks, tables below the fold) is waited
        # for: the payloads shown as text until two looks agree, each look once the page has settled
        seen_here: list[str] | None = None
        for look in range(28):
            wait_settled(page, timeout=60_000)
            now = sorted(set(re.findall(r"<b>bold-([a-z0-9-]+)</b>", page.inner_text("body").replace("\u2060", ""))))
            if now == seen_here and look >= 3:
                break
            seen_here = now
        seen_here = sorted(set(seen_here or []) | set(  # one more look, after the looks agreed
            re.findall(r"<b>bold-([a-z0-9-]+)</b>", page.inner_text("body").replace("\u2060", ""))))
        # and every tab (a tab's panel is not drawn as text until it is chosen)
        for tab in page.get_by_role("tab").all():
            try:
                tab.click(timeout=2000)
            except Exception:
                continue
            wait_settled(page, timeout=60_000)
            seen_here = sorted(set(seen_here or []) | set(
                re.findall(r"<b>bold-([a-z0-9-]+)</b>", page.inner_text("body").replace("\u2060", ""))))
        shown[path] = seen_here or []
        live = page.evaluate(_LIVE, recorder.port)
        errors = page.locator('[data-testid="stException"]').all_inner_texts()
        got = live + [f"request {h}" for h in recorder.hits] + [f"outside {u}" for u in outside] + \
            [f"exception {e[:200]}" for e in errors]
        if got:
            problems[path] = sorted(set(got))
        ctx.close()
    assert problems == {}, json.dumps(problems, indent=1)
    # and the strings were on the pages, as text (those drawn in data grids are canvas, not text)
    seen = {t for tags in shown.values() for t in tags}
    print("payloads shown as text:", sorted(seen))
    assert {"item-id", "judge-model", "criterion-description", "call-error", "ledger-title", "ledger-note",
            "label-tag", "reviewer", "reviewer-two", "annotator"} <= seen, sorted(seen)
