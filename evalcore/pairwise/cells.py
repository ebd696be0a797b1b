"""The pairs behind one cell of a closed session's win matrix (issue 43: "the win matrix as a
heatmap whose cells open their pairs"; ``evalcore pairs cell``, the Pairwise results page).

:func:`cell_pairs` lists the original pairs (mirrors apart: a mirror is flagged on its original) of
one arm pair of a closed, unblinded session: the item, which arm was shown left, each person's
choice as shown and as the arm it names, people's strict majority, each model grader's choice in
each order, the holdout and mirror flags and both answers' word counts as shown. Its counts are
the win matrix cell's of the same source (:func:`evalcore.pairwise.ranking.ranking_report`): the
judgments on headline pairs (original, not held out) as that source's ranking counts them.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.pairwise.blinding import word_count
from evalcore.pairwise.grading import _people, load_pairs, unblinded
from evalcore.pairwise.ranking import MAJORITY, grader_runs, people_majority
from evalcore.storage.store import Store

#: the source of the win matrix the page draws: people's strict majority per pair
PEOPLE = "people"


@dataclass
class Choice(Result):
    """One choice on a pair: who made it (a reviewer, or a grader run and the order it was shown
    in), the choice as shown (left, right, same; None for a verdict without one) and the arm it
    names (``same`` for a tie)."""

    who: str
    order: str | None
    choice: str | None
    arm: str | None


@dataclass
class CellPair(Result):
    """One original pair of the arm pair, read from the first arm's side."""

    pair_id: str
    item_id: str
    left_arm: str
    right_arm: str
    holdout: bool
    mirrored: bool
    headline: bool
    people: list[Choice]
    majority: str | None
    majority_arm: str | None
    graders: list[Choice]
    words_a: int
    words_b: int


@dataclass
class CellCounts(Result):
    """The cell's judgments of ``source`` on headline pairs: arm_a won, lost, tied."""

    judgments: int
    wins: int
    losses: int
    ties: int


@dataclass
class CellPairs(Result):
    """:func:`cell_pairs`: ``pairs cell --json``."""

    session_id: str
    arm_a: str
    arm_b: str
    source: str
    source_is: str
    simulated: bool
    counts: CellCounts
    counted: str
    pairs: list[CellPair]


def _arm_of(choice: str | None, key: dict) -> str | None:
    """The arm a choice as shown names (``same`` for a tie, None for no choice)."""
    if choice is None:
        return None
    return {"left": key["left_arm"], "right": key["right_arm"]}.get(choice, "same")


def _check(rec: dict, arm_a: str, arm_b: str) -> list[str]:
    arms: list[str] = rec["arms"]
    for flag, arm in (("--a", arm_a), ("--b", arm_b)):
        if arm not in arms:
            raise InputError(f"{arm!r} is not an arm of this session (arms: {', '.join(arms)})", field=flag)
    if arm_a == arm_b:
        raise InputError(f"a cell is two different arms: both are {arm_a!r}", field="--b")
    return arms


def _verdicts(store: Store, run_ids: list[str]) -> dict[str, list[dict]]:
    """run id -> its verdicts (pair_id, order, choice), in pair and order order."""
    return {
        rid: store.records(
            'SELECT pair_id, "order", choice FROM read_parquet(?) ORDER BY pair_id, "order"',
            [str(store.run(rid).path / "pair_verdicts.parquet")],
        )
        for rid in run_ids
    }


def cell_pairs(store: Store, session_id: str, arm_a: str, arm_b: str, *, source: str = PEOPLE) -> CellPairs:
    """The original pairs of ``arm_a`` against ``arm_b`` in a closed, unblinded session, and the
    counts of the win matrix cell (``arm_a``'s row, ``arm_b``'s column) of ``source``: ``people``
    (people's strict majority per pair: the matrix the page draws), a reviewer, or a model grader
    run (each order of each pair a judgment). Refused while the session is open, for an arm the
    session does not have, for the same arm twice and for an unknown source."""
    rec = unblinded(store, session_id)
    _check(rec, arm_a, arm_b)
    key_of = {k["pair_id"]: k for k in rec["key"]}
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    people = [j for j in _people(store, session_id) if j["pair_id"] in pairs]
    reviewers = sorted({j["reviewer"] for j in people})
    runs = grader_runs(store, session_id)
    if source != PEOPLE and source not in reviewers and source not in runs:
        raise InputError(
            f"{source!r} is neither {PEOPLE!r}, a reviewer of this session ({', '.join(reviewers) or 'none'}) "
            f"nor one of its model grader runs ({', '.join(runs) or 'none'})",
            field="--source",
        )
    verdicts = _verdicts(store, runs)
    mirrored = {p["mirror_of"] for p in pairs.values() if p["mirror_of"]}
    majority = people_majority(people)
    want = {arm_a, arm_b}
    rows: list[CellPair] = []
    for pid, p in pairs.items():
        k = key_of[pid]
        if p["mirror_of"] or {k["left_arm"], k["right_arm"]} != want:
            continue
        a_left = k["left_arm"] == arm_a
        mine = [
            Choice(v["reviewer"], None, v["choice"], _arm_of(v["choice"], k)) for v in people if v["pair_id"] == pid
        ]
        theirs = [
            Choice(rid, v["order"], v["choice"], _arm_of(v["choice"], k))
            for rid, vs in verdicts.items()
            for v in vs
            if v["pair_id"] == pid
        ]
        rows.append(
            CellPair(
                pair_id=pid,
                item_id=p["item_id"],
                left_arm=k["left_arm"],
                right_arm=k["right_arm"],
                holdout=bool(p["holdout"]),
                mirrored=pid in mirrored,
                headline=not p["holdout"],
                people=mine,
                majority=majority.get(pid),
                majority_arm=_arm_of(majority.get(pid), k),
                graders=theirs,
                words_a=word_count(p["left_text"] if a_left else p["right_text"]),
                words_b=word_count(p["right_text"] if a_left else p["left_text"]),
            )
        )
    counts, counted = _counts(rows, arm_a, arm_b, source, reviewers)
    return CellPairs(
        session_id=session_id,
        arm_a=arm_a,
        arm_b=arm_b,
        source=source,
        source_is=MAJORITY if source == PEOPLE else (f"reviewer {source}" if source in reviewers else "model grader"),
        simulated=store.session(session_id).manifest.simulated,
        counts=counts,
        counted=counted,
        pairs=rows,
    )


def _counts(rows: list[CellPair], arm_a: str, arm_b: str, source: str, reviewers: list[str]) -> tuple[CellCounts, str]:
    """The cell's counts from ``arm_a``'s side (its row against ``arm_b``'s column), as the ranking of
    ``source`` counts its judgments, and what was counted, in words."""
    if source == PEOPLE:
        chosen = [r.majority_arm for r in rows if r.headline and r.majority_arm is not None]
        what = "headline pairs (original, not held out) with a strict majority of people, one judgment each"
    elif source in reviewers:
        chosen = [c.arm for r in rows if r.headline for c in r.people if c.who == source and c.arm is not None]
        what = f"{source}'s choices on headline pairs (original, not held out)"
    else:
        chosen = [c.arm for r in rows if r.headline for c in r.graders if c.who == source and c.arm is not None]
        what = f"{source}'s verdicts with a choice on headline pairs (original, not held out), each order one judgment"
    wins, losses = chosen.count(arm_a), chosen.count(arm_b)
    return CellCounts(len(chosen), wins, losses, len(chosen) - wins - losses), what


def format_cell(r: CellPairs) -> str:
    """The cell and a table of its pairs, for ``evalcore pairs cell``."""
    c = r.counts
    head = (
        f"session {r.session_id}{' SIMULATED' if r.simulated else ''}: {r.arm_a} against {r.arm_b}, "
        f"{len(r.pairs)} original pairs; {r.source_is}: {r.arm_a} won {c.wins}, lost {c.losses}, tied {c.ties} "
        f"of {c.judgments} judgments ({r.counted})"
    )
    cols = ("pair", "item", "left", "flags", f"words {r.arm_a}/{r.arm_b}", "people (as shown)", "majority", "graders")
    rows = [
        (
            p.pair_id,
            p.item_id,
            p.left_arm,
            ",".join(f for f, on in (("holdout", p.holdout), ("mirrored", p.mirrored)) if on) or "-",
            f"{p.words_a}/{p.words_b}",
            " ".join(f"{x.who}:{x.choice or '-'}" for x in p.people) or "-",
            p.majority_arm or "-",
            " ".join(f"{x.who}/{x.order}:{x.arm or '-'}" for x in p.graders) or "-",
        )
        for p in r.pairs
    ]
    widths = [max(len(str(v)) for v in col) for col in zip(cols, *rows)]
    lines = [head, "", "  ".join(f"{h:<{w}}" for h, w in zip(cols, widths)).rstrip()]
    lines += ["  ".join(f"{v:<{w}}" for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)
