"""Without login (no ``[auth]`` in the secrets), through AppTest of app.py: app.py says that the app
trusts whoever types a name and which roles a typed name gets (above every page: AppTest runs a
switched-to page alone, so tests/test_browser_login.py checks each page's URL in a browser); ``require_login`` in
``<state>/roles.toml`` takes the adjudicator and admin roles from a typed name (no Adjudicate
toggle, the Suites and Ledger pages refused in one line), and a broken roles file is one error
instead of every page (docs/ACCESS.md)."""

from __future__ import annotations

import html
import time

import pytest
from browser_util import REPO, make_world
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
TRUSTS = "No login is configured: this app trusts whoever types a name."


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("world") / "data")


def open_app(world, state, monkeypatch, roles: str | None = None) -> AppTest:
    state.mkdir(parents=True, exist_ok=True)
    if roles is not None:
        (state / "roles.toml").write_text(roles, encoding="utf-8")
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    return AppTest.from_file(APP, default_timeout=30)


def captions(at: AppTest) -> list[str]:
    return [html.unescape(c.value) for c in at.caption]


def warnings(at: AppTest) -> list[str]:
    return [html.unescape(w.value) for w in at.warning]


def review_as_hank(at: AppTest) -> None:
    """The Review page under the typed name "hank", with a queue built (the toggle needs one)."""
    at.switch_page("pages/5_review.py")
    at.query_params["reviewer"] = "hank"
    at.run()
    at.button(key="review_build").click().run()
    for _ in range(120):  # the queue is built in a process of its own; the page polls it
        if "review_job" not in at.session_state:
            break
        time.sleep(0.5)
        at.run()
    assert not at.exception and not at.error and [t.value for t in at.title] == ["Review queue"]


def test_every_page_says_it_trusts_whoever_types_a_name(world, tmp_path, monkeypatch):
    at = open_app(world, tmp_path / "state", monkeypatch).run()
    assert not at.exception
    said = [c for c in captions(at) if c.startswith(TRUSTS)]
    assert said == [f"{TRUSTS} Anyone may act under any name, with the roles reviewer, adjudicator, admin. "
                    "docs/ACCESS.md says how to require a login."]
    for page, title in (("11_ledger.py", "Ledger"), ("13_suites.py", "Suites")):  # every page opens, as before
        at.switch_page(f"pages/{page}").run()
        assert not at.exception and [t.value for t in at.title] == [title]
    review_as_hank(at)
    assert any(t.label.startswith("Adjudicate") for t in at.toggle)  # a typed name may adjudicate


def test_require_login_keeps_adjudicator_and_admin_for_a_login(world, tmp_path, monkeypatch):
    at = open_app(world, tmp_path / "state", monkeypatch, 'require_login = ["adjudicator", "admin"]\n').run()
    assert not at.exception
    said = [c for c in captions(at) if c.startswith(TRUSTS)]
    assert said == [f"{TRUSTS} Anyone may act under any name, with the roles reviewer; adjudicator, admin need a "
                    "login (roles.toml). docs/ACCESS.md says how to require a login."]
    review_as_hank(at)
    assert "Reviewing as **hank**" in "".join(m.value for m in at.markdown)
    assert not any(t.label.startswith("Adjudicate") for t in at.toggle)  # a typed name may not adjudicate


def test_require_login_for_every_role_leaves_one_line(world, tmp_path, monkeypatch):
    at = open_app(world, tmp_path / "state", monkeypatch, 'require_login = ["reviewer", "adjudicator", "admin"]\n')
    at.run()
    assert not at.exception and [t.value for t in at.title] == ["Not available"]
    assert warnings(at) == ["This page needs a login: roles.toml requires one for reviewer, adjudicator, admin, and "
                            "this app has no login configured (docs/ACCESS.md)."]


def test_a_broken_roles_file_is_one_error_without_login_too(world, tmp_path, monkeypatch):
    at = open_app(world, tmp_path / "state", monkeypatch, 'require_login = ["boss"]\n').run()
    assert not at.exception and not at.title
    assert len(at.error) == 1 and "require_login: unknown role 'boss'" in html.unescape(at.error[0].value)
