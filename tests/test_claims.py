"""A team on one queue: cases leased so that nobody is offered a case another is deciding, N
reviewers per case, disagreements settled by an adjudicator, and gold from that one policy
everywhere (export, report card). On the queue world of tests/queue_world.py, through the
library, with real processes for the concurrent part; on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import EVALCORE
from queue_world import make_queue_world

from evalcore import LabelStore, Store, export_labels
from evalcore import review as R
from evalcore.storage.gold import gold


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("cw") / "data")


@pytest.fixture
def store(qworld, tmp_path, backend) -> Store:
    """Every test here runs on SQLite and on PostgreSQL (conftest's ``backend``)."""
    return Store(qworld, tmp_path / "state")


def _key(c: dict) -> tuple:
    return (c["item_id"], int(c["gen_round"]), c["criterion"])


def _queue(store: Store, n: int) -> dict:
    return R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=n)


def test_one_reviewer_per_case_no_case_is_offered_to_two(store):
    q = _queue(store, 1)
    a = R.next_case(store, q["queue_id"], "alice")
    b = R.next_case(store, q["queue_id"], "bob")
    assert a is not None and b is not None and _key(a) != _key(b)
    assert _key(R.next_case(store, q["queue_id"], "alice")) == _key(a)  # a reload gives the held case back
    assert _key(R.next_case(store, q["queue_id"], "bob")) == _key(b)
    held = {(x["reviewer"], x["item_id"], x["criterion"]) for x in R.leases(store, q["queue_id"])}
    assert held == {("alice", a["item_id"], a["criterion"]), ("bob", b["item_id"], b["criterion"])}
    R.decide(store, q["queue_id"], *_key(a), "alice", value=_first_value(store, q, a))
    a2 = R.next_case(store, q["queue_id"], "alice")
    assert _key(a2) not in {_key(a), _key(b)}  # neither her decided case nor bob's leased one
    # a skip gives the case up for others, and never comes back to the one who skipped
    R.decide(store, q["queue_id"], *_key(b), "bob", outcome="skipped")
    carol = R.next_case(store, q["queue_id"], "carol")
    assert _key(carol) == _key(b)
    assert _key(R.next_case(store, q["queue_id"], "bob")) not in {_key(b), _key(a), _key(a2), _key(carol)}


def _first_value(store: Store, q: dict, case: dict) -> str:
    return R.case_view(store, q["queue_id"], *_key(case), "x", blind=True)["choices"][0]


def test_a_lease_runs_out(store):
    q = _queue(store, 1)
    a = R.next_case(store, q["queue_id"], "alice", lease_seconds=0.3)
    assert _key(R.next_case(store, q["queue_id"], "bob")) != _key(a)
    time.sleep(0.5)
    assert _key(R.next_case(store, q["queue_id"], "carol")) == _key(a)  # alice's lease expired
    with pytest.raises(Exception, match="positive"):
        R.next_case(store, q["queue_id"], "dan", lease_seconds=0)


def test_two_reviewers_per_case_disagreement_goes_to_the_adjudicator(store):
    q = _queue(store, 2)
    qid = q["queue_id"]
    a = R.next_case(store, qid, "alice")
    b = R.next_case(store, qid, "bob")
    c = R.next_case(store, qid, "carol")
    assert _key(a) == _key(b) and _key(c) != _key(a)  # two places on the first case, the third reviewer moves on
    case = _key(a)
    choices = _first_value(store, q, a), R.case_view(store, qid, *case, "x")["choices"][1]
    # neither sees the other's decision before deciding
    R.decide(store, qid, *case, "alice", value=choices[0])
    assert R.case_view(store, qid, *case, "bob")["others"] is None
    R.decide(store, qid, *case, "bob", value=choices[1])
    row = next(g for g in gold(LabelStore(store), "qg") if _key(g) == case)
    assert row["status"] == "reviewers_disagree" and row["value"] is None
    assert row["reviewers"] == {"alice": choices[0], "bob": choices[1]}
    # no reviewer is offered it again; only an adjudicator is
    assert R.next_case(store, qid, "alice") is None or _key(R.next_case(store, qid, "alice")) != case
    assert R.next_case(store, qid, "dana", role="adjudicator") is not None
    disputed = R.next_case(store, qid, "dana", role="adjudicator")
    assert _key(disputed) == case
    assert R.next_case(store, qid, "erin", role="adjudicator") is None  # one adjudicator holds it
    view = R.case_view(store, qid, *case, "dana", role="adjudicator")
    assert {o["reviewer"] for o in view["others"]} == {"alice", "bob"} and view["revealed"]
    e = R.decide(store, qid, *case, "dana", value=choices[1], role="adjudicator")
    assert e["role"] == "adjudicator" and e["reason_code"] == R.REVIEWERS_DISAGREE
    row = next(g for g in gold(LabelStore(store), "qg") if _key(g) == case)
    assert (row["status"], row["value"], row["gold_from"], row["adjudicator"]) == (
        "gold", choices[1], "adjudicator", "dana")
    assert R.next_case(store, qid, "dana", role="adjudicator") is None
    # a case both reviewers agree on is gold once the second decides, pending before
    d = R.next_case(store, qid, "alice")
    R.decide(store, qid, *_key(d), "alice", value=_first_value(store, q, d))
    assert next(g for g in gold(LabelStore(store), "qg") if _key(g) == _key(d))["status"] == "pending"
    R.decide(store, qid, *_key(d), "erin", value=_first_value(store, q, d))
    g = next(g for g in gold(LabelStore(store), "qg") if _key(g) == _key(d))
    assert (g["status"], g["gold_from"], g["decided"], g["required"]) == ("gold", "unanimous", 2, 2)
    # the exported gold is the gold the report card counts, case by case
    rows = list(csv.DictReader(io.StringIO(export_labels(LabelStore(store), "csv", None, wide=True))))
    exported = {(r["item_id"], int(r["gen_round"]), r["criterion"]): r for r in rows if r["source"] == "state"}
    assert exported[case]["status"] == "gold" and exported[case]["value"] == choices[1]
    assert exported[case]["reviewer:alice"] == choices[0] and exported[case]["reviewer:bob"] == choices[1]
    card = R.report_card(store, "qg")
    assert card.gold.state == sum(r["status"] == "gold" for r in exported.values()) == 2
    assert card.gold.pending == 0 and card.gold.split == 0


_WORKER = """
import sys
from evalcore import Store
from evalcore import review as R
store = Store(sys.argv[1], sys.argv[2])
who, qid = sys.argv[3], sys.argv[4]
while True:
    c = R.next_case(store, qid, who)
    if c is None:
        break
    v = R.case_view(store, qid, c["item_id"], c["gen_round"], c["criterion"], who)["choices"][0]
    R.decide(store, qid, c["item_id"], c["gen_round"], c["criterion"], who, value=v)
"""


def test_four_reviewers_at_once_never_decide_the_same_case(store, qworld, tmp_path):
    q = _queue(store, 1)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(qworld), str(store.state), f"r{k}", q["queue_id"]],
                              stderr=subprocess.PIPE, text=True) for k in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    standing = [e for e in LabelStore(store).standing("qg") if e["outcome"] == "decided"]
    per_case = Counter(_key(e) for e in standing)
    assert len(per_case) == q["flagged"] + q["audit_sampled"]  # every case decided ...
    assert set(per_case.values()) == {1}  # ... by exactly one reviewer
    assert len({e["reviewer"] for e in standing}) >= 2  # and the work was shared


def test_cli_two_reviewers_disagreeing_leave_no_gold(store, qworld):
    base = [EVALCORE, "--data", str(qworld), "--state", str(store.state)]
    for who, v in (("alice", "pass"), ("bob", "fail")):
        r = subprocess.run(base + ["labels", "add", "--item", "i01", "--criterion", "ok", "--value", v,
                                   "--reviewer", who, "--gen", "qg"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    out = json.loads(subprocess.run(base + ["labels", "list", "--json", "--no-shipped"],
                                    capture_output=True, text=True).stdout)
    assert [(x["status"], x["value"], x["reviewers"]) for x in out] == [
        ("reviewers_disagree", None, {"alice": "pass", "bob": "fail"})]
    r = subprocess.run(base + ["labels", "add", "--item", "i01", "--criterion", "ok", "--value", "fail",
                               "--reviewer", "dana", "--gen", "qg", "--role", "adjudicator", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout)["role"] == "adjudicator"
    out = json.loads(subprocess.run(base + ["labels", "list", "--json", "--no-shipped"],
                                    capture_output=True, text=True).stdout)
    assert [(x["status"], x["value"], x["gold_from"], x["adjudicator"]) for x in out] == [
        ("gold", "fail", "adjudicator", "dana")]


def test_cli_queue_next_leases_and_an_adjudicators_decision(store, qworld):
    q = _queue(store, 1)
    base = [EVALCORE, "--data", str(qworld), "--state", str(store.state), "queue"]

    def run(*args):
        r = subprocess.run(base + list(args) + ["--json"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    a = run("next", "--queue", q["queue_id"], "--reviewer", "alice")
    b = run("next", "--queue", q["queue_id"], "--reviewer", "bob")
    assert _key(a) != _key(b)
    held = run("leases", "--queue", q["queue_id"])
    assert {(x["reviewer"], x["item_id"], x["criterion"]) for x in held} == {
        ("alice", a["item_id"], a["criterion"]), ("bob", b["item_id"], b["criterion"])}
    v = _first_value(store, q, a)
    e = run("decide", "--queue", q["queue_id"], "--item", a["item_id"], "--round", str(a["gen_round"]),
            "--criterion", a["criterion"], "--reviewer", "dana", "--value", v, "--role", "adjudicator")
    assert e["role"] == "adjudicator"
    shown = run("show", "--queue", q["queue_id"], "--limit", "2", "--offset", "1")
    assert shown["total"] == q["flagged"] + q["audit_sampled"] and [c["rank"] for c in shown["cases"]] == [2, 3]
