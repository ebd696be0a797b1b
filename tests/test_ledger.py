"""The decision ledger: entries linked to runs, figures pulled from the runs, automatic typing and
flags, append-only history, Markdown export, concurrent writers; on SQLite and on PostgreSQL (the
``backend`` fixture of conftest.py)."""

from __future__ import annotations

import difflib
import json
import sqlite3
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from compare_world import add_rejudge, make_compare_world
from conftest import DEMO, EVALCORE, tree_hash

from evalcore.analysis.comparison import rounds_text
from evalcore.errors import InputError
from evalcore.review.ledger import Ledger
from evalcore.storage.store import Store

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("ledger") / "data"
    make_compare_world(data)
    add_rejudge(data)
    return data


def _cli(data, state, *args, check=None):
    p = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stderr)
    return p


@pytest.mark.parametrize("args, words", [
    (("--baseline", "r-base", "--candidate", "nope"), "--candidate: no run 'nope'"),
    (("--run", "r-base", "--run", "ghost"), "--run: no run 'ghost'"),
    (("--baseline", "r-base"), "give both --baseline and --candidate"),
    ((), "an entry rests on runs"),
    (("--run", "r-base", "--type", "maybe"), "--type: unknown type 'maybe'"),
])
def test_add_refuses_unknown_runs_and_bad_input_writing_nothing(world, tmp_path, args, words):
    state = tmp_path / "state"
    before = tree_hash(world, state)
    p = _cli(world, state, "ledger", "add", "--title", "t", "--by", "ana", *args, check=2)
    assert words in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert tree_hash(world, state) == before


def test_add_pulls_figures_from_the_runs(world, tmp_path):
    state = tmp_path / "state"
    e = json.loads(_cli(world, state, "ledger", "add", "--title", "new writer prompt", "--type", "rejected",
                        "--baseline", "r-base", "--candidate", "r-cand", "--by", "ana", "--json", check=0).stdout)
    c = json.loads(_cli(world, state, "compare", "r-base", "r-cand", "--json", check=0).stdout)
    f = e["figures"]
    assert e["entry_id"] == "L1" and e["type"] == "rejected" and not e["type_automatic"]
    assert f["baseline"]["by_round"] == c["figures"]["all_pass"]["a"]["by_round"]
    assert f["delta"] == pytest.approx(8 / 30) == c["figures"]["all_pass"]["delta"]["mean"]
    assert f["stable_regressions"] == 1 and f["two_sided_bar"] is False
    assert "one round" not in e["flags"] and "within the noise floor" in e["flags"]  # 0.267 <= 0.4


def test_judge_only_change_is_typed_measurement_correction(world, tmp_path):
    led = Ledger(Store(world, tmp_path / "state"))
    e = led.add(title="new judge snapshot", by="ana", baseline="r-base", candidate="r-base-judge2")
    assert e["type"] == "measurement-correction" and e["type_automatic"] is True
    with pytest.raises(InputError, match="measurement correction, not 'accepted'"):
        led.add(title="x", by="ana", type_="accepted", baseline="r-base", candidate="r-base-judge2")
    with pytest.raises(InputError, match="stays a measurement correction"):
        led.amend(e["entry_id"], by="bo", type_="accepted")
    assert [x["entry_id"] for x in led.entries(live=False)] == ["L1"]


def test_an_entry_on_one_round_is_flagged(tmp_path):
    led = Ledger(Store(DEMO, tmp_path / "state"))
    e = led.add(title="split harness", by="ana", baseline="support-single", candidate="support-split")
    assert "one round" in e["flags"] and "SIMULATED data" in e["flags"]
    assert e["type"] == "measurement-correction"  # the harness changed, not the answers
    e2 = led.add(title="a single run", by="ana", type_="possible-noise", runs=["support-split"])
    assert "one round" in e2["flags"]
    e3 = led.add(title="concise prompt", by="ana", type_="accepted", baseline="accounts-g2-split",
                 candidate="accounts-g1-split")
    assert "one round" not in e3["flags"]


def test_amend_retire_keep_history_and_the_store_refuses_rewrites(world, tmp_path, backend):
    led = Ledger(Store(world, tmp_path / "state"))
    e = led.add(title="t", by="ana", type_="accepted", baseline="r-base", candidate="r-cand")
    led.amend(e["entry_id"], by="bo", type_="reverted", note="rolled back after the incident")
    led.retire(e["entry_id"], by="cy", reason="superseded by L2")
    got = led.get(e["entry_id"])
    assert got["type"] == "reverted" and got["status"] == "retired" and got["retired_reason"] == "superseded by L2"
    assert [h["action"] for h in got["history"]] == ["add", "amend", "retire"]
    assert [h["by"] for h in got["history"]] == ["ana", "bo", "cy"]
    with pytest.raises(InputError, match="is retired"):
        led.amend(e["entry_id"], by="bo", note="again")
    if backend.name == "postgres":
        import psycopg
        assert not led.path.exists()
        with psycopg.connect(backend.url, autocommit=True) as pg:
            for sql in ("UPDATE ledger_events SET by = 'mallory'", "DELETE FROM ledger_events", "TRUNCATE ledger_events"):
                with pytest.raises(psycopg.errors.RestrictViolation, match="the ledger is append-only"):
                    pg.execute(sql)
        assert [h["by"] for h in led.get(e["entry_id"])["history"]] == ["ana", "bo", "cy"]
        return
    con = sqlite3.connect(led.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE ledger_events SET by = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM ledger_events")
    con.close()


def test_export_md_lists_the_figures_as_the_runs_hold_them(world, tmp_path):
    state = tmp_path / "state"
    _cli(world, state, "ledger", "add", "--title", "writer prompt", "--type", "rejected", "--baseline", "r-base",
         "--candidate", "r-cand", "--by", "ana", check=0)
    _cli(world, state, "ledger", "add", "--title", "judge snapshot", "--baseline", "r-base", "--candidate",
         "r-base-judge2", "--by", "ana", "--note", "re-scored the same answers", check=0)
    md = _cli(world, state, "ledger", "export", "--format", "md", check=0).stdout
    c = json.loads(_cli(world, state, "compare", "r-base", "r-cand", "--json", check=0).stdout)["figures"]["all_pass"]
    assert f"baseline {rounds_text(c['a'])}; candidate {rounds_text(c['b'])}" in md
    assert "60.0% / 60.0% / 50.0% -> 56.7%" in md and "96.7% / 96.7% / 56.7% -> 83.3%" in md
    assert "paired delta +26.7 pts" in md and "stable regressions 1" in md
    assert "## L2: judge snapshot — measurement correction, NOT system improvement" in md
    assert "note: re-scored the same answers" in md
    lst = json.loads(_cli(world, state, "ledger", "list", "--json", check=0).stdout)
    assert [e["entry_id"] for e in lst] == ["L1", "L2"] and lst[0]["figures_source"] == "runs"
    out = tmp_path / "ledger.md"
    _cli(world, state, "ledger", "export", "--format", "md", "--output", str(out), check=0)
    assert out.read_text() == md, "\n".join(difflib.unified_diff(md.splitlines(), out.read_text().splitlines(), lineterm=""))


def test_export_falls_back_to_the_snapshot_when_a_run_is_gone(tmp_path):
    data = tmp_path / "data"
    make_compare_world(data)
    led = Ledger(Store(data, tmp_path / "state"))
    led.add(title="t", by="ana", type_="accepted", baseline="r-base", candidate="r-cand")
    import shutil
    shutil.rmtree(data / "runs" / "r-cand")
    e = Ledger(Store(data, tmp_path / "state")).entries()[0]
    assert e["figures_source"].startswith("snapshot") and e["figures_now"]["delta"] == pytest.approx(8 / 30)


def _add(args):
    data, state, k = args
    led = Ledger(Store(data, state))
    return led.add(title=f"entry {k}", by=f"p{k}", type_="possible-noise", runs=["r-base"])["entry_id"]


def test_concurrent_writers_get_distinct_ids_and_lose_nothing(world, tmp_path):
    state = tmp_path / "state"
    with ProcessPoolExecutor(4) as ex:
        ids = list(ex.map(_add, [(world, state, k) for k in range(12)]))
    assert sorted(ids, key=lambda s: int(s[1:])) == [f"L{k}" for k in range(1, 13)]
    titles = {e["title"] for e in Ledger(Store(world, state)).entries(live=False)}
    assert titles == {f"entry {k}" for k in range(12)}


def test_latency_and_polluted_marks_are_kept_and_recomputed(tmp_path, backend):
    data = tmp_path / "data"
    make_compare_world(data, status="polluted", latency_ms=(7700.0, 34800.0))
    state = tmp_path / "state"
    led = Ledger(Store(data, state))
    e = led.add(title="reranker", by="ana", type_="rejected", baseline="r-base", candidate="r-cand")
    assert "r-cand is POLLUTED" in e["flags"] and e["figures"]["polluted"] == ["r-cand"]
    assert e["figures"]["latency"]["candidate"]["system"]["mean_ms"] == pytest.approx(69600.0)
    (now,) = led.entries()
    assert now["figures_now"]["latency_text"] == "15,400 / 23,100 ms -> 69,600 / 104,400 ms"
    p = _cli(data, state, "ledger", "list", check=0)
    assert "69,600 / 104,400 ms" in p.stdout and "r-cand is POLLUTED" in p.stdout
    p = _cli(data, state, "ledger", "export", check=0)
    assert "— POLLUTED: r-cand" in p.stdout and "candidate system 69,600 ms mean, 104,400 ms p95" in p.stdout
