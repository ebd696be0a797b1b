"""What waits for one person, by role: the figures of the app's Home page and of ``evalcore home``.

:func:`waiting` counts, for a name and its roles (docs/ACCESS.md):

* a reviewer: the cases of each generation's newest review queue (the one the Review page opens)
  still waiting for them, as :func:`evalcore.review.queue.progress` counts them for that page
  (``waiting_for_me``); without a name, the cases not yet complete;
* an adjudicator: the cases of those queues whose reviewers disagree and that no adjudicator has
  settled (:func:`evalcore.review.claims.disputes`, the Review page's "Adjudicate" count);
* anyone who may grade (every role; a grader-only login its assigned sessions): the open pairwise
  sessions with pairs left for them (:func:`evalcore.pairwise.grading.progress`);
* a reviewer, adjudicator or admin: the runs, and those not complete (status partial or polluted in
  the run's manifest: the runs whose figures the Runs page flags as not comparable).

It sits above the review and pairwise packages (which do not import each other) and below the
command line; it reads and writes nothing else (no lease is taken).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalcore.contract.results import Result
from evalcore.pairwise.grading import progress as pair_progress
from evalcore.pairwise.grading import sessions_overview
from evalcore.review.claims import disputes
from evalcore.review.queue import latest, queues
from evalcore.review.queue import progress as queue_progress
from evalcore.storage.store import Store

READ_ROLES = ("reviewer", "adjudicator", "admin")


@dataclass
class QueueWaiting(Result):
    """One queue and how many of its cases wait."""

    queue_id: str
    gen_id: str
    waiting: int


@dataclass
class Cases(Result):
    """A reviewer's cases: ``waiting`` over the generations' newest queues, counted for
    ``reviewer`` (None: no name given, the cases not yet complete)."""

    waiting: int
    reviewer: str | None
    queues: list[QueueWaiting]


@dataclass
class Disputes(Result):
    """An adjudicator's cases: reviewers disagree, no adjudicator has settled them."""

    waiting: int
    queues: list[QueueWaiting]


@dataclass
class SessionWaiting(Result):
    """One open pairwise session with pairs left (for ``grader``; without a name, all of them)."""

    session_id: str
    pairs_left: int
    pairs: int


@dataclass
class Grading(Result):
    """Open sessions with pairs left, and the pairs left over them."""

    sessions: int
    pairs_left: int
    open: list[SessionWaiting]


@dataclass
class Runs(Result):
    """The data directory's runs; ``not_complete``: those whose manifest says partial or polluted."""

    runs: int
    not_complete: int
    flagged: list[str]


@dataclass
class Home(Result):
    """:func:`waiting`: one part per role the person has (None for a part no role of theirs gives)."""

    name: str
    roles: list[str]
    cases: Cases | None
    disputes: Disputes | None
    grading: Grading | None
    runs: Runs | None


def _newest_queues(store: Store) -> list[dict]:
    """Each generation's newest queue over the whole generation (queues come oldest first; a
    scoped one only where there is no other: review.queue.latest), in generation order."""
    by_gen: dict[str, list[dict]] = {}
    for q in queues(store):
        by_gen.setdefault(q["gen_id"], []).append(q)
    return [latest(by_gen[g]) for g in sorted(by_gen)]


def _cases(store: Store, name: str, qs: list[dict]) -> Cases:
    rows = []
    for q in qs:
        p = queue_progress(store, q["queue_id"], name or None)
        n = int(p["waiting_for_me"]) if name else int(p["cases"]) - int(p["complete"])
        rows.append(QueueWaiting(q["queue_id"], q["gen_id"], n))
    return Cases(sum(r.waiting for r in rows), name or None, rows)


def _disputes(store: Store, qs: list[dict]) -> Disputes:
    rows = [QueueWaiting(q["queue_id"], q["gen_id"], int(disputes(store, q["queue_id"])["waiting"])) for q in qs]
    return Disputes(sum(r.waiting for r in rows), rows)


def _grading(store: Store, name: str, assigned: tuple[str, ...] | None) -> Grading:
    rows = []
    for s in sessions_overview(store):
        if s.status != "open" or (assigned is not None and s.session_id not in assigned):
            continue
        if name:
            p = pair_progress(store, s.session_id, name)
            left, total = p.total - p.graded, p.total
        else:
            left = total = s.n_pairs
        if left:
            rows.append(SessionWaiting(s.session_id, left, total))
    return Grading(len(rows), sum(r.pairs_left for r in rows), rows)


def _runs(store: Store) -> Runs:
    ids = store.ids("run")
    flagged = [r for r in ids if store.run(r).manifest.status != "complete"]
    return Runs(len(ids), len(flagged), flagged)


def waiting(store: Store, name: str, roles: Iterable[str], sessions: Iterable[str] | None = None) -> Home:
    """What waits for ``name`` with ``roles`` (see the module docstring). ``sessions``: the
    sessions a grader-only login may grade (its assignment); None for every session."""
    name = " ".join(str(name or "").split())
    has = frozenset(roles)
    grader_only = has == {"grader"}
    qs = _newest_queues(store) if has & {"reviewer", "adjudicator"} else []
    return Home(
        name=name,
        roles=[r for r in ("reviewer", "adjudicator", "grader", "admin") if r in has],
        cases=_cases(store, name, qs) if "reviewer" in has else None,
        disputes=_disputes(store, qs) if "adjudicator" in has else None,
        grading=_grading(store, name, tuple(sessions or ()) if grader_only else None) if has else None,
        runs=_runs(store) if has & set(READ_ROLES) else None,
    )
