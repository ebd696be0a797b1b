"""The report of a closed session of more than two arms (issue 43; docs/PAIRWISE.md, "Reading the
report of many arms"): a ranking of the arms for people's majority, each person and each model
grader run, from :mod:`evalcore.stats.bradleyterry` and :mod:`evalcore.stats.lengthcontrol`.

* :func:`ranking_report` is what :func:`evalcore.pairwise.results.report` returns for a session
  whose key names more than two arms (the two-arm report is unchanged); :func:`format_ranking` is
  its text for ``evalcore pairs report``.
* A judgment is a choice on a headline pair (original, not held out) made into arm i's score
  (1, 0.5 for same, 0), arm i being the pair's arm that comes first in the session's arms, with
  the pair's item as the bootstrap's unit, the shown texts' word counts and the side arm i was
  shown on (first: left as people see it; for a model grader the order of its call).
* :func:`people_majority`, :func:`grader_runs` and :func:`polluted` are shared with the two-arm report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.pairwise.blinding import word_count
from evalcore.pairwise.grading import _people, load_pairs
from evalcore.pairwise.measures import Proportion, proportion
from evalcore.pairwise.sessions import CHOICES
from evalcore.stats.agreement import strict_majority
from evalcore.stats.bradleyterry import BTResult, bradley_terry
from evalcore.stats.lengthcontrol import LengthControlled, length_controlled
from evalcore.storage.store import Store

#: the intervals' level and the bootstrap's replicates of every ranking
LEVEL = 0.95
N_BOOT = 1000
MAJORITY = "people's majority"


def people_majority(people: list[dict]) -> dict[str, str]:
    """People's strict-majority choice per pair (pairs without one left out)."""
    by: dict[str, list[int]] = {}
    for j in people:
        by.setdefault(j["pair_id"], []).append(CHOICES.index(j["choice"]))
    return {p: CHOICES[m] for p, v in by.items() if (m := strict_majority(v)) is not None}


def grader_runs(store: Store, session_id: str) -> list[str]:
    """The model grader runs of a session: runs whose knobs name it and that have pair verdicts."""
    out = []
    for rid in store.ids("run"):
        e = store.get("run", rid)
        if (e.manifest.knobs or {}).get("session_id") == session_id and (e.path / "pair_verdicts.parquet").exists():
            out.append(rid)
    return out


def polluted(status: str, errored: int, verdicts: int) -> str:
    """`` (POLLUTED run: 8 of 400 verdicts have no choice)`` for a run that is not complete."""
    if status == "complete":
        return ""
    return f" ({status.upper()} run: {errored} of {verdicts} verdicts have no choice)"


# --------------------------------------------------------------------------- the figures


@dataclass
class ArmRank(Result):
    """One arm's Bradley-Terry strength (the arms' strengths sum to 0) with its bootstrap-over-items
    interval and the sandwich's (items as clusters), P(it is best), and the same on the Elo scale."""

    arm: str
    strength: float
    interval: list[float]
    sandwich_interval: list[float]
    p_best: float
    elo: float
    judgments: int


@dataclass
class WinCell(Result):
    """Judgments of ``arm`` against ``against``: won, lost, tied."""

    arm: str
    against: str
    wins: int
    losses: int
    ties: int


@dataclass
class ArmRate(Result):
    """An arm's mean win rate against the other arms, raw and with length held equal."""

    arm: str
    raw_rate: float
    raw_interval: list[float]
    length_controlled_rate: float
    length_controlled_interval: list[float]


@dataclass
class Coefficient(Result):
    """A regression coefficient (logit scale) with its interval and p-value."""

    value: float
    interval: list[float]
    p_value: float


@dataclass
class LengthEffect(Result):
    """:func:`evalcore.stats.lengthcontrol.length_controlled` on one ranking's judgments (word
    counts of the shown texts): the rates per arm, the length coefficient (> 0: the longer answer
    preferred), the position coefficient (> 0: the answer shown first preferred), the share of
    the spread between arms length explains, and the caveats in words."""

    rates: list[ArmRate]
    length: Coefficient
    position: Coefficient | None
    length_share: float
    caveat: str | None
    position_caveat: str | None


@dataclass
class Ranking(Result):
    """The arms ranked from one source's judgments (``reason`` says why a figure is missing)."""

    judgments: int
    items: int
    model: str | None
    tie_log_nu: float | None
    ridge: float | None
    intervals: str | None
    level: float
    arms: list[ArmRank]
    win_matrix: list[WinCell]
    position: Proportion
    position_is: str
    length: LengthEffect | None
    length_reason: str | None
    reason: str | None


@dataclass
class GraderRanking(Result):
    """A model grader run's ranking (every verdict on a headline pair, both orders)."""

    run_id: str
    judge_model: str
    status: str
    verdicts: int
    errored_verdicts: int
    ranking: Ranking


@dataclass
class ManyPairCounts(Result):
    total: int
    original: int
    headline: int
    holdout: int
    mirrored: int
    with_majority: int


@dataclass
class RankingReport(Result):
    """:func:`ranking_report`: ``pairs report --json`` of a session of more than two arms."""

    session_id: str
    closed_at: str | None
    arms: list[str]
    sources: dict[str, str] | None
    settings: dict[str, Any]
    suite_id: str | None
    simulated: bool
    pairs: ManyPairCounts
    reviewers: list[str]
    judgments: int
    people: Ranking
    by_reviewer: dict[str, Ranking]
    graders: list[GraderRanking]
    caveats: list[str]
    identifiability: dict[str, Any] | None
    seed: int


# --------------------------------------------------------------------------- judgments


def _rows(choices: list[tuple[str, str, bool]], pairs: dict, key_of: dict, arms: list[str]) -> dict[str, np.ndarray]:
    """(pair id, choice as shown, left shown first) -> the arrays the statistics take."""
    rank = {a: x for x, a in enumerate(arms)}
    cols: dict[str, list] = {c: [] for c in ("i", "j", "y", "item", "len_i", "len_j", "first")}
    for pid, choice, left_first in choices:
        k, p = key_of[pid], pairs[pid]
        left_is_i = rank[k["left_arm"]] < rank[k["right_arm"]]
        a, b = (k["left_arm"], k["right_arm"]) if left_is_i else (k["right_arm"], k["left_arm"])
        ta, tb = (p["left_text"], p["right_text"]) if left_is_i else (p["right_text"], p["left_text"])
        won = {"left": k["left_arm"], "right": k["right_arm"]}.get(choice)
        for c, v in zip(
            cols,
            (rank[a], rank[b], 0.5 if won is None else float(won == a), p["item_id"], word_count(ta),
             word_count(tb), int(left_is_i == left_first)),
        ):  # fmt: skip
            cols[c].append(v)
    return {c: np.asarray(v) for c, v in cols.items()}


def _ranking(
    choices: list[tuple[str, str, bool]], pairs: dict, key_of: dict, arms: list[str], seed: int, position_is: str
) -> Ranking:
    """The ranking of one source's choices: strengths, intervals, P(best), Elo, the win matrix,
    the position share (decided choices of the answer shown first) and the length effect."""
    d = _rows(choices, pairs, key_of, arms)
    first_chosen = sum(1 for (_, c, lf) in choices if c != "same" and (c == "left") == lf)
    position = proportion(first_chosen, sum(1 for (_, c, _) in choices if c != "same"))
    n, items = len(choices), len(set(d["item"].tolist()))
    empty = Ranking(n, items, None, None, None, None, LEVEL, [], [], position, position_is, None, None, None)
    try:
        bt = bradley_terry(d["i"].astype(np.int64), d["j"].astype(np.int64), d["y"], k=len(arms), item=d["item"],
                           level=LEVEL, n_boot=N_BOOT, seed=seed)  # fmt: skip
    except InputError as e:
        empty.reason = str(e.args[0]) if e.args else str(e)
        return empty
    length, why = _length(d, arms)
    return Ranking(
        judgments=n,
        items=items,
        model="Bradley-Terry, ties by Davidson's model" if bt.fit.theta is not None else "Bradley-Terry (no ties)",
        tie_log_nu=bt.fit.theta,
        ridge=bt.fit.ridge,
        intervals=f"percentile bootstrap over items ({N_BOOT} replicates, seed {seed}); "
        "sandwich_interval: normal, cluster-robust with items as clusters",
        level=LEVEL,
        arms=_arm_ranks(bt, arms, d),
        win_matrix=_win_cells(bt, arms),
        position=position,
        position_is=position_is,
        length=length,
        length_reason=why,
        reason=None,
    )


def _arm_ranks(bt: BTResult, arms: list[str], d: dict[str, np.ndarray]) -> list[ArmRank]:
    out = [
        ArmRank(
            arm=a,
            strength=bt.fit.strengths[x],
            interval=[bt.lo[x], bt.hi[x]],
            sandwich_interval=[bt.sandwich_lo[x], bt.sandwich_hi[x]],
            p_best=bt.p_best[x],
            elo=bt.elo[x],
            judgments=int(((d["i"] == x) | (d["j"] == x)).sum()),
        )
        for x, a in enumerate(arms)
    ]
    return sorted(out, key=lambda r: (-r.strength, r.arm))


def _win_cells(bt: BTResult, arms: list[str]) -> list[WinCell]:
    w = bt.wins
    return [
        WinCell(a, b, int(round(w.wins[x, z])), int(round(w.losses[x, z])), int(round(w.ties[x, z])))
        for x, a in enumerate(arms)
        for z, b in enumerate(arms)
        if x != z
    ]


def _length(d: dict[str, np.ndarray], arms: list[str]) -> tuple[LengthEffect | None, str | None]:
    """The length effect, or None and why it cannot be estimated on these judgments."""
    try:
        lc = length_controlled(
            d["i"].astype(np.int64), d["j"].astype(np.int64), d["y"], d["len_i"], d["len_j"], k=len(arms),
            first=d["first"], item=d["item"], level=LEVEL, names=arms,
        )  # fmt: skip
    except InputError as e:
        return None, str(e.args[0]) if e.args else str(e)
    except (ValueError, np.linalg.LinAlgError) as e:  # statsmodels on separated or collinear data
        return None, f"the length regression could not be fitted: {e}"
    coefs = [lc.length] + ([] if lc.position is None else [lc.position])
    numbers = [lc.raw_rate, lc.raw_lo, lc.raw_hi, lc.lc_rate, lc.lc_lo, lc.lc_hi, [lc.length_share]]
    numbers += [[c.value, c.lo, c.hi, c.p_value] for c in coefs]
    if not all(np.isfinite(np.asarray(x, dtype=float)).all() for x in numbers):
        # few judgments, each arm's answers of one length: no finite estimate (a NaN is not a figure)
        return (
            None,
            "the length regression gave no finite estimate on these judgments (too few, or length tied to the arm)",
        )
    return _length_effect(lc, arms), None


def _length_effect(lc: LengthControlled, arms: list[str]) -> LengthEffect:
    def coef(c) -> Coefficient:
        return Coefficient(c.value, [c.lo, c.hi], c.p_value)

    rates = [
        ArmRate(a, lc.raw_rate[x], [lc.raw_lo[x], lc.raw_hi[x]], lc.lc_rate[x], [lc.lc_lo[x], lc.lc_hi[x]])
        for x, a in enumerate(arms)
    ]
    return LengthEffect(
        rates=rates,
        length=coef(lc.length),
        position=None if lc.position is None else coef(lc.position),
        length_share=lc.length_share,
        caveat=lc.caveat,
        position_caveat=lc.position_caveat,
    )


# --------------------------------------------------------------------------- the report


def ranking_report(store: Store, session_id: str, rec: dict, *, seed: int = 0) -> RankingReport:
    """Every ranking of a closed, unblinded session of more than two arms (``rec``: its unblinded
    record, read by the caller)."""
    arms: list[str] = rec["arms"]
    key_of = {k["pair_id"]: k for k in rec["key"]}
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    m = store.session(session_id).manifest
    originals = [p for p in pairs.values() if not p["mirror_of"]]
    headline = {p["pair_id"] for p in originals if not p["holdout"]}
    people = [j for j in _people(store, session_id) if j["pair_id"] in pairs]
    reviewers = sorted({j["reviewer"] for j in people})
    majority = {p: c for p, c in people_majority(people).items() if p in headline}
    shown = "the answer on the left (shown first)"

    def rank(choices: list[tuple[str, str, bool]], what: str) -> Ranking:
        return _ranking(sorted(choices), pairs, key_of, arms, seed, what)

    mine = [j for j in people if j["pair_id"] in headline and j["choice"] is not None]
    by_reviewer = {
        r: rank([(j["pair_id"], j["choice"], True) for j in mine if j["reviewer"] == r], shown) for r in reviewers
    }
    graders = [_grader(store, rid, headline, rank) for rid in grader_runs(store, session_id)]
    majority_rank = rank([(p, c, True) for p, c in majority.items()], shown)
    caveats = [
        f"{who}: {c}"
        for who, r in [(MAJORITY, majority_rank), *by_reviewer.items(), *((g.run_id, g.ranking) for g in graders)]
        if r.length is not None
        for c in (r.length.caveat, r.length.position_caveat)
        if c
    ]
    return RankingReport(
        session_id=session_id,
        closed_at=rec.get("closed_at"),
        arms=arms,
        sources=rec.get("sources"),
        settings=m.settings.model_dump(mode="json"),
        suite_id=m.suite_id,
        simulated=m.simulated,
        pairs=ManyPairCounts(
            len(pairs),
            len(originals),
            len(headline),
            len(originals) - len(headline),
            len(pairs) - len(originals),
            len(majority),
        ),
        reviewers=reviewers,
        judgments=len(people),
        people=majority_rank,
        by_reviewer=by_reviewer,
        graders=graders,
        caveats=caveats,
        identifiability=rec.get("identifiability"),
        seed=seed,
    )


def _grader(store: Store, run_id: str, headline: set[str], rank) -> GraderRanking:
    """A model grader's ranking over its verdicts on the headline pairs, both orders (in the
    swapped order the right answer was shown first); verdicts without a choice are left out."""
    e = store.run(run_id)
    pv = store.records(
        'SELECT pair_id, "order", choice FROM read_parquet(?) ORDER BY pair_id, "order"',
        [str(e.path / "pair_verdicts.parquet")],
    )
    pv = [r for r in pv if r["pair_id"] in headline]
    ok = [(r["pair_id"], r["choice"], r["order"] == "as_shown") for r in pv if r["choice"] is not None]
    return GraderRanking(
        run_id=run_id,
        judge_model=e.manifest.judge_model,
        status=e.manifest.status,
        verdicts=len(pv),
        errored_verdicts=len(pv) - len(ok),
        ranking=rank(ok, "the answer shown first"),
    )


# --------------------------------------------------------------------------- text


def _iv(x: list[float], scale: float = 1.0, fmt: str = ".2f") -> str:
    return f"{x[0] * scale:{fmt}} to {x[1] * scale:{fmt}}"


def _ranking_lines(who: str, r: Ranking) -> list[str]:
    head = f"{who}: {r.judgments} judgments on {r.items} items"
    if r.reason:
        return [f"{head}: no ranking ({r.reason})"]
    lines = [
        f"{head}; {r.model}; {r.level:.0%} intervals: {r.intervals}",
        f"  {'arm':<24} {'strength':>8}  {'interval':<16} {'P(best)':>7} {'Elo':>6}",
        *(f"  {a.arm:<24} {a.strength:>8.3f}  {_iv(a.interval):<16} {a.p_best:>7.1%} {a.elo:>6.0f}" for a in r.arms),
    ]
    p = r.position
    if p.n:
        lines.append(f"  chose {r.position_is}: {p.share:.1%} ({_iv(p.interval or [0, 0], 100, '.1f')}%) of {p.n}")
    if r.length is not None:
        le = r.length
        lines.append(
            f"  length coefficient {le.length.value:.2f} ({_iv(le.length.interval)}); length explains "
            f"{le.length_share:.0%} of the spread; length-controlled win rates: "
            + ", ".join(f"{x.arm} {x.length_controlled_rate:.1%} (raw {x.raw_rate:.1%})" for x in le.rates)
        )
        lines += [f"  {c}" for c in (le.caveat, le.position_caveat) if c]
    else:
        lines.append(f"  length effect: not estimated ({r.length_reason})")
    return lines


def format_ranking(r: RankingReport) -> str:
    """The report of many arms as text for the command line."""
    pc = r.pairs
    lines = [
        f"session {r.session_id}: {len(r.arms)} arms ({', '.join(r.arms)}), closed {r.closed_at}"
        + (" SIMULATED" if r.simulated else ""),
        f"pairs: {pc.headline} in the headline ({pc.with_majority} with a strict majority of people), "
        f"{pc.holdout} holdout, {pc.mirrored} mirrored; {r.judgments} judgments by {len(r.reviewers)} people",
        "",
        *_ranking_lines(MAJORITY, r.people),
    ]
    for rev, x in r.by_reviewer.items():
        lines += ["", *_ranking_lines(f"reviewer {rev}", x)]
    for g in r.graders:
        note = polluted(g.status, g.errored_verdicts, g.verdicts)
        lines += ["", *_ranking_lines(f"model grader {g.run_id} ({g.judge_model}){note}", g.ranking)]
    lines += ["", "wins / losses / ties of people's majority (row against column):"]
    lines += _matrix_lines(r.people, r.arms)
    return "\n".join(lines)


def _matrix_lines(r: Ranking, arms: list[str]) -> list[str]:
    cell = {(c.arm, c.against): f"{c.wins}/{c.losses}/{c.ties}" for c in r.win_matrix}
    width = max(10, *(len(a) for a in arms))
    out = [" " * width + "".join(f" {a[:width]:>{width}}" for a in arms)]
    for a in arms:
        out.append(f"{a:<{width}}" + "".join(f" {cell.get((a, b), '-'):>{width}}" for b in arms))
    return out
