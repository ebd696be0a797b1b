"""Helpers shared by the app tests, the browser tests and docs/screenshot.py.

* :func:`make_world` writes a small data directory through :class:`evalcore.Store` (one suite,
  one generation with two rounds, four runs: complete single, complete split, polluted, partial;
  one shipped label set), optionally with a hostile answer.
* :func:`start_app` starts ``streamlit run app.py`` on a free loopback port and waits for
  ``/_stcore/health`` (with ``secrets``, a secrets.toml of the test's own passed through
  ``--secrets.files``); :func:`chromium_path` finds Debian's chromium; :func:`guard_page` routes
  every request of a Playwright page and aborts (and records) any that would leave 127.0.0.1.
* :func:`start_oidc_provider` runs a real OpenID Connect provider (the ``oidc-provider-mock``
  package) on 127.0.0.1 in a thread, and :func:`auth_secrets` is the ``[auth]`` section that points
  Streamlit's st.login at it; :func:`log_in` goes through the provider's sign-in form.
* :func:`press_when_ready` presses a shortcut key once the buttons are drawn and the run is idle.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

# The run ids of make_world, by what they are.
RUN_SINGLE, RUN_SPLIT, RUN_POLLUTED, RUN_PARTIAL = "t-single", "t-split", "t-polluted", "t-partial"
ITEMS = [f"q{k}" for k in range(1, 7)]
CRITERIA = ["complete", "grounded", "concise"]


def make_world(data: Path, *, hostile: str | None = None, hostile_item: str = "q1", simulated: bool = True,
               strings=None) -> Path:
    """Write a small, deterministic data directory into ``data`` (created) and return it.

    ``simulated=False`` writes manifests that do not say simulated (no demo badge in the app).
    With ``hostile``, that text becomes the answer to ``hostile_item`` in round 1, part of the
    item's input and part of every judge reason on it. With ``strings`` (a function of a field's
    name returning the text to put in it), every free string field of the data holds that text:
    the fourth item's id, the item classes, the criteria's descriptions, the judge and generator
    model names, knob values, the descriptions, the call errors and the shipped annotator's name.
    """
    S_ = strings or (lambda tag: None)
    items_ids = list(ITEMS)
    if strings:
        items_ids[3] = "q4" + strings("item_id")
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data = Path(data)
    data.mkdir(parents=True, exist_ok=True)
    store = Store(data, data.parent / f"{data.name}-unused-state")
    when = "2026-01-01T00:00:00Z"
    source = "simulated" if simulated else "imported"

    items = []
    for k, iid in enumerate(items_ids, 1):
        text = f"How do I reset the password of account {k}?"
        if hostile and iid == hostile_item:
            text += " " + hostile
        items.append({"item_id": iid, "input": text, "context": f"Passage {k}: resets are done in Settings.",
                      "must_have": ["names the Settings page", f"mentions account {k}"],
                      "class": ("billing" if k % 2 else "access") + (S_("class") or ""), "holdout": k == 6})
    sm = S.SuiteManifest(suite_id="t-suite", created_at=when, content_hash=S.content_hash(items),
                         n_items=len(items), description="test suite" + (S_("suite description") or ""),
                         simulated=simulated)
    store.write_suite(sm, items)

    outputs = []
    for k, iid in enumerate(items_ids, 1):
        for r in (1, 2):
            text = f"Open Settings and reset account {k} (round {r})."
            if hostile and iid == hostile_item and r == 1:
                text = hostile
            outputs.append({"item_id": iid, "round": r, "output": text, "abstained": k == 5 and r == 2,
                            "tokens_in": 100 + k, "tokens_out": 40 + r, "cost_usd": 0.0002,
                            "latency_ms": 800.0 + 10 * k})
    gm = S.GenerationManifest(gen_id="t-gen", suite_id="t-suite", suite_hash=sm.content_hash, created_at=when,
                              knobs={"generator_model": "sim-writer-1" + (S_("generator model") or ""),
                                     "temperature": 0.3, **({"note": S_("knob")} if strings else {})}, rounds=2,
                              source=source, outputs_hash=S.content_hash(outputs), simulated=simulated)
    store.write_generation(gm, outputs)

    rubric = S.Rubric(criteria=[S.Criterion(name=c, kind="binary",
                                            description=f"is the answer {c}?" + (S_("criterion description") or ""))
                                for c in CRITERIA])
    judge_model = "sim-judge-1" + (S_("judge model") or "")

    def run(run_id: str, mode: str, judge_rounds: int, status: str, *, drop: set[str] = frozenset(),
            fail: set[tuple[str, int]] = frozenset(), p_pass: float = 0.7) -> None:
        verdicts, calls = [], []
        for k, iid in enumerate(items_ids, 1):
            if iid in drop:
                continue
            for r in (1, 2):
                for jr in range(1, judge_rounds + 1):
                    groups = [CRITERIA] if mode == "single" else [[c] for c in CRITERIA]
                    for g, crits in enumerate(groups):
                        cid = f"{run_id}-{iid}-{r}-{jr}-{g}"
                        err = ("provider timeout after 3 attempts" + (S_("call error") or "")) if (iid, jr) in fail else None
                        calls.append({"call_id": cid, "item_id": iid, "gen_round": r, "judge_round": jr,
                                      "criteria": crits, "model": judge_model, "tokens_in": 500, "tokens_out": 60,
                                      "cost_usd": 0.001, "latency_ms": 1000.0 + 100 * jr, "attempts": 3 if err else 1,
                                      "error": err})
                        for pos, c in enumerate(crits):
                            draw = random.Random(f"{run_id}/{iid}/{r}/{jr}/{c}").random()
                            passed = None if err else draw < p_pass
                            reason = f"The answer {'meets' if passed else 'misses'} '{c}'."
                            if hostile and iid == hostile_item:
                                reason += " " + hostile
                            verdicts.append({"run_id": run_id, "item_id": iid, "gen_round": r, "criterion": c,
                                             "judge_round": jr, "passed": passed,
                                             "raw_verdict": None if err else ("yes" if passed else "no"),
                                             "reason": None if err else reason,
                                             "position": pos if mode == "single" else 0, "call_id": cid,
                                             "error": err})
        failed = sorted({c["call_id"] for c in calls if c["error"]})
        rm = S.RunManifest(run_id=run_id, gen_id="t-gen", created_at=when, rubric=rubric, rubric_hash=rubric.hash(),
                           mode=mode, field_order=CRITERIA, judge_model=judge_model, source=source,
                           status=status, judge_rounds=judge_rounds, failed_call_ids=failed, simulated=simulated,
                           description=f"{mode} harness" + (S_("run description") or ""),
                           knobs={"judge_note": S_("run knob")} if strings else {})
        store.write_run(rm, verdicts, calls)

    run(RUN_SINGLE, "single", 3, "complete")
    run(RUN_SPLIT, "split", 1, "complete", p_pass=0.55)
    run(RUN_POLLUTED, "split", 2, "polluted", fail={("q2", 1), ("q3", 2)})
    run(RUN_PARTIAL, "single", 1, "partial", drop={"q5", "q6"}, p_pass=0.8)

    annotator = "ann" + (S_("annotator") or "")
    labels = [{"item_id": iid, "gen_round": 1, "criterion": c, "annotator": annotator,
               "value": "pass" if (k + j) % 2 else "fail", "passed": bool((k + j) % 2)}
              for k, iid in enumerate(items_ids) for j, c in enumerate(CRITERIA)]
    lm = S.LabelSetManifest(labelset_id="t-human", gen_id="t-gen", created_at=when, annotators=[annotator],
                            description="one simulated annotator" + (S_("labelset description") or ""),
                            simulated=simulated)
    store.write_labelset(lm, labels)
    return data


# --------------------------------------------------------------------------- the app server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_bin() -> str:
    exe = VENV_BIN / "streamlit"
    return str(exe) if exe.exists() else (shutil.which("streamlit") or "streamlit")


@contextmanager
def start_app(data: Path, state: Path, *, port: int | None = None, timeout: float = 180.0,
              extra_args: list[str] = (), secrets: str | None = None) -> Iterator[str]:
    """Run ``streamlit run app.py`` on 127.0.0.1 and yield its base URL; stop it afterwards.

    ``secrets``: the text of a secrets.toml (e.g. :func:`auth_secrets`), written beside the state
    directory and given to Streamlit as its only secrets file (``--secrets.files``), so neither
    the repository's nor the user's ``.streamlit/secrets.toml`` is read."""
    port = port or free_port()
    if secrets is not None:
        sfile = Path(state).parent / f"secrets-{port}" / "secrets.toml"
        sfile.parent.mkdir(parents=True, exist_ok=True)
        sfile.write_text(secrets, encoding="utf-8")
        extra_args = [*extra_args, "--secrets.files", str(sfile)]
    log = Path(state).parent / f"streamlit-{port}.log"
    with serve(REPO, data, state, log, port=port, timeout=timeout, extra_args=extra_args) as (base, _proc):
        yield base


@contextmanager
def serve(root: Path, data: Path, state: Path, log: Path, *, port: int | None = None, timeout: float = 180.0,
          extra_args: list[str] = ()) -> Iterator[tuple[str, subprocess.Popen]]:
    """``streamlit run <root>/app.py`` on 127.0.0.1 over ``data`` / ``state`` (its output in
    ``log``) until healthy; yields (base URL, process) and stops it afterwards. The browser tests
    (through :func:`start_app`) and the page benchmarks (bench/review_page.py,
    bench/agreement_page.py, which time the process) start the app here."""
    port = port or free_port()
    env = {**os.environ, "EVALCORE_DATA": str(data), "EVALCORE_STATE": str(state),
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [streamlit_bin(), "run", str(Path(root) / "app.py"), "--server.headless", "true", "--server.address",
           "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType",
           "none", *extra_args]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}: {log.read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(base + "/_stcore/health", timeout=1) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy in {timeout}s: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            yield base, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --------------------------------------------------------------------------- a local OIDC provider


@contextmanager
def start_oidc_provider(users: dict[str, dict]) -> Iterator[str]:
    """A real OpenID Connect provider (``oidc_provider_mock``, Authlib underneath) on 127.0.0.1:
    ``users`` maps a subject to its claims (email, name, roles...), each offered on the sign-in
    form. A user with an ``email`` and no ``email_verified`` gets ``email_verified: true``, as a
    provider that checked the address sends it (the app trusts an email only then: docs/ACCESS.md);
    give ``email_verified: False`` to send an unverified one. Yields the issuer URL (the ``iss`` of
    its tokens); the server stops afterwards."""
    import threading

    import oidc_provider_mock
    import werkzeug.serving

    def token_claims(claims: dict) -> dict:
        return {"email_verified": True, **claims} if "email" in claims else dict(claims)

    app = oidc_provider_mock.app(require_nonce=True, user_claims=[
        oidc_provider_mock.User(sub=sub, claims=token_claims(claims)) for sub, claims in users.items()])
    server = werkzeug.serving.make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def auth_secrets(issuer: str) -> str:
    """The ``[auth]`` section of secrets.toml for st.login against ``issuer`` (Streamlit fills in
    ``{port}`` of the redirect URI with its own port)."""
    import secrets as _secrets

    return "\n".join([
        "[auth]",
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"',
        f'cookie_secret = "{_secrets.token_hex(16)}"',
        'client_id = "evalcore-tests"',
        f'client_secret = "{_secrets.token_hex(8)}"',
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"',
        "",
    ])


def log_in(page, base: str, sub: str, timeout: float = 30_000) -> None:
    """Open the app, press its "Log in" button (st.login), choose ``sub`` on the provider's form
    and wait until the app is back with someone logged in."""
    page.goto(base)
    page.get_by_role("button", name="Log in").first.wait_for(timeout=timeout)
    wait_idle(page)
    page.get_by_role("button", name="Log in").first.click()
    page.get_by_role("button", name=sub, exact=True).click(timeout=timeout)  # the provider's form
    page.wait_for_url(lambda u: u.startswith(base), timeout=timeout)
    page.get_by_text("Logged in as").wait_for(timeout=timeout)
    wait_idle(page)


# --------------------------------------------------------------------------- the browser


def chromium_path() -> str | None:
    """Debian's chromium, or None when it is not installed."""
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return (parts.hostname or "") in LOCAL_HOSTS


def guard_page(page, outside: list[str]) -> None:
    """Abort and record every request (and WebSocket) of ``page`` that is not for 127.0.0.1."""

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("websocket", lambda ws: None if is_local(ws.url) else outside.append(ws.url))


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


def wait_idle(page, timeout: float = 20_000) -> None:
    """Wait until the Streamlit script run is over: the app's status widget says nothing, and no
    element of the previous run is left on the page (``data-stale``: Streamlit removes those at
    the end of a run, and a stale button still answers its shortcut key)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_function(
        "() => { const s = document.querySelector('[data-testid=\"stStatusWidget\"]');"
        " return (!s || !/Running|Connecting/i.test(s.innerText))"
        " && !document.querySelector('[data-stale=\"true\"]'); }", timeout=timeout)


DRAWN = """() => { const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testConnectionState === 'CONNECTED' && app.dataset.testScriptState === 'notRunning'
    && !!document.querySelector('[data-testid="stMain"] :is([data-testid="stHeading"], [data-testid="stAlert"],'
      + ' [data-testid="stException"])'); }"""


PAGE_STEADY = """() => new Promise(done => {
  const boxes = () => JSON.stringify([...document.querySelectorAll('[data-testid="stMain"] [data-testid]')]
    .map((e) => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }));
  const first = boxes();
  requestAnimationFrame(() => requestAnimationFrame(() =>
    done([...document.images].every((i) => i.complete) && first === boxes()
      && !document.querySelector('[data-testid="stMain"] [data-testid="stSkeleton"]'))));
})"""


def wait_settled(page, timeout: float = 60_000, looks: int = 1200) -> None:
    """Wait for the page's own signals that it is drawn, never a fixed pause (issue 45): the script
    run idle (:func:`wait_idle`), every image loaded or failed (``img.complete``: an image a page
    should not have drawn has been requested by then), no element of the main area moved
    between two animation frames (tables and charts have their heights), and no skeleton left in
    it (Streamlit draws one where a data grid or a chart waits for its code to load). Gives up after ``looks``
    looks of two frames each. First the app must be connected, its script not running and the main
    area must hold a heading, an alert or an exception: right after a navigation the app has drawn
    nothing yet, and nothing is also steady."""
    page.wait_for_function(DRAWN, timeout=timeout)
    wait_idle(page, timeout=timeout)
    for _ in range(looks):
        if page.evaluate(PAGE_STEADY):
            return
    raise AssertionError(f"the page at {page.url} did not settle in {looks} looks of two animation frames")


STEADY = """el => new Promise(done => {
  const box = () => JSON.stringify(el.getBoundingClientRect());
  const first = box();
  requestAnimationFrame(() => requestAnimationFrame(() => done(first === box())));
})"""


def click_chart(page, chart, dx: float, dy: float, until: str, timeout: float = 60_000) -> None:
    """Click ``chart`` (a Streamlit chart element) at (dx, dy) from its top left corner, once its
    drawing is on the page and has stopped moving, until the page function ``until`` holds.

    Nothing here waits a fixed time: the click is repeated (after the box is steady again) when a
    busy machine drew the chart's event handlers after the first click landed."""
    import time

    drawn = chart.locator("canvas, svg.marks").first
    drawn.wait_for(state="visible", timeout=timeout)
    deadline = time.monotonic() + timeout / 1000
    while True:
        wait_idle(page, timeout)
        drawn.scroll_into_view_if_needed()
        while not drawn.evaluate(STEADY) and time.monotonic() < deadline:
            pass
        box = chart.bounding_box()
        assert box is not None, "the chart is not on the page"
        page.mouse.click(box["x"] + dx, box["y"] + dy)
        try:
            page.wait_for_function(until, timeout=10_000)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise


def type_name(page, name: str) -> None:
    """Give the Review page the reviewer's name (no login): click the box, type, Enter."""
    box = page.get_by_label("Your name")
    box.wait_for(timeout=30_000)
    wait_idle(page)
    box.click()
    page.keyboard.type(name)
    page.keyboard.press("Enter")


def press_when_ready(page, key: str, button: str, timeout: float = 20_000) -> None:
    """Press ``key`` once the button whose label starts with ``button`` is drawn (its accessible
    name also holds the shortcut key), the script run is idle and the focus is not in a text field
    (where Streamlit ignores shortcut keys)."""
    import re

    page.get_by_role("button", name=re.compile("^" + re.escape(button))).first.wait_for(
        state="visible", timeout=timeout)
    wait_idle(page, timeout)
    page.wait_for_function(
        "() => { const a = document.activeElement;"
        " return !a || !['INPUT', 'TEXTAREA'].includes(a.tagName); }", timeout=timeout)
    page.keyboard.press(key)


def unavailable(reason: str):
    """Skip a browser test, or fail it when EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run)."""
    import os

    import pytest
    if os.environ.get("EVALCORE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (EVALCORE_REQUIRE_BROWSER=1, so browser tests must run)")
    pytest.skip(reason)


# ---- the review card (pages/_card.py)
CARD = '[data-testid="evalcore-card"]'


def card_case(page, not_this: str | None = None, timeout: float = 60_000) -> str:
    """Wait until the review card shows a case (other than ``not_this``) and return its key
    (item, round and criterion joined by the unit separator)."""
    page.wait_for_function(
        f"(prev) => {{ const c = document.querySelector('{CARD}'); "
        "return !!c && c.dataset.state === 'case' && c.dataset.case !== prev; }",
        arg=not_this or "", timeout=timeout)
    return page.get_attribute(CARD, "data-case")


def card_key(key: str) -> tuple[str, int, str]:
    item, rnd, crit = key.split("\x1f")
    return item, int(rnd), crit


def card_choices(page) -> list[str]:
    """The card's decision values, in the order of their keys 1, 2, 3..."""
    return page.evaluate(
        f"() => [...document.querySelectorAll('{CARD} .ec-choice')]"
        ".map((b) => b.childNodes[1].textContent.replace(/^Revise: /, ''))")


def card_decide(page, value: str) -> None:
    """Press the key of ``value`` on the card (its position among the choices: 1, 2, 3...)."""
    page.keyboard.press(str(card_choices(page).index(value) + 1))


def card_saved(page, timeout: float = 60_000) -> None:
    """Wait until every decision the card sent is acknowledged by the server."""
    page.wait_for_function(f"() => document.querySelector('{CARD}').dataset.pending === '0'", timeout=timeout)
