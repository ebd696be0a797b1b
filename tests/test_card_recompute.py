"""The report card recomputed after a decision (the Agreement page while a team reviews) does less
work, bounded by counts rather than seconds (issue 45): the label store's standing edits are read
once per card (five times before), the queue design's sizes are kept as a memo that a decision
does not make stale, and a write inside a pinned block is seen by the block's next read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore import pinned
from evalcore.review import build_queue
from evalcore.review import design as D
from evalcore.review import reportcard as R
from evalcore.storage import labels as L
from evalcore.storage.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
GEN = "support-g1"


def _card(store: Store) -> dict:
    return json.loads(json.dumps(R.report_card(store, GEN, n_boot=50).to_dict(), default=str))


@pytest.fixture
def reviewed(tmp_path):
    """The demo with a queue on support-g1 and one case decided by two reviewers."""
    st = Store(DEMO, tmp_path / "state")
    build_queue(st, GEN, audit_rate=0.3, seed=3, reviewers_required=2)
    labels = L.LabelStore(st)
    q = labels.queues(GEN)[-1]
    binary = {c for c in {k["criterion"] for k in labels.queue_cases(q["queue_id"], "", ())}
              if labels.criterion_for(GEN, c).kind == "binary"}
    cases = [k for k in labels.queue_cases(q["queue_id"], "", ()) if k["criterion"] in binary]
    for who in ("ann", "bob"):
        c = cases[0]
        labels.add(item_id=c["item_id"], criterion=c["criterion"], gen_id=GEN, gen_round=c["gen_round"],
                   value="pass", reviewer=who, queue=q["queue_id"])
    return st, labels, q, cases


def test_the_standing_edits_are_read_once_per_card(reviewed, monkeypatch):
    st, *_ = reviewed
    reads = []
    real = L.LabelStore._query

    def spy(self, sql, params=()):
        if "ROW_NUMBER" in sql.upper():  # the standing edits' query (the latest edit per reviewer and case)
            reads.append(params)
        return real(self, sql, params)

    monkeypatch.setattr(L.LabelStore, "_query", spy)
    _card(Store(DEMO, st.state))
    assert len(reads) == 1, reads


def test_a_decision_does_not_recompute_the_designs_sizes_and_the_card_is_the_same(reviewed, monkeypatch):
    st, labels, q, cases = reviewed
    computed = []
    real = D.mask_runs  # called once each time the sizes are summed

    def spy(*a, **kw):
        computed.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(D, "mask_runs", spy)
    _card(Store(DEMO, st.state))
    assert computed == [1]
    c = cases[1]
    labels.add(item_id=c["item_id"], criterion=c["criterion"], gen_id=GEN, gen_round=c["gen_round"],
               value="fail", reviewer="ann", queue=q["queue_id"])
    kept = _card(Store(DEMO, st.state))
    assert computed == [1]  # the memo served it after the decision
    monkeypatch.setenv("EVALCORE_DERIVED", "0")  # nothing read or written: computed from the queue and verdicts
    fresh = _card(Store(DEMO, st.state))
    assert computed == [1, 1]
    assert kept == fresh
    assert kept["gold"] != _card_without_decision(st, labels, q, c)["gold"]  # the decision itself is in the card


def _card_without_decision(st, labels, q, c) -> dict:
    last = labels.standing(GEN, reviewer="ann", item_id=c["item_id"])[-1]
    labels.add(item_id=c["item_id"], criterion=c["criterion"], gen_id=GEN, gen_round=c["gen_round"],
               outcome="withdrawn", reviewer="ann", supersedes=last["edit_id"], queue=q["queue_id"])
    return _card(Store(DEMO, st.state))


def test_a_write_in_a_pinned_block_is_seen_by_its_next_read(reviewed):
    st, labels, q, cases = reviewed
    c = cases[2]
    with pinned():
        before = labels.standing(GEN)
        assert labels.standing(GEN) is before  # read once in the block
        labels.add(item_id=c["item_id"], criterion=c["criterion"], gen_id=GEN, gen_round=c["gen_round"],
                   value="pass", reviewer="cy", queue=q["queue_id"])  # the pipelined write
        after = labels.standing(GEN)
        assert len(after) == len(before) + 1
        labels.add_many([dict(item_id=c["item_id"], criterion=c["criterion"], gen_id=GEN, gen_round=c["gen_round"],
                              value="fail", reviewer="di", queue=q["queue_id"])])  # a transaction
        assert len(labels.standing(GEN)) == len(after) + 1
        labels.undo("di")
        assert len(labels.standing(GEN)) == len(after)
