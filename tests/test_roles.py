"""The roles file of the state directory and the claims of a login (evalcore.storage.roles), and
the pairwise undo (evalcore.pairwise.undo_judgment): each problem of the file is one FormatError
naming the file and the field."""

from __future__ import annotations

import pytest
from test_pairs import random_session

import evalcore
from evalcore import pairwise as P
from evalcore.errors import FormatError, InputError
from evalcore.storage.roles import claim_roles, load_roles, login_name, parse_roles, resolve_access

GOOD = '''
claim = "evalcore_roles"
default_roles = ["reviewer"]

[users."Ann@Example.org"]
roles = ["adjudicator", "admin"]

[users."gus@example.org"]
roles = ["grader"]
sessions = ["blind-1", "blind-2"]

[users."sub-77"]
roles = ["reviewer"]
'''


def test_a_good_file_and_the_claims_combine(tmp_path):
    (tmp_path / "roles.toml").write_text(GOOD)
    roles = load_roles(tmp_path)
    assert roles.present and roles.claim == "evalcore_roles" and roles.default_roles == ("reviewer",)
    ann = resolve_access({"email": "ann@EXAMPLE.org", "name": "Ann A", "sub": "x"}, roles)
    assert ann.name == "ann@EXAMPLE.org" and ann.display == "Ann A"
    assert ann.roles == {"adjudicator", "admin"} and not ann.grader_only and ann.may_grade("anything")
    gus = resolve_access({"email": "gus@example.org", "sub": "g"}, roles)
    assert gus.grader_only and gus.sessions == ("blind-1", "blind-2")
    assert gus.may_grade("blind-2") and not gus.may_grade("blind-3")
    # a claim adds roles (unknown values of it are ignored), and lifts the grader's limit
    lifted = resolve_access({"email": "gus@example.org", "evalcore_roles": "reviewer, staff"}, roles)
    assert lifted.roles == {"grader", "reviewer"} and not lifted.grader_only and lifted.may_grade("blind-3")
    # matched by subject when the email is not in the file
    assert resolve_access({"sub": "sub-77"}, roles).roles == {"reviewer"}
    # nobody in the file and no claim: the default roles
    assert resolve_access({"email": "new@example.org"}, roles).roles == {"reviewer"}
    # a groups claim is read too
    assert claim_roles({"groups": ["staff", "grader"]}) == ("grader",)


def test_no_file_no_claim_is_no_role(tmp_path):
    roles = load_roles(tmp_path)
    assert not roles.present
    acc = resolve_access({"email": "x@example.org", "roles": ["admin"]}, roles)
    assert acc.roles == {"admin"}
    nobody = resolve_access({"email": "y@example.org"}, roles)
    assert nobody.roles == frozenset() and not nobody.may_grade("s")
    assert login_name({"preferred_username": "  Pat   Q "}) == "Pat Q"
    with pytest.raises(FormatError, match="claims"):
        login_name({"name": "only a name"})


@pytest.mark.parametrize(("text", "field", "problem"), [
    ("claim = [", "toml", "not valid TOML"),
    ("colour = 1", "colour", "unknown key"),
    ("claim = 3", "claim", "name of a claim"),
    ('default_roles = ["boss"]', "default_roles", "unknown role 'boss'"),
    ('[users."a@b"]\nsessions = ["s"]', "users.a@b.roles", "is missing"),
    ('[users."a@b"]\nroles = "admin"', "users.a@b.roles", "list of non-empty strings"),
    ('[users."a@b"]\nroles = ["writer"]', "users.a@b.roles", "unknown role 'writer'"),
    ('[users."a@b"]\nroles = ["reviewer"]\nsessions = ["s"]', "users.a@b.sessions", "graders only"),
    ('[users."a@b"]\nroles = ["grader"]\nteam = "x"', "users.a@b.team", "unknown key"),
    ('[users."a@b"]\nroles = ["grader"]\n[users."A@B"]\nroles = ["admin"]', "users.A@B", "same user twice"),
    ('users = 3', "users", "must be tables"),
])
def test_each_problem_is_one_line_naming_the_file_and_field(tmp_path, text, field, problem):
    (tmp_path / "roles.toml").write_text(text)
    with pytest.raises(FormatError) as err:
        load_roles(tmp_path)
    msg = err.value.message
    assert msg.startswith(f"{tmp_path / 'roles.toml'}: {field}: ") and problem in msg and "\n" not in msg
    assert isinstance(err.value, evalcore.EvalcoreError)


def test_parse_is_load(tmp_path):
    assert parse_roles(GOOD, tmp_path / "r.toml").users.keys() == {"Ann@Example.org", "gus@example.org", "sub-77"}
    assert evalcore.load_roles is load_roles and "resolve_access" in evalcore.__all__


def test_undo_appends_a_withdrawal_and_chains(tmp_path):
    w = random_session(tmp_path, 41, n_items=6, mirror=0.0, holdout=0)
    st, sid = w["store"], w["session"]
    assert P.undo_judgment(st, sid, "ed") is None  # nothing to undo
    done = []
    for choice in ("left", "right", "same"):
        pid = P.progress(st, sid, "ed").next_pair
        P.record_judgment(st, sid, pid, "ed", choice)
        done.append(pid)
    P.record_judgment(st, sid, done[0], "zoe", "left")  # another reviewer is never touched
    prog = P.progress(st, sid, "ed")
    last = prog.last_judgment
    assert prog.can_undo and prog.graded == 3 and prog.step == "grade"
    took = P.undo_judgment(st, sid, "ed", judgment_id=last)
    assert took.pair_id == done[2] and took.choice == "same"
    assert P.undo_judgment(st, sid, "ed", judgment_id=last) is None  # the same button twice: nothing more
    assert P.progress(st, sid, "ed").next_pair == done[2]
    assert P.undo_judgment(st, sid, " ed ").pair_id == done[1]  # chained, by the normalised name
    js = P.JudgmentStore(st)
    assert [j["pair_id"] for j in js.current(sid, "ed")] == [done[0]]
    assert [j["withdrawn"] for j in js.history(sid)] == [0, 1, 1, 0]
    assert [j["reviewer"] for j in js.current(sid, "zoe")] == ["zoe"]
    # append-only: the withdrawals table refuses an update or a delete
    import sqlite3
    con = sqlite3.connect(js.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM withdrawals")
    con.close()
    # a grade again after an undo is current; the report counts current choices only
    P.record_judgment(st, sid, done[1], "ed", "left")
    assert {j["pair_id"]: j["choice"] for j in js.current(sid, "ed")} == {done[0]: "left", done[1]: "left"}
    with pytest.raises(InputError, match="reviewer"):
        P.undo_judgment(st, sid, "  ")


def test_the_probe_step_starts_after_the_last_pair(tmp_path):
    w = random_session(tmp_path, 42, n_items=3, mirror=0.0, holdout=0)
    st, sid = w["store"], w["session"]
    while (p := P.progress(st, sid, "fi")).step == "grade":
        assert p.probe_left == p.probe_pairs
        P.record_judgment(st, sid, p.next_pair, "fi", "same")
    assert p.step == "probe" and p.next_pair is None
    for pid in p.probe_pairs:
        P.record_probe(st, sid, pid, "fi", "unsure")
    assert P.progress(st, sid, "fi").step == "done"
