"""What a failing derived-table build does (docs/ARCHITECTURE.md "Derived tables").

A bug in a builder is a bug: the figure's call raises with its traceback instead of quietly reading
the full data (and building again on every call). A failure of the machine (here a real tmpfs
state directory filled until the build cannot write) gives one DerivedTablesWarning, the figures
from the full data, equal to those with derived tables off, and no second attempt until the run's
files change."""

from __future__ import annotations

import errno
import os
import warnings

import pytest
from browser_util import RUN_SINGLE, RUN_SPLIT, make_world

from evalcore.analysis.failures import attribution, crosstab
from evalcore.analysis.selection import Selection
from evalcore.errors import DerivedTablesWarning
from evalcore.storage import aggregates, derived
from evalcore.storage.store import Store


@pytest.fixture
def world(tmp_path):
    data = make_world(tmp_path / "data")
    return data


def _without_sets(store: Store) -> None:
    for rid in (RUN_SINGLE, RUN_SPLIT):
        derived.remove(store, "run", rid)


def _figures(store: Store) -> list:
    sel = Selection(include_holdout=True)
    return [attribution(store, RUN_SINGLE, sel), crosstab(store, RUN_SPLIT, "complete", "grounded")]


def test_a_bug_in_a_builder_raises_from_the_figure_that_reads_it(world, tmp_path, monkeypatch):
    store = Store(world, tmp_path / "state")
    _without_sets(store)

    def broken(store_, out):
        raise ZeroDivisionError("a bug planted in the patterns builder")

    monkeypatch.setattr(aggregates, "_write_patterns", broken)
    with pytest.raises(ZeroDivisionError, match="planted"):
        attribution(store, RUN_SINGLE)
    # and again on the next call: a bug is never remembered as "cannot be built"
    with pytest.raises(ZeroDivisionError, match="planted"):
        attribution(store, RUN_SINGLE)
    assert not list((tmp_path / "state" / "derived").rglob("*.parquet"))


def test_a_bug_in_a_builder_fails_the_write_and_leaves_nothing(tmp_path, monkeypatch):
    def broken(store_, out):
        raise ZeroDivisionError("a bug planted in the patterns builder")

    monkeypatch.setattr(aggregates, "_write_patterns", broken)
    with pytest.raises(ZeroDivisionError, match="planted"):
        make_world(tmp_path / "data")
    assert not (tmp_path / "data" / "runs").exists() or not any((tmp_path / "data" / "runs").iterdir())


def test_a_full_state_directory_warns_once_reads_the_full_data_and_does_not_build_again(world, mnt, monkeypatch):
    root = mnt("256k")
    state = root / "state"
    reference_store = Store(world, root / "unused")
    monkeypatch.setenv("EVALCORE_DERIVED", "0")
    want = _figures(reference_store)
    monkeypatch.setenv("EVALCORE_DERIVED", "1")

    store = Store(world, state)
    _without_sets(store)
    state.mkdir(parents=True, exist_ok=True)
    filler = root / "filler"
    vfs = os.statvfs(root)
    filler.write_bytes(b"\0" * (vfs.f_bavail * vfs.f_frsize))  # nothing left
    builds: list[str] = []
    real = aggregates.BUILDERS["run"]

    def counted(store_, rid, root=None):
        builds.append(rid)
        return real(store_, rid, root)

    monkeypatch.setitem(aggregates.BUILDERS, "run", counted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _figures(store)
    said = [w for w in caught if issubclass(w.category, DerivedTablesWarning)]
    assert got == want
    assert sorted(builds) == [RUN_SINGLE, RUN_SPLIT]
    assert len(said) == 2 and {RUN_SINGLE in str(said[0].message), RUN_SPLIT in str(said[1].message)} == {True}
    assert all("could not be built" in str(w.message) for w in said)
    assert not list(state.rglob("*.parquet"))  # nothing half-written left on the full disk

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = _figures(store) + _figures(store)
    assert again == want + want
    assert builds == [RUN_SINGLE, RUN_SPLIT] or sorted(builds) == [RUN_SINGLE, RUN_SPLIT]  # no second attempt
    assert not [w for w in caught if issubclass(w.category, DerivedTablesWarning)]

    # room again: still not retried by a reader while the run's files are the same ...
    filler.unlink()
    _figures(store)
    assert len(builds) == 2
    # ... while `evalcore index` tries, builds, and the failure is forgotten
    assert aggregates.index(store, "run", RUN_SINGLE, where="state")["state"] == "built"
    assert not derived.failed_before(store, "run", RUN_SINGLE)
    assert derived.failed_before(store, "run", RUN_SPLIT)


def test_a_remembered_failure_holds_for_the_same_files_only(world, tmp_path):
    store = Store(world, tmp_path / "state")
    src = derived.sources(store, "run", RUN_SINGLE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        derived.remember_failure(store, "run", RUN_SINGLE, src, OSError(errno.ENOSPC, "No space left on device"))
        derived.remember_failure(store, "run", RUN_SINGLE, src, OSError(errno.ENOSPC, "No space left on device"))
    assert len([w for w in caught if issubclass(w.category, DerivedTablesWarning)]) == 1  # once per entity
    assert derived.failed_before(store, "run", RUN_SINGLE)
    assert derived.failed_before(Store(world, tmp_path / "state"), "run", RUN_SINGLE)  # kept in the state
    # the run's files change: the failure no longer holds
    entry = store.run(RUN_SINGLE)
    import pyarrow.parquet as pq

    verdicts = pq.read_table(store.path_of("run", RUN_SINGLE, "verdicts")).slice(1)
    calls = pq.read_table(store.path_of("run", RUN_SINGLE, "calls"))
    store.write_run(entry.manifest, verdicts, calls, overwrite=True)
    assert not derived.failed_before(Store(world, tmp_path / "state"), "run", RUN_SINGLE)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), True),
        (OSError(errno.EROFS, "Read-only file system"), True),
        (MemoryError(), True),
        (OSError(errno.ENOENT, "No such file or directory"), False),
        (ValueError("a bug"), False),
        (KeyError("a bug"), False),
    ],
)
def test_which_failures_are_of_the_machine(error, expected):
    assert derived.expected_failure(error) is expected


def test_duckdb_errors_of_the_machine_are_told_from_its_other_errors(tmp_path):
    import duckdb

    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as bad_sql:
        con.execute("SELECT * FROM no_such_table")
    assert not derived.expected_failure(bad_sql.value)
    assert derived.expected_failure(duckdb.IOException("Could not write file \"x\": No space left on device"))


def test_a_state_side_product_on_a_full_disk_warns_once_and_waits_for_its_sources(world, mnt):
    """The one mechanism's failure policy holds for every product (here one of a made-up kind, as a
    pair table, item keys or a memo are): a full state directory gives one warning and None (the
    caller computes without it), no second build while the sources are the same, a build again once
    one changes; nothing half-written is left."""
    root = mnt("256k")
    store = Store(world, root / "state")
    src_file = root / "source.txt"
    src_file.write_text("v1")
    builds: list[int] = []

    def build(out):
        builds.append(1)
        (out / "big.bin").write_bytes(b"\0" * (1 << 20))  # more than the disk holds
        return {"n": 1}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = derived.kept(store, "made-up", "p1", {"source.txt": src_file}, build, {"v": 1})
        second = derived.kept(store, "made-up", "p1", {"source.txt": src_file}, build, {"v": 1})
    said = [w for w in caught if issubclass(w.category, DerivedTablesWarning)]
    assert first is None and second is None and builds == [1]
    assert len(said) == 1 and "made-up p1 could not be written" in str(said[0].message)
    assert not list((root / "state" / "derived").rglob("*.bin"))
    src_file.write_text("v2")  # a source changed: tried again (and fails again, said again)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert derived.kept(store, "made-up", "p1", {"source.txt": src_file}, build, {"v": 1}) is None
    assert builds == [1, 1] and len([w for w in caught if issubclass(w.category, DerivedTablesWarning)]) == 1
