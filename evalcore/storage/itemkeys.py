"""Item keys and rows of named items: the integer key (``item``) that the answers tables of a
generation's runs give each item id (:mod:`evalcore.storage.aggregates`), and the answers table's
rows of those items, looked up once per id and kept in the state directory, so that a figure over a
few thousand labelled answers reads them from a small file instead of picking them out of millions
of rows on every render (the report card's judges on gold: 0.36 s per run at 180M verdict rows).

A product of the answers table kept by the one mechanism of :mod:`evalcore.storage.derived`:
``<state>/derived/keys/<id>/`` (``id`` from the answers table's path), current while the table hashes
to what its ``index.json`` recorded; its memo maps each id looked up to its key (-1: looked up and
not found, so not looked up again) and ``rows.parquet`` holds the table's rows (every column) of
the ids found. Ids not known yet are added by building the product again from the current one
plus them, one builder at a time across processes, so that a product replaced under a reader
always holds at least the rows it held.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.storage import derived

if TYPE_CHECKING:
    from evalcore.storage.store import Store

VERSION = 3  # 3: a product of evalcore.storage.derived
DIR = "keys"
ROWS = "rows.parquet"
MISSING = -1


def _id(answers_path: str) -> str:
    return hashlib.sha256(os.path.realpath(answers_path).encode()).hexdigest()[:24]


def _current(store: Store, answers_path: str) -> tuple[dict[str, int], str | None]:
    """The keys known for this answers table and the path of their rows, from its current product."""
    final = derived.place(store, DIR, _id(answers_path))
    src, params = {"answers.parquet": Path(answers_path)}, {"version": VERSION}
    s = None if final is None else derived.find(store, DIR, _id(answers_path), src, [("state", final)], params)
    if s is None or ROWS not in s.files:
        return {}, None
    return {str(k): int(v) for k, v in dict(s.memo).items()}, s.path(ROWS)


def item_rows(store: Store, answers_path: str, ids: list[str]) -> tuple[dict[str, int], str] | None:
    """The integer key of each of ``ids`` that this answers table holds, and the path of a Parquet
    file holding the table's rows of those items (and of others looked up before), looking up only
    the ids the product does not know yet. None when nothing can be kept (no state directory, or it
    could not be written): the caller reads the table itself."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    known, rows = _current(store, answers_path)
    if rows is None or set(ids) - known.keys():

        def build(out: Path) -> Any:  # under the product's lock: adds to the current one
            have, old = _current(store, answers_path)
            missing = sorted(set(ids) - have.keys())
            new = store.arrow(
                "SELECT * FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?::VARCHAR[]))", [answers_path, missing]
            )
            found = {i: int(k) for i, k in zip(new["item_id"].to_pylist(), new["item"].to_pylist())}
            have.update({i: found.get(i, MISSING) for i in missing})
            table = pa.concat_tables([pq.read_table(old), new]) if old is not None else new
            order = [("item", "ascending"), ("gen_round", "ascending"), ("judge_round", "ascending")]
            pq.write_table(table.sort_by(order), out / ROWS)
            return have

        src, params = {"answers.parquet": Path(answers_path)}, {"version": VERSION}
        s = derived.kept(store, DIR, _id(answers_path), src, build, params, force=True, serial=True)
        if s is None:
            return None
        known, rows = {str(k): int(v) for k, v in dict(s.memo).items()}, s.path(ROWS)
        if set(ids) - known.keys():  # (a source changed meanwhile)
            return None
    return {i: known[i] for i in ids if known.get(i, MISSING) != MISSING}, str(rows)


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

    t = answers_table(store, run_id, rebuild=not check)
    ids = labelled_ids(store, store.run(run_id).manifest.gen_id) if t is not None else []
    if derived.place(store, DIR, "x") is None or t is None or not ids:
        return None
    if force and not check:
        derived.remove(store, DIR, _id(t[0]))
    known, rows = _current(store, t[0])
    current = rows is not None and not (set(ids) - known.keys())
    if not current and not check:
        item_keys(store, t[0], ids)
    return {"labelled_items": len(ids), "current": current}
