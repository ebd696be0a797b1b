"""A value that changes whenever the label store is written: what a page's cached figure keys on
(``pages/_ui.state_fingerprint``). On SQLite, the modification times of ``labels.sqlite`` and its
WAL (every write appends to the WAL); on PostgreSQL, which leaves nothing in the state directory, one
query: the last edit's id and the counts of queues and assignments (and the last sign-off's id once
sign-offs exist). Leases and receipts, which a reviewer's card writes without changing any figure,
do not move it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalcore.storage.db import connect, database_url
from evalcore.storage.labels import DB_NAME

_WRITTEN = (
    "SELECT (SELECT max(edit_id) FROM edits) AS edit, (SELECT count(*) FROM queues) AS queues, "
    "(SELECT count(*) FROM assignments) AS assignments"
)


def _mtime_ns(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def labels_version(store: Any) -> tuple:
    """What changes whenever a label, queue, assignment or sign-off is written to ``store``'s label
    store (SQLite in its state directory, or the PostgreSQL database of ``--db`` / ``EVALCORE_DB``)."""
    url = database_url(store)
    if url is None:
        state = Path(store.state)
        return tuple((name, _mtime_ns(state / name)) for name in (DB_NAME, f"{DB_NAME}-wal"))
    con = connect(url, lock="labels", create=False)
    try:
        edits, signoffs = con.execute(
            "SELECT to_regclass('edits') IS NOT NULL, to_regclass('signoffs') IS NOT NULL"
        ).fetchone()
        if not edits:
            return ("postgres", None)
        sql = _WRITTEN + (", (SELECT max(signoff_id) FROM signoffs) AS signoff" if signoffs else "")
        return ("postgres", *tuple(con.execute(sql).fetchone()))
    finally:
        con.close()
