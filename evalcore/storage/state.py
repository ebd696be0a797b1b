"""The state directory's SQLite databases (labels, pair judgments, the ledger, suite looks).

* :func:`writable_state` is the path of one database in a store's state directory, refused when
  the state directory lies inside the data directory (the data is only ever read).
* :func:`open_state_db` opens it the one way every append-only store does: WAL mode,
  ``synchronous=FULL``, autocommit with an explicit ``BEGIN IMMEDIATE`` by the caller, foreign
  keys on and a 30 s busy timeout, so concurrent writers wait for each other instead of failing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import FormatError, PathEscapeError
from evalcore.storage.integrity import check_database, create_database

# --------------------------------------------------------------------------- state databases

if TYPE_CHECKING:
    from evalcore.storage.store import Store


def writable_state(store: Store, db_name: str) -> Path:
    """Path of a database in the store's state directory, refusing a state directory inside the
    data directory (the data is only ever read)."""
    state = Path(store.state).resolve()
    if state == store.data or state.is_relative_to(store.data):
        raise PathEscapeError(
            "the state directory must not be inside the data directory (data is read-only)", file=state, field="--state"
        )
    return state / db_name


def open_state_db(path: Path, create: bool = True) -> sqlite3.Connection:
    """A SQLite connection for the state directory's append-only stores: WAL mode (readers never
    block the writer), ``synchronous=FULL`` (an acknowledged write survives a killed process),
    autocommit with explicit ``BEGIN IMMEDIATE`` by the caller, and a 30 s busy timeout so that
    concurrent writers wait for each other instead of failing."""
    if not check_database(path):  # refuses a damaged file; creates a new one only where nothing is
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        create_database(path)
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
