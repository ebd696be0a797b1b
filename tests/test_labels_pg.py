"""The label store and the ledger on PostgreSQL (evalcore.storage.db): the URL from --db or
EVALCORE_DB, append-only triggers, one line naming the URL (password masked) when the server
cannot be reached, the dialect translation, and the queue's SQL entry points on both backends."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import psycopg
import pytest
from conftest import EVALCORE

from evalcore import LabelError, LabelStore, Store
from evalcore.review.ledger import Ledger
from evalcore.storage.db import Row, database_url, mask, to_postgres, use_database
from evalcore.storage.gold import required_reviewers

DEAD = "postgresql://ann:s3cret@127.0.0.1:1/evalcore"  # nothing listens on port 1

QUEUE = {"queue_id": "q1", "gen_id": "g", "created_at": "2026-01-01T00:00:00+00:00", "created_by": "ann", "seed": 7,
         "audit_rate": 0.25, "reviewers_required": 2, "runs": ["r"], "population": 6, "flagged": 2, "agreed": 4,
         "audit_sampled": 1, "detector_version": "1"}


def _case(item, rank, reasons, stratum="disagreement"):
    return {"queue_id": QUEUE["queue_id"], "rank": rank, "gen_id": "g", "item_id": item, "gen_round": 1,
            "criterion": "ok", "class": "c", "stratum": stratum, "reasons": reasons, "runs": ["r"],
            "detail": {"why": "100%"}, "inclusion_prob": 1.0 if stratum == "disagreement" else 0.25}


# ---- the translation (no server needed)

def test_placeholders_percent_signs_and_json_each_are_translated():
    sql = ("SELECT 'a?%', x FROM json_each(c.reasons) r WHERE r.value = ? AND y LIKE '50%' "
           "AND EXISTS (SELECT 1 FROM json_each(?) AS k WHERE k.value = c.item_id)")
    assert to_postgres(sql) == (
        "SELECT 'a?%%', x FROM jsonb_array_elements_text((c.reasons)::jsonb) AS r(value) WHERE r.value = %s "
        "AND y LIKE '50%%' AND EXISTS (SELECT 1 FROM jsonb_array_elements_text((%s)::jsonb) AS k(value) "
        "WHERE k.value = c.item_id)")


def test_rows_read_like_sqlite_rows():
    r = Row(("a", "b", "a"), {"a": 0, "b": 1}, (1, "x", 3))
    assert r["a"] == 1 and r[1] == "x" and tuple(r) == (1, "x", 3) and dict(r) == {"a": 1, "b": "x"}
    with pytest.raises(IndexError):
        r["nope"]


def test_passwords_are_masked_and_other_values_refused(monkeypatch, tiny):
    assert mask(DEAD) == "postgresql://ann:***@127.0.0.1:1/evalcore"
    assert mask("postgresql://h/db?user=a&password=pw&sslmode=require") == (
        "postgresql://h/db?user=a&password=***&sslmode=require")
    data, state = tiny
    store = Store(data, state)
    assert database_url(store) is None
    monkeypatch.setenv("EVALCORE_DB", "postgresql://env/db")
    assert database_url(store) == "postgresql://env/db"
    use_database(store, "postgres://bound/db")  # the CLI's --db wins over the environment
    assert database_url(store) == "postgres://bound/db"
    assert database_url(store, "postgresql://arg/db") == "postgresql://arg/db"
    with pytest.raises(LabelError, match="is not a postgresql:// URL"):
        use_database(store, "labels.sqlite")


# ---- an unreachable server: one line, exit 2, password masked

@pytest.mark.parametrize("args", [["labels", "list"], ["ledger", "list"],
                                  ["labels", "add", "--item", "i0", "--criterion", "ok", "--value", "pass",
                                   "--reviewer", "ann"]])
def test_unreachable_server_is_one_line_exit_2_with_the_password_masked(tiny, args):
    data, state = tiny
    for how in ("--db", "EVALCORE_DB"):
        env = {"PATH": "/usr/bin:/bin", "EVALCORE_DB": DEAD} if how == "EVALCORE_DB" else {"PATH": "/usr/bin:/bin"}
        opt = ["--db", DEAD] if how == "--db" else []
        r = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *opt, *args],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert "s3cret" not in r.stderr and "postgresql://ann:***@127.0.0.1:1/evalcore" in r.stderr
        assert "--db: cannot connect to PostgreSQL" in r.stderr
        assert not (state / "labels.sqlite").exists() and not (state / "ledger.sqlite").exists()


def test_a_value_that_is_no_url_is_refused_in_one_line(tiny, ev):
    data, state = tiny
    code, _, err = ev("--data", data, "--state", state, "--db", "mysql://x/y", "labels", "list")
    assert code == 2 and err.count("\n") == 1 and "is not a postgresql:// URL" in err


# ---- a real server

def test_the_db_option_puts_labels_on_the_server(tiny, pg_url):
    data, state = tiny
    base = [EVALCORE, "--data", str(data), "--state", str(state)]
    r = subprocess.run(base + ["--db", pg_url, "labels", "add", "--item", "i1", "--criterion", "ok", "--value",
                               "fail", "--reviewer", "ann", "--note", "on the server"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (state / "labels.sqlite").exists()  # nothing went to SQLite
    on_pg = json.loads(subprocess.run(base + ["--db", pg_url, "labels", "list", "--json"], capture_output=True,
                                      text=True, check=True).stdout)
    assert [(x["item_id"], x["reviewers"], x["notes"]) for x in on_pg if x["source"] == "state"] == [
        ("i1", {"ann": "fail"}, {"ann": "on the server"})]
    on_sqlite = json.loads(subprocess.run(base + ["labels", "list", "--json"], capture_output=True, text=True,
                                          check=True).stdout)
    assert [x for x in on_sqlite if x["source"] == "state"] == []
    assert [h["note"] for h in LabelStore(Store(data, state), url=pg_url).history()] == ["on the server"]


def test_queues_and_cases_are_append_only_and_leases_are_not(tiny, pg_url):
    data, state = tiny
    ls = LabelStore(Store(data, state), url=pg_url)
    ls.write_queue(QUEUE, [_case("i0", 1, ["split"])])
    with ls.transaction() as con:
        con.execute("INSERT INTO leases VALUES ('g', 'i0', 1, 'ok', 'ann', 'q1', '2026-01-01T00:00:00', '2026-01-01T00:10:00')")
    with psycopg.connect(pg_url, autocommit=True) as raw:
        for table, words in (("queues", "queues are append-only"), ("queue_cases", "queue cases are append-only")):
            for sql in (f"UPDATE {table} SET gen_id = 'x'", f"DELETE FROM {table}", f"TRUNCATE {table} CASCADE"):
                with pytest.raises(psycopg.errors.RestrictViolation, match=words):
                    raw.execute(sql)
        raw.execute("UPDATE leases SET expires_at = '2026-01-01T00:20:00'")  # leases are mutable
        raw.execute("DELETE FROM leases")
    assert ls.queues()[0]["runs"] == ["r"] and [c["item_id"] for c in ls.queue_cases("q1")] == ["i0"]


def test_a_newer_schema_is_refused_naming_the_url(tiny, pg_url):
    data, state = tiny
    LabelStore(Store(data, state), url=pg_url).history()  # creates the schema
    with psycopg.connect(pg_url, autocommit=True) as raw:
        raw.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(LabelError) as e:
        LabelStore(Store(data, state), url=pg_url).history()
    assert e.value.field == "schema_version" and "99 is newer" in e.value.message
    assert e.value.file == mask(pg_url)


def test_the_ledger_on_the_server_is_shared_by_every_state_directory(tmp_path, pg_url):
    from compare_world import make_compare_world
    data = tmp_path / "data"
    make_compare_world(data)
    a = Ledger(Store(data, tmp_path / "a"), url=pg_url)
    e = a.add(title="t", by="ana", type_="accepted", baseline="r-base", candidate="r-cand")
    b = Ledger(Store(data, tmp_path / "b"), url=pg_url)
    assert [x["entry_id"] for x in b.entries(live=False)] == [e["entry_id"]] == ["L1"]
    assert not (tmp_path / "a" / "ledger.sqlite").exists()


# ---- the queue's entry points, on both backends

def test_json_values_filters_and_gold_order_on_both_backends(tiny, backend):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    ls.write_queue(QUEUE, [_case("i0", 1, ["split", "low confidence"]), _case("i1", 2, ["split"]),
                           _case("i2", 3, [], "audit")])
    rows = ls.queue_cases("q1", f"EXISTS (SELECT 1 FROM {LabelStore.json_values('c.reasons')} WHERE r.value = ?)",
                          ["low confidence"])
    assert [r["item_id"] for r in rows] == ["i0"] and rows[0]["detail"] == {"why": "100%"}
    hidden = ls.queue_cases("q1", f"c.item_id NOT IN (SELECT h.value FROM {LabelStore.json_values('?', 'h')})",
                            [json.dumps(["i0", "i2"])])
    assert [r["item_id"] for r in hidden] == ["i1"]
    # a second queue created at the same time: the later queue_id wins, on both backends
    ls.write_queue({**QUEUE, "queue_id": "q0", "reviewers_required": 1}, [{**_case("i0", 1, []), "queue_id": "q0"}])
    ls.write_queue({**QUEUE, "queue_id": "q2", "reviewers_required": 3}, [{**_case("i0", 1, []), "queue_id": "q2"}])
    ls.add(item_id="i0", criterion="ok", value="pass", reviewer="ann")
    assert required_reviewers(ls) == {("g", "i0", 1, "ok"): 3}
    assert [q["queue_id"] for q in ls.queues()] == ["q0", "q1", "q2"]
    with pytest.raises(LabelError, match="cannot be written"):  # (all or nothing)
        ls.write_queue({**QUEUE, "queue_id": "q3"}, [{**_case("i0", 1, []), "queue_id": "q3"}] * 2)
    assert "q3" not in [q["queue_id"] for q in ls.queues()]
    with ls.transaction() as con:
        row = con.execute("SELECT count(*) AS n, avg(rank) AS mean FROM queue_cases WHERE queue_id = ?",
                          ("q1",)).fetchone()
        assert (row["n"], row[1], dict(row)) == (3, 2.0, {"n": 3, "mean": 2.0})


# Takes the next number in a write transaction (read, then write), as the queue's leases do.
_TAKER = """
import sys
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
for k in range(int(sys.argv[4])):
    with ls.transaction() as con:
        n = con.execute("SELECT count(*) FROM leases").fetchone()[0]
        con.execute("INSERT INTO leases VALUES ('g', ?, 1, 'ok', ?, 'q', '2026-01-01', '2026-01-02')",
                    (f"n{n}", sys.argv[3]))
"""


def test_write_transactions_serialise_read_then_write_on_both_backends(tiny, backend):
    data, state = tiny
    LabelStore(Store(data, state)).history()  # the schema
    procs = [subprocess.Popen([sys.executable, "-c", _TAKER, str(data), str(state), f"p{w}", "25"],
                              stderr=subprocess.PIPE, text=True) for w in range(4)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    rows = LabelStore(Store(data, state))._plain("SELECT item_id, reviewer FROM leases")
    assert sorted(int(r["item_id"][1:]) for r in rows) == list(range(100))  # no number taken twice
    assert Counter(r["reviewer"] for r in rows) == {f"p{w}": 25 for w in range(4)}


def test_a_schema_that_lost_its_history_is_not_built_over(tiny, pg_url):
    """Tables of the store without ``edits`` (dropped, a restore gone wrong): every command stops in
    one line and nothing is created over it (a real process: the check runs on a process's first
    opening of a URL)."""
    data, state = tiny
    LabelStore(Store(data, state), url=pg_url).add(item_id="i0", criterion="ok", value="pass", reviewer="ann")
    with psycopg.connect(pg_url, autocommit=True) as raw:
        raw.execute("DROP TABLE edits CASCADE")
    for args in (["labels", "list"], ["labels", "add", "--item", "i0", "--criterion", "ok", "--value", "pass",
                                      "--reviewer", "bob"]):
        r = subprocess.run([EVALCORE, "--data", data, "--state", state, "--db", pg_url, *args],
                           capture_output=True, text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "but not edits" in lines[0], r.stderr
        assert mask(pg_url) in lines[0]
    with psycopg.connect(pg_url, autocommit=True) as raw:
        assert raw.execute("SELECT to_regclass('edits')").fetchone()[0] is None  # not recreated
