"""The Home page (issue 39, "landing by role") through AppTest on the bundled demo, against
``evalcore home --json``: the page's numbers are the command's; "/" opens Home for a typed name
with every reading role, the Review page for a reviewer and nothing else; Home's buttons lead to the
pages where the work waits (with the queue or session in the link)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import DEMO, REPO
from streamlit.testing.v1 import AppTest

import evalcore
from evalcore import pairwise, review

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
WHO = "rev@example.org"


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """A state over the demo: a queue on support-g1 with one case decided by WHO, and one pair of
    the open session graded by WHO."""
    st = tmp_path_factory.mktemp("home") / "state"
    store = evalcore.Store(DEMO, st)
    q = review.build_queue(store, "support-g1", audit_rate=0.05, seed=3, created_by="adm")  # as the CLI's golden
    review.decide(store, q["queue_id"], "sup-0241", 1, "correctness", WHO, value="correct")
    prog = pairwise.progress(store, "accounts-practice", WHO)
    pairwise.record_judgment(store, "accounts-practice", prog.next_pair, WHO, "left", 3.0, via="app")
    return st


def cli_home(state, *args) -> dict:
    from evalcore.cli import cli

    res = CliRunner().invoke(cli, ["--data", str(DEMO), "--state", str(state), "home", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def home_app(state, monkeypatch, **query) -> AppTest:
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(**query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def shown(at: AppTest) -> str:
    """The page's markdown as read (md_escape's entities undone)."""
    import html

    return "\n".join(html.unescape(m.value) for m in at.markdown)


def test_the_cli_counts_what_waits_for_a_reviewer(state):
    h = cli_home(state, "--name", WHO)
    assert h["roles"] == ["reviewer", "adjudicator", "admin"]  # what the roles file leaves a typed name
    q = h["cases"]["queues"][0]
    store = evalcore.Store(DEMO, state)
    prog = review.progress(store, q["queue_id"], WHO)
    assert q["waiting"] == prog["waiting_for_me"] == prog["cases"] - 1  # the one WHO decided
    assert h["cases"]["waiting"] == q["waiting"]
    session = next(s for s in h["grading"]["open"] if s["session_id"] == "accounts-practice")
    assert session["pairs_left"] == session["pairs"] - 1
    runs = evalcore.runs_summary(store)
    assert h["runs"]["runs"] == len(runs)
    assert sorted(h["runs"]["flagged"]) == sorted(r.run_id for r in runs if r.status != "complete")
    # without a name: the cases not yet complete, and the session's every pair
    anyone = cli_home(state)
    assert (
        anyone["cases"]["reviewer"] is None
        and anyone["cases"]["waiting"] == prog["cases"] - prog["complete"] == prog["cases"] - 1
    )
    # a grader alone: the sessions assigned, nothing of the reviewers' work or the runs
    g = cli_home(state, "--name", "gus", "--role", "grader", "--session", "accounts-practice")
    assert g["cases"] is None and g["disputes"] is None and g["runs"] is None
    assert [s["session_id"] for s in g["grading"]["open"]] == ["accounts-practice"]
    assert cli_home(state, "--name", "gus", "--role", "grader")["grading"]["open"] == []


def test_home_shows_the_clis_numbers_with_one_button_each(state, monkeypatch):
    h = cli_home(state, "--name", WHO)
    at = home_app(state, monkeypatch, reviewer=WHO)
    assert [t.value for t in at.title] == ["evalcore"]
    text = shown(at)
    assert "evalcore checks LLM judges" in text  # what it is, before anything else
    assert f"**{h['cases']['waiting']} cases wait for you**" in text
    assert f"**{h['disputes']['waiting']} cases wait for an adjudicator**" in text
    assert f"**{h['grading']['sessions']} pairwise session to grade** ({h['grading']['pairs_left']} pairs left" in text
    assert f"**{h['runs']['runs']} runs**, {h['runs']['not_complete']} not complete" in text
    links = {x.proto.label: (x.proto.page, x.proto.query_string) for x in at.get("page_link")}
    q = h["cases"]["queues"][0]
    assert links == {
        "Review": ("review", f"gen={q['gen_id']}&queue={q['queue_id']}"),
        "Adjudicate": ("review", f"gen={q['gen_id']}&queue={q['queue_id']}"),
        "Grade pairs": ("pairwise_grading", "session=accounts-practice"),
        "Runs": ("runs", ""),
    }
    # every number on the page is one of the command's
    numbers = {int(n) for n in re.findall(r"\*\*(\d+) ", text)}
    assert numbers == {h["cases"]["waiting"], h["disputes"]["waiting"], h["grading"]["sessions"], h["runs"]["runs"]}


def test_a_reviewer_alone_lands_on_the_review_page(state, monkeypatch):
    """Without login, roles.toml keeping adjudicator and admin for a login leaves a typed name the
    reviewer role alone: "/" is the Review page (tests/test_browser_landing.py logs in)."""
    (state / "roles.toml").write_text('require_login = ["adjudicator", "admin"]\n', encoding="utf-8")
    try:
        at = home_app(state, monkeypatch, reviewer=WHO)
        assert [t.value for t in at.title] == ["Review queue"]
    finally:
        (state / "roles.toml").unlink()
    at = home_app(state, monkeypatch, reviewer=WHO)  # every reading role: Home
    assert [t.value for t in at.title] == ["evalcore"]
