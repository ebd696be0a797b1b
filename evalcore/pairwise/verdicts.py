"""What a pairwise result says, in words, and a model grader's verdict on each pair
(docs/PAIRWISE.md, "The verdict").

* :func:`pair_verdicts`: a model grader's verdict on a pair is the choice it makes in both orders
  (in as-shown terms: ``left``, ``right`` or ``same``); when its choices differ it is
  ``inconsistent``; a pair with a verdict in one order only is ``one_order``. Read from the run's
  ``pair_verdicts.parquet`` alone (no key), so it can be used while a session is open.
* :func:`queue_inconsistent`: records a grader's inconsistent pairs as the ones people grade first
  in an open session (reason :data:`GRADER_INCONSISTENT`); a closed session is refused with what
  to do instead.
* :func:`caveats` and :func:`verdict`: the headline's caveats (identifiability of the arms as
  shown, people's and each model grader's position preference) and the verdict in words, by the
  rules of :data:`VERDICT_RULES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.pairwise.grading import JudgmentStore, load_pairs, session_status
from evalcore.storage.store import Store

if TYPE_CHECKING:  # results imports this module
    from evalcore.pairwise.measures import Proportion
    from evalcore.pairwise.results import ArmResult, Grader, LeftPreference

GRADER_INCONSISTENT = "grader_inconsistent"
PAIR_VERDICTS = ("left", "right", "same", "inconsistent", "one_order")
MIN_PAIRS = 10

VERDICT_RULES = (
    "no_result: no headline pair was graded by a person",
    f"too_few_pairs: fewer than {MIN_PAIRS} headline pairs were graded; nothing is concluded",
    "a_preferred / b_preferred: the win rate's 95% bootstrap interval lies above / below 50%",
    "no_difference: the interval contains 50% (no difference detected, which is not evidence of none)",
    "caveat identifiable: the identifiability interval of the answers as shown lies above 50% (people may "
    "have graded the system, not the answer)",
    "caveat identifiability_not_measured: the check could not be run on the answers as shown",
    "caveat people_position: people's left share's Wilson interval excludes 50%",
    "caveat grader_position: a model grader's first-position share's Wilson interval excludes 50%",
)


# --------------------------------------------------------------------------- a grader's verdict per pair


def pair_verdicts(store: Store, run_id: str) -> dict[str, str]:
    """Per pair of a grader run: the choice made in both orders (every verdict of the pair, all
    judge rounds, the same as-shown choice), else ``inconsistent``; ``one_order`` when only one
    order has a verdict. Errored verdicts (no choice) are left out."""
    e = store.run(run_id)
    path = e.path / "pair_verdicts.parquet"
    if not path.exists():
        raise NotFoundError(f"run {run_id!r} has no pair verdicts (pair_verdicts.parquet)", field="--run")
    rows = store.records(
        'SELECT pair_id, "order", choice FROM read_parquet(?) WHERE choice IS NOT NULL ORDER BY pair_id', [str(path)]
    )
    orders: dict[str, set[str]] = {}
    choices: dict[str, set[str]] = {}
    for r in rows:
        orders.setdefault(r["pair_id"], set()).add(r["order"])
        choices.setdefault(r["pair_id"], set()).add(r["choice"])
    out = {}
    for pid in sorted(orders):
        if len(choices[pid]) > 1:
            out[pid] = "inconsistent"
        elif orders[pid] != {"as_shown", "swapped"}:
            out[pid] = "one_order"
        else:
            out[pid] = next(iter(choices[pid]))
    return out


def verdict_counts(verdicts: dict[str, str], pair_ids: Sequence[str] | None = None) -> dict[str, int]:
    keep = verdicts if pair_ids is None else {p: v for p, v in verdicts.items() if p in set(pair_ids)}
    return {k: sum(v == k for v in keep.values()) for k in PAIR_VERDICTS}


def queue_inconsistent(store: Store, session_id: str, run_id: str, via: str = "cli") -> dict[str, Any]:
    """Queue the pairs a model grader run judged inconsistently (its two orders disagree) as the
    pairs people grade first in the open session ``session_id``. A mirrored pair is queued as its
    original (a pair and its mirror queued together would come one after the other). Refused
    for a run of another session, and for a closed session, with what to do instead."""
    e = store.run(run_id)
    if (e.manifest.knobs or {}).get("session_id") != session_id:
        raise InputError(f"run {run_id!r} did not grade session {session_id!r}", field="--run")
    verdicts = pair_verdicts(store, run_id)
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    bad = sorted(p for p, v in verdicts.items() if v == "inconsistent" and p in pairs)
    queue = sorted({pairs[p]["mirror_of"] or p for p in bad})
    if session_status(store, session_id).status != "open":
        raise InputError(
            f"session {session_id!r} is closed, so {len(queue)} pair(s) the grader judged inconsistently cannot be "
            "queued for people in it: their ids are in `evalcore pairs report --session "
            f"{session_id} --json` (graders, inconsistent_pairs); to have people grade them, make a new session "
            "over the same arms (`evalcore pairs make`), grade it with the model, and queue that run",
            field="--session",
        )
    added = JudgmentStore(store).add_first(session_id, queue, GRADER_INCONSISTENT, run_id, via)
    return {
        "session_id": session_id,
        "run_id": run_id,
        "reason": GRADER_INCONSISTENT,
        "inconsistent_pairs": len(bad),
        "queued": len(added),
        "already_queued": len(queue) - len(added),
        "first_in_session": len(JudgmentStore(store).first(session_id)),
        "pair_ids": queue,
    }


# --------------------------------------------------------------------------- the headline's caveats and verdict


def _excludes_half(interval: Sequence[float | None] | None) -> bool:
    if not interval or any(x is None for x in interval):
        return False
    lo, hi = interval
    return not (lo <= 0.5 <= hi)  # type: ignore[operator]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _iv(x: Sequence[float | None] | None) -> str:
    return "-" if not x else f"[{100 * x[0]:.0f}-{100 * x[1]:.0f}%]"  # type: ignore[operator]


@dataclass
class CaveatIdentifiability(Result):
    """The identifiability check of the answers as shown (reason ``not measured`` without one)."""

    accuracy: float | None
    interval: list[float] | None
    p_value: float | None
    identifiable: bool | None
    leaking_feature: str | None
    reason: str | None


@dataclass
class CaveatGrader(Result):
    """A model grader's first-position share (Wilson interval) and its pair verdicts' counts."""

    run_id: str
    first_position_share: float | None
    interval: list[float] | None
    n: int
    pair_verdicts: dict[str, int]


@dataclass
class Caveats(Result):
    """:func:`caveats`: what must be read beside the headline."""

    identifiability: CaveatIdentifiability
    people_left_share: Proportion
    graders: list[CaveatGrader]


@dataclass
class Verdict(Result):
    """:func:`verdict`: the headline in words."""

    code: str
    caveats: list[str]
    text: str


def caveats(identifiability: dict | None, left_preference: LeftPreference, graders: Sequence[Grader]) -> Caveats:
    """What must be read beside the headline: identifiability of the answers as shown (accuracy,
    interval, leaking feature), people's left share (Wilson interval), each model grader's
    first-position share and its pair verdicts' counts."""
    after = (identifiability or {}).get("after") or {}
    return Caveats(
        CaveatIdentifiability(
            after.get("accuracy"),
            after.get("interval"),
            after.get("p_value"),
            after.get("identifiable"),
            after.get("leaking_feature"),
            after.get("reason") if after else "not measured",
        ),
        left_preference.all,
        [
            CaveatGrader(
                g.run_id, g.first_position.share, g.first_position.interval, g.first_position.n, g.pair_verdicts.counts
            )
            for g in graders
        ],
    )


def verdict(result: ArmResult, cav: Caveats, arms: Sequence[str]) -> Verdict:
    """The headline in words, by :data:`VERDICT_RULES`: ``code`` (``a_preferred``, ``b_preferred``,
    ``no_difference``, ``too_few_pairs``, ``no_result``), the ``caveats`` that apply (codes) and
    ``text``, one sentence with the caveats after it."""
    a, b = arms
    n, wr, ci = result.pairs, result.win_rate, result.interval
    if not n or wr is None:
        code, main = "no_result", "No result: no headline pair was graded by a person"
    elif n < MIN_PAIRS:
        code, main = "too_few_pairs", f"Too few pairs to say ({n} graded, fewer than {MIN_PAIRS})"
    elif _excludes_half(ci) and wr > 0.5:
        code, main = "a_preferred", f"{a} preferred ({a} won {_pct(wr)} {_iv(ci)} of {n} pairs)"
    elif _excludes_half(ci):
        code, main = "b_preferred", f"{b} preferred ({a} won {_pct(wr)} {_iv(ci)} of {n} pairs)"
    else:
        code, main = "no_difference", f"No difference detected ({a} won {_pct(wr)} {_iv(ci)} of {n} pairs)"
    notes: list[tuple[str, str]] = []
    idf = cav.identifiability
    if idf.accuracy is None:
        notes.append(("identifiability_not_measured", "whether the arms could be told apart was not measured"))
    elif idf.identifiable:
        leak = f", mostly by {idf.leaking_feature}" if idf.leaking_feature else ""
        notes.append(
            (
                "identifiable",
                f"the arms were identifiable {_pct(idf.accuracy)} {_iv(idf.interval)} of the time{leak}: "
                "people may have graded the system, not the answer",
            )
        )
    lp = cav.people_left_share
    if lp.n and _excludes_half(lp.interval):
        notes.append(
            (
                "people_position",
                f"people chose the left answer {_pct(lp.share)} {_iv(lp.interval)} of the time "
                "(the balanced sides keep it out of the win rate)",
            )
        )
    for g in cav.graders:
        if g.n and _excludes_half(g.interval):
            notes.append(
                (
                    "grader_position",
                    f"model grader {g.run_id} chose the answer shown first {_pct(g.first_position_share)} "
                    f"{_iv(g.interval)} of the time",
                )
            )
    joiner = ", but " if code in ("a_preferred", "b_preferred") else "; note: "
    text = main + (joiner + "; ".join(t for _, t in notes) if notes and code != "no_result" else "") + "."
    return Verdict(code, [c for c, _ in notes], text)
