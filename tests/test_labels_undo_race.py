"""Undo, supersede and withdraw decide what they take back inside the transaction that writes it.

Two processes undo for one reviewer at the same instant (released together by a barrier), 100
times, on SQLite and on PostgreSQL: each time exactly the reviewer's last edit and the one before
it are withdrawn, never one edit twice. Two edits that supersede the same edit at once: one is
accepted, the other refused with one line. Withdrawing another reviewer's edit needs the
adjudicator role."""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter

import pytest

from evalcore import LabelStore, Store
from evalcore.errors import LabelError

TRIALS = 100


def _undo_worker(data, state, barrier, results, trials):
    ls = LabelStore(Store(data, state))
    for k in range(trials):
        barrier.wait()
        try:
            w = ls.undo(f"t{k}")
            results.put((k, w["supersedes"] if w else None))
        except Exception as e:  # reported to the test, which fails on it
            results.put((k, f"error: {e}"))
        barrier.wait()


def _supersede_worker(data, state, barrier, results, trials, base):
    ls = LabelStore(Store(data, state))
    for k in range(trials):
        barrier.wait()
        try:
            e = ls.add(item_id="i1", criterion="ok", value="pass", reviewer=f"s{k}", supersedes=base[k])
            results.put((k, e["edit_id"]))
        except LabelError as err:
            results.put((k, f"refused: {err}"))
        barrier.wait()


def _race(worker, data, state, trials, *extra) -> dict[int, list]:
    """Two forked processes run ``worker`` released together by a barrier each trial; returns, per
    trial, what each of them reported."""
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(data, state, barrier, results, trials, *extra)) for _ in range(2)]
    for p in procs:
        p.start()
    got: dict[int, list] = {}
    for _ in range(2 * trials):
        k, v = results.get(timeout=120)
        got.setdefault(k, []).append(v)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return got


def test_two_undos_at_once_take_back_the_last_two_edits(tiny, backend):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    edits = {}
    for k in range(TRIALS):
        first = ls.add(item_id="i0", criterion="ok", value="fail", reviewer=f"t{k}")
        second = ls.add(item_id="i2", criterion="ok", value="pass", reviewer=f"t{k}")
        edits[k] = (first["edit_id"], second["edit_id"])
    ls.close()
    got = _race(_undo_worker, data, state, TRIALS)
    for k in range(TRIALS):
        assert sorted(got[k]) == sorted(edits[k]), (k, got[k], edits[k])
    # and in the store: every edit withdrawn exactly once
    hist = LabelStore(Store(data, state)).history()
    withdrawn = Counter(e["supersedes"] for e in hist if e["outcome"] == "withdrawn")
    assert len(withdrawn) == 2 * TRIALS and set(withdrawn.values()) == {1}


def test_two_edits_superseding_one_edit_at_once_one_is_refused(tiny, backend):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    trials = 30
    base = [ls.add(item_id="i1", criterion="ok", value="fail", reviewer=f"s{k}")["edit_id"] for k in range(trials)]
    ls.close()
    got = _race(_supersede_worker, data, state, trials, base)
    for k in range(trials):
        ok = [v for v in got[k] if isinstance(v, int)]
        refused = [v for v in got[k] if isinstance(v, str)]
        assert len(ok) == 1 and len(refused) == 1, got[k]
        assert f"edit {base[k]} was already replaced by edit {ok[0]}" in refused[0], refused[0]


def test_a_second_withdrawal_and_another_reviewers_edit_are_refused(tiny, backend, ev):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    e = ls.add(item_id="i1", criterion="ok", value="fail", reviewer="ann")
    w = ls.add(item_id="i1", criterion="ok", reviewer="ann", outcome="withdrawn", supersedes=e["edit_id"])
    with pytest.raises(LabelError, match=f"edit {e['edit_id']} was already withdrawn by edit {w['edit_id']}"):
        ls.add(item_id="i1", criterion="ok", reviewer="ann", outcome="withdrawn", supersedes=e["edit_id"])
    f = ls.add(item_id="i1", criterion="ok", value="pass", reviewer="ann")
    code, _, err = ev("--data", data, "--state", state, "labels", "add", "--item", "i1", "--criterion", "ok",
                      "--reviewer", "bob", "--outcome", "withdrawn", "--supersedes", f["edit_id"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "withdrawing another reviewer's decision needs the adjudicator role" in err
    # replacing a decision that was itself withdrawn is fine: the replacement no longer stands
    g = ls.add(item_id="i1", criterion="ok", value="fail", reviewer="ann", supersedes=f["edit_id"])
    ls.undo("ann")
    assert ls.add(item_id="i1", criterion="ok", value="pass", reviewer="ann", supersedes=f["edit_id"])["supersedes"] == f["edit_id"]
    assert g["edit_id"] > f["edit_id"]
