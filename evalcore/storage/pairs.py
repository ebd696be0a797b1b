"""Pair tables: two runs' answers on one generation joined once and counted by the pair of their
patterns, so that a figure comparing two instruments answer by answer (flips between harnesses, the
association of two runs side by side) reads a few thousand rows instead of joining millions.

A pair table is a product of two runs' answers tables (:mod:`evalcore.storage.aggregates`), kept by
the one mechanism of :mod:`evalcore.storage.derived`: ``<state>/derived/pairs/<run>+<run>/pairs.parquet``,
current while both answers tables hash to what its ``index.json`` recorded. Runs are kept in run-id
order; a caller asking for the other order gets the columns swapped.

Rows: per joined (``jr_a``, ``jr_b``) judge rounds (equal rounds, and the majority rows of both
runs: round 0 of a run with several judge rounds, round 1 otherwise), generation round, the
answer's holdout flag and item class, and each run's three masks, the number of answers ``n``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.storage import derived
from evalcore.storage.aggregates import answers_table, copy_capped, quoted

if TYPE_CHECKING:
    from evalcore.storage.store import Store

PAIR_VERSION = 1
DIR = "pairs"
FILE = "pairs.parquet"
COLUMNS = ("present", "passed", "failed")


def _builder(store: Store, pa: str, pb: str, maj_a: int, maj_b: int) -> derived.Builder:
    def build(out: Path) -> Any:
        spill = out / ".spill"
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
            copy_capped(con, f"SELECT *, count(*) AS n FROM ({body}) GROUP BY ALL ORDER BY ALL", [], out / FILE, spill)
        finally:
            con.close()
            shutil.rmtree(spill, ignore_errors=True)
        return {}

    return build


def pair_table(
    store: Store, run_a: str, run_b: str, *, build: bool = True, force: bool = False
) -> tuple[str, bool, list[str], list[str], int, int] | None:
    """The pair table of two runs on one generation: (path, swapped, criteria of a, criteria of b,
    majority round of a, of b), ``swapped`` when the table holds ``run_b`` on its ``a`` side. Built
    into the state directory when missing or stale (``build``; ``force``: built again); None when a
    run has no current answers table, the runs judge different generations, or nothing can be
    written."""
    if run_a == run_b or store.run(run_a).manifest.gen_id != store.run(run_b).manifest.gen_id:
        return None
    ta, tb = answers_table(store, run_a, rebuild=build), answers_table(store, run_b, rebuild=build)
    if ta is None or tb is None or "criteria" not in ta[1] or "criteria" not in tb[1]:
        return None
    swapped = run_b < run_a
    (pa, ia), (pb, ib) = (tb, ta) if swapped else (ta, tb)
    maj_a, maj_b = int(ia["majority_round"]), int(ib["majority_round"])
    id_ = "+".join(sorted((run_a, run_b)))
    src, params = {"a/answers.parquet": Path(pa), "b/answers.parquet": Path(pb)}, {"version": PAIR_VERSION}
    final = derived.place(store, DIR, id_)
    if final is None:
        return None
    if build:
        s = derived.kept(store, DIR, id_, src, _builder(store, pa, pb, maj_a, maj_b), params, force=force)
    else:
        s = derived.find(store, DIR, id_, src, [("state", final)], params)
    if s is None or FILE not in s.files:
        return None
    ca, cb = list(ia["criteria"]), list(ib["criteria"])
    if swapped:
        return s.path(FILE), True, cb, ca, maj_b, maj_a
    return s.path(FILE), False, ca, cb, maj_a, maj_b


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
