"""The roles file of the state directory and the claims of a login (evalcore.storage.roles), and
the pairwise undo (evalcore.pairwise.undo_judgment): each problem of the file is one FormatError
naming the file and the field."""

from __future__ import annotations

import pytest
from test_pairs import random_session

import evalcore
from evalcore import pairwise as P
from evalcore.errors import FormatError, InputError
from evalcore.storage.roles import (
    claim_roles,
    load_roles,
    login_name,
    parse_roles,
    resolve_access,
    verified_email,
)

ISS = "https://idp.example.org"
GOOD = f'''
claim = "evalcore_roles"
default_roles = ["reviewer"]

[users."ann@Example.org"]
roles = ["adjudicator", "admin"]

[users."gus@example.org"]
roles = ["grader"]
sessions = ["blind-1", "blind-2"]

[users."{ISS}#sub-77"]
roles = ["reviewer"]
'''


def login(sub: str, **claims) -> dict:
    """The claims of an ID token from ISS (st.user holds them, with the issuer Authlib checked)."""
    return {"iss": ISS, "sub": sub, **claims}


def verified(email: str, sub: str = "s-1", **claims) -> dict:
    return login(sub, email=email, email_verified=True, **claims)


def test_a_good_file_and_the_claims_combine(tmp_path):
    (tmp_path / "roles.toml").write_text(GOOD)
    roles = load_roles(tmp_path)
    assert roles.present and roles.claim == "evalcore_roles" and roles.default_roles == ("reviewer",)
    ann = resolve_access(verified("ann@EXAMPLE.org", name="Ann A"), roles)
    assert ann.name == "ann@example.org" and ann.display == "Ann A"
    assert ann.roles == {"adjudicator", "admin"} and not ann.grader_only and ann.may_grade("anything")
    gus = resolve_access(verified("gus@example.org", sub="g"), roles)
    assert gus.grader_only and gus.sessions == ("blind-1", "blind-2")
    assert gus.may_grade("blind-2") and not gus.may_grade("blind-3")
    # a claim adds roles (unknown values of it are ignored), and lifts the grader's limit
    lifted = resolve_access(verified("gus@example.org", evalcore_roles="reviewer, staff"), roles)
    assert lifted.roles == {"grader", "reviewer"} and not lifted.grader_only and lifted.may_grade("blind-3")
    # matched by ISSUER#SUB, and recorded under it, when there is no verified email
    by_sub = resolve_access(login("sub-77"), roles)
    assert by_sub.roles == {"reviewer"} and by_sub.name == f"{ISS}#sub-77" and by_sub.login
    # nobody in the file and no claim: the default roles
    assert resolve_access(verified("new@example.org"), roles).roles == {"reviewer"}
    # a groups claim is read too
    assert claim_roles({"groups": ["staff", "grader"]}) == ("grader",)


def test_no_file_no_claim_is_no_role(tmp_path):
    roles = load_roles(tmp_path)
    assert not roles.present
    acc = resolve_access(verified("x@example.org", roles=["admin"]), roles)
    assert acc.roles == {"admin"}
    nobody = resolve_access(verified("y@example.org"), roles)
    assert nobody.roles == frozenset() and not nobody.may_grade("s")
    assert login_name(login("u-1", preferred_username="  Pat   Q ")) == f"{ISS}#u-1"
    for claims in ({"name": "only a name"}, {"sub": "u-1"}, {"preferred_username": "adam@example.org"},
                   {"email": "adam@example.org", "email_verified": False}, {"iss": "not a url", "sub": "u-1"}):
        with pytest.raises(FormatError, match="neither a verified email") as err:
            login_name(claims)
        assert "\n" not in err.value.message


# --------------------------------------------------------------------------- identity from verified claims

ADAM_FILE = f'''
[users."adam@example.org"]
roles = ["adjudicator"]

[users."{ISS}#u-9"]
roles = ["admin"]
'''


@pytest.mark.parametrize(("claims", "name", "roles"), [
    # email: a key only when email_verified is JSON true (both sides)
    (verified("adam@example.org"), "adam@example.org", {"adjudicator"}),
    (login("u-2", email="adam@example.org", email_verified=False), f"{ISS}#u-2", set()),
    (login("u-2", email="adam@example.org"), f"{ISS}#u-2", set()),  # no email_verified at all
    (login("u-2", email="adam@example.org", email_verified="true"), f"{ISS}#u-2", set()),  # a string is not JSON true
    # the forged token: ADAM@ unverified
    (login("u-2", email="ADAM@example.org", email_verified=False), f"{ISS}#u-2", set()),
    # the domain compares without case, the local part exactly (RFC 5321 section 2.4)
    (verified("adam@EXAMPLE.ORG"), "adam@example.org", {"adjudicator"}),
    (verified("ADAM@example.org"), "ADAM@example.org", set()),
    # preferred_username is a display name, never a key (the other forged token)
    (login("u-3", preferred_username="adam@example.org"), f"{ISS}#u-3", set()),
    # a sub is scoped by its issuer: equal to a listed email, it is not that email
    (login("adam@example.org"), f"{ISS}#adam@example.org", set()),
    # ISSUER#SUB: the same issuer and subject (both sides: another issuer, another case of the subject)
    (login("u-9"), f"{ISS}#u-9", {"admin"}),
    ({"iss": "https://other.example.org", "sub": "u-9"}, "https://other.example.org#u-9", set()),
    (login("U-9"), f"{ISS}#U-9", set()),
    # both keys listed: the ISSUER#SUB entry is taken, the name is the verified email
    (verified("adam@example.org", sub="u-9"), "adam@example.org", {"admin"}),
])
def test_identity_comes_from_verified_claims_only(tmp_path, claims, name, roles):
    file = parse_roles(ADAM_FILE, tmp_path / "roles.toml")
    acc = resolve_access(claims, file)
    assert (acc.name, set(acc.roles)) == (name, roles)


def test_the_display_name_is_free_text_and_the_name_is_the_key(tmp_path):
    file = parse_roles(ADAM_FILE, tmp_path / "roles.toml")
    forged = resolve_access(login("u-3", preferred_username="adam@example.org", name="Adam"), file)
    assert forged.display == "Adam" and forged.name == f"{ISS}#u-3" and not forged.roles
    assert resolve_access(login("u-3", preferred_username="adam@example.org"), file).display == "adam@example.org"
    assert verified_email({"email": "adam@example.org", "email_verified": True}) == "adam@example.org"
    assert verified_email({"email": "adam @example.org", "email_verified": True}) is None
    # a key over a reviewer name's 80 characters: its start and a hash of it, one per subject
    long_iss = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
    a = login_name({"iss": long_iss, "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ"})
    b = login_name({"iss": long_iss, "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaR"})
    assert len(a) == len(b) == 80 and a != b and a.startswith(long_iss[:55])
    # the long key still matches its entry
    file = parse_roles(f'[users."{long_iss}#x"]\nroles = ["reviewer"]\n', tmp_path / "r.toml")
    assert resolve_access({"iss": long_iss, "sub": "x"}, file).roles == {"reviewer"}


def test_without_login_a_typed_name_gets_what_the_file_leaves_it(tmp_path):
    open_file = load_roles(tmp_path)  # no file: a typed name is trusted with every role but grader's
    typed = open_file.without_login("hank")
    assert typed.roles == {"reviewer", "adjudicator", "admin"} and not typed.login
    assert typed.why_not("adjudicator") is None
    kept = parse_roles('require_login = ["adjudicator", "admin"]', tmp_path / "roles.toml").without_login("hank")
    assert kept.roles == {"reviewer"} and kept.require_login == ("adjudicator", "admin")
    line = kept.why_not("adjudicator")
    assert line is not None and "needs a login" in line and "require_login" in line and "\n" not in line
    assert kept.why_not("reviewer") is None
    # a login lacking a role is told so without the login wording
    acc = resolve_access(login("u-1"), parse_roles('require_login = ["admin"]', tmp_path / "roles.toml"))
    assert acc.why_not("admin") == f"{ISS}#u-1 has no admin role (roles.toml of the state directory or the provider's claims)"


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
    ('[users."a@b"]\nroles = ["grader"]\n[users."a@B"]\nroles = ["admin"]', "users.a@B", "same user twice"),
    (f'[users."{ISS}#u"]\nroles = ["grader"]\n[users." {ISS}#u "]\nroles = ["admin"]', f"users. {ISS}#u",
     "same user twice"),
    ('[users."sub-77"]\nroles = ["admin"]', "users.sub-77", "neither an email nor ISSUER#SUB"),
    ('[users."https://idp.example.org"]\nroles = ["admin"]', "users.https://idp.example.org",
     "neither an email nor ISSUER#SUB"),
    ('[users."https://idp.example.org#a b"]\nroles = ["admin"]', "users.https://idp.example.org#a b",
     "neither an email nor ISSUER#SUB"),
    ('require_login = ["boss"]', "require_login", "unknown role 'boss'"),
    ('require_login = "admin"', "require_login", "list of non-empty strings"),
    ("x = " + "[" * 5000 + "]" * 5000, "toml", "too deeply to read"),  # issue 38.5: was a RecursionError
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
    assert parse_roles(GOOD, tmp_path / "r.toml").users.keys() == {"ann@Example.org", "gus@example.org", f"{ISS}#sub-77"}
    # two local parts that differ in case are two users (RFC 5321 section 2.4)
    two = parse_roles('[users."a@b.org"]\nroles = ["admin"]\n[users."A@b.org"]\nroles = ["grader"]', tmp_path / "r.toml")
    assert len(two.users) == 2
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
