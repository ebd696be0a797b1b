"""The state directory's SQLite databases (labels, pair judgments, the ledger, suite looks).

* :func:`writable_state` is the path of one database in a store's state directory, refused when
  the state directory lies inside the data directory (the data is only ever read).
* :func:`open_state_db` opens it the one way every append-only store does: WAL mode,
  ``synchronous=FULL``, autocommit with an explicit ``BEGIN IMMEDIATE`` by the caller, foreign
  keys on and a 30 s busy timeout, so concurrent writers wait for each other instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import FormatError, PathEscapeError, StateError
from evalcore.storage.integrity import check_database, create_database, readonly_uri, state_error, writable_dir

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


class StateConnection(sqlite3.Connection):
    """A connection whose environment errors (see :func:`state_error`) are one line naming the
    file."""

    path: Path

    def _run(self, fn, *args):
        try:
            return fn(*args)
        except sqlite3.OperationalError as e:
            err = state_error(e, self.path)
            if err is None:
                raise
            raise err from None

    def execute(self, *args):
        return self._run(super().execute, *args)

    def executemany(self, *args):
        return self._run(super().executemany, *args)

    def executescript(self, *args):
        return self._run(super().executescript, *args)

    def commit(self):
        return self._run(super().commit)


def ensure_state_dir(state: Path) -> None:
    """Create the state directory if it is missing, but only inside a directory that exists: a
    path that does not lead anywhere (a drive not mounted, a mistyped parent) is refused rather
    than a new, empty state started somewhere else."""
    if state.is_dir():
        return
    if not os.path.lexists(state) and not state.parent.is_dir():
        raise StateError(
            f"does not exist, and neither does {state.parent}: a state directory is created only inside an existing "
            "directory (check the path, or create it)",
            file=state,
            field="--state",
        )
    try:
        state.mkdir()
    except FileExistsError:  # made by a concurrent writer since the check above, or a file in the way
        if not state.is_dir():
            raise StateError("is not a directory", file=state, field="--state") from None
    except OSError as e:
        raise StateError(f"cannot be created ({e.strerror})", file=state, field="--state") from None


def open_state_db(path: Path, create: bool = True) -> sqlite3.Connection:
    """A SQLite connection for the state directory's append-only stores: WAL mode (readers never
    block the writer), ``synchronous=FULL`` (an acknowledged write survives a killed process),
    autocommit with explicit ``BEGIN IMMEDIATE`` by the caller, and a 30 s busy timeout so that
    concurrent writers wait for each other instead of failing. The file is checked first
    (:mod:`evalcore.storage.integrity`); where the state directory is read-only the connection is
    read-only, so reading commands work and a write is one line (:class:`StateConnection`)."""
    if not check_database(path):  # refuses a damaged file; creates a new one only where nothing is
        ensure_state_dir(path.parent)
        if not writable_dir(path.parent):
            raise StateError("is read-only: a new store cannot be created in it", file=path.parent, field="--state")
        try:
            create_database(path)
        except sqlite3.OperationalError as e:
            raise (state_error(e, path) or e) from None
    if not writable_dir(path.parent) or not os.access(path, os.W_OK):
        con = sqlite3.connect(readonly_uri(path), uri=True, timeout=30, isolation_level=None, factory=StateConnection)
        con.path = path
        con.row_factory = sqlite3.Row
        return con
    con = sqlite3.connect(path, timeout=30, isolation_level=None, factory=StateConnection)
    con.path = path
    con.row_factory = sqlite3.Row
    con.execute("PRAGMA busy_timeout = 30000")
    mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":  # pragma: no cover - only on file systems without shared memory
        con.close()
        raise FormatError(f"could not switch to WAL mode (got {mode})", file=path, field="journal_mode")
    con.execute("PRAGMA synchronous = FULL")
    con.execute("PRAGMA foreign_keys = ON")
    return con
