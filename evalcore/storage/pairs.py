"""Pair tables: two runs' answers on one generation joined once and counted by the pair of their
patterns, so that a figure comparing two instruments answer by answer (flips between harnesses, the
association of two runs side by side) reads a few thousand rows instead of joining millions.

A pair table is a state-side product of two runs' answers tables (:mod:`evalcore.storage.aggregates`):
``<state>/derived/pairs/<key>.parquet`` with ``<key>.json`` beside it, ``key`` the sha256 of the
version and of both answers tables' own hashes, so a pair table of answers tables that changed is
never found; ``<key>.json`` records the parquet file's sha256, and a file that does not hash to it
is not read (and is rebuilt). Runs are kept in run-id order; a caller asking for the other order
gets the columns swapped.

Rows: per joined (``jr_a``, ``jr_b``) judge rounds (equal rounds, and the majority rows of both
runs: round 0 of a run with several judge rounds, round 1 otherwise), generation round, the
answer's holdout flag and item class, and each run's three masks, the number of answers ``n``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.storage import derived
from evalcore.storage.aggregates import answers_table, copy_capped, quoted
from evalcore.storage.files import atomic_write_bytes

if TYPE_CHECKING:
    from evalcore.storage.store import Store

PAIR_VERSION = 1
DIR = "pairs"
COLUMNS = ("present", "passed", "failed")

_LOCK = threading.Lock()


def _where(store: Store) -> Path | None:
    state = derived._state_dir(store)
    return None if state is None else state / derived.DIR / DIR


def _key(store: Store, pa: str, pb: str) -> str:
    state = derived._state_dir(store)
    ha, hb = derived.sha256_of(Path(pa), state), derived.sha256_of(Path(pb), state)
    return hashlib.sha256(f"pairs:{PAIR_VERSION}:{ha}:{hb}".encode()).hexdigest()[:24]


def _current(store: Store, f: Path) -> bool:
    try:
        meta = json.loads(f.with_suffix(".json").read_text())
        return meta.get("sha256") == derived.sha256_of(f, derived._state_dir(store))
    except (OSError, ValueError, AttributeError):
        return False


def _build(store: Store, f: Path, pa: str, pb: str, maj_a: int, maj_b: int) -> None:
    tmpdir = Path(tempfile.mkdtemp(dir=f.parent, prefix=".tmp-pair-"))
    try:
        out = tmpdir / f.name
        con = store.connect()
        try:
            sides = ", ".join(f"a.{c} AS a_{c}, b.{c} AS b_{c}" for c in COLUMNS)
            on = "a.item = b.item AND a.gen_round = b.gen_round"
            joins = ["a.judge_round = b.judge_round"]
            if maj_a != maj_b:  # one run's majority is its round 0, the other's its only round
                joins.append(f"a.judge_round = {int(maj_a)} AND b.judge_round = {int(maj_b)}")
            body = " UNION ALL ".join(
                f"SELECT a.judge_round AS jr_a, b.judge_round AS jr_b, a.gen_round, a.holdout, a.class, {sides} "
                f"FROM read_parquet('{quoted(Path(pa))}') a JOIN read_parquet('{quoted(Path(pb))}') b "
                f"ON {on} AND {j}"
                for j in joins
            )
            copy_capped(
                con, f"SELECT *, count(*) AS n FROM ({body}) GROUP BY ALL ORDER BY ALL", [], out, tmpdir / "spill"
            )
        finally:
            con.close()
        sha = derived.sha256_of(out, derived._state_dir(store))
        os.replace(out, f)
        atomic_write_bytes(f.with_suffix(".json"), json.dumps({"version": PAIR_VERSION, "sha256": sha}).encode())
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def pair_table(
    store: Store, run_a: str, run_b: str, *, build: bool = True
) -> tuple[str, bool, list[str], list[str], int, int] | None:
    """The pair table of two runs on one generation: (path, swapped, criteria of a, criteria of b,
    majority round of a, of b), ``swapped`` when the table holds ``run_b`` on its ``a`` side. Built
    into the state directory when missing or stale (``build``); None when a run has no current
    answers table, the runs judge different generations, or nothing can be written."""
    if run_a == run_b or store.run(run_a).manifest.gen_id != store.run(run_b).manifest.gen_id:
        return None
    where = _where(store)
    ta, tb = answers_table(store, run_a, rebuild=build), answers_table(store, run_b, rebuild=build)
    if where is None or ta is None or tb is None or "criteria" not in ta[1] or "criteria" not in tb[1]:
        return None
    swapped = run_b < run_a
    (pa, ia), (pb, ib) = (tb, ta) if swapped else (ta, tb)
    maj_a, maj_b = int(ia["majority_round"]), int(ib["majority_round"])
    f = where / f"{_key(store, pa, pb)}.parquet"
    if not _current(store, f):
        if not build:
            return None
        with _LOCK:
            if not _current(store, f):
                try:
                    f.parent.mkdir(parents=True, exist_ok=True)
                    _build(store, f, pa, pb, maj_a, maj_b)
                except OSError:
                    return None
        derived._save_stamps(derived._state_dir(store))
    ca, cb = list(ia["criteria"]), list(ib["criteria"])
    if swapped:
        return str(f), True, cb, ca, maj_b, maj_a
    return str(f), False, ca, cb, maj_a, maj_b


def pair_columns(swapped: bool) -> str:
    """The select list renaming a pair table's sides so that ``a_*`` is the caller's first run."""
    x, y = ("b", "a") if swapped else ("a", "b")
    cols = [f"jr_{x} AS jr_a", f"jr_{y} AS jr_b", "gen_round", "holdout", "class", "n"]
    cols += [f"{x}_{c} AS a_{c}" for c in COLUMNS] + [f"{y}_{c} AS b_{c}" for c in COLUMNS]
    return ", ".join(cols)


def refresh_pairs(store: Store, run_ids: list[str]) -> None:
    """Build the pair table of every two of these runs that judge one generation (a current one is
    kept): after a command writes runs. ``evalcore index`` builds them one by one, to report each."""
    ids = sorted(dict.fromkeys(run_ids))
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            pair_table(store, a, b)
