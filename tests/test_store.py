"""The on-disk format and the store: golden files (valid, invalid, from a newer version), ids and
paths that would leave the data directory, and atomic writes.

The golden directories under tests/golden/format/ are written by make_golden.py there and committed:
they pin format version 1 as it is on disk, independently of today's writers.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import REPO

from evalcore import contract as S
from evalcore.errors import EvalcoreError, FormatError, InputError, NotFoundError, PathEscapeError, SchemaVersionError
from evalcore.storage.paths import check_id, inside
from evalcore.storage.store import Store

GOLDEN = REPO / "tests" / "golden" / "format"
VALID = GOLDEN / "valid"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _all_paths(root: Path) -> list[str]:
    """Every path under root but the derived tables (their own version and tests: tests/test_derived.py)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if "derived" not in p.relative_to(root).parts)


# --------------------------------------------------------------------------- the valid golden dir


def test_store_reads_the_valid_golden_directory(tmp_path):
    st = Store(VALID, tmp_path / "state")
    assert st.validate() == {"suites": 1, "generations": 1, "runs": 2, "sessions": 1, "labelsets": 1}
    assert st.ids("run") == ["r-pairs", "r1"]
    suite = st.suite("s1").manifest
    assert (suite.schema_version, suite.n_items, suite.curated) == (1, 3, True)
    gen = st.generation("g1").manifest
    assert gen.knobs == {"generator_model": "sys-1", "temperature": 0.2} and gen.rounds == 2
    run = st.run("r1").manifest
    assert run.rubric.names() == ["correct", "complete"] and run.rubric.get("correct").gate
    assert run.rubric.get("complete").threshold == 4 and run.judge_rounds == 2
    assert st.session("sess1").manifest.status == "closed"
    assert st.labelset("l1").manifest.annotators == ["ann"]
    # the tables read back through DuckDB with the values written
    v = st.path_of("run", "r1", "verdicts")
    assert st.sql("SELECT count(*), count(*) FILTER (WHERE passed) FROM read_parquet(?)", [v]) == [(24, 16)]  # 4 of 6 outputs score >= 4; x 2 criteria x 2 judge rounds
    assert st.sql("SELECT covered FROM read_parquet(?) WHERE item_id = 'q1' AND criterion = 'complete' "
                  "LIMIT 1", [v]) == [(["30 days"],)]
    items = st.path_of("suite", "s1", "items")
    assert st.sql('SELECT item_id, "class", holdout FROM read_parquet(?) ORDER BY item_id', [items]) == [
        ("q1", "billing", False), ("q2", "plans", False), ("q3", "shipping", True)]
    pv = st.path_of("run", "r-pairs", "pair_verdicts")
    assert st.sql("SELECT \"order\", choice FROM read_parquet(?) ORDER BY 1", [pv]) == [
        ("as_shown", "right"), ("swapped", "same")]


def test_every_golden_table_carries_version_and_table_name():
    files = sorted(VALID.rglob("*.parquet"))
    assert {f.stem for f in files} == {"items", "outputs", "verdicts", "calls", "pair_verdicts", "pairs",
                                       "judgments", "labels"}
    for f in files:
        meta = pq.read_schema(f).metadata
        assert meta[b"evalcore.schema_version"] == b"1", f
        assert meta[b"evalcore.table"] == f.stem.encode(), f
    for f in VALID.rglob("*.json"):
        assert json.loads(f.read_text(encoding="utf-8"))["schema_version"] == 1, f


def test_todays_writers_still_write_the_golden_format(tmp_path, monkeypatch):
    """Regenerate the valid directory with today's writers: the same manifests (bar created_at, which
    is fixed anyway) and the same table schemas and rows. A change here is a format change: bump
    SCHEMA_VERSION and regenerate the golden files on purpose."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
    mg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mg)
    fresh = tmp_path / "valid"
    mg.write_valid(fresh)
    assert _all_paths(fresh) == _all_paths(VALID)
    for f in VALID.rglob("*.json"):
        assert json.loads((fresh / f.relative_to(VALID)).read_text()) == json.loads(f.read_text()), f
    for f in VALID.rglob("*.parquet"):
        old, new = pq.read_table(f), pq.read_table(fresh / f.relative_to(VALID))
        assert new.schema.equals(old.schema, check_metadata=False), f
        assert new.schema.metadata[b"evalcore.schema_version"] == old.schema.metadata[b"evalcore.schema_version"]
        assert new.to_pylist() == old.to_pylist(), f
        assert old.schema.remove_metadata().equals(S.arrow_schema(S.TABLES[f.stem][0])), f


# --------------------------------------------------------------------------- invalid and future variants

# directory -> (error class, file it must name, field it must name)
CASES = {
    "future-manifest": (SchemaVersionError, "suites/s1/manifest.json", "schema_version"),
    "future-parquet": (SchemaVersionError, "suites/s1/items.parquet", "schema_version"),
    "future-run-manifest": (SchemaVersionError, "runs/r1/manifest.json", "schema_version"),
    "invalid-manifest-json": (FormatError, "suites/s1/manifest.json", "manifest"),
    "invalid-manifest-field": (FormatError, "suites/s1/manifest.json", "content_hash"),
    "invalid-manifest-version": (FormatError, "suites/s1/manifest.json", "schema_version"),
    "invalid-parquet-column": (FormatError, "suites/s1/items.parquet", "input"),
    "invalid-parquet-type": (FormatError, "generations/g1/outputs.parquet", "round"),
    "invalid-parquet-no-version": (FormatError, "suites/s1/items.parquet", "schema_version"),
    "invalid-duplicate-key": (FormatError, "suites/s1/items.parquet", "item_id"),
    "invalid-missing-generation": (FormatError, "runs/r1/manifest.json", "gen_id"),
    "invalid-dir-name": (FormatError, "suites/s1/manifest.json", "suite_id"),
}


def test_every_golden_variant_is_tested():
    dirs = [p.name for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))]
    assert sorted(dirs) == sorted([*CASES, "valid"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_store_refuses_invalid_and_future_golden_files(name, tmp_path):
    cls, rel, fld = CASES[name]
    st = Store(GOLDEN / name, tmp_path / "state")
    with pytest.raises(EvalcoreError) as e:
        st.validate()
    err = e.value
    assert type(err) is cls, err.message
    assert err.file == str(GOLDEN / name / rel), err.message
    assert err.field == fld, err.message
    assert "\n" not in err.message and err.message.startswith(str(GOLDEN / name / rel))
    if cls is SchemaVersionError:
        assert "99" in err.problem and "newer" in err.problem


def test_a_newer_version_is_refused_even_when_read_directly(tmp_path):
    st = Store(GOLDEN / "future-manifest", tmp_path / "state")
    with pytest.raises(SchemaVersionError):
        st.suite("s1")
    st = Store(GOLDEN / "future-parquet", tmp_path / "state")
    with pytest.raises(SchemaVersionError):
        st.suite("s1")


def test_truncated_tables_are_refused_naming_the_file(tmp_path):
    data = _copy(VALID, tmp_path / "data")
    f = data / "runs" / "r1" / "verdicts.parquet"
    whole = f.read_bytes()
    for cut in (len(whole) // 10, len(whole) // 2, len(whole) * 9 // 10, len(whole) - 8, 0):
        f.write_bytes(whole[:cut])
        with pytest.raises(FormatError) as e:
            Store(data, tmp_path / "state").validate()
        assert e.value.file == str(f) and e.value.field == "verdicts", e.value.message


# --------------------------------------------------------------------------- ids and paths


@pytest.mark.parametrize("bad", ["..", "../x", "../../etc", "a/b", "/etc", "/tmp/x", ".hidden", "", "a..b",
                                 "x\x00y", "r1/../../x"])
def test_ids_that_could_leave_the_data_directory_are_refused(bad, tmp_path):
    st = Store(VALID, tmp_path / "state")
    with pytest.raises(PathEscapeError):
        check_id(bad, "run id")
    for kind in ("suite", "generation", "run", "session", "labelset"):
        with pytest.raises(PathEscapeError):
            st.get(kind, bad)
        with pytest.raises(PathEscapeError):
            st.dir_of(kind, bad)


def test_inside_refuses_absolute_parts_and_dotdot(tmp_path):
    with pytest.raises(PathEscapeError):
        inside(tmp_path, "/etc", "passwd")
    with pytest.raises(PathEscapeError):
        inside(tmp_path, "a", "..", "..", "x")
    assert inside(tmp_path, "a", "b") == (tmp_path / "a" / "b").resolve()
    st = Store(VALID, tmp_path / "state")
    with pytest.raises(PathEscapeError):
        st.state_path("..", "elsewhere")


def test_a_symlinked_run_directory_pointing_outside_is_refused(tmp_path):
    data = _copy(VALID, tmp_path / "data")
    outside = _copy(VALID / "runs" / "r1", tmp_path / "outside" / "evil")
    json_path = outside / "manifest.json"
    m = json.loads(json_path.read_text())
    m["run_id"] = "evil"
    json_path.write_text(json.dumps(m))
    (data / "runs" / "evil").symlink_to(outside, target_is_directory=True)
    st = Store(data, tmp_path / "state")
    with pytest.raises(PathEscapeError) as e:
        st.run("evil")
    assert e.value.file == str(data / "runs" / "evil")
    with pytest.raises(PathEscapeError):
        st.ids("run")
    with pytest.raises(PathEscapeError):
        Store(data, tmp_path / "state").validate()


def test_the_key_is_never_written_inside_the_data_directory(tmp_path):
    data = _copy(VALID, tmp_path / "data")
    st = Store(data, tmp_path / "state")
    km = S.KeyManifest(session_id="sess1", arms={"a": "g1", "b": "g1"}, created_at="2026-01-01T00:00:00Z")
    rows = [{"pair_id": "p7f3a", "left_arm": "a", "right_arm": "b"}]
    before = _all_paths(data)
    for bad in (data, data / "keys", data / "runs" / "r1"):
        with pytest.raises(PathEscapeError):
            st.write_key(km, rows, bad)
    assert _all_paths(data) == before
    out = st.write_key(km, rows, tmp_path / "keys")
    assert out == (tmp_path / "keys" / "sess1").resolve() and (out / "key.parquet").exists()
    with pytest.raises(PathEscapeError):
        st.write_key(km.model_copy(update={"session_id": "../x"}), rows, tmp_path / "keys")


def test_missing_data_directory_is_named(tmp_path):
    with pytest.raises(NotFoundError) as e:
        Store(tmp_path / "nope", tmp_path / "state")
    assert e.value.field == "--data" and str(tmp_path / "nope") in e.value.message


# --------------------------------------------------------------------------- atomic writes


def _suite(sid: str = "s9") -> tuple[S.SuiteManifest, list[dict]]:
    items = [{"item_id": "a", "input": "x"}]
    return S.SuiteManifest(suite_id=sid, created_at="2026-01-01T00:00:00Z", content_hash=S.content_hash(items),
                           n_items=1), items


def test_a_failed_write_leaves_no_directory_behind(tmp_path, monkeypatch):
    import evalcore.storage.store as store_mod
    data = tmp_path / "data"
    data.mkdir()
    st = Store(data, tmp_path / "state")
    calls = []

    def boom(path, rows, table):
        calls.append(table)
        raise OSError("disk full")

    monkeypatch.setattr(store_mod, "write_parquet", boom)
    m, items = _suite()
    with pytest.raises(OSError):
        st.write_suite(m, items)
    assert calls == ["items"]  # the manifest was written into the temporary directory first
    assert _all_paths(data) == []  # no suites/s9, no .tmp-*, not even suites/


def test_a_failed_write_in_an_existing_kind_directory_leaves_it_as_it_was(tmp_path, monkeypatch):
    import evalcore.storage.store as store_mod
    data = _copy(VALID, tmp_path / "data")
    st = Store(data, tmp_path / "state")
    before = _all_paths(data)
    real = store_mod.write_parquet

    def second_table_fails(path, rows, table):
        if table == "calls":
            raise OSError("disk full")
        return real(path, rows, table)

    monkeypatch.setattr(store_mod, "write_parquet", second_table_fails)
    run = st.run("r1").manifest.model_copy(update={"run_id": "r2"})
    with pytest.raises(OSError):
        st.write_run(run, [], [])
    assert _all_paths(data) == before


def test_a_failed_overwrite_keeps_the_old_directory(tmp_path, monkeypatch):
    import evalcore.storage.store as store_mod
    data = _copy(VALID, tmp_path / "data")
    st = Store(data, tmp_path / "state")
    old = (data / "suites" / "s1" / "items.parquet").read_bytes()
    monkeypatch.setattr(store_mod, "write_parquet", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    m, items = _suite("s1")
    with pytest.raises(OSError):
        st.write_suite(m, items, overwrite=True)
    assert (data / "suites" / "s1" / "items.parquet").read_bytes() == old
    assert not [p for p in (data / "suites").iterdir() if p.name.startswith(".")]


def test_writing_an_existing_id_is_refused_without_overwrite(tmp_path):
    data = _copy(VALID, tmp_path / "data")
    st = Store(data, tmp_path / "state")
    before = _all_paths(data)
    m, items = _suite("s1")
    with pytest.raises(InputError):
        st.write_suite(m, items)
    assert _all_paths(data) == before


def test_a_write_is_visible_whole_or_not_at_all(tmp_path):
    """While a directory is being written it sits under a dot-name that discovery skips."""
    data = tmp_path / "data"
    data.mkdir()
    st = Store(data, tmp_path / "state")
    (data / "suites").mkdir()
    (data / "suites" / ".tmp-s9-abc").mkdir()  # what a killed writer leaves
    assert st.ids("suite") == []
    m, items = _suite()
    st.write_suite(m, items)
    assert st.ids("suite") == ["s9"] and st.validate()["suites"] == 1
    assert sorted(os.listdir(data / "suites" / "s9")) == ["items.parquet", "manifest.json"]


def test_a_query_past_duckdbs_memory_cap_runs_again_without_it(tmp_path, monkeypatch):
    """quantile_cont keeps every value and cannot spill: past the cap (EVALCORE_DUCKDB_MEMORY) the
    query runs once more on an uncapped connection instead of failing, with the exact answer."""
    import duckdb
    import numpy as np
    import pyarrow as pa

    values = np.random.default_rng(3).gamma(2.0, 300.0, size=3_000_000)
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"latency_ms": values}), path)
    monkeypatch.setenv("EVALCORE_DUCKDB_MEMORY", "8MB")
    st = Store(tmp_path, tmp_path / "state")
    sql = "SELECT quantile_cont(latency_ms, 0.95), quantile_cont(latency_ms, 0.5) FROM read_parquet(?)"
    capped = st.connect()
    with pytest.raises(duckdb.OutOfMemoryException):
        capped.execute(sql, [str(path)]).fetchall()
    ((p95, p50),) = st.sql(sql, [str(path)])
    assert p95 == pytest.approx(float(np.percentile(values, 95)), rel=1e-12)
    assert p50 == pytest.approx(float(np.percentile(values, 50)), rel=1e-12)


def test_queries_past_the_cap_run_uncapped_one_at_a_time(tmp_path, monkeypatch):
    """An app server's sessions share the Store's capped connection, so under load several queries
    pass the cap together: each runs again uncapped only while holding the process's one spare lock
    (evalcore.storage.store._SPARE), so at most one uncapped query is in memory at a time."""
    import threading

    import numpy as np
    import pyarrow as pa

    from evalcore.storage import store as store_mod

    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"x": np.random.default_rng(4).gamma(2.0, 300.0, size=2_000_000)}), path)
    monkeypatch.setenv("EVALCORE_DUCKDB_MEMORY", "8MB")
    st = Store(tmp_path, tmp_path / "state")
    held: list[bool] = []
    plain = Store._fetch_on

    def fetch_on(self, con, query, params, how):
        if con is not self._con():  # the spare connection: the lock must be held
            held.append(store_mod._SPARE.locked())
        return plain(self, con, query, params, how)

    monkeypatch.setattr(Store, "_fetch_on", fetch_on)
    sql = "SELECT quantile_cont(x, 0.9) FROM read_parquet(?)"
    out: list = []
    threads = [threading.Thread(target=lambda: out.append(st.sql(sql, [str(path)]))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 3 and len({repr(o) for o in out}) == 1
    assert held and all(held)  # every uncapped run held the lock
    assert not store_mod._SPARE.locked()
