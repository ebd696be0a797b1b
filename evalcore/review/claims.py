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
* A case in a slice of the queue given to named reviewers (:func:`evalcore.review.team.assign`)
  is handed to those reviewers only; a case in no assigned slice goes to anyone.

Leases are working state, not history: they live in the label store's ``leases`` table, which is
not append-only; decisions are never leased away (they are edits, :mod:`evalcore.review.queue`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from evalcore.errors import LabelError
from evalcore.review.queue import WITHDRAWN, Filters, _decode, _need_reviewer, _on, _scope, get_queue
from evalcore.review.team import assigned_sql
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


def _claim(con: Any, cases: list[dict[str, Any]], who: str, queue_id: str, now: dt.datetime, seconds: float) -> None:
    """Lease ``cases`` to ``who`` (renewing leases they hold) and give up their other leases."""
    keys = [(c["gen_id"], c["item_id"], int(c["gen_round"]), c["criterion"]) for c in cases]
    held = con.execute("SELECT gen_id, item_id, gen_round, criterion FROM leases WHERE reviewer = ?", (who,)).fetchall()
    for h in held:
        key = (h["gen_id"], h["item_id"], int(h["gen_round"]), h["criterion"])
        if key not in keys:
            con.execute(
                "DELETE FROM leases WHERE reviewer = ? AND gen_id = ? AND item_id = ? AND gen_round = ? AND criterion = ?",
                (who, *key),
            )
    con.execute("DELETE FROM leases WHERE expires_at <= ?", (_iso(now),))
    for key in keys:
        con.execute(
            "INSERT INTO leases (gen_id, item_id, gen_round, criterion, reviewer, queue_id, taken_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gen_id, item_id, gen_round, criterion, reviewer) "
            "DO UPDATE SET queue_id = excluded.queue_id, taken_at = excluded.taken_at, expires_at = excluded.expires_at",
            (*key, who, queue_id, _iso(now), _iso(now + dt.timedelta(seconds=seconds))),
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
    got = next_cases(store, queue_id, reviewer, filters, k=1, role=role, lease_seconds=lease_seconds)
    return got[0] if got else None


def next_cases(
    store: Store,
    queue_id: str,
    reviewer: str,
    filters: Filters | None = None,
    *,
    k: int = 1,
    role: str = "reviewer",
    lease_seconds: float = LEASE_SECONDS,
) -> list[dict]:
    """Lease and return the reviewer's next ``k`` cases in rank order: the cases they hold live
    leases on first, then new ones as :func:`next_case` chooses them, all leased in one write
    transaction (their other leases are given up). A batch is what the review card keeps in the
    browser, so that a key press shows the next case without waiting for the server; the cases
    it holds count as taken places for everyone else. An adjudicator gets one case at a time."""
    who = _need_reviewer(reviewer)
    if role not in ROLES:
        raise LabelError(f"role {role!r} is not one of {', '.join(ROLES)}", field="role")
    if not lease_seconds > 0:
        raise LabelError(f"a lease must last a positive number of seconds, not {lease_seconds!r}", field="lease")
    if not 1 <= int(k) <= 50:
        raise LabelError(f"a batch holds 1 to 50 cases, not {k!r}", field="k")
    q = get_queue(store, queue_id)
    labels = LabelStore(store)
    cond, args = _scope(store, q, filters)
    if role == "adjudicator":
        one = _next_dispute(store, labels, q, who, cond, args, lease_seconds)
        return [one] if one else []
    given, given_args = assigned_sql(labels, q["queue_id"], who)  # slices given to others: not theirs
    if given:
        cond, args = f"{cond} AND {given}", [*args, *given_args]
    now = _now()
    live = _iso(now)
    handled = _HANDLED.format(on=_on("e"), who="?")
    with labels.transaction() as con:
        held = con.execute(
            # CROSS JOIN: SQLite starts from the reviewer's leases, not from the queue's cases in rank order
            f"SELECT c.* FROM leases l CROSS JOIN queue_cases c WHERE c.queue_id = l.queue_id AND {_on('l')} "
            f"AND l.reviewer = ? AND l.queue_id = ? AND l.expires_at > ? AND {cond} AND NOT {handled} "
            "ORDER BY c.rank LIMIT ?",
            (who, q["queue_id"], live, *args, who, int(k)),
        ).fetchall()
        rows = [dict(h) for h in held]
        if len(rows) < k:
            others_deciding = (
                f"(SELECT count(*) FROM leases l WHERE {_on('l')} AND l.reviewer <> ? AND l.expires_at > ? "
                f"AND NOT {_HANDLED.format(on=_on('e', 'l'), who='l.reviewer')})"
            )
            reviews = (
                f"(SELECT count(DISTINCT e.reviewer) FROM edits e WHERE {_on('e')} "
                f"AND e.outcome IN ('decided', 'test_wrong') AND e.role = 'reviewer' AND e.edit_id NOT IN ({WITHDRAWN}))"
            )
            mine_live = f"EXISTS (SELECT 1 FROM leases l WHERE {_on('l')} AND l.reviewer = ? AND l.expires_at > ?)"
            rows += [
                dict(r)
                for r in con.execute(
                    f"SELECT c.* FROM queue_cases c WHERE {cond} AND NOT {handled} AND NOT {mine_live} "
                    f"AND {reviews} + {others_deciding} < ? ORDER BY c.rank LIMIT ?",
                    (*args, who, who, live, who, live, int(q["reviewers_required"]), int(k) - len(rows)),
                ).fetchall()
            ]
        if not rows:
            con.execute("DELETE FROM leases WHERE reviewer = ? AND queue_id = ?", (who, q["queue_id"]))
            return []
        cases = sorted((_decode(r) for r in rows), key=lambda c: c["rank"])
        _claim(con, cases, who, q["queue_id"], now, lease_seconds)
    return cases


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
        _claim(con, [case], who, q["queue_id"], now, lease_seconds)
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
