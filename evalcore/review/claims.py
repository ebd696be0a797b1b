"""Who gets which case: a case shown to a reviewer is **leased** to them, so a team works one
queue at once without two people deciding the same case unknowingly.

* :func:`next_case` hands the reviewer the first case in priority order that they have not handled
  and that still needs a reviewer, counting other reviewers' live leases as taken places: a case
  needing N reviewers is offered to N different people at most at a time, and to nobody who
  already decided, skipped or said the test is wrong for it. The lease is written in the same
  write transaction that chose the case (the label store's one-writer lock), so two reviewers
  asking at the same instant get different cases. A reviewer who already holds a live lease in the
  queue (a reload, a second tab) gets that case back.
* A lease lasts :data:`LEASE_SECONDS` unless renewed by asking again; deciding, skipping or asking
  for another case gives it up (:func:`release`), and an expired lease frees the case for others.
* Adjudicators (``role="adjudicator"``) are handed the cases whose reviewers disagree (status
  ``reviewers_disagree`` of :func:`evalcore.storage.gold.gold`), which nobody else is offered; one
  adjudicator settles a case.

Leases are working state, not history: they live in the label store's ``leases`` table, which is
not append-only; decisions are never leased away (they are edits, :mod:`evalcore.review.queue`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from evalcore.errors import LabelError
from evalcore.review.queue import WITHDRAWN, Filters, _decode, _need_reviewer, _on, _scope, get_queue
from evalcore.storage.gold import gold
from evalcore.storage.labels import ROLES, LabelStore
from evalcore.storage.store import Store

LEASE_SECONDS = 15 * 60
REVIEWERS_DISAGREE = "reviewers_disagree"

_HANDLED = (
    "EXISTS (SELECT 1 FROM edits e WHERE {on} AND e.reviewer = {who} "
    f"AND e.outcome IN ('decided', 'test_wrong', 'skipped') AND e.edit_id NOT IN ({WITHDRAWN}))"
)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _iso(t: dt.datetime) -> str:
    """Lease times as text that sorts as time does (always with microseconds, always UTC)."""
    return t.astimezone(dt.UTC).isoformat(timespec="microseconds")


def _claim(con: Any, case: dict[str, Any], who: str, now: dt.datetime, seconds: float) -> None:
    """Lease ``case`` to ``who`` (renewing a lease they hold) and give up their other leases."""
    key = (case["gen_id"], case["item_id"], int(case["gen_round"]), case["criterion"])
    con.execute(
        "DELETE FROM leases WHERE reviewer = ? AND NOT (gen_id = ? AND item_id = ? AND gen_round = ? AND criterion = ?)",
        (who, *key),
    )
    con.execute("DELETE FROM leases WHERE expires_at <= ?", (_iso(now),))
    con.execute(
        "INSERT INTO leases (gen_id, item_id, gen_round, criterion, reviewer, queue_id, taken_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gen_id, item_id, gen_round, criterion, reviewer) "
        "DO UPDATE SET queue_id = excluded.queue_id, taken_at = excluded.taken_at, expires_at = excluded.expires_at",
        (*key, who, case["queue_id"], _iso(now), _iso(now + dt.timedelta(seconds=seconds))),
    )


def next_case(
    store: Store,
    queue_id: str,
    reviewer: str,
    filters: Filters | None = None,
    *,
    role: str = "reviewer",
    lease_seconds: float = LEASE_SECONDS,
) -> dict | None:
    """Lease and return the reviewer's next case (see the module docstring), or None when there is
    nothing left for them under these filters. With ``role="adjudicator"``: the next case whose
    reviewers disagree."""
    who = _need_reviewer(reviewer)
    if role not in ROLES:
        raise LabelError(f"role {role!r} is not one of {', '.join(ROLES)}", field="role")
    if not lease_seconds > 0:
        raise LabelError(f"a lease must last a positive number of seconds, not {lease_seconds!r}", field="lease")
    q = get_queue(store, queue_id)
    labels = LabelStore(store)
    cond, args = _scope(store, q, filters)
    if role == "adjudicator":
        return _next_dispute(store, labels, q, who, cond, args, lease_seconds)
    now = _now()
    live = _iso(now)
    handled = _HANDLED.format(on=_on("e"), who="?")
    with labels.transaction() as con:
        held = con.execute(
            # CROSS JOIN: SQLite starts from the reviewer's leases, not from the queue's cases in rank order
            f"SELECT c.* FROM leases l CROSS JOIN queue_cases c WHERE c.queue_id = l.queue_id AND {_on('l')} "
            f"AND l.reviewer = ? AND l.queue_id = ? AND l.expires_at > ? AND {cond} AND NOT {handled} "
            "ORDER BY c.rank LIMIT 1",
            (who, q["queue_id"], live, *args, who),
        ).fetchone()
        if held is None:
            others_deciding = (
                f"(SELECT count(*) FROM leases l WHERE {_on('l')} AND l.reviewer <> ? AND l.expires_at > ? "
                f"AND NOT {_HANDLED.format(on=_on('e', 'l'), who='l.reviewer')})"
            )
            reviews = (
                f"(SELECT count(DISTINCT e.reviewer) FROM edits e WHERE {_on('e')} "
                f"AND e.outcome IN ('decided', 'test_wrong') AND e.role = 'reviewer' AND e.edit_id NOT IN ({WITHDRAWN}))"
            )
            held = con.execute(
                f"SELECT c.* FROM queue_cases c WHERE {cond} AND NOT {handled} "
                f"AND {reviews} + {others_deciding} < ? ORDER BY c.rank LIMIT 1",
                (*args, who, who, live, int(q["reviewers_required"])),
            ).fetchone()
        if held is None:
            con.execute("DELETE FROM leases WHERE reviewer = ? AND queue_id = ?", (who, q["queue_id"]))
            return None
        case = _decode(dict(held))
        _claim(con, case, who, now, lease_seconds)
    return case


def _next_dispute(
    store: Store,
    labels: LabelStore,
    q: dict[str, Any],
    who: str,
    cond: str,
    args: list[Any],
    lease_seconds: float,
) -> dict | None:
    disputed = [
        [g["item_id"], int(g["gen_round"]), g["criterion"]]
        for g in gold(labels, q["gen_id"])
        if g["status"] == REVIEWERS_DISAGREE
    ]
    if not disputed:
        return None
    now = _now()
    with labels.transaction() as con:
        rows = []
        for item_id, gen_round, criterion in disputed:  # few: one index lookup each
            rows += con.execute(
                f"SELECT c.*, (SELECT count(*) FROM leases l WHERE {_on('l')} AND l.reviewer <> ? "
                f"AND l.expires_at > ?) AS taken, (SELECT count(*) FROM leases l WHERE {_on('l')} "
                "AND l.reviewer = ? AND l.expires_at > ?) AS mine FROM queue_cases c "
                f"WHERE {cond} AND c.item_id = ? AND c.gen_round = ? AND c.criterion = ?",
                (who, _iso(now), who, _iso(now), *args, item_id, gen_round, criterion),
            ).fetchall()
        rows.sort(key=lambda r: r["rank"])
        pick = next((r for r in rows if r["mine"]), None) or next((r for r in rows if not r["taken"]), None)
        if pick is None:
            return None
        case = _decode({k: v for k, v in dict(pick).items() if k not in ("taken", "mine")})
        _claim(con, case, who, now, lease_seconds)
    return case


def release(store: Store, reviewer: str, queue_id: str | None = None) -> int:
    """Give up the reviewer's leases (in one queue, or all); returns how many."""
    who = _need_reviewer(reviewer)
    labels = LabelStore(store)
    with labels.transaction() as con:
        if queue_id is None:
            cur = con.execute("DELETE FROM leases WHERE reviewer = ?", (who,))
        else:
            cur = con.execute(
                "DELETE FROM leases WHERE reviewer = ? AND queue_id = ?", (who, get_queue(store, queue_id)["queue_id"])
            )
        return int(cur.rowcount or 0)


def leases(store: Store, queue_id: str | None = None) -> list[dict[str, Any]]:
    """The live leases (of one queue): who holds which case until when."""
    now = _iso(_now())
    labels = LabelStore(store)
    if queue_id is None:
        return labels.rows("SELECT * FROM leases WHERE expires_at > ? ORDER BY taken_at", (now,))
    return labels.rows(
        "SELECT * FROM leases WHERE expires_at > ? AND queue_id = ? ORDER BY taken_at",
        (now, get_queue(store, queue_id)["queue_id"]),
    )


def _in_queue(labels: LabelStore, queue_id: str, keys: list[tuple]) -> int:
    """How many of these (item, round, criterion) keys are cases of the queue (few keys: one
    index lookup each)."""
    n = 0
    for item_id, gen_round, criterion in keys:
        n += bool(
            labels.rows(
                "SELECT 1 AS x FROM queue_cases WHERE queue_id = ? AND item_id = ? AND gen_round = ? AND criterion = ?",
                (queue_id, item_id, gen_round, criterion),
            )
        )
    return n


def disputes(store: Store, queue_id: str) -> dict[str, int]:
    """For adjudicators: how many of the queue's cases have reviewers who disagree, and how many
    an adjudicator has settled."""
    q = get_queue(store, queue_id)
    labels = LabelStore(store)
    rows = gold(labels, q["gen_id"])
    waiting = [(g["item_id"], int(g["gen_round"]), g["criterion"]) for g in rows if g["status"] == REVIEWERS_DISAGREE]
    settled = [(g["item_id"], int(g["gen_round"]), g["criterion"]) for g in rows if g["gold_from"] == "adjudicator"]
    return {"waiting": _in_queue(labels, q["queue_id"], waiting), "settled": _in_queue(labels, q["queue_id"], settled)}
