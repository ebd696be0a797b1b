"""How a review team is doing on one queue (:func:`team`), and slices of a queue given to named
reviewers (:func:`assign`, honoured by :func:`evalcore.review.claims.next_case`). docs/REVIEW.md,
"The team view", is the reference.

**Per reviewer** (a name in one capacity: a person who also adjudicates has a row per role), from
the label store's edits made in the queue, read through :class:`LabelStore` (SQLite or PostgreSQL
alike):

* ``decided``, ``test_wrong``, ``skipped``: the cases whose *standing* edit of theirs (the latest
  not taken back by an undo, :meth:`LabelStore.standing`) is a decision, a "test is wrong" flag or
  a skip.
* **Time per case**: the reviewer's edits in the queue that decide, flag or skip a case (an edit
  later undone counts: the work was done; an undo itself does not) are put in time order; the time
  spent on a case is the gap between an edit and the reviewer's edit before it. A gap longer than
  :data:`BREAK_SECONDS` (30 minutes) is a break and is left out, and so is the first edit of a
  session (there is nothing before it to measure from). ``median_seconds`` is the median of the
  gaps kept (:func:`evalcore.stats.descriptive.percentile`, 50); ``cases_per_hour`` is 3600 times
  the number of gaps kept over their sum (cases handled per hour of work, breaks excluded).
* **Agreement with the adjudicator**: on the cases an adjudicator settled (``gold_from =
  adjudicator`` in :func:`evalcore.storage.gold.gold`), the reviewer's standing decision against
  the adjudicator's. **Agreement with gold**: on the cases with gold (status ``gold`` or
  ``test_wrong``), the reviewer's decision against the gold, leaving out the cases whose gold is
  this reviewer's own decision alone (one reviewer and no adjudicator; an adjudicator's own cases).
  Where several reviewers decide a case, gold from their unanimous decision agrees with each of them
  by construction: the figure then says how often a reviewer's decisions stand. Two decisions agree
  when they are the same category (:func:`evalcore.storage.gold.category`: the value; for continuous
  scores the side of the threshold; "test is wrong"), pooled over the queue's criteria. Each is
  Cohen's kappa with a bootstrap interval (:func:`evalcore.stats.agreement.cohen_kappa_interval`,
  seeded) and the share of equal decisions, given only on at least :data:`MIN_CASES` shared cases;
  below that, None with the count and the reason.

**Assignment**: an adjudicator or an admin (checked at the write, :func:`acting`) gives a *slice*
of a queue (item classes, reason codes, runs, criteria: the fields of
:class:`evalcore.review.queue.Filters`, which select the slice's cases the same way) to named
reviewers. A case in an assigned slice is handed by ``next_case`` only to the assignees of the
slices holding it; a case in no assigned slice goes to anyone. Adjudication is not assigned: the
cases whose reviewers disagree go to the adjudicators. Assignments are appended to the label
store's ``assignments`` table; the latest row of a slice is its assignment, and an empty list of
reviewers takes it back.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore.contract.results import Result
from evalcore.errors import InputError, LabelError
from evalcore.review.queue import Filters, facets, filter_sql, get_queue
from evalcore.stats import agreement as A
from evalcore.stats.descriptive import percentile
from evalcore.storage.gold import category, gold
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import utcnow
from evalcore.storage.roles import acting
from evalcore.storage.store import Store

MIN_CASES = 10  # shared cases below which no agreement figure is given
BREAK_SECONDS = 30 * 60  # a longer gap between two edits of a reviewer is a break, not time on a case
LEVEL = 0.95
SEED = 0
N_BOOT = 1000
SLICE_FIELDS = ("classes", "reasons", "runs", "criteria")

# --------------------------------------------------------------------------- the figures


@dataclass
class Agreement(Result):
    """A reviewer against a reference (the adjudicator, or gold) on their shared cases."""

    cases: int
    kappa: float | None
    lo: float | None
    hi: float | None
    agreement: float | None  # the share of shared cases with the same decision
    reason: str | None


@dataclass
class ReviewerFigures(Result):
    """One reviewer's row of the team view (see the module docstring)."""

    reviewer: str
    role: str
    decided: int
    test_wrong: int
    skipped: int
    timed: int  # gaps kept as times per case
    breaks: int  # gaps longer than the break
    median_seconds: float | None
    cases_per_hour: float | None
    with_adjudicator: Agreement
    with_gold: Agreement


@dataclass
class Assignment(Result):
    """A slice of a queue given to named reviewers (the latest assignment of that slice)."""

    assignment_id: int
    queue_id: str
    slice: dict[str, list[str]]
    reviewers: list[str]
    assigned_by: str
    created_at: str
    cases: int  # the queue's cases in the slice


@dataclass
class TeamReport(Result):
    """:func:`team`: the queue, the rules the figures follow, a row per reviewer, the assignments."""

    queue_id: str
    gen_id: str
    reviewers_required: int
    min_cases: int
    break_seconds: int
    level: float
    reviewers: list[ReviewerFigures] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)


def _r(x: float | None, digits: int) -> float | None:
    return None if x is None else round(float(x), digits)


def agreement(pairs: Sequence[tuple[str, str]], *, min_cases: int, seed: int, n_boot: int, level: float) -> Agreement:
    """Cohen's kappa with its interval and the share of equal decisions over ``pairs`` of
    categories (the reviewer's, the reference's), or None with the reason below ``min_cases``."""
    n = len(pairs)
    if n < min_cases:
        return Agreement(n, None, None, None, None, f"{n} shared cases, fewer than the {min_cases} a figure needs")
    cats = sorted({c for p in pairs for c in p})
    code = {c: k for k, c in enumerate(cats)}
    a = np.array([code[x] for x, _ in pairs], dtype=np.int64)
    b = np.array([code[y] for _, y in pairs], dtype=np.int64)
    iv = A.cohen_kappa_interval(a, b, seed=seed, k=len(cats), n_boot=n_boot, level=level)
    share = A.accuracy(a, b).value
    return Agreement(n, _r(iv.value, 3), _r(iv.lo, 3), _r(iv.hi, 3), _r(share, 3), iv.reason)


def _times(stamps: list[str], break_seconds: float) -> tuple[list[float], int]:
    """The gaps between consecutive edits (seconds) that are times on a case, and how many breaks."""
    t = sorted(dt.datetime.fromisoformat(s) for s in stamps)
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(t)]
    kept = [g for g in gaps if g <= break_seconds]
    return kept, len(gaps) - len(kept)


def _reference_category(g: dict[str, Any], crit: Any) -> str:
    if g["status"] == "test_wrong":
        return "test_wrong"
    return category(crit, {"outcome": "decided", "value": g["value"], "passed": g["passed"]})


def _own_gold(g: dict[str, Any], who: str, role: str) -> bool:
    """Whether the case's gold is this reviewer's decision alone."""
    if g["gold_from"] == "adjudicator":
        return role == "adjudicator" and g["adjudicator"] == who
    return role == "reviewer" and g["decided"] <= 1


def team(
    store: Store,
    queue_id: str,
    *,
    min_cases: int = MIN_CASES,
    break_seconds: int = BREAK_SECONDS,
    seed: int = SEED,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
) -> TeamReport:
    """The team view of a queue: a row per reviewer and role (see the module docstring), reviewers
    first, then adjudicators, each by name; and the queue's assignments."""
    q = get_queue(store, queue_id)
    qid = q["queue_id"]
    labels = LabelStore(store)
    stamps: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in labels.rows(
        "SELECT reviewer, role, created_at FROM edits WHERE queue = ? "
        "AND outcome IN ('decided', 'test_wrong', 'skipped') ORDER BY edit_id",
        (qid,),
    ):
        stamps[(e["reviewer"], e["role"] or "reviewer")].append(e["created_at"])
    standing = [e for e in labels.standing(q["gen_id"]) if e["queue"] == qid]
    golds = {(g["item_id"], int(g["gen_round"]), g["criterion"]): g for g in gold(labels, q["gen_id"])}
    crits: dict[str, Any] = {}
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(("decided", "test_wrong", "skipped"), 0)
    )
    adj_pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    gold_pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for e in standing:
        who = (e["reviewer"], e.get("role") or "reviewer")
        counts[who][e["outcome"]] += 1
        g = golds.get((e["item_id"], int(e["gen_round"]), e["criterion"]))
        if e["outcome"] == "skipped" or g is None or g["status"] not in ("gold", "test_wrong"):
            continue
        if e["criterion"] not in crits:
            crits[e["criterion"]] = labels.criterion_for(q["gen_id"], e["criterion"])
        crit = crits[e["criterion"]]
        pair = (category(crit, e), _reference_category(g, crit))
        if g["gold_from"] == "adjudicator" and not (who[1] == "adjudicator" and g["adjudicator"] == who[0]):
            adj_pairs[who].append(pair)
        if not _own_gold(g, *who):
            gold_pairs[who].append(pair)
    rows = []
    for who in sorted(set(stamps) | set(counts), key=lambda w: (w[1] != "reviewer", w[1], w[0])):
        kept, breaks = _times(stamps.get(who, []), break_seconds)
        total = sum(kept)
        rows.append(
            ReviewerFigures(
                reviewer=who[0],
                role=who[1],
                **counts[who],
                timed=len(kept),
                breaks=breaks,
                median_seconds=_r(percentile(kept, 50), 1),
                cases_per_hour=_r(3600 * len(kept) / total, 1) if total > 0 else None,
                with_adjudicator=agreement(adj_pairs[who], min_cases=min_cases, seed=seed, n_boot=n_boot, level=level),
                with_gold=agreement(gold_pairs[who], min_cases=min_cases, seed=seed, n_boot=n_boot, level=level),
            )
        )
    return TeamReport(
        queue_id=qid,
        gen_id=q["gen_id"],
        reviewers_required=int(q["reviewers_required"]),
        min_cases=min_cases,
        break_seconds=break_seconds,
        level=level,
        reviewers=rows,
        assignments=assignments(store, qid),
    )


# --------------------------------------------------------------------------- assignment


def _slice(store: Store, q: dict[str, Any], given: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The slice as stored (each field sorted, without repeats), every value checked against the queue."""
    out = {k: sorted({str(v).strip() for v in given.get(k) or () if str(v).strip()}) for k in SLICE_FIELDS}
    if not any(out.values()):
        raise InputError("name a slice: a class, a reason code, a run or a criterion", field="slice")
    f = facets(store, q["queue_id"])
    for key, known, name in (("classes", f["classes"], "class"), ("criteria", f["criteria"], "criterion")):
        bad = [v for v in out[key] if v not in known]
        if bad:
            raise InputError(
                f"{bad[0]!r} is no {name} of queue {q['queue_id']} (known: {', '.join(known)})", field=name
            )
    bad = [r for r in out["runs"] if r not in q["runs"]]
    if bad:
        raise InputError(f"{bad[0]!r} is no run of queue {q['queue_id']} (known: {', '.join(q['runs'])})", field="run")
    filter_sql(_filters(out))  # an unknown reason code is refused there, in one line
    return out


def _filters(sl: Mapping[str, Sequence[str]]) -> Filters:
    return Filters.of(sl.get("reasons", ()), sl.get("criteria", ()), sl.get("runs", ()), sl.get("classes", ()))


def _current(labels: LabelStore, queue_id: str) -> list[dict[str, Any]]:
    """The latest assignment row of each slice of the queue that still names reviewers."""
    latest: dict[str, dict[str, Any]] = {}
    for r in labels.rows("SELECT * FROM assignments WHERE queue_id = ? ORDER BY assignment_id", (queue_id,)):
        latest[r["slice"]] = r
    return [r for r in latest.values() if json.loads(r["reviewers"])]


def _slice_cases(labels: LabelStore, queue_id: str, sl: Mapping[str, Sequence[str]]) -> int:
    where, params = filter_sql(_filters(sl))
    rows = labels.rows(f"SELECT count(*) AS n FROM queue_cases c WHERE c.queue_id = ? AND {where}", (queue_id, *params))
    return int(rows[0]["n"]) if rows else 0


def _assignment(labels: LabelStore, r: dict[str, Any]) -> Assignment:
    sl = json.loads(r["slice"])
    return Assignment(
        assignment_id=int(r["assignment_id"]),
        queue_id=r["queue_id"],
        slice=sl,
        reviewers=json.loads(r["reviewers"]),
        assigned_by=r["assigned_by"],
        created_at=r["created_at"],
        cases=_slice_cases(labels, r["queue_id"], sl),
    )


def assignments(store: Store, queue_id: str) -> list[Assignment]:
    """The queue's slices given to named reviewers, oldest assignment first."""
    q = get_queue(store, queue_id)
    labels = LabelStore(store)
    return [_assignment(labels, r) for r in _current(labels, q["queue_id"])]


def assign(
    store: Store,
    queue_id: str,
    reviewers: Iterable[str],
    *,
    classes: Iterable[str] = (),
    reasons: Iterable[str] = (),
    runs: Iterable[str] = (),
    criteria: Iterable[str] = (),
    by: str = "",
    claims: Mapping[str, Any] | None = None,
) -> Assignment:
    """Give a slice of the queue to ``reviewers`` (replacing whom it was given to before; no
    reviewers takes the slice back: anyone may then be handed its cases). Whoever assigns must be
    an adjudicator or an admin now (the login's ``claims``, else the typed ``by``). A queue that
    needs N reviewers per case needs at least N assignees for a slice, or its cases could never be
    complete. Returns the new assignment (with ``reviewers`` empty when the slice was taken back)."""
    acc = acting(store.state, "adjudicator", "admin", name=by, claims=claims)
    q = get_queue(store, queue_id)
    sl = _slice(store, q, {"classes": classes, "reasons": reasons, "runs": runs, "criteria": criteria})
    names = sorted({str(r).strip() for r in reviewers if str(r).strip()})
    need = int(q["reviewers_required"])
    if names and len(names) < need:
        raise LabelError(
            f"queue {q['queue_id']} needs {need} reviewers per case: name at least {need} for a slice "
            f"(named: {', '.join(names)})",
            field="reviewer",
        )
    key = json.dumps(sl, sort_keys=True)
    labels = LabelStore(store)
    if not names and key not in {r["slice"] for r in _current(labels, q["queue_id"])}:
        raise InputError(f"nothing is assigned on that slice of queue {q['queue_id']}", field="slice")
    with labels.transaction() as con:
        aid = con.insert(
            "INSERT INTO assignments (queue_id, slice, reviewers, assigned_by, created_at) VALUES (?, ?, ?, ?, ?)",
            (q["queue_id"], key, json.dumps(names), acc.name, utcnow().isoformat()),
            "assignment_id",
        )
    row = labels.rows("SELECT * FROM assignments WHERE assignment_id = ?", (aid,))
    return _assignment(labels, row[0])


def assigned_sql(labels: LabelStore, queue_id: str, reviewer: str) -> tuple[str, list[Any]]:
    """A condition over ``queue_cases c`` keeping the cases ``reviewer`` may be handed: those in
    no assigned slice, and those in a slice assigned to them; ``""`` when the queue has no
    assignment."""
    current = _current(labels, queue_id)
    if not current:
        return "", []
    every: list[str] = []
    mine: list[str] = []
    args_every: list[Any] = []
    args_mine: list[Any] = []
    for r in current:
        where, params = filter_sql(_filters(json.loads(r["slice"])))
        every.append(f"({where})")
        args_every += params
        if reviewer in json.loads(r["reviewers"]):
            mine.append(f"({where})")
            args_mine += params
    if not mine:
        return f"NOT ({' OR '.join(every)})", args_every
    return f"(NOT ({' OR '.join(every)}) OR ({' OR '.join(mine)}))", [*args_every, *args_mine]
