"""The derived tables (evalcore.storage.derived, evalcore.storage.aggregates) are proven right:
every figure that reads them equals the figure from the full data (EVALCORE_DERIVED=0), on the
demo and on randomised worlds (errored and missing verdicts, several generation and judge rounds,
holdout items, classes, gates, calls with unknown prices); a stale, altered or foreign set is
never read, and is rebuilt."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from derived_util import norm as _norm

from evalcore import contract as S
from evalcore.analysis import answers as answers_mod
from evalcore.analysis import cost as cost_mod
from evalcore.analysis.answers import answers_failing, cell_answers
from evalcore.analysis.failures import attribution, crosstab, position_effect
from evalcore.analysis.harness import flip_answers, flips
from evalcore.analysis.instruments import association
from evalcore.analysis.scores import reliability
from evalcore.analysis.selection import Selection, answers_relation, mask_positions, mask_sql
from evalcore.analysis.suites import suite_of_run
from evalcore.analysis.summary import generations_summary, runs_summary
from evalcore.storage import aggregates, derived
from evalcore.storage.itemkeys import item_keys, item_rows, labelled_ids
from evalcore.storage.pairs import pair_table
from evalcore.storage.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


def both(monkeypatch, fn, *a, **kw):
    """fn over the derived tables and over the full data; both results."""
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    fast = fn(*a, **kw)
    monkeypatch.setenv("EVALCORE_DERIVED", "0")
    full = fn(*a, **kw)
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    return _norm(fast), _norm(full)


def assert_same(monkeypatch, fn, *a, **kw):
    fast, full = both(monkeypatch, fn, *a, **kw)
    assert fast == full, (fn.__name__, a, kw)
    return fast


# --------------------------------------------------------------------------- a randomised world


def make_world(data: Path, seed: int) -> dict:
    """A suite with classes and holdout items, one generation with 1-2 rounds, and 3 runs on it
    (1-3 judge rounds, 3-7 criteria, gates, errored verdicts, missing verdicts, calls with
    unknown prices and errors). All drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / f"unused-state-{seed}")
    n = int(rng.integers(40, 160))
    classes = ["a", "b", "c", None]
    items = [
        {
            "item_id": f"it{k:04d}-{rng.integers(0, 99)}",
            "input": f"question {k}",
            "class": classes[int(rng.integers(0, 4))],
            "holdout": bool(rng.random() < 0.15),
        }
        for k in range(n)
    ]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=n)
    st.write_suite(sm, items)
    rounds = int(rng.integers(1, 3))
    outputs = [
        {"item_id": it["item_id"], "round": r, "output": f"answer {it['item_id']} {r}", "tokens_in": 10,
         "tokens_out": int(rng.integers(5, 50)), "cost_usd": None if rng.random() < 0.1 else 0.001,
         "latency_ms": float(rng.gamma(2.0, 100.0))}
        for it in items for r in range(1, rounds + 1)
    ]
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash, created_at="2026-01-01T01:00:00Z",
                              rounds=rounds, source="imported", outputs_hash=S.outputs_hash(outputs))
    st.write_generation(gm, outputs)
    k = int(rng.integers(3, 8))
    names = [f"crit{j}" for j in range(k)]
    runs = []
    for ri, mode in enumerate(("single", "split", "grouped")):
        jr = int(rng.integers(1, 4))
        gates = set(rng.choice(names, size=int(rng.integers(0, 3)), replace=False).tolist())
        rubric = S.Rubric(criteria=[S.Criterion(name=c, kind="binary", gate=c in gates) for c in names])
        p_fail = rng.uniform(0.05, 0.5, size=k)
        verdicts, calls = [], []
        t0 = datetime(2026, 1, 2, tzinfo=timezone.utc)
        for it in items:
            for g in range(1, rounds + 1):
                latent = rng.random() < 0.3  # a shared cause: criteria fail together
                for j in range(1, jr + 1):
                    cid = f"r{ri}-{it['item_id']}-{g}-{j}"
                    calls.append({
                        "call_id": cid, "item_id": it["item_id"], "gen_round": g, "judge_round": j,
                        "criteria": names if mode != "split" else [names[0]],
                        "tokens_in": None if rng.random() < 0.05 else int(rng.integers(100, 900)),
                        "tokens_out": int(rng.integers(10, 90)),
                        "cost_usd": None if rng.random() < 0.1 else float(rng.uniform(0.0005, 0.002)),
                        "latency_ms": float(rng.gamma(2.0, 300.0)),
                        "error": "timeout" if rng.random() < 0.03 else None,
                        "started_at": t0 + timedelta(seconds=float(rng.uniform(0, 3600))),
                        "cache_hit": bool(rng.random() < 0.05),
                    })
                    for pos, c in enumerate(names):
                        if rng.random() < 0.04:  # no verdict row at all (a partial run)
                            continue
                        u = rng.random()
                        passed = None if u < 0.05 else bool(rng.random() > p_fail[pos] * (2.0 if latent else 0.6))
                        verdicts.append({
                            "run_id": f"r{ri}", "item_id": it["item_id"], "gen_round": g, "criterion": c,
                            "judge_round": j, "passed": passed, "raw_verdict": None if passed is None else str(passed),
                            "position": pos, "call_id": cid, "error": "unparseable" if passed is None else None,
                        })
        rm = S.RunManifest(run_id=f"r{ri}", gen_id="g", created_at=f"2026-01-02T0{ri}:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode=mode, field_order=names, judge_model=f"judge-{ri % 2}",
                           source="imported", judge_rounds=jr, status="polluted" if ri == 2 else "complete",
                           groups=[names[: k // 2], names[k // 2:]] if mode == "grouped" else None)
        st.write_run(rm, verdicts, calls)
        runs.append(f"r{ri}")
    return {"runs": runs, "names": names, "rounds": rounds}


def _selections(store: Store, run_id: str, rounds: int) -> list[Selection]:
    jr = store.run(run_id).manifest.judge_rounds
    out = [Selection(), Selection(include_holdout=True), Selection(majority=True), Selection(classes=("a", "(none)"))]
    out += [Selection(judge_round=jr), Selection(gen_round=rounds, include_holdout=True)]
    out.append(Selection(items=tuple(sorted(r[0] for r in store.sql(
        "SELECT item_id FROM read_parquet(?) ORDER BY item_id LIMIT 17", [store.path_of("suite", "s", "items")])))))
    return out


@pytest.fixture(scope="module", params=[1, 2, 3])
def world(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"derived-{request.param}")
    info = make_world(root / "data", 1000 + request.param)
    return Store(root / "data", root / "state"), info


def test_the_randomised_world_is_read_from_its_derived_tables(world):
    store, info = world
    for rid in info["runs"]:
        s = derived.read(store, "run", rid)
        assert s is not None and s.where == "data" and aggregates.ANSWERS in s.files
        assert mask_sql(store, rid, Selection()) is not None


def test_a_drill_downs_words_under_the_majority_are_the_first_agreeing_round(world):
    """Each judge's words under the majority of judge rounds (cell_answers, whose verdict query
    keeps only the page's items before taking the majority), against pandas over every verdict: the
    majority (a tie fails, NULL when every round errored) and the words of the first judge round
    that agrees with it."""
    store, info = world
    a, b = info["names"][0], info["names"][-1]
    sel = Selection(majority=True, include_holdout=True)
    checked = 0
    for rid in info["runs"]:
        v = pq.read_table(store.path_of("run", rid, "verdicts")).to_pandas()
        v = v[v["criterion"].isin([a, b])]
        for af, bf in ((True, True), (False, True), (False, False)):
            got = cell_answers(store, info["runs"], a, b, af, bf, rid, sel=sel, limit=50).to_dict()
            for ans in got["answers"]:
                for c in (a, b):
                    said = ans["verdicts"][rid][c]
                    rows = v[(v.item_id == ans["item_id"]) & (v.gen_round == ans["gen_round"]) & (v.criterion == c)]
                    rows = rows.sort_values("judge_round")
                    known = rows["passed"].dropna()
                    maj = None if known.empty else bool(2 * int(known.sum()) > len(known))
                    assert said["passed"] == maj, (rid, ans["item_id"], c)
                    agree = rows[rows["passed"].isna()] if maj is None else rows[rows["passed"] == maj]
                    first = agree.iloc[0]
                    assert said["judge_round"] == int(first["judge_round"])
                    assert said["reason"] == (None if first["reason"] is None or first["reason"] != first["reason"] else first["reason"])
                    checked += 1
    assert checked > 20


def test_every_figure_equals_the_full_data_path_randomised(world, monkeypatch):
    store, info = world
    # the drill-downs look for their page in windows of item keys: small ones, so that a page
    # spans several windows (and the last one ends past the last item)
    monkeypatch.setattr(answers_mod, "FIRST_WINDOW", 3)
    compared = 0
    for rid in info["runs"]:
        for sel in _selections(store, rid, info["rounds"]):
            r = assert_same(monkeypatch, attribution, store, rid, sel)
            assert r["answers"] > 0
            a, b = info["names"][0], info["names"][-1]
            assert_same(monkeypatch, crosstab, store, rid, a, b, sel)
            for only in (False, True):  # the drill-downs: the same answers, in the same order
                assert_same(monkeypatch, answers_failing, store, rid, b, only, sel, 7, 3)
            rounds_all = min(store.run(r).manifest.judge_rounds for r in info["runs"])
            for af, bf in ((True, True), (False, True)) if sel.majority or sel.judge_round <= rounds_all else ():
                assert_same(monkeypatch, cell_answers, store, info["runs"], a, b, af, bf, rid, sel=sel, limit=9)
            compared += 2
        assert_same(monkeypatch, cost_mod.run_cost, store, rid)
        assert_same(monkeypatch, cost_mod.run_cost, store, rid, classes=("b",))
    for hold in (False, True):
        assert_same(monkeypatch, runs_summary, store, hold)
        assert_same(monkeypatch, generations_summary, store, hold)
    assert_same(monkeypatch, runs_summary, store, False, classes=("c",))
    assert_same(monkeypatch, cost_mod.cost_table, store)
    for sel in (Selection(), Selection(majority=True), Selection(include_holdout=True, classes=("a",))):
        res = assert_same(monkeypatch, association, store, info["runs"], sel=sel, n_boot=200)
        assert res["shared_answers"] > 0
        # two runs: their answers counted by pair of patterns from the pair table, either order
        for two in (["r0", "r2"], ["r2", "r1"]):
            assert_same(monkeypatch, association, store, two, sel=sel, n_boot=200, analytic_above=50)
        for a, b in (("r0", "r1"), ("r2", "r0")):
            assert_same(monkeypatch, flips, store, a, b, sel)
            assert pair_table(store, a, b, build=False) is not None  # the table the fast path read
            for d in ("fail_a_pass_b", "pass_a_fail_b", "fail_both"):
                assert_same(monkeypatch, flip_answers, store, a, b, info["names"][0], d, sel, 8, 2)
        # r0 is a single call with a fixed field order: its position effect reads the masks
        assert mask_positions(store, "r0") is not None
        for ref in (None, "r1"):
            res = assert_same(monkeypatch, position_effect, store, "r0", ref, sel)
            assert res["positions"]
        assert_same(monkeypatch, position_effect, store, "r2", "r1", sel)  # grouped: positions restart per call
    assert compared >= 40
    # reliability across judge rounds: the pass / fail criteria from the answers tables' counts
    for kw in ({}, {"classes": ["a"]}, {"include_holdout": True}):
        res = assert_same(monkeypatch, reliability, store, run_ids=info["runs"], **kw)
        assert any(c["alpha"] is not None for i in res["instruments"] for c in i["criteria"])


def test_every_figure_equals_the_full_data_path_on_the_demo(tmp_path, monkeypatch):
    store = Store(DEMO, tmp_path / "state")
    for rid in store.ids("run"):
        m = store.run(rid).manifest
        sels = [Selection(), Selection(include_holdout=True), Selection(majority=True)]
        if m.judge_rounds > 1:
            sels.append(Selection(judge_round=m.judge_rounds))
        for sel in sels:
            assert_same(monkeypatch, attribution, store, rid, sel)
        names = m.rubric.names()
        if len(names) > 1:
            assert_same(monkeypatch, crosstab, store, rid, names[0], names[1])
        assert_same(monkeypatch, cost_mod.run_cost, store, rid)
    assert_same(monkeypatch, runs_summary, store, False)
    assert_same(monkeypatch, runs_summary, store, True, classes=("billing",))
    assert_same(monkeypatch, generations_summary, store, False)
    assert_same(monkeypatch, generations_summary, store, True)
    assert_same(monkeypatch, cost_mod.cost_table, store)
    for runs in (["support-single", "support-split"], ["support-single", "support-split", "support-grouped"]):
        for human in (False, True):
            assert_same(monkeypatch, association, store, runs, human=human, n_boot=300)
            # above analytic_above the masks' answers are counted per pattern of flags in DuckDB
            # (no answer leaves it): the same figures as every answer in order from the verdicts
            res = assert_same(monkeypatch, association, store, runs, human=human, analytic_above=150)
            assert res["shared_answers"] > 150
    for sel in (Selection(), Selection(majority=True)):
        assert_same(monkeypatch, flips, store, "support-single", "support-split", sel)
        assert_same(monkeypatch, flips, store, "support-split-judgeB", "support-grouped", sel)
        assert_same(monkeypatch, position_effect, store, "support-single", "support-split", sel)
        assert_same(monkeypatch, position_effect, store, "support-grouped", None, sel)
    assert mask_positions(store, "support-single") is not None
    rounds = [r for r in store.ids("run") if store.run(r).manifest.judge_rounds > 1]
    for kw in ({}, {"classes": ["billing"]}, {"include_holdout": True}):
        res = assert_same(monkeypatch, reliability, store, run_ids=rounds, **kw)
        assert sum(c["fleiss"] is not None for i in res["instruments"] for c in i["criteria"]) >= 6
    # the demo ships its sets beside its runs, and they are the ones read
    for rid in store.ids("run"):
        assert derived.read(store, "run", rid).where == "data"


def test_the_patterns_count_the_answers_and_carry_the_suites_holdout_and_classes(world, tmp_path):
    """patterns.parquet is the answers table grouped by pattern, and each answer's holdout flag and
    class are its item's in the suite (which is one of the set's sources)."""
    demo = Store(DEMO, tmp_path / "state")
    for store, rids in ((world[0], world[1]["runs"]), (demo, demo.ids("run"))):
        for rid in rids:
            s = derived.read(store, "run", rid)
            assert s is not None and "suite/items.parquet" in json.loads((s.dir / derived.INDEX).read_text())["sources"]
            a, p = s.path("answers.parquet"), s.path("patterns.parquet")
            cols = "judge_round, gen_round, holdout, class, present, passed, failed"
            grouped = store.sql(f"SELECT {cols}, count(*) FROM read_parquet(?) GROUP BY ALL ORDER BY ALL", [a])
            assert store.sql(f"SELECT {cols}, n FROM read_parquet(?) ORDER BY ALL", [p]) == grouped
            assert sum(r[-1] for r in grouped) == store.sql("SELECT count(*) FROM read_parquet(?)", [a])[0][0]
            items = store.path_of("suite", suite_of_run(store, rid), "items")
            wrong = store.sql(
                "SELECT count(*) FROM read_parquet(?) a JOIN read_parquet(?) i USING (item_id) "
                "WHERE a.holdout != i.holdout OR a.class != coalesce(i.class, '(none)')",
                [a, items],
            )[0][0]
            assert wrong == 0


# --------------------------------------------------------------------------- never a wrong set


def _copy_world(src: Path, dst: Path) -> Store:
    shutil.copytree(src, dst / "data")
    return Store(dst / "data", dst / "state")


def test_labelled_items_are_looked_up_by_integer_key_once(world, tmp_path):
    """The association's people section picks the labelled answers out of each run by their integer
    item keys: looked up once per id (storage.itemkeys) and kept in the state, a map that was
    altered is not read, and without a state directory the ids themselves are matched."""
    store, info = world
    other = Store(store.data, tmp_path / "state")
    path = aggregates.answers_table(other, info["runs"][0])[0]
    rows = other.sql("SELECT DISTINCT item_id, item FROM read_parquet(?) ORDER BY item", [path])
    ids = [r[0] for r in rows[::3]]
    want = {r[0]: r[1] for r in rows[::3]}
    looked = []
    real = Store.arrow
    other.arrow = lambda q, p=None, **kw: (looked.append(q) if "unnest(?::VARCHAR[])" in q else None) or real(
        other, q, p, **kw
    )
    assert item_keys(other, path, [*ids, "not-an-item"]) == want
    assert item_keys(other, path, ids[:5]) == {i: want[i] for i in ids[:5]} and len(looked) == 1  # known
    assert item_keys(other, path, ["not-an-item"]) == {} and len(looked) == 1  # a known miss too
    # the rows kept beside the keys are the answers table's rows of those items, every column
    keys, rows = item_rows(other, path, ids)
    full = "SELECT * FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?)) ORDER BY item, gen_round, judge_round"
    assert other.sql(full, [rows, ids]) == other.sql(full, [path, ids]) and len(looked) == 1
    (f,) = (tmp_path / "state" / derived.DIR / "keys").glob("*/index.json")
    doc = json.loads(f.read_text())
    doc["memo"][ids[0]] = 10**6
    f.write_text(json.dumps(doc))
    assert item_keys(other, path, ids) == want and len(looked) == 2  # altered: not read, looked up again
    kept = f.with_name("rows.parquet")
    other.sql(f"COPY (SELECT * REPLACE (0 AS present) FROM read_parquet('{kept}')) TO '{kept}' (FORMAT parquet)")
    keys, rows = item_rows(other, path, ids)  # rows altered: not read, looked up again
    assert keys == want and len(looked) == 3 and other.sql(full, [rows, ids]) == other.sql(full, [path, ids])
    inside = Store(store.data, store.data / "state")
    assert item_keys(inside, path, ids) is None


def test_item_keys_added_by_processes_at_once_are_all_kept(world, tmp_path):
    """Four processes add four different sets of ids to one answers table's item keys at the same
    moment: one builder at a time (a lock beside the product), each adding to the current one, so
    none of their keys is lost and a reader's rows hold every id it was given."""
    import subprocess
    import sys

    store, info = world
    state = tmp_path / "state"
    path = aggregates.answers_table(Store(store.data, state), info["runs"][0])[0]
    rows = store.sql("SELECT DISTINCT item_id FROM read_parquet(?) ORDER BY item_id", [path])
    parts = [[r[0] for r in rows[k::4]][:40] for k in range(4)]
    code = (
        "import json, sys; from evalcore.storage.store import Store; from evalcore.storage.itemkeys import item_rows; "
        "keys, rows = item_rows(Store(sys.argv[1], sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])); "
        "print(json.dumps([len(keys), rows]))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(store.data), str(state), path, json.dumps(ids)],
                         stdout=subprocess.PIPE, text=True)
        for ids in parts
    ]
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [n for n, _ in outs] == [len(ids) for ids in parts]
    looked = []
    other = Store(store.data, state)
    real = Store.arrow
    other.arrow = lambda q, p=None, **kw: (looked.append(q) if "unnest(?::VARCHAR[])" in q else None) or real(
        other, q, p, **kw
    )
    every = [i for ids in parts for i in ids]
    keys, kept = item_rows(other, path, every)
    assert len(keys) == len(every) and looked == []  # every process's ids were kept: none looked up again
    got = other.sql("SELECT count(DISTINCT item_id) FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?))",
                    [kept, every])
    assert got == [(len(every),)]


def test_the_labelled_items_keys_are_prepared_by_index(tmp_path):
    """`evalcore index` looks up the keys of the label sets' items in each run's answers table
    (rows of kind "keys"), so that the report card and the association find them ready."""
    import subprocess
    import sys

    def ev(*args):
        p = subprocess.run([sys.executable, "-m", "evalcore", "--data", str(DEMO), "--state", str(tmp_path / "state"),
                            "index", "--no-detection", *args, "--json"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return {r["id"]: r for r in json.loads(p.stdout) if r["kind"] == "keys"}

    before = ev("--check")
    assert before and {r["state"] for r in before.values()} == {"missing or stale"}
    assert not (tmp_path / "state" / derived.DIR / "keys").exists()  # --check writes nothing
    built = ev()
    assert set(built) == set(before) and {r["state"] for r in built.values()} == {"built"}
    store = Store(DEMO, tmp_path / "state")
    for rid, r in built.items():
        path = aggregates.answers_table(store, rid, rebuild=False)[0]
        ids = labelled_ids(store, store.run(rid).manifest.gen_id)
        assert r["labelled_items"] == len(ids) > 0
        got = store.sql("SELECT DISTINCT item_id, item FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?))",
                        [path, ids])
        looked = []
        store.arrow = lambda q, p=None, **kw: looked.append(q) or Store.arrow(store, q, p, **kw)
        assert item_keys(store, path, ids) == dict(got) and not looked  # ready: nothing looked up
        del store.arrow
    assert {r["state"] for r in ev("--check").values()} == {"current"}
    assert {r["state"] for r in ev("--force", "--into", "state").values()} == {"rebuilt"}  # the demo left as it is


def test_a_copied_data_directory_keeps_its_sets(world, tmp_path):
    store, info = world
    other = _copy_world(store.data, tmp_path)
    for rid in info["runs"]:
        s = derived.read(other, "run", rid)
        assert s is not None and s.where == "data" and s.dir.is_relative_to(other.data)


def test_a_stale_set_is_not_read_and_is_rebuilt(world, tmp_path, monkeypatch):
    store, info = world
    other = _copy_world(store.data, tmp_path)
    rid = info["runs"][0]
    vpath = other.dir_of("run", rid) / "verdicts.parquet"
    t = pq.read_table(vpath)
    flipped = t.set_column(t.schema.get_field_index("passed"), "passed",
                           [[None if v is None else not v for v in t["passed"].to_pylist()]])
    pq.write_table(flipped.replace_schema_metadata(t.schema.metadata), vpath)
    beside = other.dir_of("run", rid) / derived.DIR
    assert (beside / derived.INDEX).exists()
    s = derived.read(other, "run", rid)
    assert s is None  # the set beside summarises the old verdicts
    # a figure rebuilds the set, into the state directory (the data is only read), from the new verdicts
    fast, full = both(monkeypatch, attribution, other, rid, Selection())
    assert fast == full
    old = _norm(attribution(store, rid, Selection()))
    assert fast["total_failures"] != old["total_failures"]
    s = derived.read(other, "run", rid)
    assert s is not None and s.where == "state" and s.dir.is_relative_to(other.state)
    # evalcore index puts a current set beside the run again
    out = aggregates.index(other, "run", rid)
    assert out["state"] == "rebuilt" and out["where"] == "data"
    assert derived.read(other, "run", rid).where == "data"


@pytest.mark.parametrize("how", ["answers", "memo", "version", "foreign"])
def test_an_altered_set_is_never_read(world, tmp_path, monkeypatch, how):
    store, info = world
    other = _copy_world(store.data, tmp_path)
    rid = info["runs"][1]
    d = other.dir_of("run", rid) / derived.DIR
    idx = json.loads((d / derived.INDEX).read_text())
    if how == "answers":  # every failure mask cleared: the figures would say nothing fails
        t = pq.read_table(d / aggregates.ANSWERS)
        t = t.set_column(t.schema.get_field_index("failed"), "failed", [[0] * t.num_rows])
        pq.write_table(t, d / aggregates.ANSWERS)
    elif how == "memo":  # a number edited by hand
        idx["memo"]["call_scan"][0]["calls"] += 1
        (d / derived.INDEX).write_text(json.dumps(idx))
    elif how == "version":
        idx["derived_version"] = S.DERIVED_VERSION + 1
        (d / derived.INDEX).write_text(json.dumps(idx))
    else:  # another run's set put in this one's place
        shutil.rmtree(d)
        shutil.copytree(other.dir_of("run", info["runs"][0]) / derived.DIR, d)
    assert derived.read(other, "run", rid) is None or derived.read(other, "run", rid).where == "state"
    fast, full = both(monkeypatch, attribution, other, rid, Selection())
    assert fast == full
    fast, full = both(monkeypatch, cost_mod.run_cost, other, rid)
    assert fast == full
    assert derived.read(other, "run", rid).where == "state"


def test_off_reads_nothing_and_an_unwritable_run_directory_is_served_from_the_state(world, tmp_path, monkeypatch):
    store, info = world
    other = _copy_world(store.data, tmp_path)
    monkeypatch.setenv("EVALCORE_DERIVED", "0")
    assert derived.read(other, "run", info["runs"][0]) is None
    monkeypatch.setenv("EVALCORE_DERIVED", "1")
    rid = info["runs"][0]
    derived.remove(other, "run", rid)
    # a file where the set would go: the set cannot be written beside the run (as on a read-only
    # directory, which root, running these tests in CI, could write anyway)
    (other.dir_of("run", rid) / derived.DIR).write_text("not a directory")
    out = aggregates.index(other, "run", rid)
    assert out["where"] == "state" and out["state"] == "built"
    assert (other.dir_of("run", rid) / derived.DIR).read_text() == "not a directory"
    fast, full = both(monkeypatch, attribution, other, rid, Selection())
    assert fast == full


def test_a_verdict_that_masks_cannot_hold_is_left_to_the_full_data(tmp_path, monkeypatch):
    """A duplicate verdict row (the store refuses it at validation, but a reader may meet it): no
    answers table is stored, and the figures come from the builder's SELECT inlined over the
    verdicts (the one relation), with or without derived tables."""
    make_world(tmp_path / "data", 7)
    store = Store(tmp_path / "data", tmp_path / "state")
    rid = "r0"
    vpath = store.dir_of("run", rid) / "verdicts.parquet"
    t = pq.read_table(vpath)
    import pyarrow as pa

    pq.write_table(pa.concat_tables([t, t.slice(0, 1)]).replace_schema_metadata(t.schema.metadata), vpath)
    s = aggregates.current(store, "run", rid)
    assert s is not None and "not_derived" in s.memo["answers"] and aggregates.ANSWERS not in s.files
    assert not answers_relation(store, rid)[3]  # not the stored table: the inlined SELECT
    fast, full = both(monkeypatch, attribution, store, rid, Selection())
    assert fast == full


def test_the_index_command_builds_checks_and_says_so(tmp_path):
    import subprocess
    import sys

    make_world(tmp_path / "data", 11)
    store = Store(tmp_path / "data", tmp_path / "state")
    for rid in store.ids("run"):
        derived.remove(store, "run", rid)

    def ev(*args):
        p = subprocess.run([sys.executable, "-m", "evalcore", "--data", str(tmp_path / "data"), "--state",
                            str(tmp_path / "state"), "index", *args, "--json"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return {(r["kind"], r["id"]): r for r in json.loads(p.stdout)}

    before = ev("--check")
    assert before[("run", "r0")]["state"] == "missing or stale" and before[("generation", "g")]["state"] == "current"
    # the review detection of the generation is stored in the state directory, once per set of runs
    assert before[("detection", "g")]["state"] == "missing or stale"
    built = ev()
    assert {r["state"] for (k, _), r in built.items() if k == "run"} == {"built"}
    assert all(r["where"] == "data" for (k, _), r in built.items() if k in ("run", "generation"))
    # every two runs on the generation joined once, into the state directory
    pairs = {i: r for (k, i), r in built.items() if k == "pairs"}
    assert set(pairs) == {"r0+r1", "r0+r2", "r1+r2"} and {r["state"] for r in pairs.values()} == {"built"}
    assert all(Path(r["path"]).is_relative_to(tmp_path / "state") for r in pairs.values())
    assert {r["state"] for (k, _), r in before.items() if k == "pairs"} == {"missing or stale"}
    det = built[("detection", "g")]
    assert det["state"] == "built" and det["where"] == "state"
    assert Path(det["path"]) == tmp_path / "state" / "derived" / "detect" / "g"
    assert (Path(det["path"]) / "cases.parquet").is_file()
    assert {r["state"] for r in ev("--check").values()} == {"current"}
    assert {r["state"] for r in ev("r1", "--force").values()} == {"rebuilt"}


@pytest.mark.parametrize("retry", ["1MB", "1GB"])
def test_an_answers_table_that_does_not_fit_its_cap_is_built_without_it(tmp_path, monkeypatch, retry):
    """At 180M verdict rows the answers table's COPY ran out of memory at its cap; it is then built
    once more at a larger cap, and if that is too small too with DuckDB's own limit, and holds what
    a build under the cap holds."""
    make_world(tmp_path / "data", 5)
    store = Store(tmp_path / "data", tmp_path / "state")
    rid = store.ids("run")[0]
    want = pq.read_table(derived.read(store, "run", rid).path("answers.parquet"))
    derived.remove(store, "run", rid)
    monkeypatch.setattr(aggregates, "BUILD_MEMORY", "1MB")  # too small for any pivot
    monkeypatch.setattr(aggregates, "BUILD_MEMORY_RETRY", retry)
    with pytest.raises(Exception, match="(?i)out of memory"):  # the cap is real
        c = store.connect()
        c.execute("SET memory_limit = '1MB'")
        c.execute("SELECT item_id, count(*) FROM read_parquet(?) GROUP BY ALL ORDER BY ALL",
                  [store.path_of("run", rid, "verdicts")]).fetchall()
    s = aggregates.current(store, "run", rid)
    assert s is not None and pq.read_table(s.path("answers.parquet")).equals(want)
