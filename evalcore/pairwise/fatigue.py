"""Grader fatigue (article 001: "nobody should be asked to grade 120 pairs in one sitting").

* :func:`sitting`: where one grader stands in their current sitting of a session, from the times
  their judgments were recorded in the state directory: a sitting is a run of judgments with no
  gap of :data:`NEW_SITTING_MINUTES` or more between two of them. Past ``cap_judgments``
  judgments or ``cap_minutes`` minutes the grading page suggests a break; the grader can go on.
* :func:`drift`: per grader, the first third of their judgments against the last third, in the
  order they were recorded: the share of decided choices that picked the left answer (position
  preference) and the share agreeing with the majority of the other people on the same pair, each
  with its Wilson interval, the two thirds compared by Fisher's exact test (``scipy.stats``), and
  a sentence when either moved (p < :data:`DRIFT_P`, each test on its own: two tests per grader).

Only judgments recorded in the state (the grading page, ``evalcore pairs label``) have an order:
judgments shipped with the data (``judgments.parquet``) carry no time, so they are counted apart
(``unordered``) and are read only as "the other people" of the agreement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from evalcore.contract.results import Result
from evalcore.pairwise.grading import JudgmentStore, _check_reviewer, _people
from evalcore.pairwise.measures import Proportion, proportion
from evalcore.storage.paths import utcnow
from evalcore.storage.store import Store

#: a break is suggested after this many judgments in one sitting ...
BREAK_AFTER_JUDGMENTS = 40
#: ... or this many minutes
BREAK_AFTER_MINUTES = 45.0
#: a gap this long between two judgments starts a new sitting
NEW_SITTING_MINUTES = 15.0
#: a grader's thirds are compared from this many ordered judgments on (two in each third)
MIN_JUDGMENTS = 6
#: the level under which a third-to-third difference is called a drift
DRIFT_P = 0.05


@dataclass
class Sitting(Result):
    """One grader's current sitting in a session (:func:`sitting`)."""

    session_id: str
    reviewer: str
    judgments: int
    minutes: float
    cap_judgments: int
    cap_minutes: float
    suggest_break: bool
    message: str | None


def _minutes(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() / 60


def sitting(
    store: Store,
    session_id: str,
    reviewer: str,
    *,
    cap_judgments: int = BREAK_AFTER_JUDGMENTS,
    cap_minutes: float = BREAK_AFTER_MINUTES,
    now: str | None = None,
) -> Sitting:
    """The grader's current sitting: judgments recorded since the last gap of
    :data:`NEW_SITTING_MINUTES` (an undone judgment was still work, so it counts), the minutes
    from its first judgment to ``now``, and whether a break is suggested."""
    reviewer = _check_reviewer(reviewer)
    store.session(session_id)
    times = [j["created_at"] for j in JudgmentStore(store).history(session_id) if j["reviewer"] == reviewer]
    now = now or utcnow().isoformat()
    run: list[str] = []
    for t in times:
        if run and _minutes(run[-1], t) >= NEW_SITTING_MINUTES:
            run = []
        run.append(t)
    if run and _minutes(run[-1], now) >= NEW_SITTING_MINUTES:
        run = []  # the last sitting ended: the grader has had a break
    n, minutes = len(run), (round(_minutes(run[0], now), 1) if run else 0.0)
    tired = n >= cap_judgments or (n > 0 and minutes >= cap_minutes)
    message = None
    if tired:
        message = (
            f"You have graded {n} pairs over {minutes:.0f} minutes in this sitting. A break is suggested: people "
            "grade less consistently when tired (position preference and agreement drift late in a sitting). "
            "You can go on; a pause of 15 minutes starts a new sitting."
        )
    return Sitting(session_id, reviewer, n, minutes, cap_judgments, cap_minutes, tired, message)


@dataclass
class Third(Result):
    """One third of a grader's sitting: their left share among decided choices, and their
    agreement with the majority of the other people on the pairs where the others have one."""

    judgments: int
    left: Proportion
    with_majority: Proportion


@dataclass
class GraderDrift(Result):
    reviewer: str
    judgments: int
    first: Third
    last: Third
    left_p: float | None
    agreement_p: float | None
    drifts: bool
    caveat: str | None


@dataclass
class Drift(Result):
    """:func:`drift`: every grader with at least :data:`MIN_JUDGMENTS` ordered judgments."""

    session_id: str
    ordered: int
    unordered: int
    too_few: list[str]
    graders: list[GraderDrift]
    caveats: list[str]


def _others_majority(people: list[dict], reviewer: str) -> dict[str, str]:
    """pair -> the choice more than half of the other people made on it (none on a tie)."""
    by: dict[str, list[str]] = {}
    for j in people:
        if j["reviewer"] != reviewer and j["choice"] is not None:
            by.setdefault(j["pair_id"], []).append(j["choice"])
    out = {}
    for pid, cs in by.items():
        top = max(set(cs), key=cs.count)
        if 2 * cs.count(top) > len(cs):
            out[pid] = top
    return out


def _third(js: list[dict], majority: dict[str, str]) -> Third:
    decided = [j for j in js if j["choice"] != "same"]
    compared = [j for j in js if j["pair_id"] in majority]
    return Third(
        len(js),
        proportion(sum(j["choice"] == "left" for j in decided), len(decided)),
        proportion(sum(j["choice"] == majority[j["pair_id"]] for j in compared), len(compared)),
    )


def _fisher(a: Proportion, b: Proportion) -> float | None:
    if not a.n or not b.n:
        return None
    from scipy.stats import fisher_exact

    return float(fisher_exact([[a.k, a.n - a.k], [b.k, b.n - b.k]]).pvalue)


def _pct(p: Proportion) -> str:
    return "-" if p.share is None else f"{100 * p.share:.0f}% of {p.n}"


def _caveat(r: str, first: Third, last: Third, left_p: float | None, agree_p: float | None) -> str | None:
    moved = []
    if left_p is not None and left_p < DRIFT_P:
        moved.append(f"picked the left answer {_pct(first.left)} in their first third, {_pct(last.left)} in their last")
    if agree_p is not None and agree_p < DRIFT_P:
        moved.append(
            f"agreed with the other people's majority {_pct(first.with_majority)} in their first third, "
            f"{_pct(last.with_majority)} in their last"
        )
    if not moved:
        return None
    ps = ", ".join(f"p = {p:.3g}" for p in (left_p, agree_p) if p is not None and p < DRIFT_P)
    return (
        f"{r}'s choices drift across their judgments: they {' and '.join(moved)} (Fisher's exact test, {ps}). "
        "Late judgments in a long sitting may reflect fatigue: read this grader's figures with care and keep "
        "sittings shorter."
    )


def drift(store: Store, session_id: str) -> Drift:
    """Each grader's first third against their last third (see the module docstring)."""
    store.session(session_id)
    people = _people(store, session_id)
    state = JudgmentStore(store).current(session_id)  # in the order recorded
    graders, too_few = [], []
    for r in sorted({j["reviewer"] for j in state}):
        mine = [j for j in state if j["reviewer"] == r]
        if len(mine) < MIN_JUDGMENTS:
            too_few.append(r)
            continue
        majority, k = _others_majority(people, r), len(mine) // 3
        first, last = _third(mine[:k], majority), _third(mine[-k:], majority)
        lp, ap = _fisher(first.left, last.left), _fisher(first.with_majority, last.with_majority)
        cav = _caveat(r, first, last, lp, ap)
        graders.append(GraderDrift(r, len(mine), first, last, lp, ap, cav is not None, cav))
    return Drift(
        session_id,
        len(state),
        sum(1 for j in people if j["source"] == "shipped"),
        too_few,
        graders,
        [g.caveat for g in graders if g.caveat],
    )
