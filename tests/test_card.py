"""The review card's server side (evalcore.review.card): a batch of leased cases kept in the browser,
and acts sent with ids, each written once however often it is sent. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from queue_world import make_queue_world

from evalcore import LabelStore, Store
from evalcore import review as R
from evalcore.review import card


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("card") / "data")


@pytest.fixture
def store(qworld, tmp_path, backend) -> Store:
    return Store(qworld, tmp_path / "state")


def _queue(store: Store, n: int = 1) -> str:
    return R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=n)["queue_id"]


def _act(c: dict, cid: str, kind: str = "decided", value: str | None = None, **more) -> dict:
    return {
        "id": cid,
        "kind": kind,
        "item": c["item"],
        "round": c["round"],
        "criterion": c["criterion"],
        "value": value if value is not None else c["choices"][0]["value"],
        **more,
    }


def test_a_batch_is_leased_together_and_counts_as_taken(store):
    qid = _queue(store)
    a = card.batch(store, qid, "alice", k=4)
    b = card.batch(store, qid, "bob", k=4)
    assert len(a) == 4 and len(b) == 4
    assert not {c["key"] for c in a} & {c["key"] for c in b}  # nobody is offered a case another holds
    assert [c["rank"] for c in a] == sorted(c["rank"] for c in a)
    held = {(x["reviewer"], x["item_id"], x["criterion"]) for x in R.leases(store, qid)}
    assert {(r, c["item"], c["criterion"]) for r, cs in (("alice", a), ("bob", b)) for c in cs} == held
    # asking again gives the same batch back (a reload), not four more
    assert [c["key"] for c in card.batch(store, qid, "alice", k=4)] == [c["key"] for c in a]


def test_one_key_map_for_every_kind(store):
    qid = _queue(store)
    seen = {}
    for c in card.batch(store, qid, "alice", k=30):
        seen[tuple(k["value"] for k in c["choices"])] = [k["key"] for k in c["choices"]]
    assert len(seen) >= 3  # binary, ternary and the 0-5 score are in the queue world
    for values, keys in seen.items():
        assert keys == [str(i) for i in range(1, len(values) + 1)]
    assert seen[("pass", "fail")] == ["1", "2"]


def test_an_act_sent_three_times_is_written_once(store):
    qid = _queue(store)
    c = card.batch(store, qid, "alice", k=2)[0]
    act = _act(c, "act-0001-aaaa")
    first = card.submit(store, qid, "alice", [act])
    again = card.submit(store, qid, "alice", [act, act])
    assert first["act-0001-aaaa"]["ok"] and again == first
    mine = [e for e in LabelStore(store).history("qg") if e["reviewer"] == "alice"]
    assert len(mine) == 1 and mine[0]["edit_id"] == first["act-0001-aaaa"]["edit_id"]
    assert LabelStore(store).receipts(["act-0001-aaaa", "act-never-sent"]) == {"act-0001-aaaa": mine[0]["edit_id"]}
    # the decided case leaves the batch; the next case comes in behind it
    assert c["key"] not in {x["key"] for x in card.batch(store, qid, "alice", k=2)}


def test_undo_and_revise_in_order_and_undo_once(store):
    qid = _queue(store)
    c1, c2 = card.batch(store, qid, "alice", k=2)
    acks = card.submit(
        store,
        qid,
        "alice",
        [_act(c1, "act-1-xxxxxx"), _act(c2, "act-2-xxxxxx", kind="skipped"), {"id": "act-3-undo000", "kind": "undo"}],
    )
    assert [a["ok"] for a in acks.values()] == [True, True, True]
    assert acks["act-3-undo000"]["case"] == c2["key"]  # the last edit (the skip) is taken back
    card.submit(store, qid, "alice", [{"id": "act-3-undo000", "kind": "undo"}])  # resent: not a second undo
    standing = {
        (e["item_id"], e["criterion"]): e["outcome"] for e in LabelStore(store).standing("qg", reviewer="alice")
    }
    assert standing == {(c1["item"], c1["criterion"]): "decided"}


def test_refusals_are_acknowledged_with_their_reason_and_write_nothing(store):
    qid = _queue(store)
    c = card.batch(store, qid, "alice", k=1)[0]
    acks = card.submit(
        store,
        qid,
        "alice",
        [
            _act(c, "act-bad-0001", kind="test_wrong", note=""),
            {"id": "short", "kind": "decided"},
            {"id": "act-bad-0002", "kind": "launch"},
            _act(c, "act-bad-0003", value="maybe"),
        ],
    )
    assert acks["act-bad-0001"] == {"ok": False, "message": "note: say what is wrong with the test in the note"}
    assert acks["short"] == {"ok": False, "message": "an act's id is a string of 8 to 80 characters"}
    assert "is not one of" in acks["act-bad-0002"]["message"]
    assert not acks["act-bad-0003"]["ok"] and "maybe" in acks["act-bad-0003"]["message"]
    assert LabelStore(store).history("qg") == []


def test_a_receipt_is_the_senders_own(store):
    qid = _queue(store)
    c = card.batch(store, qid, "alice", k=1)[0]
    card.submit(store, qid, "alice", [_act(c, "act-shared-01")])
    acks = card.submit(store, qid, "bob", [_act(c, "act-shared-01")])
    assert not acks["act-shared-01"]["ok"] and "another reviewer" in acks["act-shared-01"]["message"]


def test_blind_first_holds_in_the_batch(store):
    qid = _queue(store)
    cases = card.batch(store, qid, "alice", k=6)
    assert all(c["revealed"] is None for c in cases)  # nothing of the judges reaches the browser
    c = cases[0]
    card.submit(store, qid, "alice", [_act(c, "act-reveal-01")])
    after = card.one_case(store, qid, (c["item"], c["round"], c["criterion"]), "alice")
    assert after["revealed"] is not None and after["revealed"]["verdicts"]
    assert after["mine"]["outcome"] == "decided"
