"""The store: every file evalcore reads or writes goes through here.

A :class:`Store` is a read-mostly data directory (suites, generations, runs, sessions, label sets)
and a writable state directory (labels.sqlite, pair judgments, unblinded results, the ledger).
It discovers and validates what is on disk, hands out DuckDB cursors over the Parquet files, and
writes new suites, generations, runs and sessions atomically (a directory appears whole or not at
all). Ids and paths are checked so that nothing from the command line or the UI can make it read
or write outside its two directories.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from . import schema as S
from .errors import (FormatError, InputError, NotFoundError, PathEscapeError,
                     SchemaVersionError)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT / "data" / "demo"
DEFAULT_STATE_NAME = ".evalcore-state"

KINDS = {  # kind -> (directory, manifest file, manifest model, tables)
    "suite": ("suites", "manifest.json", S.SuiteManifest, ("items",)),
    "generation": ("generations", "manifest.json", S.GenerationManifest, ("outputs",)),
    "run": ("runs", "manifest.json", S.RunManifest, ("verdicts", "calls")),
    "session": ("sessions", "session.json", S.SessionManifest, ("pairs",)),
    "labelset": ("labels", "manifest.json", S.LabelSetManifest, ("labels",)),
}
OPTIONAL_TABLES = {"run": ("pair_verdicts",), "session": ("judgments",)}

DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def default_data_dir() -> Path:
    """``$EVALCORE_DATA`` or the bundled demo."""
    env = os.environ.get("EVALCORE_DATA")
    return Path(env) if env else DEFAULT_DATA


def default_state_dir() -> Path:
    """``$EVALCORE_STATE`` or ``./.evalcore-state`` (never committed: it is in .gitignore)."""
    env = os.environ.get("EVALCORE_STATE")
    return Path(env) if env else Path.cwd() / DEFAULT_STATE_NAME


def default_keys_dir(data_dir: Path) -> Path:
    """Keys sit beside the data directory, never inside it: ``<data>-keys``."""
    data_dir = Path(data_dir).resolve()
    return data_dir.parent / f"{data_dir.name}-keys"


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def check_id(value: str, what: str = "id") -> str:
    """Refuse ids that could name anything but one directory entry."""
    if not isinstance(value, str) or not S.is_valid_id(value):
        raise PathEscapeError(f"{value!r} is not a valid {what} (letters, digits, . _ -; no '..', no '/')",
                              field=what)
    return value


def inside(root: Path, *parts: str) -> Path:
    """``root/parts`` resolved, refusing anything (``..``, absolute parts, symlinks) that lands
    outside ``root``."""
    root_r = Path(root).resolve()
    path = root_r.joinpath(*parts).resolve()
    if path != root_r and not path.is_relative_to(root_r):
        raise PathEscapeError(f"resolves outside {root_r}", file=root_r.joinpath(*parts), field="path")
    return path


# --------------------------------------------------------------------------- state databases


def writable_state(store: "Store", db_name: str) -> Path:
    """Path of a database in the store's state directory, refusing a state directory inside the
    data directory (the data is only ever read)."""
    state = Path(store.state).resolve()
    if state == store.data or state.is_relative_to(store.data):
        raise PathEscapeError("the state directory must not be inside the data directory (data is read-only)",
                              file=state, field="--state")
    return state / db_name


def open_state_db(path: Path, create: bool = True) -> sqlite3.Connection:
    """A SQLite connection for the state directory's append-only stores: WAL mode (readers never
    block the writer), ``synchronous=FULL`` (an acknowledged write survives a killed process),
    autocommit with explicit ``BEGIN IMMEDIATE`` by the caller, and a 30 s busy timeout so that
    concurrent writers wait for each other instead of failing."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
    con.row_factory = sqlite3.Row
    con.execute("PRAGMA busy_timeout = 30000")
    mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":  # pragma: no cover - only on file systems without shared memory
        con.close()
        raise FormatError(f"could not switch to WAL mode (got {mode})", file=path, field="journal_mode")
    con.execute("PRAGMA synchronous = FULL")
    con.execute("PRAGMA foreign_keys = ON")
    return con


# --------------------------------------------------------------------------- low-level readers


def read_json_model(path: Path, model: type[S._Model]) -> Any:
    """Read and validate a JSON manifest, refusing newer schema versions."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FormatError("file is missing", file=path, field="manifest") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text (byte {e.start})", file=path, field="manifest") from None
    except json.JSONDecodeError as e:
        raise FormatError(f"does not parse as JSON: {e.msg} at line {e.lineno} column {e.colno}",
                          file=path, field="manifest") from None
    if not isinstance(data, dict):
        raise FormatError("must be a JSON object", file=path, field="manifest")
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise FormatError("missing or non-integer schema_version", file=path, field="schema_version")
    if version > S.SCHEMA_VERSION:
        raise SchemaVersionError(f"version {version} is newer than this evalcore reads "
                                 f"({S.SCHEMA_VERSION}); upgrade evalcore", file=path, field="schema_version")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "manifest"
        raise FormatError(err["msg"], file=path, field=loc) from None


def write_json_model(path: Path, obj: S._Model) -> None:
    atomic_write_bytes(path, (obj.model_dump_json(indent=2, by_alias=True) + "\n").encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _compatible(actual: pa.DataType, expected: pa.DataType) -> bool:
    if actual.equals(expected):
        return True
    if pa.types.is_integer(expected):
        return pa.types.is_integer(actual)
    if pa.types.is_floating(expected):
        return pa.types.is_floating(actual) or pa.types.is_integer(actual)
    if pa.types.is_string(expected):
        return pa.types.is_string(actual) or pa.types.is_large_string(actual) or pa.types.is_null(actual)
    if pa.types.is_timestamp(expected):
        return pa.types.is_timestamp(actual)
    if pa.types.is_list(expected):
        return (pa.types.is_list(actual) or pa.types.is_large_list(actual)) and (
            _compatible(actual.value_type, expected.value_type) or pa.types.is_null(actual.value_type))
    return pa.types.is_null(actual)


def check_parquet(path: Path, table: str) -> pq.ParquetFile:
    """Open a Parquet table and check its version, columns and types against the contract
    (footer only: cheap for any size)."""
    model, _keys = S.TABLES[table]
    if not path.exists():
        raise FormatError("file is missing", file=path, field=table)
    if path.stat().st_size == 0:
        raise FormatError("file is empty", file=path, field=table)
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError for truncated files
        raise FormatError(f"not a readable Parquet file ({type(e).__name__}: {str(e).splitlines()[0][:120]})",
                          file=path, field=table) from None
    meta = pf.schema_arrow.metadata or {}
    version = meta.get(b"evalcore.schema_version")
    if version is None:
        raise FormatError("no evalcore.schema_version in the Parquet metadata", file=path, field="schema_version")
    try:
        v = int(version)
    except ValueError:
        raise FormatError(f"schema_version {version!r} is not an integer", file=path, field="schema_version") from None
    if v > S.SCHEMA_VERSION:
        raise SchemaVersionError(f"version {v} is newer than this evalcore reads ({S.SCHEMA_VERSION}); upgrade evalcore",
                                 file=path, field="schema_version")
    expected = S.arrow_schema(model)
    actual = pf.schema_arrow
    for fld in expected:
        idx = actual.get_field_index(fld.name)
        if idx < 0:
            if fld.nullable:
                continue  # optional columns may be absent
            raise FormatError("required column is missing", file=path, field=fld.name)
        if not _compatible(actual.field(idx).type, fld.type):
            raise FormatError(f"has type {actual.field(idx).type}, expected {fld.type}", file=path, field=fld.name)
    return pf


def to_table(rows: list[dict] | pa.Table, table: str) -> pa.Table:
    """Rows (dicts) or an arrow table -> an arrow table in the contract's schema, with metadata."""
    model, _ = S.TABLES[table]
    schema = S.arrow_schema(model)
    if isinstance(rows, pa.Table):
        cols = {}
        for fld in schema:
            if fld.name in rows.column_names:
                cols[fld.name] = rows.column(fld.name).cast(fld.type)
            else:
                info = model.model_fields.get(fld.name) or next(
                    i for i in model.model_fields.values() if i.alias == fld.name)
                default = None if info.is_required() else info.default
                cols[fld.name] = pa.array([default] * rows.num_rows, fld.type)
        tbl = pa.table(cols, schema=schema)
    else:
        defaults = {(info.alias or name): info.default for name, info in model.model_fields.items()
                    if info.default is not None and not info.is_required()}
        if defaults:
            rows = [{**defaults, **{k: v for k, v in r.items() if v is not None or k not in defaults}}
                    for r in rows]
        tbl = pa.Table.from_pylist(rows, schema=schema)
    return tbl.replace_schema_metadata({"evalcore.schema_version": str(S.SCHEMA_VERSION),
                                        "evalcore.table": table})


def write_parquet(path: Path, rows: list[dict] | pa.Table, table: str) -> pa.Table:
    tbl = to_table(rows, table)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        pq.write_table(tbl, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tbl


def _unreadable_table(err: Exception, params: Any) -> Exception:
    """A query failed: if one of its Parquet files cannot be read (pages damaged behind an intact
    footer, which check_parquet cannot see), name that file; otherwise the error is a bug and is
    returned as it was."""
    values = params.values() if isinstance(params, dict) else (params or [])
    for p in values:
        if isinstance(p, str) and p.endswith(".parquet") and os.path.isfile(p):
            try:
                pq.read_table(p)
            except Exception as e:  # noqa: BLE001 - any failure to read is the answer
                first = (str(e).splitlines() or [""])[0][:160]
                return FormatError(f"cannot be read ({type(e).__name__}: {first})", file=p, field=Path(p).stem)
    return err


# --------------------------------------------------------------------------- the store


@dataclass
class Entry:
    """A discovered suite / generation / run / session / label set."""

    kind: str
    id: str
    path: Path
    manifest: Any


class Store:
    """One data directory (read) and one state directory (write)."""

    def __init__(self, data_dir: str | Path | None = None, state_dir: str | Path | None = None,
                 keys_dir: str | Path | None = None):
        self.data = Path(data_dir) if data_dir is not None else default_data_dir()
        self.state = Path(state_dir) if state_dir is not None else default_state_dir()
        self._keys = Path(keys_dir) if keys_dir is not None else None
        if not self.data.exists():
            raise NotFoundError("data directory does not exist", file=self.data, field="--data")
        if not self.data.is_dir():
            raise InputError("is not a directory", file=self.data, field="--data")
        self.data = self.data.resolve()
        self._cache: dict[tuple[str, str], tuple[Any, Entry]] = {}
        self._lock = threading.Lock()

    # ---- paths
    @property
    def keys(self) -> Path:
        return self._keys if self._keys is not None else default_keys_dir(self.data)

    def dir_of(self, kind: str, id_: str) -> Path:
        check_id(id_, f"{kind} id")
        sub = KINDS[kind][0]
        return inside(self.data, sub, id_)

    def table_path(self, kind: str, id_: str, table: str) -> Path:
        return self.dir_of(kind, id_) / f"{table}.parquet"

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
        manifest = read_json_model(d / fname, model)
        own_id = getattr(manifest, {"generation": "gen_id"}.get(kind, f"{kind}_id"))
        if own_id != id_:
            raise FormatError(f"says {own_id!r} but sits in directory {id_!r}", file=d / fname,
                              field={"generation": "gen_id"}.get(kind, f"{kind}_id"))
        for t in tables:
            check_parquet(d / f"{t}.parquet", t)
        for t in OPTIONAL_TABLES.get(kind, ()):
            if (d / f"{t}.parquet").exists():
                check_parquet(d / f"{t}.parquet", t)
        entry = Entry(kind, id_, d, manifest)
        with self._lock:
            self._cache[key] = (stamp, entry)
        return entry

    def all(self, kind: str) -> list[Entry]:
        return [self.get(kind, i) for i in self.ids(kind)]

    def suite(self, id_: str) -> Entry:
        return self.get("suite", id_)

    def generation(self, id_: str) -> Entry:
        return self.get("generation", id_)

    def run(self, id_: str) -> Entry:
        e = self.get("run", id_)
        gen_dir = self.dir_of("generation", e.manifest.gen_id)
        if not gen_dir.is_dir():
            raise FormatError(f"points at generation {e.manifest.gen_id!r}, which is not in the data directory",
                              file=e.path / "manifest.json", field="gen_id")
        return e

    def session(self, id_: str) -> Entry:
        return self.get("session", id_)

    def labelset(self, id_: str) -> Entry:
        return self.get("labelset", id_)

    # ---- duckdb
    def connect(self) -> duckdb.DuckDBPyConnection:
        """A fresh in-memory DuckDB connection that never downloads an extension."""
        return duckdb.connect(":memory:", config=dict(DUCKDB_CONFIG))

    def _fetch(self, query: str, params: Any, con: Any, how: str) -> Any:
        """Run one query on its own cursor (DuckDB's rule for threads) and fetch it all; a Parquet
        file that cannot be read is named in a FormatError."""
        cur = (con or self._con()).cursor()
        try:
            res = cur.execute(query, params or [])
            if how == "df":
                return res.df()
            rows = res.fetchall()
            if how == "records":
                cols = [d[0] for d in res.description]
                return [dict(zip(cols, row)) for row in rows]
            return rows
        except duckdb.Error as e:
            raise _unreadable_table(e, params) from None
        finally:
            cur.close()

    def sql(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None) -> list[tuple]:
        """Rows as tuples (results are small by design)."""
        return self._fetch(query, params, con, "rows")

    def records(self, query: str, params: Iterable[Any] | dict | None = None, *, con=None) -> list[dict[str, Any]]:
        """Rows as dicts, with real None for nulls (no pandas NaN)."""
        return self._fetch(query, params, con, "records")

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
        counts: dict[str, int] = {}
        suites = {e.id: e for e in self.all("suite")}
        counts["suites"] = len(suites)
        for sid, e in suites.items():
            self._check_unique(e.path / "items.parquet", "items")
        gens = {}
        for gid in self.ids("generation"):
            e = self.generation(gid)
            gens[gid] = e
            mpath = e.path / "manifest.json"
            if e.manifest.suite_id not in suites:
                raise FormatError(f"points at suite {e.manifest.suite_id!r}, which is not in the data directory",
                                  file=mpath, field="suite_id")
            out_path = e.path / "outputs.parquet"
            self._check_unique(out_path, "outputs")
            self._check_subset(out_path, "item_id", suites[e.manifest.suite_id].path / "items.parquet",
                               "item_id", "item not in the suite")
        counts["generations"] = len(gens)
        runs = 0
        for rid in self.ids("run"):
            e = self.run(rid)
            runs += 1
            vpath = e.path / "verdicts.parquet"
            self._check_unique(vpath, "verdicts")
            self._check_unique(e.path / "calls.parquet", "calls")
            names = e.manifest.rubric.names()
            bad = self.sql("SELECT DISTINCT criterion FROM read_parquet(?) WHERE criterion NOT IN "
                           "(SELECT unnest(?::VARCHAR[])) LIMIT 1", [str(vpath), names])
            if bad:
                raise FormatError(f"criterion {bad[0][0]!r} is not in the run's rubric ({', '.join(names)})",
                                  file=vpath, field="criterion")
            self._check_subset(vpath, "item_id", gens[e.manifest.gen_id].path / "outputs.parquet", "item_id",
                               "item not in the generation")
            if (e.path / "pair_verdicts.parquet").exists():
                self._check_unique(e.path / "pair_verdicts.parquet", "pair_verdicts")
        counts["runs"] = runs
        sessions = 0
        for sid in self.ids("session"):
            e = self.session(sid)
            sessions += 1
            self._check_unique(e.path / "pairs.parquet", "pairs")
            if e.manifest.suite_id is not None and e.manifest.suite_id not in suites:
                raise FormatError(f"points at suite {e.manifest.suite_id!r}, which is not in the data directory",
                                  file=e.path / "session.json", field="suite_id")
            jpath = e.path / "judgments.parquet"
            if jpath.exists():
                self._check_unique(jpath, "judgments")
                self._check_subset(jpath, "pair_id", e.path / "pairs.parquet", "pair_id", "pair not in the session")
        counts["sessions"] = sessions
        labelsets = 0
        for lid in self.ids("labelset"):
            e = self.labelset(lid)
            labelsets += 1
            if e.manifest.gen_id not in gens:
                raise FormatError(f"points at generation {e.manifest.gen_id!r}, which is not in the data directory",
                                  file=e.path / "manifest.json", field="gen_id")
            lpath = e.path / "labels.parquet"
            self._check_unique(lpath, "labels")
            if e.manifest.rubric is not None:
                names = e.manifest.rubric.names()
                bad = self.sql("SELECT DISTINCT criterion FROM read_parquet(?) WHERE criterion NOT IN "
                               "(SELECT unnest(?::VARCHAR[])) LIMIT 1", [str(lpath), names])
                if bad:
                    raise FormatError(f"criterion {bad[0][0]!r} is not in the label set's rubric ({', '.join(names)})",
                                      file=lpath, field="criterion")
            self._check_subset(lpath, "item_id", gens[e.manifest.gen_id].path / "outputs.parquet", "item_id",
                               "item not in the generation")
        counts["labelsets"] = labelsets
        return counts

    def _check_unique(self, path: Path, table: str) -> None:
        check_parquet(path, table)
        model, keys = S.TABLES[table]
        cols = ", ".join(f'"{k}"' for k in keys)
        try:
            dup = self.sql(f"SELECT {cols}, count(*) FROM read_parquet(?) GROUP BY ALL HAVING count(*) > 1 LIMIT 1",
                           [str(path)])
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
        bad = self.sql(f'SELECT "{col}" FROM read_parquet(?) EXCEPT SELECT "{pcol}" FROM read_parquet(?) LIMIT 1',
                       [str(path), str(parent)])
        if bad:
            raise FormatError(f"{problem}: {bad[0][0]!r}", file=path, field=col)

    # ---- writers (atomic per directory)
    def _write_dir(self, kind: str, id_: str, manifest: S._Model, tables: dict[str, Any],
                   overwrite: bool = False) -> Entry:
        final = self.dir_of(kind, id_)
        if final.exists() and not overwrite:
            raise InputError(f"{kind} {id_!r} already exists", file=final, field=f"{kind} id")
        parent_existed = final.parent.exists()
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".tmp-{id_}-"))
        try:
            write_json_model(tmp / KINDS[kind][1], manifest)
            for name, rows in tables.items():
                if rows is not None:
                    write_parquet(tmp / f"{name}.parquet", rows, name)
            if final.exists():
                old = final.with_name(f".old-{id_}-{os.getpid()}")
                os.replace(final, old)
                os.replace(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if not parent_existed:  # a failed write leaves no directory behind, not even runs/
                try:
                    final.parent.rmdir()
                except OSError:
                    pass
            raise
        with self._lock:
            self._cache.pop((kind, id_), None)
        return self.get(kind, id_)

    def write_suite(self, manifest: S.SuiteManifest, items, **kw) -> Entry:
        return self._write_dir("suite", manifest.suite_id, manifest, {"items": items}, **kw)

    def write_generation(self, manifest: S.GenerationManifest, outputs, **kw) -> Entry:
        return self._write_dir("generation", manifest.gen_id, manifest, {"outputs": outputs}, **kw)

    def write_run(self, manifest: S.RunManifest, verdicts, calls, pair_verdicts=None, **kw) -> Entry:
        return self._write_dir("run", manifest.run_id, manifest,
                               {"verdicts": verdicts, "calls": calls, "pair_verdicts": pair_verdicts}, **kw)

    def write_session(self, manifest: S.SessionManifest, pairs, judgments=None, **kw) -> Entry:
        return self._write_dir("session", manifest.session_id, manifest,
                               {"pairs": pairs, "judgments": judgments}, **kw)

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
        write_json_model(d / "key.json", manifest)
        write_parquet(d / "key.parquet", rows, "key")
        return d
