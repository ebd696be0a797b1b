"""The grader's path through the Pairwise grading page (issue 39, "a grader"), through AppTest:

* the instructions the session's maker wrote (``pairs make --instructions``: what "better" means
  here) are shown before the first pair, with a Start button, and stay one click away beside every
  pair; instructions that name an arm are refused (graders read them);
* the probe is answered with the grading keys (A / S / D), with a legend;
* after the last pair the page says what happens next (the maker closes the session and reads the
  results) and whom to tell (the maker's name, when stored), and a grader alone is never pointed to
  the results page, which their role cannot open.
"""

from __future__ import annotations

import html
import json
import sys

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest
from test_pairs import make_world
from test_pairs_page import APP, REPO, rendered

import evalcore
from evalcore import pairwise as P

pytestmark = pytest.mark.app

ARMS = ("arm-alpha", "arm-beta")
RULE = "Better means: the answer a customer could follow without calling support."
MAKER = "Pat Maker"


@pytest.fixture
def world(tmp_path):
    w = make_world(tmp_path, ARMS, n_items=4, seed=3)
    P.make_session(w["store"], "sess", [f"{a}={g}" for a, g in zip(ARMS, w["gens"])], keys_dir=w["keys"], seed=3,
                   n_perm=0, instructions=RULE, created_by=MAKER)
    return w


def page(w, monkeypatch, **query) -> AppTest:
    monkeypatch.setenv("EVALCORE_DATA", str(w["data"]))
    monkeypatch.setenv("EVALCORE_STATE", str(w["state"]))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"session": "sess", **query})
    at.run()
    at.switch_page("pages/7_pairwise_grading.py").run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def shown(at: AppTest) -> str:
    return html.unescape(rendered(at))


def grade_all(at: AppTest) -> AppTest:
    while any(b.key == "pw_judgment_left" for b in at.button):
        at.button(key="pw_judgment_left").click().run()
        ok(at)
    return at


def test_the_instructions_come_before_the_first_pair_and_stay_reachable(world, monkeypatch):
    stored = json.loads((world["data"] / "sessions" / "sess" / "session.json").read_text())
    assert stored["instructions"] == RULE and stored["created_by"] == MAKER
    at = page(world, monkeypatch, reviewer="bo")
    assert [h.value for h in at.subheader] == ["Before you start"]
    assert RULE in [c.value for c in at.code]
    assert not [b for b in at.button if b.key.startswith("pw_judgment")]  # no pair yet
    at.button(key="pw_start").click().run()
    ok(at)
    assert [b.proto.shortcut for b in at.button if b.key.startswith("pw_judgment")] == ["a", "s", "d"]
    (box,) = [e for e in at.expander if "better" in e.label]
    assert RULE in [c.value for c in box.code]
    # once a pair is graded, a new visit goes straight to the next pair
    at.button(key="pw_judgment_left").click().run()
    again = page(world, monkeypatch, reviewer="bo")
    assert not at.subheader and [b for b in again.button if b.key == "pw_judgment_left"]


def test_pairs_make_takes_instructions_from_a_file_and_refuses_an_arm_name(world, tmp_path):
    from evalcore.cli import cli

    rule = tmp_path / "rule.txt"
    rule.write_text(RULE + "\n", encoding="utf-8")
    base = ["--data", str(world["data"]), "--state", str(world["state"]), "pairs", "make", "--keys",
            str(world["keys"]), *[x for a, g in zip(ARMS, world["gens"]) for x in ("--arm", f"{a}={g}")]]
    res = CliRunner().invoke(cli, [*base, "--session", "s2", "--instructions-file", str(rule), "--by", MAKER,
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["instructions"] == RULE and json.loads(res.output)["created_by"] == MAKER
    assert evalcore.Store(world["data"], world["state"]).session("s2").manifest.instructions == RULE
    res = CliRunner().invoke(cli, [*base, "--session", "s3", "--instructions", f"Prefer {ARMS[0]}'s tone."])
    err = res.exception  # (evalcore's entry point prints it in one line and exits 2)
    assert isinstance(err, evalcore.InputError) and err.field == "--instructions"
    assert "name one of the arms" in err.message
    # a session made without them is written as before: no empty keys in session.json
    res = CliRunner().invoke(cli, [*base, "--session", "s4"])
    assert res.exit_code == 0, res.output
    stored = json.loads((world["data"] / "sessions" / "s4" / "session.json").read_text())
    assert "instructions" not in stored and "created_by" not in stored


def test_the_probe_is_answered_with_the_grading_keys(world, monkeypatch):
    at = page(world, monkeypatch, reviewer="bo")
    at.button(key="pw_start").click().run()
    grade_all(at)
    at.button(key="pw_probe_start").click().run()
    ok(at)
    probe = [b for b in at.button if b.key in ("pw_probe_left", "pw_probe_unsure", "pw_probe_right")]
    assert [(b.label, b.proto.shortcut) for b in probe] == [
        ("X wrote the left one", "a"), ("Can't tell", "s"), ("X wrote the right one", "d")]
    assert "Keys: A = X wrote the left one, S = can't tell, D = X wrote the right one." in [c.value for c in at.caption]
    assert "no keys" not in shown(at)


def test_the_end_says_what_happens_next_and_whom_to_tell(world, monkeypatch):
    at = page(world, monkeypatch, reviewer="bo")
    at.button(key="pw_start").click().run()
    grade_all(at)
    at.button(key="pw_skip_probe").click().run()
    ok(at)
    (end,) = [html.unescape(i.value) for i in at.info]
    assert end.startswith(f"What happens next: {MAKER} closes the session once its graders are done")
    assert f"Tell {MAKER} that you have finished." in end
    assert "Pairwise results page" in end  # a typed name's roles may open it


def test_a_grader_alone_is_not_sent_to_a_page_their_role_cannot_open(world, monkeypatch):
    """A grader-only login (the login's access stands in for st.login, which AppTest cannot drive;
    tests/test_browser_login.py logs a grader in for real)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from pages import _access

    gus = evalcore.Access(name="gus@example.org", display="Gus", roles=frozenset({"grader"}), sessions=("sess",))
    monkeypatch.setattr(_access, "login_configured", lambda: True)
    monkeypatch.setattr(_access, "login_access", lambda: gus)
    at = page(world, monkeypatch)
    assert any("Grading as **Gus" in m.value for m in at.markdown)
    at.button(key="pw_start").click().run()
    grade_all(at)
    assert "Pairwise results" not in shown(at)
    at.button(key="pw_skip_probe").click().run()
    ok(at)
    (end,) = [html.unescape(i.value) for i in at.info]
    assert f"Tell {MAKER} that you have finished." in end
    assert "Pairwise results" not in shown(at)
