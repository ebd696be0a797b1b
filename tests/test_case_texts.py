"""A review case's texts are read a block of the queue's cases at a time (evalcore.review.texts), and
the queue's counts once per scope (issue 39: a key press cost the server 0.071 CPU-s on the 18M world
against 0.042 on the demo, because every case read its item and answer from the 1M-row files and
progress recounted the 2.85M cases every 10 s). These tests count the reads, never the seconds: the
texts shown are those of the files, a file written again is read again, a sealed answer stays
sealed, and the counts follow a change of the holdout items."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalcore import LabelStore, Store
from evalcore import review as R
from evalcore.review import texts
from evalcore.review.card import one_case
from evalcore.review.queue import case_counts
from evalcore.storage.store import Store as StoreClass

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.fixture
def demo(tmp_path) -> tuple[Store, str]:
    data = tmp_path / "data"
    shutil.copytree(DEMO, data)
    store = Store(data, tmp_path / "state")
    qid = R.build_queue(store, "support-g1", audit_rate=0.05, seed=0, reviewers_required=1)["queue_id"]
    return store, qid


def _cases(store: Store, qid: str, n: int) -> list[dict]:
    return LabelStore(store).queue_cases(qid, "c.rank <= ?", [n])


def _rewrite(path: Path, column: str, change) -> None:
    """The Parquet file written again (a new version: size, time and inode change) with ``column``
    changed by ``change(list) -> list``, its evalcore metadata kept."""
    t = pq.read_table(path)
    i = t.schema.get_field_index(column)
    t = t.set_column(i, t.schema.field(i), pa.array(change(t.column(i).to_pylist()), t.schema.field(i).type))
    pq.write_table(t, str(path) + ".new")
    Path(str(path) + ".new").replace(path)


def _file_reads(monkeypatch) -> list[str]:
    """The SQL of every read of a Parquet file through Store.records and Store.sql from here on."""
    seen: list[str] = []
    for name in ("records", "sql"):
        real = getattr(StoreClass, name)

        def counted(self, sql, params=(), *a, _real=real, **k):
            if "read_parquet" in sql:
                seen.append(sql)
            return _real(self, sql, params, *a, **k)

        monkeypatch.setattr(StoreClass, name, counted)
    return seen


def test_the_texts_shown_are_the_files_and_a_block_is_one_read(demo, monkeypatch):
    store, qid = demo
    cases = _cases(store, qid, 120)
    con = duckdb.connect()
    items = store.path_of("suite", "support", "items")
    outputs = store.path_of("generation", "support-g1", "outputs")
    reads = _file_reads(monkeypatch)
    for c in cases:
        card = one_case(store, qid, (c["item_id"], c["gen_round"], c["criterion"]), "ann", include_holdout=True)
        want_in = con.execute(
            "SELECT input FROM read_parquet(?) WHERE item_id = ?", [str(items), c["item_id"]]
        ).fetchone()
        want_out = con.execute(
            "SELECT output FROM read_parquet(?) WHERE item_id = ? AND round = ?",
            [str(outputs), c["item_id"], c["gen_round"]],
        ).fetchone()
        assert (card["input"], card["output"]) == (want_in[0], want_out[0])
    # 120 cases of one queue: one block (the first case and the AHEAD after it), two reads in all
    assert len([s for s in reads if s in (texts.ITEM_SQL, texts.OUTPUT_SQL)]) == 2, reads
    assert len(cases) == 120 < texts.AHEAD


def test_a_generation_written_again_is_read_again(demo):
    store, qid = demo
    c = _cases(store, qid, 1)[0]
    key = (c["item_id"], c["gen_round"], c["criterion"])
    before = one_case(store, qid, key, "ann", include_holdout=True)["output"]
    path = store.path_of("generation", "support-g1", "outputs")
    ids = pq.read_table(path, columns=["item_id"]).column(0).to_pylist()
    _rewrite(path, "output", lambda outs: [f"rewritten: {o}" if i == c["item_id"] else o for i, o in zip(ids, outs)])
    assert one_case(store, qid, key, "ann", include_holdout=True)["output"] == "rewritten: " + before


def test_the_counts_follow_the_holdout_items(demo):
    store, qid = demo
    first = case_counts(store, qid)
    assert first["holdout_hidden"] > 0  # the demo suite has holdout items with cases in the queue
    _rewrite(store.path_of("suite", "support", "items"), "holdout", lambda hs: [False] * len(hs))
    after = case_counts(store, qid)
    assert after["holdout_hidden"] == 0
    assert after["cases"] == first["cases"] + first["holdout_hidden"]
    assert texts.holdout(store, "support") == frozenset()


def test_a_decision_on_a_shown_case_reads_no_file(demo, monkeypatch):
    """The label store checks that a decided answer exists in the generation; for a case the card
    has shown, its answer was read from the file as it is, so the decision reads no Parquet file
    (on the 18M world each check was a ~10 ms point read of the 1M-row outputs file)."""
    from evalcore.review import card

    store, qid = demo
    cases = card.batch(store, qid, "ann", k=3)
    reads = _file_reads(monkeypatch)
    acts = [
        {
            "id": f"ann-decision-{k}",
            "kind": "decided",
            "item": c["item"],
            "round": c["round"],
            "criterion": c["criterion"],
            "value": c["choices"][0]["value"],
        }
        for k, c in enumerate(cases)
    ]
    acks = card.submit(store, qid, "ann", acts)
    assert all(a["ok"] for a in acks.values()) and len(acks) == 3
    assert reads == []
    # a case whose answer was never shown is still checked against the file
    texts._TEXTS.clear()
    more = LabelStore(store).queue_cases(qid, "c.rank > ?", [texts.AHEAD + 10])[0]
    R.decide(store, qid, more["item_id"], more["gen_round"], more["criterion"], "ann", outcome="skipped")
    assert reads and all("read_parquet" in s for s in reads)
