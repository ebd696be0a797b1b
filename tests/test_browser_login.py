"""Logging in through Streamlit's own st.login against a real OpenID Connect provider on 127.0.0.1
(``oidc-provider-mock``), in a real browser (Debian chromium driven by Playwright).

* A grader (roles.toml of the state directory: role grader, one assigned session) gets the
  Pairwise grading page of that session alone: every other page's URL is a refusal, another
  session in a link is not offered, and across every page it reaches, the HTML, every websocket
  frame the browser received and the server's log hold no arm name (random UUIDs) and no
  generation id of the open session.
* The control: a reviewer whose role comes from the provider's ``roles`` claim (not the file)
  opens Runs, and the same checks do find the generation ids in what it received, so the
  grader's checks could fail.
* Identity from verified claims only (issue 38.1): with adam@example.org an adjudicator in
  roles.toml, a token with only ``preferred_username: adam@example.org``, one with
  ``email: ADAM@example.org, email_verified: false`` and one whose ``sub`` is adam@example.org get
  no Ledger and grade under their own ``ISSUER#SUB``; Adam's verified email opens the Ledger and
  grades as adam@example.org.
* Without login (issue 38.7): every page's URL says that the app trusts whoever types a name;
  with ``require_login`` in roles.toml the Ledger and Suites URLs say in one line that they need a
  login.

Without chromium the tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import re
import uuid

import pytest
from browser_util import (
    auth_secrets,
    guard_page,
    log_in,
    press_when_ready,
    start_app,
    start_oidc_provider,
    wait_idle,
)
from test_pairs import make_world

from evalcore import pairwise as P

pytestmark = pytest.mark.browser

GRADER, REVIEWER = "gus@example.org", "rita@example.org"
USERS = {
    GRADER: {"email": GRADER, "name": "Gus Grader"},
    REVIEWER: {"email": REVIEWER, "name": "Rita Reviewer", "roles": ["reviewer"]},  # the role from the claim
}
OTHER_URLS = ["runs", "attribution", "association", "harness", "review", "agreement", "labels", "suites",
              "pairwise_results", "compare", "cost", "ledger"]


# The provider's own sign-in form (a test fixture, not the app) links a stylesheet from a CDN; the
# guard aborts it like any request that would leave 127.0.0.1, and only that one is expected.
PROVIDER_CSS = "https://cdn.jsdelivr.net/npm/@picocss/"


def left_127(outside: list[str]) -> list[str]:
    return [u for u in outside if not u.startswith(PROVIDER_CSS)]


def secrets_of(words: list[str]) -> list[str]:
    """What must not be seen: each word and its hex without dashes, lower case."""
    out = []
    for w in words:
        out += [w.lower(), w.replace("-", "").lower()]
    return out


def found(blob: str, words: list[str]) -> list[str]:
    low = blob.lower()
    return [w for w in words if w in low]


@pytest.fixture
def world(tmp_path):
    arms = (str(uuid.uuid4()), str(uuid.uuid4()))
    w = make_world(tmp_path, arms, n_items=8, seed=5)
    for sid in ("blind-1", "blind-2"):
        P.make_session(w["store"], sid, [f"{arms[0]}={w['gens'][0]}", f"{arms[1]}={w['gens'][1]}"], n_perm=9,
                       keys_dir=tmp_path / "keys")
    w["state"].mkdir(parents=True, exist_ok=True)
    (w["state"] / "roles.toml").write_text(  # the domain in capitals: an email's domain compares without case
        '[users."gus@EXAMPLE.ORG"]\nroles = ["grader"]\nsessions = ["blind-1"]\n', encoding="utf-8")
    w["hidden"] = secrets_of([*arms, *w["gens"]])
    return w


@pytest.fixture
def provider():
    with start_oidc_provider(USERS) as issuer:
        yield issuer


def watch(page) -> list[str]:
    """Every websocket frame the page receives, as text (protobuf strings are plain UTF-8)."""
    frames: list[str] = []

    def on_ws(ws):
        ws.on("framereceived", lambda payload: frames.append(
            payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload))

    page.on("websocket", on_ws)
    return frames


def test_a_grader_reaches_the_grading_page_of_their_session_alone(browser, world, provider, tmp_path):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    frames = watch(page)
    html: list[str] = []
    with start_app(world["data"], world["state"], secrets=auth_secrets(provider)) as base:
        # before logging in, every page is the log-in page
        page.goto(f"{base}/runs")
        page.get_by_role("button", name="Log in").wait_for(timeout=60_000)  # a cold server
        wait_idle(page)
        assert page.get_by_role("heading", name="Runs", exact=True).count() == 0
        html.append(page.content())
        log_in(page, base, GRADER)
        page.get_by_role("heading", name="Pairwise grading").wait_for(timeout=20_000)
        total = len(P.load_pairs(world["store"], "blind-1"))
        page.get_by_text(f"0 of {total} pairs graded").wait_for(timeout=20_000)
        # named by the login (shown inert: a word joiner before the @ keeps it from becoming a link)
        page.get_by_text(re.compile(r"Grading as Gus Grader \(gus\u2060?@example\.org\)")).wait_for(timeout=20_000)
        wait_idle(page)
        assert page.get_by_role("textbox").count() == 0  # the name comes from the login: no text box
        html.append(page.content())
        # the session picker offers the assigned session alone: the other one is never even sent
        assert "blind-1" in "\n".join(frames) and "blind-2" not in "\n".join(frames)
        for k, key in enumerate(["a", "d", "s"], start=1):
            press_when_ready(page, key, "Left better")
            page.get_by_text(f"{k} of {total} pairs graded").wait_for(timeout=20_000)
            wait_idle(page)
            html.append(page.content())
        nav = page.locator('[data-testid="stSidebarNav"]')
        assert nav.count() == 0 or "Runs" not in nav.inner_text()  # one page: no menu of the others
        # every other page's URL is a refusal, not the page
        for url in OTHER_URLS:
            page.goto(f"{base}/{url}")
            page.get_by_text("not available to your role").wait_for(timeout=20_000)
            wait_idle(page)
            assert page.locator('[data-testid="stDataFrame"]').count() == 0
            assert page.get_by_role("heading", name="Not available").count() == 1
            html.append(page.content())
        # a link to the other session opens the assigned one
        page.goto(f"{base}/pairwise_grading?session=blind-2")
        page.get_by_text(f"3 of {total} pairs graded").wait_for(timeout=20_000)
        wait_idle(page)
        assert "blind-2" not in page.content()
        html.append(page.content())
    ctx.close()
    assert left_127(outside) == [], f"requests that would have left 127.0.0.1: {outside}"
    assert [j["reviewer"] for j in P.JudgmentStore(world["store"]).current("blind-1")] == [GRADER] * 3
    assert P.JudgmentStore(world["store"]).current("blind-2") == []
    assert len(frames) > 20  # the frames were seen
    assert "blind-2" not in "\n".join(frames)
    log = "".join(p.read_text(errors="replace") for p in tmp_path.glob("streamlit-*.log"))
    for where, blob in (("html", "\n".join(html)), ("websocket", "\n".join(frames)), ("server log", log)):
        assert found(blob, world["hidden"]) == [], where


def test_a_reviewer_by_claim_opens_runs_and_the_checks_see_what_it_shows(browser, world, provider):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    frames = watch(page)
    with start_app(world["data"], world["state"], secrets=auth_secrets(provider)) as base:
        log_in(page, base, REVIEWER)
        page.goto(f"{base}/runs")
        page.get_by_role("heading", name="Runs", exact=True, level=1).wait_for(timeout=20_000)
        wait_idle(page)
        assert page.get_by_text("not available to your role").count() == 0
        page.get_by_text("Logged in as Rita Reviewer").wait_for(timeout=20_000)
        # a page reviewers may not open (the ledger is for adjudicators and admins)
        page.goto(f"{base}/ledger")
        page.get_by_text("not available to your role").wait_for(timeout=20_000)
        # the log-out button ends the login: the log-in page again
        page.goto(base)
        page.get_by_role("button", name="Log out").click()
        page.get_by_role("button", name="End session").click(timeout=30_000)  # the provider's own step
        page.get_by_role("button", name="Log in").wait_for(timeout=30_000)
        page.goto(f"{base}/runs")
        page.get_by_role("button", name="Log in").wait_for(timeout=30_000)
        wait_idle(page)
        assert page.get_by_role("heading", name="Runs", exact=True).count() == 0
    ctx.close()
    assert left_127(outside) == []
    # what the Runs page received names the generations: the grader's test would have seen them
    assert found("\n".join(frames), secrets_of(world["gens"]))


# --------------------------------------------------------------------------- identity from verified claims

ADAM = "adam@example.org"
FORGERS = {  # subject: the claims of its ID token (the provider signs them; only some are verified)
    "mallory-1": {"preferred_username": ADAM, "name": "Mallory One"},
    "mallory-2": {"email": "ADAM@example.org", "email_verified": False},
    ADAM: {"name": "Adam by subject"},  # a subject that equals Adam's email, and no email
}
ADAM_USERS = {"adam-1": {"email": ADAM, "email_verified": True, "name": "Adam"}, **FORGERS}


def plain(text: str) -> str:
    return text.replace("\u2060", "")  # the word joiners pages/_text.md_escape puts into addresses


def test_only_verified_claims_name_a_login_and_take_its_roles(browser, world):
    """Each forged token is a reviewer (default_roles) under its own ISSUER#SUB: the Ledger (for
    adjudicators) is refused and its grade is recorded under that name; Adam's verified email opens
    the Ledger and grades as adam@example.org."""
    (world["state"] / "roles.toml").write_text(
        f'default_roles = ["reviewer"]\n[users."{ADAM}"]\nroles = ["adjudicator"]\n', encoding="utf-8")
    total = len(P.load_pairs(world["store"], "blind-1"))
    outside: list[str] = []
    shown: dict[str, str] = {}
    with start_oidc_provider(ADAM_USERS) as issuer, start_app(world["data"], world["state"],
                                                              secrets=auth_secrets(issuer)) as base:
        for sub in ADAM_USERS:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            guard_page(page, outside)
            log_in(page, base, sub)
            page.goto(f"{base}/ledger")
            if sub == "adam-1":
                page.get_by_role("heading", name="Ledger", exact=True, level=1).wait_for(timeout=30_000)
            else:
                page.get_by_text("not available to your role").wait_for(timeout=30_000)
            wait_idle(page)
            page.goto(f"{base}/pairwise_grading?session=blind-1")
            page.get_by_text(f"0 of {total} pairs graded").wait_for(timeout=30_000)
            shown[sub] = plain(page.get_by_text("Grading as").first.inner_text())
            press_when_ready(page, "a", "Left better")
            page.get_by_text(f"1 of {total} pairs graded").wait_for(timeout=30_000)
            ctx.close()
    assert left_127(outside) == []
    got = {j["reviewer"] for j in P.JudgmentStore(world["store"]).current("blind-1")}
    assert got == {ADAM, f"{issuer}#mallory-1", f"{issuer}#mallory-2", f"{issuer}#{ADAM}"}
    assert shown["adam-1"] == f"Grading as Adam ({ADAM})"
    # a display name is shown beside the key it is recorded under, never instead of it
    assert shown["mallory-1"] == f"Grading as Mallory One ({issuer}#mallory-1)"
    assert shown["mallory-2"] == f"Grading as {issuer}#mallory-2"
    assert shown[ADAM] == f"Grading as Adam by subject ({issuer}#{ADAM})"


# --------------------------------------------------------------------------- without login

URLS = ["runs", *OTHER_URLS, "pairwise_grading"]
TRUSTS = "No login is configured: this app trusts whoever types a name."


def test_without_login_every_page_says_it_trusts_whoever_types_a_name(browser, world):
    (world["state"] / "roles.toml").unlink()
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    outside: list[str] = []
    guard_page(page, outside)
    with start_app(world["data"], world["state"]) as base:
        for url in URLS:
            page.goto(f"{base}/{url}")
            page.get_by_text(TRUSTS).wait_for(timeout=60_000)
            wait_idle(page)
            said = plain(page.get_by_text(TRUSTS).inner_text())
            assert "with the roles reviewer, adjudicator, admin." in said, url
            assert page.get_by_text("not available to your role").count() == 0, url
        # the roles file may keep adjudicator and admin for a login: read on the next page run
        (world["state"] / "roles.toml").write_text('require_login = ["adjudicator", "admin"]\n', encoding="utf-8")
        for url in URLS:
            page.goto(f"{base}/{url}")
            page.get_by_text(TRUSTS).wait_for(timeout=60_000)
            wait_idle(page)
            assert "adjudicator, admin need a login (roles.toml)" in plain(page.get_by_text(TRUSTS).inner_text())
            refused = page.get_by_text("This page needs a login")
            if url in ("ledger", "suites"):
                assert plain(refused.inner_text()) == (
                    "This page needs a login: roles.toml requires one for adjudicator, admin, and this app has no "
                    "login configured (docs/ACCESS.md).")
            else:
                assert refused.count() == 0, url
    ctx.close()
    assert left_127(outside) == []
