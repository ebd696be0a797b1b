"""Item keys of named items: the integer key (``item``) that the answers tables of a generation's
runs give each item id (:mod:`evalcore.storage.aggregates`), looked up once per id and kept in the
state directory, so that a figure over a few thousand labelled answers picks them out of millions
by an integer instead of matching every answer's id.

``<state>/derived/keys/<key>.json``, ``key`` the sha256 of the version and of the answers table's
own hash (a table that changed is never looked up in an old map); the file records the sha256 of
its own map, and a map that does not hash to it is not read. Ids looked up and not found are kept
as -1, so that they are not looked up again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.storage import derived
from evalcore.storage.files import atomic_write_bytes

if TYPE_CHECKING:
    from evalcore.storage.store import Store

VERSION = 1
DIR = "keys"
MISSING = -1

_LOCK = threading.Lock()


def _digest(keys: dict[str, int]) -> str:
    return hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()


def _read(f: Path) -> dict[str, int]:
    try:
        doc = json.loads(f.read_text())
        keys = {str(k): int(v) for k, v in doc["keys"].items()}
        return keys if doc.get("version") == VERSION and doc.get("sha256") == _digest(keys) else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _file(state: Path, sha: str) -> Path:
    return state / derived.DIR / DIR / f"{hashlib.sha256(f'keys:{VERSION}:{sha}'.encode()).hexdigest()[:24]}.json"


def item_keys(store: Store, answers_path: str, ids: list[str]) -> dict[str, int] | None:
    """The integer key of each of ``ids`` that this answers table holds, from the state's map,
    looking up only the ids the map does not know yet. None when nothing can be kept (no state
    directory): the caller matches the ids themselves."""
    state = derived._state_dir(store)
    if state is None:
        return None
    sha = derived.sha256_of(Path(answers_path), state)
    f = _file(state, sha)
    with _LOCK:
        known = _read(f)
        missing = sorted(set(ids) - known.keys())
        if missing:
            found = dict(
                store.sql(
                    "SELECT DISTINCT item_id, item FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?::VARCHAR[]))",
                    [answers_path, missing],
                )
            )
            known.update({i: int(found.get(i, MISSING)) for i in missing})
            try:
                f.parent.mkdir(parents=True, exist_ok=True)
                doc = {"version": VERSION, "answers_sha256": sha, "keys": known, "sha256": _digest(known)}
                atomic_write_bytes(f, json.dumps(doc, sort_keys=True).encode())
            except OSError:
                pass
            derived._save_stamps(state)
    return {i: known[i] for i in ids if known.get(i, MISSING) != MISSING}


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
    known = _read(f)
    current = not (set(ids) - known.keys())
    if not current and not check:
        item_keys(store, t[0], ids)
    return {"labelled_items": len(ids), "current": current}
