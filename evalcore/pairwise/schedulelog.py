"""The active schedule's record in ``<state>/pairs.sqlite`` (issue 43): each run of
``evalcore pairs schedule`` (:mod:`evalcore.pairwise.active`) and each pair it queued, with what the
analysis needs to weight for it. Pair ids only, never an arm: the state is what the grading page
reads, and the key (which arm each pair shows) lives apart.

* ``schedule_runs``: one row per run: the judgments it saw, how many pairs it queued, the stopping
  rule's level and verdict (settled or not; not the leader, which would name an arm).
* ``schedule_picks``: one row per pair queued: its rank in the run (0 is the choice drawn on the
  judgments so far; the later ranks are the best by the same fit, their outcomes unknown), the
  selection probability ``p``, the pool's size, ``weight`` = 1 / (pool * p), the reason,
  ``sides_relaxed``, the pair's score and the count of judgments the run saw.

Both tables are append-only (triggers refuse an update or a delete), created with ``CREATE ... IF
NOT EXISTS`` on every connection as the other tables of the database
(:class:`evalcore.pairwise.grading.JudgmentStore`), so an older ``pairs.sqlite`` gains them on its
first schedule; :data:`evalcore.pairwise.sessions.PAIRS_DB_VERSION` is unchanged (nothing existing
changes). :func:`schedule_progress` and :func:`schedule_weights` read them without the key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.contract.results import Result
from evalcore.storage.integrity import check_database
from evalcore.storage.paths import utcnow
from evalcore.storage.state import open_state_db

#: the reason of the pairs the schedule queues (``first_pairs.reason``)
REASON = "active_schedule"

SCHEDULE_DDL = """
CREATE TABLE IF NOT EXISTS schedule_runs (
    run_id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL,
    judgments_seen INTEGER NOT NULL,
    queued         INTEGER NOT NULL,
    level          REAL NOT NULL,
    settled        INTEGER NOT NULL CHECK (settled IN (0, 1)),
    seed           INTEGER NOT NULL,
    created_at     TEXT NOT NULL,
    via            TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule_picks (
    pick_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id         INTEGER NOT NULL REFERENCES schedule_runs(run_id),
    session_id     TEXT NOT NULL,
    pair_id        TEXT NOT NULL,
    rank           INTEGER NOT NULL,
    p              REAL NOT NULL,
    pool           INTEGER NOT NULL,
    weight         REAL NOT NULL,
    reason         TEXT NOT NULL,
    sides_relaxed  INTEGER NOT NULL CHECK (sides_relaxed IN (0, 1)),
    score          REAL NOT NULL,
    judgments_seen INTEGER NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS schedule_runs_no_update BEFORE UPDATE ON schedule_runs
BEGIN SELECT RAISE(ABORT, 'schedule_runs are append-only'); END;
CREATE TRIGGER IF NOT EXISTS schedule_runs_no_delete BEFORE DELETE ON schedule_runs
BEGIN SELECT RAISE(ABORT, 'schedule_runs are append-only'); END;
CREATE TRIGGER IF NOT EXISTS schedule_picks_no_update BEFORE UPDATE ON schedule_picks
BEGIN SELECT RAISE(ABORT, 'schedule_picks are append-only'); END;
CREATE TRIGGER IF NOT EXISTS schedule_picks_no_delete BEFORE DELETE ON schedule_picks
BEGIN SELECT RAISE(ABORT, 'schedule_picks are append-only'); END;
"""

_PICK_COLS = ("pair_id", "rank", "p", "pool", "weight", "reason", "sides_relaxed", "score")


def record_run(
    con: sqlite3.Connection,
    session_id: str,
    *,
    judgments_seen: int,
    level: float,
    settled: bool,
    seed: int,
    picks: Iterable[dict[str, Any]],
    via: str = "cli",
) -> int:
    """Append one run and its picks (each a dict of :data:`_PICK_COLS`) on ``con``, inside the
    caller's transaction; the run's id."""
    picks = list(picks)
    now = utcnow().isoformat()
    cur = con.execute(
        "INSERT INTO schedule_runs (session_id, judgments_seen, queued, level, settled, seed, created_at, via) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, judgments_seen, len(picks), float(level), int(settled), int(seed), now, via),
    )
    run_id = int(cur.lastrowid or 0)
    for pk in picks:
        con.execute(
            f"INSERT INTO schedule_picks (run_id, session_id, {', '.join(_PICK_COLS)}, judgments_seen, created_at) "
            f"VALUES (?, ?, {', '.join('?' * len(_PICK_COLS))}, ?, ?)",
            (run_id, session_id, *(pk[c] for c in _PICK_COLS[:-2]), int(pk["sides_relaxed"]), pk["score"],
             judgments_seen, now),
        )  # fmt: skip
    return run_id


def _rows(path: Path, sql: str, params: tuple) -> list[dict[str, Any]]:
    if not check_database(path):
        return []
    with closing(open_state_db(path, create=False)) as con:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"schedule_runs", "schedule_picks"} <= have:
            return []
        return [dict(r) for r in con.execute(sql, params).fetchall()]


def picks(path: Path, session_id: str) -> list[dict[str, Any]]:
    """Every pair the schedule queued in a session, in the order queued."""
    return _rows(path, "SELECT * FROM schedule_picks WHERE session_id = ? ORDER BY pick_id", (session_id,))


def runs(path: Path, session_id: str) -> list[dict[str, Any]]:
    """Every run of the schedule on a session, in order."""
    return _rows(path, "SELECT * FROM schedule_runs WHERE session_id = ? ORDER BY run_id", (session_id,))


def schedule_weights(path: Path, session_id: str) -> dict[str, float]:
    """pair id -> the recorded weight 1 / (pool * p) of each pair the schedule chose (a pair it did
    not choose is absent: it was graded in the reviewers' own order)."""
    return {r["pair_id"]: float(r["weight"]) for r in picks(path, session_id)}


@dataclass
class ScheduleProgress(Result):
    """:func:`schedule_progress`: the session's original (non-holdout) pairs judged by anyone, the
    pairs the schedule queued and how many of those are judged, its runs, when it last ran and
    whether it then said the top arm is settled (no arm is named)."""

    session_id: str
    original_pairs: int
    judged: int
    queued: int
    queued_judged: int
    runs: int
    last_run: str | None
    settled: bool | None
    level: float | None

    def sentence(self) -> str:
        """The one line of the schedule's progress (the grading page and ``pairs progress``)."""
        line = f"{self.judged} of {self.original_pairs} original pairs judged"
        if not self.runs:
            return f"{line}; the active schedule has not run on this session"
        verdict = "the top arm is settled" if self.settled else "the top arm is not settled yet"
        return (
            f"{line}; the active schedule queued {self.queued} ({self.queued_judged} judged) over {self.runs} "
            f"run(s); at its last run ({self.last_run}) {verdict} at {100 * (self.level or 0):.0f}%"
        )


def schedule_progress(
    path: Path, session_id: str, originals: Iterable[str], judged: Callable[[], set[str]]
) -> ScheduleProgress:
    """Where the schedule stands (``judged`` is called for the pairs judged by anyone so far)."""
    done = judged()
    orig = set(originals)
    queued = [p["pair_id"] for p in picks(path, session_id)]
    rs = runs(path, session_id)
    last = rs[-1] if rs else None
    return ScheduleProgress(
        session_id,
        len(orig),
        len(orig & done),
        len(queued),
        len(set(queued) & done),
        len(rs),
        last["created_at"] if last else None,
        bool(last["settled"]) if last else None,
        float(last["level"]) if last else None,
    )
