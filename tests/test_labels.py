"""The label store: append-only history, derived current label, WAL durability, concurrency,
export, and that the data directory is never written. Every test runs on SQLite and on PostgreSQL
(the ``backend`` fixture of conftest.py sets EVALCORE_DB to a fresh schema of the test server)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import DEMO, EVALCORE, REPO, tree_hash

from evalcore import LabelError, LabelStore, PathEscapeError, Store, export_labels

pytestmark = pytest.mark.usefixtures("backend")


def test_history_is_appended_and_current_is_derived(tiny):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    a = ls.add(item_id="i1", criterion="ok", value="fail", reviewer="ann", gen_round=1, note="misses the point")
    b = ls.add(item_id="i1", criterion="ok", value="pass", reviewer="bob", gen_round=1, supersedes=a["edit_id"])
    cur = ls.current()
    assert [(c["item_id"], c["value"], c["reviewer"]) for c in cur] == [("i1", "pass", "bob")]
    assert cur[0]["passed"] is True and cur[0]["supersedes"] == a["edit_id"]
    # undo bob's decision: the current label falls back to ann's
    ls.add(item_id="i1", criterion="ok", reviewer="bob", outcome="withdrawn", supersedes=b["edit_id"])
    cur = ls.current()
    assert [(c["value"], c["reviewer"]) for c in cur] == [("fail", "ann")]
    # skip and test_wrong carry no value and do not change the current label
    ls.add(item_id="i1", criterion="ok", reviewer="cy", outcome="skipped")
    ls.add(item_id="i1", criterion="ok", reviewer="cy", outcome="test_wrong", note="reference is wrong")
    assert [(c["value"], c["reviewer"]) for c in ls.current()] == [("fail", "ann")]
    hist = ls.history()
    assert [h["outcome"] for h in hist] == ["decided", "decided", "withdrawn", "skipped", "test_wrong"]
    assert all(h["created_at"] and h["reviewer"] for h in hist)


def test_edits_cannot_be_updated_or_deleted(tiny, backend):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    ls.add(item_id="i0", criterion="ok", value="pass", reviewer="ann")
    if backend.name == "postgres":
        import psycopg
        assert ls.url == backend.url and not ls.path.exists()  # nothing in the state directory
        with psycopg.connect(backend.url, autocommit=True) as con:
            for sql in ("UPDATE edits SET value = 'fail'", "DELETE FROM edits", "TRUNCATE edits"):
                with pytest.raises(psycopg.errors.RestrictViolation, match="label edits are append-only"):
                    con.execute(sql)
        assert [h["value"] for h in ls.history()] == ["pass"]
        return
    con = sqlite3.connect(ls.path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE edits SET value = 'fail'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM edits")
    con.close()


@pytest.mark.parametrize("kwargs, field", [
    ({"item_id": "nope", "criterion": "ok", "value": "pass", "reviewer": "a"}, "--item"),
    ({"item_id": "i0", "criterion": "nope", "value": "pass", "reviewer": "a"}, "--criterion"),
    ({"item_id": "i0", "criterion": "ok", "value": "maybe", "reviewer": "a"}, "--value"),
    ({"item_id": "i0", "criterion": "score", "value": "9", "reviewer": "a"}, "--value"),
    ({"item_id": "i0", "criterion": "ok", "value": "pass", "reviewer": "  "}, "--reviewer"),
    ({"item_id": "i0", "criterion": "ok", "value": "pass", "reviewer": "a", "gen_round": 7}, "--round"),
])
def test_bad_labels_are_refused_and_nothing_is_written(tiny, kwargs, field):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    with pytest.raises(LabelError) as e:
        ls.add(**kwargs)
    assert e.value.field == field
    assert ls.current() == [] and ls.history() == []


def test_ordinal_values_derive_pass_from_threshold(tiny):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    ls.add(item_id="i0", criterion="score", value="2", reviewer="a")
    ls.add(item_id="i1", criterion="score", value="4", reviewer="a")
    assert {(c["item_id"], c["value"], c["passed"]) for c in ls.current()} == {("i0", "2", False), ("i1", "4", True)}


def test_state_inside_data_is_refused(tiny):
    data, _ = tiny
    with pytest.raises(PathEscapeError):
        LabelStore(Store(data, data / "state"))


def test_export_formats_round_trip(tiny, tmp_path):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    ls.add(item_id="i0", criterion="ok", value="fail", reviewer="ann", note="a, note with \"quotes\"", tags=["tone", "x"])
    ls.add(item_id="i2", criterion="ok", value="pass", reviewer="bob")
    rows = list(csv.DictReader(io.StringIO(export_labels(ls, "csv", None))))
    assert [(r["item_id"], r["value"], json.loads(r["reviewers"]), r["passed"], r["status"]) for r in rows] == [
        ("i0", "fail", {"ann": "fail"}, "False", "gold"), ("i2", "pass", {"bob": "pass"}, "True", "gold")]
    assert json.loads(rows[0]["notes"]) == {"ann": 'a, note with "quotes"'} and rows[0]["tags"] == "tone;x"
    hist = list(csv.DictReader(io.StringIO(export_labels(ls, "csv", None, history=True))))
    assert hist[0]["note"] == 'a, note with "quotes"' and hist[0]["reviewer"] == "ann" and hist[0]["role"] == "reviewer"
    js = json.loads(export_labels(ls, "json", None))
    assert [r["value"] for r in js] == ["fail", "pass"] and js[0]["source"] == "state"
    export_labels(ls, "parquet", tmp_path / "l.parquet")
    t = pq.read_table(tmp_path / "l.parquet").to_pylist()
    assert [(r["item_id"], r["passed"]) for r in t] == [("i0", False), ("i2", True)]


_WRITER = """
import sys
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
for k in range(int(sys.argv[4])):
    ls.add(item_id="i%d" % (k % 3), criterion="ok", value="pass" if k % 2 else "fail", reviewer=sys.argv[3])
    print(k, flush=True)
"""


def test_concurrent_writers_lose_nothing(tiny):
    data, state = tiny
    n, writers = 40, 4
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(state), f"r{w}", str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(writers)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    hist = LabelStore(Store(data, state)).history()
    assert len(hist) == n * writers
    assert {h["reviewer"] for h in hist} == {f"r{w}" for w in range(writers)}


def test_killed_writer_keeps_every_acknowledged_label(tiny, backend):
    data, state = tiny
    p = subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(state), "k", "100000"],
                         stdout=subprocess.PIPE, text=True)
    acknowledged = -1
    deadline = time.time() + 60
    while acknowledged < 25 and time.time() < deadline:
        acknowledged = int(p.stdout.readline())
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    hist = LabelStore(Store(data, state)).history()
    # every edit the writer printed as done is there (it may have committed one more before dying)
    assert len(hist) >= acknowledged + 1
    if backend.name == "sqlite":
        con = sqlite3.connect(LabelStore(Store(data, state)).path)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()


@pytest.mark.skipif(not DEMO.exists(), reason="the bundled demo (data/demo) is not generated")
def test_labels_add_on_the_bundled_demo_leaves_data_clean(tmp_path):
    before = tree_hash(DEMO)
    git_before = subprocess.run(["git", "status", "--porcelain", "data/"], cwd=REPO, capture_output=True,
                                text=True).stdout  # empty on a clean checkout
    env = {**os.environ, "EVALCORE_STATE": str(tmp_path / "state")}
    env.pop("EVALCORE_DATA", None)
    r = subprocess.run([EVALCORE, "labels", "add", "--item", _first_support_item(), "--criterion", "grounded",
                        "--value", "fail", "--reviewer", "tester", "--note", "cites nothing"],
                       cwd=REPO, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert tree_hash(DEMO) == before
    st = subprocess.run(["git", "status", "--porcelain", "data/"], cwd=REPO, capture_output=True, text=True)
    assert st.stdout == git_before
    out = subprocess.run([EVALCORE, "labels", "list", "--json"], cwd=REPO, env=env, capture_output=True, text=True)
    rows = json.loads(out.stdout)
    assert any(r["source"] == "state" and r["reviewers"] == {"tester": "fail"} for r in rows)
    assert any(r["source"].startswith("shipped:") for r in rows)


def _first_support_item() -> str:
    st = Store(DEMO, Path("/nonexistent-state"))
    gen = next(g for g in st.ids("generation") if st.generation(g).manifest.suite_id == "support")
    return st.sql("SELECT min(item_id) FROM read_parquet(?)", [st.path_of("generation", gen, "outputs")])[0][0]


def test_cli_labels_add_and_export(tiny, tmp_path):
    data, state = tiny
    base = [EVALCORE, "--data", str(data), "--state", str(state)]
    r = subprocess.run(base + ["labels", "add", "--item", "i1", "--criterion", "ok", "--value", "fail",
                               "--reviewer", "ann", "--note", "wrong"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(base + ["labels", "add", "--item", "i1", "--criterion", "ok", "--value", "sideways",
                               "--reviewer", "ann"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--value" in r.stderr
    out = tmp_path / "labels.parquet"
    r = subprocess.run(base + ["labels", "export", "--format", "parquet", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [(x["item_id"], x["value"], json.loads(x["notes"])) for x in pq.read_table(out).to_pylist()] == [
        ("i1", "fail", {"ann": "wrong"})]
