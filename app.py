"""evalcore's Streamlit app: page config, data and state directories, navigation over pages/.

    streamlit run app.py -- --data DIR --state DIR     (or EVALCORE_DATA / EVALCORE_STATE)

Without either, the app opens the bundled SIMULATED demo (data/demo) and keeps its writable state
in ./.evalcore-state. Pages are thin: they read widgets, call evalcore and render.

With ``[auth]`` in the secrets (Streamlit's st.login), the pages registered for a session are those
its roles may open (the verified claims and ``<state>/roles.toml``); every other page's URL gives a
refusal, and a grader gets the Pairwise grading page alone. Without it, every page says that the app
trusts whoever types a name, and the pages are those of the roles the roles file leaves to a typed
name (``require_login``; docs/ACCESS.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # so that pages can `from pages import _ui` however the app is started
    sys.path.insert(0, str(ROOT))

import contextlib  # noqa: E402
from collections.abc import AsyncIterator, Callable  # noqa: E402

import streamlit as st  # noqa: E402
from streamlit.navigation.page import StreamlitPage  # noqa: E402


@contextlib.asynccontextmanager
async def preloaded(_app: object) -> AsyncIterator[None]:
    """The server's start-up: what the pages import (pages/_cache.preload) is imported before the
    server takes its first request, so that a person's first page, whichever it is, does not wait
    for seconds of imports (the server says it is up a few seconds later instead). Imported here,
    once Streamlit's runtime runs, the pages' caches are the server's."""
    from streamlit.runtime.pages_manager import PagesManager

    from pages import _cache

    _cache.preload()
    # This is an st.navigation app: a fresh server's first request for /attribution runs app.py,
    # rather than pages/2_attribution.py alone and then a rerun through app.py (the switch
    # pages/_ui.title makes, through the same Streamlit internal, when no start-up ran first)
    PagesManager.uses_pages_directory = False
    yield


# `streamlit run app.py` finds this ASGI app (Streamlit's st.App) and serves app.py through it. The
# server imports this file only to find `app`; each session's script run is "__main__".
app = st.App(__file__, lifespan=preloaded)

if __name__ == "__main__":
    import evalcore
    from pages import _access, _cache, _text, _ui

READ = ("reviewer", "adjudicator", "admin")  # every page but upkeep and the ledger
KEEP = ("adjudicator", "admin")  # suites' repairs and the decision ledger
GRADE = ("grader", *READ)
LOADED = "_app_loaded"  # the session's first run is over (its "Loading evalcore…" gone)

# (section, file, title, URL path, roles that may open it): docs/ACCESS.md
PAGES = [
    ("", "0_home.py", "Home", "home", READ),
    ("Browse", "1_runs.py", "Runs", "runs", READ),
    ("Browse", "2_attribution.py", "Failure attribution", "attribution", READ),
    ("Browse", "3_association.py", "Criteria association", "association", READ),
    ("Browse", "4_harness.py", "Harness comparison", "harness", READ),
    ("Adjudicate", "5_review.py", "Review queue", "review", READ),
    ("Adjudicate", "6_agreement.py", "Agreement and judge report card", "agreement", READ),
    ("Adjudicate", "12_labels.py", "Labels", "labels", READ),
    ("Adjudicate", "14_team.py", "Team", "team", KEEP),
    ("Adjudicate", "13_suites.py", "Suites", "suites", KEEP),
    ("Pairwise", "7_pairwise_grading.py", "Pairwise grading", "pairwise_grading", GRADE),
    ("Pairwise", "8_pairwise_results.py", "Pairwise results", "pairwise_results", READ),
    ("Decide", "9_compare.py", "Compare configurations", "compare", READ),
    ("Decide", "10_cost.py", "Cost", "cost", READ),
    ("Decide", "11_ledger.py", "Ledger", "ledger", KEEP),
]


def stubs(show, urls, title: str) -> list[st.Page]:
    """One hidden page per URL path that only runs ``show``: the real page is not registered, so
    its script never runs for this session, and its URL gives ``show`` instead."""
    return [st.Page(show, title=title, url_path=url, visibility="hidden") for url in urls]


def landing(roles: frozenset[str] | None, urls: list[str]) -> str:
    """The URL path of the page "/" opens (the page a login lands on): a reviewer's queue for a
    reviewer whose other role, if any, is grader; the grading page for a grader alone; Home for
    everyone else (docs/ACCESS.md)."""
    if roles is not None and "reviewer" in roles and roles <= {"reviewer", "grader"}:
        want = "review"
    elif roles is not None and roles == {"grader"}:
        want = "pairwise_grading"
    else:
        want = "home"
    return want if want in urls else urls[0]


def navigation(roles: frozenset[str] | None, refuse: Callable[[], None] | None = None) -> tuple[StreamlitPage, bool]:
    """The pages this session may open (all of them when ``roles`` is None), every other URL
    ``refuse`` (a refusal by role unless given); and whether the full sidebar (data directory, demo
    badge) shows."""
    allowed = [p for p in PAGES if roles is None or roles & set(p[4])]
    if roles is not None and roles == {"grader"}:
        allowed = [p for p in PAGES if p[3] == "pairwise_grading"]
    sections: dict[str, list[st.Page]] = {}
    first = landing(roles, [p[3] for p in allowed])
    for section, file, title, url, _roles in allowed:
        # the default page is served at "/" (its url_path only names it inside Streamlit); a hidden twin
        # answers at its own URL (/home), which would otherwise say "Page not found"
        default = url == first
        sections.setdefault(section, []).append(
            st.Page(
                str(ROOT / "pages" / file), title=title, url_path=f"{url}-home" if default else url, default=default
            )
        )
        if default:
            sections.setdefault("", []).append(
                st.Page(str(ROOT / "pages" / file), title=title, url_path=url, visibility="hidden")
            )
    refused = [p[3] for p in PAGES if p not in allowed]
    if refused:
        sections.setdefault("", []).extend(stubs(refuse or _access.refusal, refused, "Not available"))
    # expanded: every section shown in full (by default Streamlit folds all but the first few pages
    # away behind "View N more", which hid the whole Decide section)
    return st.navigation(sections, expanded=True), roles is None or not roles <= {"grader"}


def only(show, title: str) -> StreamlitPage:
    """Every URL shows ``show`` (nobody logged in, no role, a broken roles file)."""
    first = st.Page(show, title=title, url_path="welcome", default=True)
    return st.navigation([first, *stubs(show, [p[3] for p in PAGES], title)], position="hidden")


def data_badges(overview: evalcore.DataOverview) -> None:
    """SIMULATED when the simulator made answers or verdicts here (the demo), else the simulated kinds
    alone (the live experiment asks a real model the demo's questions); a badge per real model."""
    if {"generations", "runs"} & set(overview.simulated_kinds):
        st.badge("SIMULATED demo data", color="orange")
    elif overview.simulated_kinds:
        st.badge("SIMULATED " + ", ".join(overview.simulated_kinds), color="orange")
    for words in overview.real_models:
        st.badge(words, color="blue")


def main() -> None:
    """One script run: the session's pages (those its roles may open) and the sidebar."""
    st.set_page_config(page_title="evalcore", layout="wide")
    # a session's first run says so until its page draws its title (a fresh server's first page is
    # otherwise blank until then); the placeholder is there on every run, so that the page's
    # elements keep their places (pages/_ui.loaded empties it)
    loading = st.empty()
    if not st.session_state.get(LOADED):
        loading.caption("Loading evalcore…")
        st.session_state[_ui.LOADING] = loading
        st.session_state[LOADED] = True
    data_dir, state_dir = _ui.resolve_dirs(sys.argv[1:])
    _ui.set_dirs(data_dir, state_dir)
    # data on object storage: its index (manifests and tables' footers) brought up to date once per
    # script run (at most every EVALCORE_REMOTE_TTL s), before any page reads it; nothing for a local directory
    with _text.boundary():
        _ui.store().sync()

    full = True
    problem: evalcore.EvalcoreError | None
    if not _access.login_configured():
        try:
            typed = _access.typed_access()
        except evalcore.EvalcoreError as err:
            nav, full = only(lambda e=err: _text.show_error(e), "Roles file"), False
        else:
            _access.trust_banner(typed)
            if typed.roles:
                nav, full = navigation(typed.roles, _access.login_refusal)
            else:
                nav, full = only(_access.login_refusal, "Log in"), False
    else:
        try:
            access = _access.login_access()
        except evalcore.EvalcoreError as err:
            access, problem = None, err
        else:
            problem = None
        if problem is not None:
            nav, full = only(lambda: _text.show_error(problem), "Roles file"), False
        elif access is None:
            nav, full = only(_access.login_page, "Log in"), False
        elif not access.roles:
            nav, full = only(_access.no_role_page, "No role"), False
        else:
            nav, full = navigation(access.roles)
            st.sidebar.caption(_text.md_escape(f"Logged in as {_access.shown(access)}"))
            st.sidebar.button("Log out", key="logout", on_click=st.logout)

    if full:  # a grader sees nothing of the data directory but the pairs they grade
        with st.sidebar:
            st.text(f"data: {_ui.display_path(data_dir)}")
            with _text.boundary():
                data_badges(_cache.summary(evalcore.data_overview))

    with _text.boundary():
        nav.run()
    _ui.loaded()  # a page without a title of _ui's (the log-in page, a refusal)


if __name__ == "__main__":
    main()
