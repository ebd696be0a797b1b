"""A role is checked when it acts (issue 38, point 3): every write of the core (decide, adjudicate,
undo, queue build, the ledger, a suite repair) reads the roles file and the login again at the moment
it writes, and refuses in one line with nothing written; the same through the command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import EVALCORE, tree_hash
from queue_world import make_queue_world

from evalcore.errors import LabelError
from evalcore.review.queue import cases, decide, undo
from evalcore.storage.labels import LabelStore
from evalcore.storage.roles import acting
from evalcore.storage.store import Store

ADJUDICATOR = '[users."bob@example.org"]\nroles = ["reviewer", "adjudicator"]\n'
REVIEWER = '[users."bob@example.org"]\nroles = ["reviewer"]\n'


@pytest.fixture
def world(tmp_path_factory) -> tuple[Path, Path]:
    data = make_queue_world(tmp_path_factory.mktemp("role") / "data")
    state = tmp_path_factory.mktemp("state")
    (state / "roles.toml").write_text(ADJUDICATOR)
    return data, state


def _cli(data: Path, state: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)


def _queue(data: Path, state: Path) -> dict:
    r = _cli(data, state, "queue", "build", "qg", "--audit-rate", "0.5", "--seed", "2", "--by", "bob@example.org",
             "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_revoked_adjudicator_is_refused_at_the_next_decision_and_nothing_is_written(world):
    data, state = world
    q = _queue(data, state)
    store = Store(data, state)
    ok = [(x["item_id"], x["gen_round"], x["criterion"]) for x in cases(store, q["queue_id"]) if x["criterion"] == "ok"]
    a, b, c = ok[:3]  # pass / fail cases
    first = decide(store, q["queue_id"], *a, "bob@example.org", value="pass", role="adjudicator")
    assert first["role"] == "adjudicator"
    (state / "roles.toml").write_text(REVIEWER)  # the admin takes the role away, mid-session
    before = len(LabelStore(store).history())
    with pytest.raises(LabelError, match="bob@example.org has no adjudicator role"):
        decide(store, q["queue_id"], *b, "bob@example.org", value="fail", role="adjudicator")
    assert len(LabelStore(store).history()) == before
    # as a reviewer he still decides; and the CLI refuses the adjudication the same way, in one line
    decide(store, q["queue_id"], *b, "bob@example.org", value="fail")
    snap = tree_hash(state)
    r = _cli(data, state, "queue", "decide", "--queue", q["queue_id"], "--item", c[0], "--round", str(c[1]),
             "--criterion", c[2], "--reviewer", "bob@example.org", "--value", "pass", "--role", "adjudicator")
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and "has no adjudicator role" in r.stderr
    assert tree_hash(state) == snap


def test_every_write_checks_the_role_it_needs(world):
    data, state = world
    q = _queue(data, state)
    (state / "roles.toml").write_text('[users."eve@example.org"]\nroles = ["grader"]\nsessions = ["s"]\n')
    store = Store(data, state)
    for args, words in [
        (("queue", "build", "qg", "--by", "eve@example.org"), "eve@example.org has none of the roles"),
        (("queue", "undo", "--queue", q["queue_id"], "--reviewer", "eve@example.org"), "has none of the roles"),
        (("ledger", "add", "--title", "t", "--by", "eve@example.org", "--run", "ja-split"), "has none of the roles"),
    ]:
        snap = tree_hash(state)
        r = _cli(data, state, *args)
        assert r.returncode != 0 and r.stderr.count("\n") == 1 and words in r.stderr, (args, r.stderr)
        assert tree_hash(state) == snap, args
    with pytest.raises(LabelError, match="has none of the roles"):
        undo(store, q["queue_id"], "eve@example.org")


def test_a_typed_name_gets_no_more_than_the_file_gives_it_and_a_login_is_checked_by_its_claims(tmp_path):
    (tmp_path / "roles.toml").write_text(REVIEWER)
    assert acting(tmp_path, "reviewer", name="bob@example.org").name == "bob@example.org"
    with pytest.raises(LabelError, match="no adjudicator role"):
        acting(tmp_path, "adjudicator", name="bob@example.org")
    assert acting(tmp_path, "adjudicator", name="carol").roles >= {"adjudicator"}  # unlisted: trusted, as the page says
    # a login is named by its verified claims, whatever name is typed beside it
    verified = {"iss": "https://idp", "sub": "1", "email": "bob@example.org", "email_verified": True}
    assert acting(tmp_path, "reviewer", name="mallory", claims=verified).name == "bob@example.org"
    with pytest.raises(LabelError):
        acting(tmp_path, "reviewer", name="bob@example.org", claims={**verified, "email_verified": False})
