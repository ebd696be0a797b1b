"""Checking a label store in full, and copying what can still be read out of a damaged one.

:func:`check_store` runs SQLite's full ``integrity_check`` (``evalcore labels check``; opening a
store runs only the cheap checks of :mod:`evalcore.storage.integrity`). :func:`recover` never
writes the damaged file: it copies the file and its write-ahead log into a scratch directory beside
the new file, opens the copy, and reads every table of the label store in ranges of rows, halving a
range that fails until single rows are read or found unreadable. What it reads goes into a new,
whole label store at ``--out`` (written under a temporary name and renamed into place), with a
report of the rows copied and the ranges lost per table. When the pages that describe the tables
are lost (damage near the start of the file, or a main file missing beside its log, which holds
only the pages changed since the last checkpoint) nothing can be read and it says so.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from evalcore.errors import InputError, StateError
from evalcore.storage.db import LABELS_DDL
from evalcore.storage.files import fsync_path
from evalcore.storage.integrity import check_database, integrity, readonly_uri, wal_of

#: the label store's tables copied by :func:`recover`, parents before children
RECOVER_TABLES = ("edits", "queues", "queue_cases", "leases")
_CHUNK = 4096


def check_store(path: Path) -> dict[str, Any]:
    """The full check of a SQLite label store: raises :class:`StateError` for damage the opening
    checks see; otherwise returns ``ok``, the problems ``integrity_check`` lists (none when whole)
    and the number of edits."""
    if not check_database(path, quick=False):
        return {"file": str(path), "exists": False, "ok": True, "problems": [], "edits": 0}
    problems = integrity(path, full=True)
    edits = None
    if not problems:
        con = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            edits = con.execute("SELECT count(*) FROM edits").fetchone()[0]
        except sqlite3.DatabaseError:
            edits = 0
        finally:
            con.close()
    return {"file": str(path), "exists": True, "ok": not problems, "problems": problems, "edits": edits}


def _read_range(con: sqlite3.Connection, table: str, cols: list[str], lo: int, hi: int, lost: list) -> list[tuple]:
    """Rows of ``table`` with rowid in [lo, hi], halving on errors; unreadable ranges go to ``lost``."""
    sel = f"SELECT {', '.join(cols)} FROM {table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
    try:
        return con.execute(sel, (lo, hi)).fetchall()
    except sqlite3.DatabaseError:
        if lo == hi:
            lost.append((lo, hi))
            return []
    mid = (lo + hi) // 2
    return _read_range(con, table, cols, lo, mid, lost) + _read_range(con, table, cols, mid + 1, hi, lost)


def _max_rowid(con: sqlite3.Connection, table: str) -> int | None:
    try:
        return con.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
    except sqlite3.DatabaseError:
        pass
    for probe in (10**7, 10**6, 10**5, 10**4):  # the index of the table is damaged: look for rows up to a bound
        try:
            con.execute(f"SELECT rowid FROM {table} WHERE rowid > ? LIMIT 1", (probe,)).fetchone()
            return probe * 10
        except sqlite3.DatabaseError:
            continue
    return 10**4


def _columns(con: sqlite3.Connection, table: str) -> list[str] | None:
    try:
        return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return None


def recover(src: Path, out: Path) -> dict[str, Any]:
    """Copy what can be read of the label store ``src`` (and its ``-wal``) into a new store ``out``;
    ``src`` is never written. Returns per table the rows recovered and the unreadable ranges."""
    src, out = Path(src), Path(out)
    wal = wal_of(src)
    if not src.exists() and not wal.exists():
        raise InputError("there is no label store and no write-ahead log to recover from", file=src, field="--from")
    if src.exists() and not src.is_file():
        raise InputError("is not a file", file=src, field="--from")
    if os.path.lexists(out):
        raise InputError("exists: recover writes a new file, never over one", file=out, field="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".recover-") as tmp:
        copy = Path(tmp) / "damaged.sqlite"
        if src.exists():
            shutil.copyfile(src, copy)
        else:
            copy.write_bytes(b"")
        if wal.exists():
            shutil.copyfile(wal, wal_of(copy))
        new = Path(tmp) / "recovered.sqlite"
        dst = sqlite3.connect(new, isolation_level=None)
        dst.executescript(LABELS_DDL["sqlite"])
        from evalcore.storage.labels import LABELS_SCHEMA_VERSION

        dst.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(LABELS_SCHEMA_VERSION),))
        report: dict[str, Any] = {"from": str(src), "out": str(out), "tables": {}}
        try:
            con = sqlite3.connect(copy, isolation_level=None)
        except sqlite3.Error as e:  # pragma: no cover - the copy is a plain file we just wrote
            raise StateError(f"cannot be opened even as a copy: {e}", file=src) from None
        try:
            try:
                seqs = dict(con.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
            except sqlite3.DatabaseError:
                seqs = {}
            for table in RECOVER_TABLES:
                want = _columns(dst, table) or []
                have = _columns(con, table)
                if not want:
                    continue
                if not have:
                    if table == "edits":
                        raise StateError(
                            "nothing can be read from it: the pages that describe its tables are damaged or "
                            "missing (a write-ahead log alone holds only the pages changed since the last "
                            "checkpoint); restore it from a backup",
                            file=src,
                        )
                    report["tables"][table] = {"recovered": 0, "unreadable_ranges": 1, "lost": "the table"}
                    continue
                cols = [c for c in want if c in have]
                top = _max_rowid(con, table) or 0
                lost: list[tuple[int, int]] = []
                n = 0
                dst.execute("BEGIN")
                for lo in range(1, top + 1, _CHUNK):
                    rows = _read_range(con, table, cols, lo, min(top, lo + _CHUNK - 1), lost)
                    dst.executemany(
                        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows
                    )
                    n += len(rows)
                dst.execute("COMMIT")
                entry = {"recovered": n, "unreadable_ranges": _merged(lost), "max_rowid": top}
                if table in seqs:  # (AUTOINCREMENT ids are never reused: every id up to it was an edit)
                    entry["highest_id"] = max(seqs[table], top)
                    entry["missing"] = entry["highest_id"] - n
                report["tables"][table] = entry
        finally:
            con.close()
            dst.execute("PRAGMA journal_mode = WAL")
            dst.close()
        os.replace(new, out)
        fsync_path(out.parent)
    return report


def _merged(ranges: list[tuple[int, int]]) -> int:
    """How many separate runs of unreadable rowids there were."""
    runs, last = 0, None
    for lo, hi in sorted(ranges):
        if last is None or lo > last + 1:
            runs += 1
        last = hi
    return runs
