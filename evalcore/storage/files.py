"""Files on disk in the data contract's shapes, each written atomically.

* :func:`read_json_model` / :func:`write_json_model`: a JSON manifest, validated by its pydantic
  model (a newer ``schema_version`` than this evalcore reads is refused); written through
  :func:`atomic_write_bytes` (a temporary sibling, fsynced, renamed into place).
* :func:`check_parquet` checks a Parquet table's version, columns and types against the contract
  from its footer alone; :func:`to_table` / :func:`write_parquet` turn rows into the contract's
  arrow schema (with the ``evalcore.schema_version`` metadata) and write them atomically.
* :func:`atomic_directory` builds a directory in a ``.tmp-*`` sibling and renames it into place,
  so a reader sees all of it or none; :class:`Entry` is one discovered directory and its manifest.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from pydantic import ValidationError

from evalcore.contract import schema as S
from evalcore.errors import FormatError, SchemaVersionError

try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover
    _LIBC = None

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
        raise FormatError(
            f"does not parse as JSON: {e.msg} at line {e.lineno} column {e.colno}", file=path, field="manifest"
        ) from None
    if not isinstance(data, dict):
        raise FormatError("must be a JSON object", file=path, field="manifest")
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise FormatError("missing or non-integer schema_version", file=path, field="schema_version")
    if version > S.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"version {version} is newer than this evalcore reads ({S.SCHEMA_VERSION}); upgrade evalcore",
            file=path,
            field="schema_version",
        )
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "manifest"
        raise FormatError(err["msg"], file=path, field=loc) from None


def write_json_model(path: Path, obj: S._Model) -> None:
    atomic_write_bytes(path, (obj.model_dump_json(indent=2, by_alias=True) + "\n").encode("utf-8"))


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; when the block ends without an error the
    file is fsynced, renamed over ``path`` and the rename made durable (the directory fsynced).
    Whoever reads ``path`` meanwhile, or after a crash at any point, finds the previous file or the
    new one whole, never a third thing; on an error the temporary file is removed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as e:  # (named as the file the user asked for, not the temporary one)
        raise OSError(e.errno, e.strerror, str(path)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        fsync_path(Path(tmp))
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_file`."""
    with atomic_file(path) as tmp:
        tmp.write_bytes(data)


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
            _compatible(actual.value_type, expected.value_type) or pa.types.is_null(actual.value_type)
        )
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
        raise FormatError(
            f"not a readable Parquet file ({type(e).__name__}: {str(e).splitlines()[0][:120]})", file=path, field=table
        ) from None
    meta = pf.schema_arrow.metadata or {}
    version = meta.get(b"evalcore.schema_version")
    if version is None:
        raise FormatError("no evalcore.schema_version in the Parquet metadata", file=path, field="schema_version")
    try:
        v = int(version)
    except ValueError:
        raise FormatError(f"schema_version {version!r} is not an integer", file=path, field="schema_version") from None
    if v > S.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"version {v} is newer than this evalcore reads ({S.SCHEMA_VERSION}); upgrade evalcore",
            file=path,
            field="schema_version",
        )
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
                    i for i in model.model_fields.values() if i.alias == fld.name
                )
                default = None if info.is_required() else info.default
                cols[fld.name] = pa.array([default] * rows.num_rows, fld.type)
        tbl = pa.table(cols, schema=schema)
    else:
        defaults = {
            (info.alias or name): info.default
            for name, info in model.model_fields.items()
            if info.default is not None and not info.is_required()
        }
        if defaults:
            rows = [{**defaults, **{k: v for k, v in r.items() if v is not None or k not in defaults}} for r in rows]
        try:
            tbl = pa.Table.from_pylist(rows, schema=schema)
        except UnicodeEncodeError as e:  # a lone surrogate ("\ud800" from JSON) cannot be stored as UTF-8
            raise FormatError(
                f"holds text that is not Unicode (a lone surrogate, U+{ord(e.object[e.start]):04X}): fix it in the source",
                field=table,
            ) from None
    tbl = check_ids(tbl, table)
    return tbl.replace_schema_metadata({"evalcore.schema_version": str(S.SCHEMA_VERSION), "evalcore.table": table})


#: the columns that name things (ids and names people type and look up), checked by check_ids
ID_COLUMNS = ("item_id", "criterion", "call_id", "pair_id", "annotator", "reviewer", "arm", "session_id")
#: the longest id or name evalcore stores (characters)
MAX_ID_LENGTH = 512


def check_ids(tbl: pa.Table, table: str) -> pa.Table:
    """The id and name columns of a table about to be written (:data:`ID_COLUMNS`), at the
    contract's edge: no control character (a NUL would make the item impossible to name on a
    command line), not empty, at most :data:`MAX_ID_LENGTH` characters, and in Unicode's NFC form
    (an id typed on one system matches the same id from another). Refused in one line naming the
    table, the column and the first bad value; NFC is applied, not refused. Vectorised (pyarrow
    compute)."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    for name in ID_COLUMNS:
        if name not in tbl.column_names or not pa.types.is_string(tbl.schema.field(name).type):
            continue
        col = tbl.column(name)
        if pc.min(pc.binary_length(col)).as_py() == 0:  # (a null is the schema's to allow or refuse)
            raise FormatError(f"an empty value: every {name} names something", field=f"{table}.{name}")
        # the common case, ids all ASCII: no control character is "printable", a character is a
        # byte and NFC changes nothing (0.9 s for the three id columns of 18M verdicts, against 4.3 s
        # for the general checks below)
        if pc.all(pc.string_is_ascii(col)).as_py() and pc.all(pc.ascii_is_printable(col)).as_py():
            if (pc.max(pc.binary_length(col)).as_py() or 0) <= MAX_ID_LENGTH:
                continue
        bad = pc.match_substring_regex(col, r"[\x00-\x1f\x7f]")
        if pc.any(bad).as_py():
            v = col.filter(bad)[0].as_py()
            c = next(ch for ch in v if ord(ch) < 32 or ord(ch) == 127)
            raise FormatError(f"{v!r} holds a control character (U+{ord(c):04X})", field=f"{table}.{name}")
        long = pc.greater(pc.utf8_length(col), MAX_ID_LENGTH)
        if pc.any(long).as_py():
            v = col.filter(long)[0].as_py()
            raise FormatError(f"{v[:40]!r}... is {len(v)} characters, over {MAX_ID_LENGTH}", field=f"{table}.{name}")
        nfc = pc.utf8_normalize(col, "NFC")
        if not pc.all(pc.equal(nfc, col)).as_py():
            tbl = tbl.set_column(tbl.column_names.index(name), tbl.schema.field(name), nfc)
    return tbl


def write_parquet(path: Path, rows: list[dict] | pa.Table, table: str) -> pa.Table:
    tbl = to_table(rows, table)
    with atomic_file(path) as tmp:
        pq.write_table(tbl, tmp, compression="zstd")
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
            except Exception as e:
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


def fsync_path(path: Path) -> None:
    """Make a file's writes, or a rename or a new entry in directory ``path``, durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def rmdir_quiet(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.rmdir()


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the system
    or the file system cannot."""
    fn = getattr(_LIBC, "renameat2", None) if _LIBC is not None else None
    if fn is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def replace_directory(tmp: Path, final: Path) -> None:
    """Put the directory ``tmp`` where ``final`` is, durably. An existing ``final`` is swapped out
    in one step where the system allows (so a reader or a crash finds the old directory or the
    new one, never neither) and then removed; elsewhere it is moved aside first."""
    if final.exists() or final.is_symlink():
        if _exchange(tmp, final):
            shutil.rmtree(tmp, ignore_errors=True)  # (tmp now holds the old directory)
        else:  # pragma: no cover - only where renameat2 is missing
            old = final.with_name(f".old-{final.name}-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, final)
    fsync_path(final.parent)


@contextlib.contextmanager
def atomic_directory(final: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary directory beside ``final``; when the block ends without an error
    it replaces ``final`` in one rename (an existing ``final`` only with ``overwrite``; the caller
    refuses otherwise). On an error the temporary directory is removed, and so is ``final``'s
    parent if this call created it."""
    parent_existed = final.parent.exists()
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".tmp-{final.name}-"))
    try:
        yield tmp
        for p in tmp.iterdir():
            if p.is_file():
                fsync_path(p)
        fsync_path(tmp)
        if final.exists() and not overwrite:
            raise FileExistsError(final)
        replace_directory(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if not parent_existed:  # a failed write leaves no directory behind, not even runs/
            rmdir_quiet(final.parent)
        raise
