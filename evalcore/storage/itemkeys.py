"""Item keys and rows of named items: the integer key (``item``) that the answers tables of a
generation's runs give each item id (:mod:`evalcore.storage.aggregates`), and the answers table's
rows of those items, looked up once per id and kept in the state directory, so that a figure over a
few thousand labelled answers reads them from a small file instead of picking them out of millions
of rows on every render (the report card's judges on gold: 0.36 s per run at 180M verdict rows).

``<state>/derived/keys/<key>.json``, ``key`` the sha256 of the version and of the answers table's
own hash (a table that changed is never looked up in an old map), and beside it
``<key>.<sha>.parquet``, the rows (every column of the answers table) of the ids found, named by
its own sha256. The map records the sha256 of its keys, the rows file's name and that file's
sha256; a map or rows file that does not hash to what is recorded is not read (the ids are looked
up again). Ids looked up and not found are kept as -1, so that they are not looked up again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.storage import derived
from evalcore.storage.files import atomic_write_bytes

if TYPE_CHECKING:
    from evalcore.storage.store import Store

VERSION = 2  # 2: the rows of the items beside their keys
DIR = "keys"
MISSING = -1
KEEP_S = 600  # a rows file replaced is removed this many seconds after it was written

_LOCK = threading.Lock()


def _digest(keys: dict[str, int], rows: str | None = None, rows_sha: str | None = None) -> str:
    return hashlib.sha256(json.dumps([keys, rows, rows_sha], sort_keys=True).encode()).hexdigest()


def _read(f: Path, state: Path) -> tuple[dict[str, int], Path | None]:
    """The map's keys and its rows file, both as recorded; nothing when either does not hash to
    what the map records."""
    try:
        doc = json.loads(f.read_text())
        keys = {str(k): int(v) for k, v in doc["keys"].items()}
        rows, rows_sha = doc["rows"], doc["rows_sha256"]
        if doc.get("version") != VERSION or doc.get("sha256") != _digest(keys, rows, rows_sha):
            return {}, None
        path = f.with_name(str(rows))
        if Path(str(rows)).name != rows or derived.sha256_of(path, state) != rows_sha:
            return {}, None
        return keys, path
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, None


def _file(state: Path, sha: str) -> Path:
    return state / derived.DIR / DIR / f"{hashlib.sha256(f'keys:{VERSION}:{sha}'.encode()).hexdigest()[:24]}.json"


def item_rows(store: Store, answers_path: str, ids: list[str]) -> tuple[dict[str, int], str] | None:
    """The integer key of each of ``ids`` that this answers table holds, and the path of a Parquet
    file holding the table's rows of those items (and of others looked up before), from the
    state's map, looking up only the ids the map does not know yet. None when nothing can be kept
    (no state directory): the caller reads the table itself."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    state = derived._state_dir(store)
    if state is None:
        return None
    sha = derived.sha256_of(Path(answers_path), state)
    f = _file(state, sha)
    with _LOCK:
        known, rows = _read(f, state)
        missing = sorted(set(ids) - known.keys())
        if missing or rows is None:
            new = store.arrow(
                "SELECT * FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?::VARCHAR[]))", [answers_path, missing]
            )
            found = {i: int(k) for i, k in zip(new["item_id"].to_pylist(), new["item"].to_pylist())}
            known.update({i: found.get(i, MISSING) for i in missing})
            table = pa.concat_tables([pq.read_table(rows), new]) if rows is not None else new
            try:
                f.parent.mkdir(parents=True, exist_ok=True)
                tmp = f.with_name(f".{f.stem}.{os.getpid()}-{threading.get_ident()}.parquet")
                tmp.unlink(missing_ok=True)
                pq.write_table(
                    table.sort_by([("item", "ascending"), ("gen_round", "ascending"), ("judge_round", "ascending")]),
                    tmp,
                )
                rows_sha = derived.sha256_of(tmp)
                rows = f.with_name(f"{f.stem}.{rows_sha[:16]}.parquet")
                os.replace(tmp, rows)
                doc = {
                    "version": VERSION,
                    "answers_sha256": sha,
                    "keys": known,
                    "rows": rows.name,
                    "rows_sha256": rows_sha,
                    "sha256": _digest(known, rows.name, rows_sha),
                }
                atomic_write_bytes(f, json.dumps(doc, sort_keys=True).encode())
                _sweep(f, rows)
            except OSError:  # (a read-only or full state directory: the caller reads the table itself)
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
                return None
            derived._save_stamps(state)
    return {i: known[i] for i in ids if known.get(i, MISSING) != MISSING}, str(rows)


def _sweep(f: Path, rows: Path) -> None:
    """Remove the rows files the map ``f`` held before ``rows`` once they are :data:`KEEP_S` old:
    another process that read the map just before may still be reading the one it named."""
    now = time.time()
    for old in f.parent.glob(f"{f.stem}.*.parquet"):
        with contextlib.suppress(OSError):
            if old != rows and now - old.stat().st_mtime > KEEP_S:
                old.unlink()


def item_keys(store: Store, answers_path: str, ids: list[str]) -> dict[str, int] | None:
    """The integer key of each of ``ids`` that this answers table holds (:func:`item_rows`)."""
    got = item_rows(store, answers_path, ids)
    return None if got is None else got[0]


def labelled_ids(store: Store, gen_id: str) -> list[str]:
    """The item ids the generation's shipped label sets label."""
    paths = store.labelset_paths(gen_id)
    if not paths:
        return []
    return [r[0] for r in store.sql("SELECT DISTINCT item_id FROM read_parquet(?::VARCHAR[])", [paths])]


def label_keys(store: Store, run_id: str, *, check: bool = False, force: bool = False) -> dict[str, Any] | None:
    """Look up the keys of the items the run's generation's label sets label (``evalcore index``
    and every command that writes a run), so that the report card and the association find them
    ready: how many there are and whether they were all known already. ``check``: only say so;
    ``force``: look every one up again. None when the run has no answers table, its generation no label set, or there is no state."""
    from evalcore.storage.aggregates import answers_table

    state = derived._state_dir(store)
    t = answers_table(store, run_id, rebuild=not check)
    ids = labelled_ids(store, store.run(run_id).manifest.gen_id) if t is not None else []
    if state is None or t is None or not ids:
        return None
    f = _file(state, derived.sha256_of(Path(t[0]), state))
    if force and not check:
        f.unlink(missing_ok=True)
        for old in f.parent.glob(f"{f.stem}.*.parquet"):
            old.unlink(missing_ok=True)
    known, rows = _read(f, state)
    current = rows is not None and not (set(ids) - known.keys())
    if not current and not check:
        item_keys(store, t[0], ids)
    return {"labelled_items": len(ids), "current": current}
