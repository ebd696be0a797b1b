"""The :class:`Store`: one read-mostly data directory (suites, generations, runs, sessions, label
sets), one writable state directory and the keys directory of pairwise sessions.

It discovers what is on disk (:meth:`Store.ids`, :meth:`Store.get`, cached on the directory's
mtimes) and validates it (:meth:`Store.validate`: manifests, table schemas, cross-references,
unique keys); it runs DuckDB queries over the Parquet files on a fresh cursor each
(:meth:`Store.sql`, :meth:`Store.records`, :meth:`Store.sql_df`) and names a damaged file when a
query fails; and it writes new suites, generations, runs, sessions and label sets atomically
(:meth:`Store.write_suite` ..., :meth:`Store.write_key`). Ids and paths are checked so that nothing
from the command line or the UI can make it read or write outside its directories.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

import duckdb

from evalcore import scope
from evalcore.contract import schema as S
from evalcore.errors import FormatError, InputError, NotFoundError, PathEscapeError
from evalcore.storage import remote
from evalcore.storage.files import (
    Entry,
    _unreadable_table,
    atomic_directory,
    check_parquet,
    read_json_model,
    write_json_model,
    write_parquet,
)
from evalcore.storage.layout import KINDS, OPTIONAL_TABLES
from evalcore.storage.paths import check_id, default_data_dir, default_keys_dir, default_state_dir, inside, links_inside


def duckdb_memory() -> str:
    """DuckDB's memory cap per connection: ``EVALCORE_DUCKDB_MEMORY`` (e.g. ``2GB``; empty or 0: DuckDB's
    own default, 80% of the machine), else 700MB, so that a page or command stays near 1 GB in all."""
    v = os.environ.get("EVALCORE_DUCKDB_MEMORY", "700MB").strip()
    return "" if v in ("", "0") else v


#: held while a query runs past the cap without it (Store._fetch): one at a time per process
_SPARE = threading.Lock()

DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


#: what a writer builds inside a new entity's atomic directory before it is put in place: the
#: derived tables (the storage package wires :func:`evalcore.storage.aggregates.derive_beside` here;
#: the Store writes bytes and knows nothing of the builders)
Derive = Callable[["Store", str, str, Path], None]


class Store:
    """One data directory (read) and one state directory (write)."""

    derive: ClassVar[Derive | None] = None

    def __init__(
        self,
        data_dir: str | Path | None = None,
        state_dir: str | Path | None = None,
        keys_dir: str | Path | None = None,
    ):
        self.state = Path(state_dir) if state_dir is not None else default_state_dir()
        self._keys = Path(keys_dir) if keys_dir is not None else None
        if data_dir is None and remote.is_remote(os.environ.get("EVALCORE_DATA")):
            data_dir = os.environ["EVALCORE_DATA"]
        #: the object-storage URL of the data (``s3://bucket/prefix``), read where it lies, its
        #: manifests and footers indexed in the state directory (:mod:`evalcore.storage.remote`);
        #: None for a local directory
        self.remote: str | None = None
        if remote.is_remote(data_dir):
            self.remote = str(data_dir).rstrip("/")
            data_dir = remote.index(self.remote, self.state)
        self.data = Path(data_dir) if data_dir is not None else default_data_dir()
        if not self.data.exists():
            raise NotFoundError("data directory does not exist", file=self.data, field="--data")
        if not self.data.is_dir():
            raise InputError("is not a directory", file=self.data, field="--data")
        self.data = self.data.resolve()
        if self.remote is None:  # an index's own path, as the app's caches reopen a Store: still the URL's
            self.remote = remote.url_of(self.data)
        links_inside(self.state)
        self._cache: dict[tuple[str, str], tuple[Any, Entry]] = {}
        self._lock = threading.Lock()

    def sync(self) -> None:
        """Bring the index of a remote data directory up to date (at most every
        ``EVALCORE_REMOTE_TTL`` seconds); nothing for a local one."""
        if self.remote is not None:
            remote.index(self.remote, self.state)

    def where(self) -> str:
        """The data directory as a user named it: the URL of a remote one."""
        return self.remote or str(self.data)

    # ---- paths
    @property
    def keys(self) -> Path:
        return self._keys if self._keys is not None else default_keys_dir(self.data)

    def dir_of(self, kind: str, id_: str) -> Path:
        check_id(id_, f"{kind} id")
        sub = KINDS[kind][0]
        return inside(self.data, sub, id_, resolved=True)  # self.data is resolved at construction

    def state_path(self, *parts: str) -> Path:
        self.state.mkdir(parents=True, exist_ok=True)
        return inside(self.state, *parts)

    # ---- discovery
    def ids(self, kind: str) -> list[str]:
        root = self.data / KINDS[kind][0]
        if not root.is_dir():
            return []
        out = []
        for p in sorted(root.iterdir()):
            if p.name.startswith(".") or not p.is_dir():
                continue
            check_id(p.name, f"{kind} directory name")
            inside(self.data, KINDS[kind][0], p.name)  # a symlink out of the data dir is refused
            out.append(p.name)
        return out

    def get(self, kind: str, id_: str) -> Entry:
        pins = scope.pins()  # inside a figure or a command: read once (evalcore.scope.pinned)
        if pins is not None and (hit := pins.get((str(self.data), kind, id_))) is not None:
            return hit
        entry = self._get(kind, id_)
        if pins is not None:
            pins[(str(self.data), kind, id_)] = entry
        return entry

    def _get(self, kind: str, id_: str) -> Entry:
        key = (kind, id_)
        d = self.dir_of(kind, id_)
        _, fname, model, tables = KINDS[kind]
        try:  # a directory rewritten by another process is re-read: the cache keys on its mtimes
            stamp = (d.stat().st_mtime_ns, (d / fname).stat().st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and stamp is not None and hit[0] == stamp:
                return hit[1]
        if not d.is_dir():
            raise NotFoundError(f"no {kind} {id_!r} in {self.data}", field=f"{kind} id")
        for f in [d / fname, *(d / f"{t}.parquet" for t in (*tables, *OPTIONAL_TABLES.get(kind, ())))]:
            self._own_file(f)
        manifest = read_json_model(d / fname, model)
        own_id = getattr(manifest, {"generation": "gen_id"}.get(kind, f"{kind}_id"))
        if own_id != id_:
            raise FormatError(
                f"says {own_id!r} but sits in directory {id_!r}",
                file=d / fname,
                field={"generation": "gen_id"}.get(kind, f"{kind}_id"),
            )
        for t in tables:
            check_parquet(d / f"{t}.parquet", t)
        for t in OPTIONAL_TABLES.get(kind, ()):
            if (d / f"{t}.parquet").exists():
                check_parquet(d / f"{t}.parquet", t)
        entry = Entry(kind, id_, d, manifest)
        with self._lock:
            self._cache[key] = (stamp, entry)
        return entry

    def _own_file(self, f: Path) -> None:
        """A file of the data directory that is a link leading outside it is refused, as a linked
        directory is (:func:`evalcore.storage.paths.inside`): the data is what the directory holds."""
        if f.is_symlink() and not f.resolve().is_relative_to(self.data):
            raise PathEscapeError(
                f"is a link to {f.resolve()}, outside the data directory: copy the file in instead",
                file=f,
                field=f.name,
            )

    def all(self, kind: str) -> list[Entry]:
        return [self.get(kind, i) for i in self.ids(kind)]

    def suite(self, id_: str) -> Entry:
        return self.get("suite", id_)

    def generation(self, id_: str) -> Entry:
        return self.get("generation", id_)

    def run(self, id_: str) -> Entry:
        pins = scope.pins()
        if pins is not None and (hit := pins.get((str(self.data), "run+generation", id_))) is not None:
            return hit
        e = self.get("run", id_)
        gen_dir = self.dir_of("generation", e.manifest.gen_id)
        if not gen_dir.is_dir():
            raise FormatError(
                f"points at generation {e.manifest.gen_id!r}, which is not in the data directory",
                file=e.path / "manifest.json",
                field="gen_id",
            )
        if pins is not None:
            pins[(str(self.data), "run+generation", id_)] = e
        return e

    def session(self, id_: str) -> Entry:
        return self.get("session", id_)

    def labelset(self, id_: str) -> Entry:
        return self.get("labelset", id_)

    def labelset_paths(self, gen_id: str) -> list[str]:
        """The labels.parquet of every label set on the generation, in id order."""
        return [
            self.path_of("labelset", lid, "labels")
            for lid in self.ids("labelset")
            if self.labelset(lid).manifest.gen_id == gen_id
        ]

    # ---- duckdb
    def connect(self, capped: bool = True) -> duckdb.DuckDBPyConnection:
        """A fresh in-memory DuckDB connection that never downloads an extension, its memory capped
        (:func:`duckdb_memory`) and spilling past the cap into a temporary directory of its own
        (``capped=False``: DuckDB's own limit). A remote Store's connection reads the objects where
        they lie (:func:`evalcore.storage.remote.attach`)."""
        con = duckdb.connect(":memory:", config=dict(DUCKDB_CONFIG))
        cap = duckdb_memory() if capped else ""
        if cap:
            con.execute(f"SET memory_limit = '{cap}'")
            spill = Path(tempfile.gettempdir()) / f"evalcore-duckdb-{os.getpid()}"
            con.execute(f"SET temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'")
        if self.remote is not None:
            return remote.attach(con, self.remote, self.data)  # type: ignore[return-value]
        return con

    def _fetch(self, query: str, params: Any, con: Any, how: str) -> Any:
        """Run one query on its own cursor (DuckDB's rule for threads) and fetch it all; a Parquet
        file that cannot be read is named in a FormatError."""
        try:
            return self._fetch_on(con or self._con(), query, params, how)
        except duckdb.OutOfMemoryException:
            if con is not None or not duckdb_memory():
                raise  # DuckDB's own message; no table is damaged, so none is named (or read whole)
            # an aggregate that cannot spill (quantile_cont keeps every value) past the cap: the query
            # runs once more on a connection with DuckDB's own limit, rather than fail; one such query
            # at a time in the process (_SPARE): the Store's connection is shared by every session of
            # an app server, so under a team's load many queries can pass the cap together, and each
            # uncapped at once may take most of the machine (DuckDB's own limit is 80% of it)
            with _SPARE:
                spare = self.connect(capped=False)
                try:
                    return self._fetch_on(spare, query, params, how)
                finally:
                    spare.close()

    def _fetch_on(self, con: Any, query: str, params: Any, how: str) -> Any:
        cur = con.cursor()
        try:
            if how == "arrow":
                return cur.sql(query, params=list(params or [])).to_arrow_table()
            res = cur.execute(query, params or [])
            if how == "df":
                return res.df()
            if how == "numpy":
                return res.fetchnumpy()
            rows = res.fetchall()
            if how == "records":
                cols = [d[0] for d in res.description]
                return [dict(zip(cols, row)) for row in rows]
            return rows
        except duckdb.OutOfMemoryException:
            raise
        except duckdb.Error as e:
            if isinstance(cur, remote.Connection):
                raise remote.unreadable(e, params, cur) from None
            raise _unreadable_table(e, params) from None
        finally:
            cur.close()

    def sql(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None) -> list[tuple]:
        """Rows as tuples (results are small by design)."""
        return self._fetch(query, params, con, "rows")

    def records(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None) -> list[dict[str, Any]]:
        """Rows as dicts, with real None for nulls (no pandas NaN)."""
        return self._fetch(query, params, con, "records")

    def arrays(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None) -> dict[str, Any]:
        """Columns as numpy arrays (column name -> array), for results counted or indexed in numpy."""
        return self._fetch(query, params, con, "numpy")

    def arrow(self, query: str, params: Iterable[Any] | None = None, *, con=None) -> Any:
        """Columns as a pyarrow Table (strings stay Arrow strings: for results encoded, not looped over)."""
        return self._fetch(query, params, con, "arrow")

    def sql_df(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None):
        """Rows as a pandas DataFrame (for pages; nulls become NaN/None as pandas decides)."""
        return self._fetch(query, params, con, "df")

    def _con(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            if not hasattr(self, "_shared_con"):
                self._shared_con = self.connect()
            return self._shared_con

    def path_of(self, kind: str, id_: str, table: str) -> str:
        """Path of a validated table, as a string for ``read_parquet(?)``."""
        entry = self.run(id_) if kind == "run" else self.get(kind, id_)
        p = entry.path / f"{table}.parquet"
        if not p.exists():
            raise NotFoundError(f"{kind} {id_!r} has no {table} table", file=p, field=table)
        return str(p)

    # ---- validation of contents (scans data; cheap next to any analysis)
    def validate(self) -> dict[str, int]:
        """Check every file in the data directory: manifests, table schemas, cross-references,
        unique keys, known criteria and items. Raises the first problem found."""
        suites = {e.id: e for e in self.all("suite")}
        for e in suites.values():
            self._check_unique(e.path / "items.parquet", "items")
        gens = {}
        for gid in self.ids("generation"):  # each checked as it is read: the first problem is the first met
            e = gens[gid] = self.generation(gid)
            self._points_at(e.manifest.suite_id, suites, e.path / "manifest.json", "suite")
            out_path = e.path / "outputs.parquet"
            self._check_unique(out_path, "outputs")
            items = suites[e.manifest.suite_id].path / "items.parquet"
            self._check_subset(out_path, "item_id", items, "item_id", "item not in the suite")
        runs = self.ids("run")
        for rid in runs:
            e = self.run(rid)
            vpath = e.path / "verdicts.parquet"
            self._check_unique(vpath, "verdicts")
            self._check_unique(e.path / "calls.parquet", "calls")
            self._check_criteria(vpath, e.manifest.rubric.names(), "run's rubric")
            outputs = gens[e.manifest.gen_id].path / "outputs.parquet"
            self._check_subset(vpath, "item_id", outputs, "item_id", "item not in the generation")
            if (e.path / "pair_verdicts.parquet").exists():
                self._check_unique(e.path / "pair_verdicts.parquet", "pair_verdicts")
        sessions = self.ids("session")
        for sid in sessions:
            e = self.session(sid)
            self._check_unique(e.path / "pairs.parquet", "pairs")
            if e.manifest.suite_id is not None:
                self._points_at(e.manifest.suite_id, suites, e.path / "session.json", "suite")
            jpath = e.path / "judgments.parquet"
            if jpath.exists():
                self._check_unique(jpath, "judgments")
                self._check_subset(jpath, "pair_id", e.path / "pairs.parquet", "pair_id", "pair not in the session")
        labelsets = self.ids("labelset")
        for lid in labelsets:
            e = self.labelset(lid)
            self._points_at(e.manifest.gen_id, gens, e.path / "manifest.json", "generation")
            lpath = e.path / "labels.parquet"
            self._check_unique(lpath, "labels")
            if e.manifest.rubric is not None:
                self._check_criteria(lpath, e.manifest.rubric.names(), "label set's rubric")
            outputs = gens[e.manifest.gen_id].path / "outputs.parquet"
            self._check_subset(lpath, "item_id", outputs, "item_id", "item not in the generation")
        n = (len(suites), len(gens), len(runs), len(sessions), len(labelsets))
        return dict(zip(("suites", "generations", "runs", "sessions", "labelsets"), n))

    @staticmethod
    def _points_at(id_: str, known: dict[str, Any], file: Path, kind: str) -> None:
        if id_ not in known:
            field = {"generation": "gen_id"}.get(kind, f"{kind}_id")
            raise FormatError(f"points at {kind} {id_!r}, which is not in the data directory", file=file, field=field)

    def _check_criteria(self, path: Path, names: list[str], whose: str) -> None:
        bad = self.sql(
            "SELECT DISTINCT criterion FROM read_parquet(?) WHERE criterion NOT IN (SELECT unnest(?::VARCHAR[])) LIMIT 1",
            [str(path), names],
        )
        if bad:
            raise FormatError(
                f"criterion {bad[0][0]!r} is not in the {whose} ({', '.join(names)})", file=path, field="criterion"
            )

    def _check_unique(self, path: Path, table: str) -> None:
        check_parquet(path, table)
        model, keys = S.TABLES[table]
        cols = ", ".join(f'"{k}"' for k in keys)
        try:
            dup = self.sql(
                f"SELECT {cols}, count(*) FROM read_parquet(?) GROUP BY ALL HAVING count(*) > 1 LIMIT 1", [str(path)]
            )
        except duckdb.Error as e:
            raise FormatError(f"cannot be read: {str(e).splitlines()[0][:160]}", file=path, field=table) from None
        if dup:
            key = ", ".join(f"{k}={v!r}" for k, v in zip(keys, dup[0][:-1]))
            raise FormatError(f"duplicate key ({key}) appears {dup[0][-1]} times", file=path, field=",".join(keys))
        schema = S.arrow_schema(model)
        for fld in schema:
            if fld.nullable:
                continue
            n = self.sql(f'SELECT count(*) FROM read_parquet(?) WHERE "{fld.name}" IS NULL', [str(path)])[0][0]
            if n:
                raise FormatError(f"{n} rows are null in a required column", file=path, field=fld.name)

    def _check_subset(self, path: Path, col: str, parent: Path, pcol: str, problem: str) -> None:
        bad = self.sql(
            f'SELECT "{col}" FROM read_parquet(?) EXCEPT SELECT "{pcol}" FROM read_parquet(?) LIMIT 1',
            [str(path), str(parent)],
        )
        if bad:
            raise FormatError(f"{problem}: {bad[0][0]!r}", file=path, field=col)

    # ---- writers (atomic per directory)
    def _write_dir(
        self, kind: str, id_: str, manifest: S._Model, tables: dict[str, Any], overwrite: bool = False
    ) -> Entry:
        if self.remote is not None:
            raise InputError(
                "is object storage, which evalcore only reads: write into a local data directory, then upload it",
                file=self.remote,
                field="--data",
            )
        final = self.dir_of(kind, id_)
        if final.exists() and not overwrite:
            raise InputError(f"{kind} {id_!r} already exists", file=final, field=f"{kind} id")
        with atomic_directory(final, overwrite=overwrite) as tmp:
            write_json_model(tmp / KINDS[kind][1], manifest)
            for name, rows in tables.items():
                if rows is not None:
                    write_parquet(tmp / f"{name}.parquet", rows, name)
            if Store.derive is not None:
                Store.derive(self, kind, id_, tmp)
        with self._lock:
            self._cache.pop((kind, id_), None)
        pins = scope.pins()  # what this block read of it is gone
        if pins is not None:
            pins.pop((str(self.data), kind, id_), None)
            pins.pop((str(self.data), "run+generation", id_), None)
        scope.record(self.data, self.state, kind, id_)
        return self.get(kind, id_)

    def write_suite(self, manifest: S.SuiteManifest, items, **kw) -> Entry:
        return self._write_dir("suite", manifest.suite_id, manifest, {"items": items}, **kw)

    def write_generation(self, manifest: S.GenerationManifest, outputs, **kw) -> Entry:
        return self._write_dir("generation", manifest.gen_id, manifest, {"outputs": outputs}, **kw)

    def write_run(self, manifest: S.RunManifest, verdicts, calls, pair_verdicts=None, **kw) -> Entry:
        return self._write_dir(
            "run",
            manifest.run_id,
            manifest,
            {"verdicts": verdicts, "calls": calls, "pair_verdicts": pair_verdicts},
            **kw,
        )

    def write_session(self, manifest: S.SessionManifest, pairs, judgments=None, **kw) -> Entry:
        return self._write_dir("session", manifest.session_id, manifest, {"pairs": pairs, "judgments": judgments}, **kw)

    def write_labelset(self, manifest: S.LabelSetManifest, labels, **kw) -> Entry:
        return self._write_dir("labelset", manifest.labelset_id, manifest, {"labels": labels}, **kw)

    def write_key(self, manifest: S.KeyManifest, rows, keys_dir: Path | None = None) -> Path:
        """Write a session's key into the keys directory (refused inside the data directory)."""
        kdir = Path(keys_dir) if keys_dir is not None else self.keys
        kdir = kdir.resolve()
        if kdir == self.data or kdir.is_relative_to(self.data):
            raise PathEscapeError("the keys directory must not be inside the data directory", file=kdir, field="--keys")
        check_id(manifest.session_id, "session id")
        d = inside(kdir, manifest.session_id)
        if d.exists():
            raise InputError(f"a key for session {manifest.session_id!r} already exists", file=d, field="--keys")
        with atomic_directory(d) as tmp:
            write_json_model(tmp / "key.json", manifest)
            write_parquet(tmp / "key.parquet", rows, "key")
        return d
