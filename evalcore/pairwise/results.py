"""The report of a closed pairwise session (docs/PAIRWISE.md): win rates with paired intervals,
people's and model graders' position consistency and agreement, identifiability of the arms.

* :func:`report` is every figure of a closed, unblinded session (refused while it is open: the
  unblinded record comes from :mod:`evalcore.pairwise.grading`); :func:`format_report` is the
  report as text for ``evalcore pairs report``.
* The statistics (win rate, kappa, alpha, proportions) are :mod:`evalcore.pairwise.measures`';
  identifiability is :mod:`evalcore.pairwise.leakage`'s check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from evalcore.contract.results import OMIT, Result
from evalcore.pairwise import leakage as blinding
from evalcore.pairwise.grading import JudgmentStore, _people, load_pairs
from evalcore.pairwise.measures import (
    Alpha,
    Kappa,
    Proportion,
    SignTest,
    binomial_p,
    cohen_kappa,
    krippendorff_alpha_nominal,
    proportion,
    win_stats,
)
from evalcore.pairwise.ranking import RankingReport, grader_runs, people_majority, polluted
from evalcore.pairwise.rankstore import checked_record, ranking
from evalcore.pairwise.sessions import CHOICES
from evalcore.pairwise.verdicts import (
    GRADER_INCONSISTENT,
    Caveats,
    Verdict,
    caveats,
    pair_verdicts,
    verdict,
    verdict_counts,
)
from evalcore.stats.majority import MISSES, majority_accuracy
from evalcore.storage.files import Entry
from evalcore.storage.store import Store


@dataclass
class ReviewersKappa(Result):
    """Two reviewers' :class:`Kappa` on the original pairs both graded."""

    a: str
    b: str
    kappa: float | None
    n: int
    agreement: float | None
    reason: str | None


# --------------------------------------------------------------------------- report


_SWAP = {"left": "right", "right": "left", "same": "same"}


@dataclass
class Tally(Result):
    """An arm's wins, losses and ties over some judgments."""

    wins: int = 0
    losses: int = 0
    ties: int = 0


@dataclass
class ArmResult(Result):
    """People's or a grader's result of the first arm over the second on some pairs: the judgments'
    tally per arm, then :class:`WinStats` over the pairs."""

    judgments: int
    counts: dict[str, Tally]
    arm: str
    over: str
    pairs: int
    win_rate: float | None
    interval: list[float | None] | None
    level: float = OMIT
    sign_test: SignTest | None = None
    reason: str | None = None


@dataclass
class OrderFlips(Result):
    """A grader's pairs (and judge rounds) whose two orders disagree; reversals: left in one, right in the other."""

    compared: int
    flips: int
    reversals: int
    share: float | None
    reversal_share: float | None


@dataclass
class OrderAccuracy(Result):
    """A grader's verdicts in one order, its ties, and its accuracy against people's majority over
    every pair one decides (judge round 1; ``unparseable``: pairs without its verdict, counted as
    misses: :func:`evalcore.stats.majority.majority_accuracy`, as ``agreement --session``)."""

    verdicts: int
    ties: int
    vs_people: Proportion
    unparseable: int


@dataclass
class PositionFlips(Result):
    """A grader's flips by direction."""

    compared: int
    towards_first_shown: int
    towards_second_shown: int
    to_or_from_a_tie: int


@dataclass
class Position(Result):
    """:func:`_position`: a model grader's position bias in one place."""

    orders: dict[str, OrderAccuracy]
    mean_accuracy_over_orders: float | None
    agreement_between_orders: Proportion
    flips: PositionFlips


@dataclass
class GraderVerdicts(Result):
    """A grader's verdict per pair counted (all pairs, headline pairs), and the result on its consistent ones."""

    counts: dict[str, int]
    headline_counts: dict[str, int]
    inconsistent_pairs: list[str]
    queued_for_people: int
    consistent_result: ArmResult


@dataclass
class GraderCost(Result):
    """A grader run's calls, cost and tokens, and its cost per pair judged."""

    calls: int
    cost_usd: float | None
    unpriced_calls: int
    tokens_in: int
    tokens_out: int
    cost_per_pair_usd: float | None


@dataclass
class Grader(Result):
    """A model grader run of the session, in the report."""

    run_id: str
    judge_model: str
    status: str
    verdicts: int
    errored_verdicts: int
    pairs: int
    flips: OrderFlips
    first_position: Proportion
    position: Position
    pair_verdicts: GraderVerdicts
    averaged_over_orders: ArmResult
    as_shown_only: ArmResult
    kappa_vs_people: dict[str, Kappa]
    kappa_vs_majority: Kappa
    cost: GraderCost


@dataclass
class PairCounts(Result):
    """The session's pairs: all, originals, headline and holdout originals, mirrors."""

    total: int
    original: int
    headline: int
    holdout: int
    mirrored: int


@dataclass
class LeftPreference(Result):
    """People's share of decided judgments that chose the left answer, in all and per reviewer."""

    all: Proportion
    by_reviewer: dict[str, Proportion]


@dataclass
class Consistency(Result):
    """Mirrored pairs graded both times, and how many got the swapped choice."""

    consistent: int
    n: int
    share: float | None


@dataclass
class MirrorConsistency(Result):
    """:func:`_mirror_consistency`: in all and per reviewer."""

    mirrored_pairs: int
    all: Consistency
    by_reviewer: dict[str, Consistency]


@dataclass
class PeopleAgreement(Result):
    """Every two reviewers' kappa and Krippendorff's alpha, on the original pairs."""

    pairwise: list[ReviewersKappa]
    krippendorff_alpha: Alpha


@dataclass
class Probe(Result):
    """A reviewer's identification probe: how often the side they called X was the first arm."""

    answered: int
    first_arm_share: float | None
    consistency: float | None
    p_value: float | None
    unsure: int


@dataclass
class Timing(Result):
    """A reviewer's judgments and median seconds per judgment."""

    judgments: int
    median_seconds: float | None


@dataclass
class Report(Result):
    """:func:`report`: what ``evalcore pairs report --json`` prints and the Pairwise results page shows."""

    session_id: str
    closed_at: str | None
    arms: list[str]
    sources: dict[str, str] | None
    settings: dict[str, Any]
    suite_id: str | None
    simulated: bool
    pairs: PairCounts
    reviewers: list[str]
    judgments: int
    result: ArmResult
    caveats: Caveats
    verdict: Verdict
    holdout: ArmResult
    by_class: dict[str, ArmResult]
    left_preference: LeftPreference
    mirror_consistency: MirrorConsistency
    agreement: PeopleAgreement
    probe: dict[str, Probe]
    timing: dict[str, Timing]
    identifiability: dict[str, Any] | None
    made: dict[str, Any] | None
    graders: list[Grader]
    seed: int


def _arm_score(choice: str, key: dict, arm: str) -> float:
    """1 if ``arm`` won under this as-shown choice, 0 if it lost, 0.5 for same."""
    if choice == "same":
        return 0.5
    winner = key["left_arm"] if choice == "left" else key["right_arm"]
    return 1.0 if winner == arm else 0.0


def _wlt(judgments: list[dict], key_of: dict, arms: list[str]) -> dict[str, Tally]:
    out = {a: Tally() for a in arms}
    for j in judgments:
        s = _arm_score(j["choice"], key_of[j["pair_id"]], arms[0])
        if s == 0.5:
            for a in arms:
                out[a].ties += 1
        else:
            w, l_ = (arms[0], arms[1]) if s == 1 else (arms[1], arms[0])
            out[w].wins += 1
            out[l_].losses += 1
    return out


def _result(judgments: list[dict], pair_ids: list[str], key_of: dict, arms: list[str], seed: int) -> ArmResult:
    per_pair: dict[str, list[float]] = {}
    mine = [j for j in judgments if j["pair_id"] in set(pair_ids)]
    for j in mine:
        per_pair.setdefault(j["pair_id"], []).append(_arm_score(j["choice"], key_of[j["pair_id"]], arms[0]))
    scores = [float(np.mean(v)) for _, v in sorted(per_pair.items())]
    return ArmResult(len(mine), _wlt(mine, key_of, arms), arms[0], arms[1], **vars(win_stats(scores, seed=seed)))


#: people's or a grader's result over some pairs: :func:`_result` of (judgments, pair ids) on a session
_Result = Callable[[list[dict], list[str]], ArmResult]


def _grader(store: Store, run_id: str, pairs: dict, people: list[dict], headline: list[str], res: _Result) -> Grader:
    e = store.run(run_id)
    pv = store.records(
        'SELECT v.pair_id, v."order", v.choice, c.judge_round FROM read_parquet(?) v '
        'LEFT JOIN read_parquet(?) c ON v.call_id = c.call_id ORDER BY v.pair_id, v."order"',
        [str(e.path / "pair_verdicts.parquet"), str(e.path / "calls.parquet")],
    )
    pv = [r for r in pv if r["pair_id"] in pairs]
    ok = [r for r in pv if r["choice"] is not None]
    # flips: the two orders of one pair (and judge round) disagree, in as-shown terms
    by: dict[tuple[str, int], dict[str, str]] = {}
    for r in ok:
        by.setdefault((r["pair_id"], r["judge_round"] or 1), {})[r["order"]] = r["choice"]
    both = [v for v in by.values() if "as_shown" in v and "swapped" in v]
    flips = sum(v["as_shown"] != v["swapped"] for v in both)
    reversals = sum({v["as_shown"], v["swapped"]} == {"left", "right"} for v in both)
    decided = [r for r in ok if r["choice"] != "same"]
    first = sum((r["order"] == "as_shown") == (r["choice"] == "left") for r in decided)
    # the result averaged over both orders (and rounds): per pair, the mean of its verdicts
    per_pair: dict[str, list[float]] = {}
    for r in ok:
        per_pair.setdefault(r["pair_id"], []).append({"left": 1.0, "same": 0.5, "right": 0.0}[r["choice"]])
    avg_choice = {
        p: ("left" if np.mean(v) > 0.5 else "right" if np.mean(v) < 0.5 else "same") for p, v in per_pair.items()
    }
    as_shown_choice = {
        r["pair_id"]: r["choice"] for r in ok if r["order"] == "as_shown" and (r["judge_round"] or 1) == 1
    }
    graded_headline = [p for p in headline if p in per_pair]
    averaged = res([{"pair_id": p, "choice": avg_choice[p]} for p in graded_headline], graded_headline)
    shown_only = [p for p in headline if p in as_shown_choice]
    first_only = res([{"pair_id": p, "choice": as_shown_choice[p]} for p in shown_only], shown_only)
    majority = people_majority(people)
    kappas, kappa_majority = _against_people(avg_choice, people, majority)
    return Grader(
        run_id=run_id,
        judge_model=e.manifest.judge_model,
        status=e.manifest.status,
        verdicts=len(pv),
        errored_verdicts=len(pv) - len(ok),
        pairs=len(per_pair),
        flips=OrderFlips(
            len(both), flips, reversals, flips / len(both) if both else None, reversals / len(both) if both else None
        ),
        first_position=proportion(first, len(decided)),
        position=_position(by, both, pv, majority),
        pair_verdicts=_grader_verdicts(store, e, pairs, headline, res),
        averaged_over_orders=averaged,
        as_shown_only=first_only,
        kappa_vs_people=kappas,
        kappa_vs_majority=kappa_majority,
        cost=_grader_cost(store, e, len(per_pair)),
    )


def _against_people(
    avg_choice: dict[str, str], people: list[dict], majority: dict[str, str]
) -> tuple[dict[str, Kappa], Kappa]:
    """A grader's averaged choice against each person's (kappa per reviewer) and people's strict
    majority, on the pairs both have."""
    kappas = {}
    for rev in sorted({j["reviewer"] for j in people}):
        js = [j for j in people if j["reviewer"] == rev and j["pair_id"] in avg_choice]
        kappas[rev] = cohen_kappa([avg_choice[j["pair_id"]] for j in js], [j["choice"] for j in js])
    mp = sorted(p for p in majority if p in avg_choice)
    return kappas, cohen_kappa([avg_choice[p] for p in mp], [majority[p] for p in mp])


def _grader_verdicts(store: Store, e: Entry, pairs: dict, headline: list[str], res: _Result) -> GraderVerdicts:
    """The grader's verdict per pair: the choice made in both orders, else inconsistent."""
    pv_of = {p: v for p, v in pair_verdicts(store, e.id).items() if p in pairs}
    consistent = [p for p in headline if pv_of.get(p) in CHOICES]
    queued = [
        f["pair_id"]
        for f in JudgmentStore(store).first(str((e.manifest.knobs or {}).get("session_id")))
        if f["source"] == e.id and f["reason"] == GRADER_INCONSISTENT
    ]
    return GraderVerdicts(
        verdict_counts(pv_of),
        verdict_counts(pv_of, headline),
        sorted(p for p, v in pv_of.items() if v == "inconsistent"),
        len(queued),
        res([{"pair_id": p, "choice": pv_of[p]} for p in consistent], consistent),
    )


def _grader_cost(store: Store, e: Entry, n_pairs: int) -> GraderCost:
    """The grader run's calls, cost and tokens, and its cost per pair judged."""
    calls = store.records(
        "SELECT count(*) AS calls, sum(cost_usd) AS cost, count(cost_usd) AS priced, "
        "sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out FROM read_parquet(?)",
        [str(e.path / "calls.parquet")],
    )[0]
    n_calls = int(calls["calls"] or 0)
    cost = None if calls["priced"] == 0 else float(calls["cost"])
    return GraderCost(
        n_calls,
        cost,
        n_calls - int(calls["priced"] or 0),
        int(calls["tokens_in"] or 0),
        int(calls["tokens_out"] or 0),
        (cost / n_pairs) if cost is not None and n_pairs else None,
    )


def _position(
    by: dict[tuple[str, int], dict[str, str]], both: list[dict[str, str]], pv: list[dict], majority: dict[str, str]
) -> Position:
    """Position bias of a model grader in one place. Choices are in as-shown terms (a grader that
    picks whatever is shown first says ``left`` in the as-shown order and ``right`` in the swapped
    one). Per order: accuracy against people's majority (every pair with one; judge round 1; no
    verdict is a miss) and ties; their mean; agreement between the two orders; flips by direction:
    towards the answer shown first, towards the one shown second, or to or from a tie."""
    orders = {}
    for order in ("as_shown", "swapped"):
        rows = [r for r in pv if r["order"] == order and r["choice"] is not None]
        first = {r["pair_id"]: r["choice"] for r in pv if r["order"] == order and (r["judge_round"] or 1) == 1}
        acc = majority_accuracy(majority, first)
        orders[order] = OrderAccuracy(
            len(rows), sum(r["choice"] == "same" for r in rows), proportion(acc.hits, acc.n), acc.unparseable
        )
    accs = [o.vs_people.share for o in orders.values() if o.vs_people.share is not None]
    towards_first = sum(v["as_shown"] == "left" and v["swapped"] == "right" for v in both)
    towards_second = sum(v["as_shown"] == "right" and v["swapped"] == "left" for v in both)
    with_tie = sum(v["as_shown"] != v["swapped"] and "same" in (v["as_shown"], v["swapped"]) for v in both)
    return Position(
        orders,
        float(np.mean(accs)) if len(accs) == 2 else None,
        proportion(sum(v["as_shown"] == v["swapped"] for v in both), len(both)),
        PositionFlips(len(both), towards_first, towards_second, with_tie),
    )


def report(store: Store, session_id: str, *, seed: int = 0) -> Report | RankingReport:
    """Every figure of a closed, unblinded session (see docs/PAIRWISE.md). Refused while open. A
    session of more than two arms is ranked instead (:func:`evalcore.pairwise.ranking.ranking_report`),
    read from the state when stored with the stamp of its current inputs
    (:func:`evalcore.pairwise.rankstore.ranking`)."""
    rec = checked_record(store, session_id)
    arms: list[str] = rec["arms"]
    if len(arms) > 2:
        return ranking(store, session_id, rec, seed=seed)
    key_of = {k["pair_id"]: k for k in rec["key"]}
    pairs = {p["pair_id"]: p for p in load_pairs(store, session_id)}
    m = store.session(session_id).manifest
    originals = [p for p in pairs.values() if not p["mirror_of"]]
    headline = sorted(p["pair_id"] for p in originals if not p["holdout"])
    held = sorted(p["pair_id"] for p in originals if p["holdout"])
    people = [j for j in _people(store, session_id) if j["pair_id"] in pairs]
    res: _Result = partial(_result, key_of=key_of, arms=arms, seed=seed)
    reviewers = sorted({j["reviewer"] for j in people})
    left_pref = _left_preference(people, reviewers)
    graders = [_grader(store, rid, pairs, people, headline, res) for rid in grader_runs(store, session_id)]
    result = res(people, headline)
    probes = _probes(store, session_id, pairs, key_of, arms)
    cav = caveats(rec.get("identifiability"), left_pref, graders, probes)
    return Report(
        session_id=session_id,
        closed_at=rec.get("closed_at"),
        arms=arms,
        sources=rec.get("sources"),
        settings=m.settings.model_dump(mode="json"),
        suite_id=m.suite_id,
        simulated=m.simulated,
        pairs=PairCounts(len(pairs), len(originals), len(headline), len(held), len(pairs) - len(originals)),
        reviewers=reviewers,
        judgments=len(people),
        result=result,
        caveats=cav,
        verdict=verdict(result, cav, arms),
        holdout=res(people, held),
        by_class=_by_class(store, m.suite_id, pairs, people, headline, res),
        left_preference=left_pref,
        mirror_consistency=_mirror_consistency(pairs, people, reviewers),
        agreement=_people_agreement(pairs, people, reviewers),
        probe=probes,
        timing={
            r: Timing(
                sum(1 for j in people if j["reviewer"] == r),
                float(np.median(s))
                if (s := [j["seconds"] for j in people if j["reviewer"] == r and j["seconds"] is not None])
                else None,
            )
            for r in reviewers
        },
        identifiability=rec.get("identifiability"),
        made=rec.get("made"),
        graders=graders,
        seed=seed,
    )


def _by_class(
    store: Store, suite_id: str | None, pairs: dict, people: list[dict], headline: list[str], res: _Result
) -> dict[str, ArmResult]:
    """People's headline result per class of the suite's items (``(none)``: an item without one)."""
    classes: dict[str, str] = {}
    if suite_id and store.dir_of("suite", suite_id).is_dir():
        for iid, cls in store.sql(
            'SELECT item_id, "class" FROM read_parquet(?)', [store.path_of("suite", suite_id, "items")]
        ):
            classes[iid] = cls if cls is not None else "(none)"
    by_class = {}
    for cls in sorted({classes.get(pairs[p]["item_id"], "(none)") for p in headline}):
        ids = [p for p in headline if classes.get(pairs[p]["item_id"], "(none)") == cls]
        by_class[cls] = res(people, ids)
    return by_class


def _left_preference(people: list[dict], reviewers: list[str]) -> LeftPreference:
    """People's preference for the left answer among their decided judgments, in all and per reviewer."""
    decided = [j for j in people if j["choice"] != "same"]

    def left(js: list[dict]) -> Proportion:
        return proportion(sum(j["choice"] == "left" for j in js), len(js))

    return LeftPreference(left(decided), {r: left([j for j in decided if j["reviewer"] == r]) for r in reviewers})


def _mirror_consistency(pairs: dict, people: list[dict], reviewers: list[str]) -> MirrorConsistency:
    """How often each reviewer's choice on a mirrored pair is the swap of their choice on its original."""
    choice_of = {(j["pair_id"], j["reviewer"]): j["choice"] for j in people}
    cons: dict[str, list[bool]] = {}
    for p in pairs.values():
        if p["mirror_of"]:
            for r in reviewers:
                a, b = choice_of.get((p["mirror_of"], r)), choice_of.get((p["pair_id"], r))
                if a is not None and b is not None:
                    cons.setdefault(r, []).append(_SWAP[a] == b)
    all_c = [x for v in cons.values() for x in v]
    return MirrorConsistency(
        sum(1 for p in pairs.values() if p["mirror_of"]),
        Consistency(sum(all_c), len(all_c), (sum(all_c) / len(all_c)) if all_c else None),
        {r: Consistency(sum(v), len(v), sum(v) / len(v)) for r, v in cons.items()},
    )


def _people_agreement(pairs: dict, people: list[dict], reviewers: list[str]) -> PeopleAgreement:
    """Agreement between people on the original pairs: every two reviewers' kappa, Krippendorff's alpha."""
    units: dict[str, dict[str, str]] = {}
    for j in people:
        if not pairs[j["pair_id"]]["mirror_of"]:
            units.setdefault(j["pair_id"], {})[j["reviewer"]] = j["choice"]
    pairwise = []
    for i, r1 in enumerate(reviewers):
        for r2 in reviewers[i + 1 :]:
            common = sorted(p for p, u in units.items() if r1 in u and r2 in u)
            if common:
                k = cohen_kappa([units[p][r1] for p in common], [units[p][r2] for p in common])
                pairwise.append(ReviewersKappa(r1, r2, **vars(k)))
    return PeopleAgreement(pairwise, krippendorff_alpha_nominal([list(u.values()) for u in units.values()]))


def _probes(store: Store, session_id: str, pairs: dict, key_of: dict, arms: list[str]) -> dict[str, Probe]:
    """The identification probe per reviewer: does the side they call X follow one arm?"""
    probes = {}
    js = JudgmentStore(store)
    for r in sorted({p["reviewer"] for p in js.probes(session_id)}):
        answers = js.probes(session_id, r)
        gs = [p for p in answers if p["pair_id"] in pairs and p["guess"] != "unsure"]
        k = sum(
            (key_of[g["pair_id"]]["left_arm"] if g["guess"] == "left" else key_of[g["pair_id"]]["right_arm"]) == arms[0]
            for g in gs
        )
        n = len(gs)
        probes[r] = Probe(
            n,
            (k / n) if n else None,
            (max(k, n - k) / n) if n else None,
            binomial_p(k, n) if n else None,
            sum(1 for p in answers if p["guess"] == "unsure"),
        )
    return probes


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _iv(x: Sequence[float | None] | None) -> str:
    return "-" if not x else f"{100 * x[0]:.1f}-{100 * x[1]:.1f}%"  # type: ignore[operator]


def caveat_lines(r: Report) -> list[str]:
    """The lines that follow the headline result wherever it is shown: identifiability of the
    answers as shown, each reviewer's probe, people's and each model grader's position preference
    (a polluted grader run named)."""
    c = r.caveats
    idf = c.identifiability
    lines = [
        "identifiability as shown: not measured"
        if idf.accuracy is None
        else f"identifiability as shown: {_pct(idf.accuracy)} ({_iv(idf.interval)}; chance 50%)"
        + (f", leaking feature {idf.leaking_feature}" if idf.leaking_feature else "")
    ]
    lines += [
        f"probe {p.reviewer}: X was one arm {p.same_arm} of {p.answered} times (p = {p.p_value:.3g}"
        + (f", Holm-adjusted {p.adjusted_p:.3g}" if len(c.probe) > 1 else "")
        + ("): told the arms apart" if p.told_apart else ")")
        for p in c.probe
    ]
    lp = c.people_left_share
    lines.append(
        f"people's left share: {_pct(lp.share)} ({_iv(lp.interval)}) of {lp.n} decided judgments"
        if lp.n
        else "people's left share: no decided judgments"
    )
    for g in c.graders:
        pv = g.pair_verdicts
        lines.append(
            f"model grader {g.run_id}{polluted(g.status, g.errored_verdicts, g.verdicts)}: first-position share "
            f"{_pct(g.first_position_share)} ({_iv(g.interval)}); pair verdicts left {pv['left']}, right "
            f"{pv['right']}, same {pv['same']}, inconsistent {pv['inconsistent']}"
            + (f", one order only {pv['one_order']}" if pv["one_order"] else "")
        )
    return lines


def _block(title: str, x: ArmResult, a: str) -> list[str]:
    """A result's lines: arm ``a``'s wins, losses and ties, and its win rate with the sign test."""
    c = x.counts[a]
    out = [f"{title}: {a} wins {c.wins}, loses {c.losses}, ties {c.ties} ({x.judgments} judgments on {x.pairs} pairs)"]
    if (st := x.sign_test) is not None:  # with the win rate
        out.append(
            f"  {a} win rate {_pct(x.win_rate)} (bootstrap {_iv(x.interval)}); sign test "
            f"{st.a_pairs} vs {st.b_pairs} pairs, p = {st.p_value:.3g}"
        )
    return out


def format_report(r: Report) -> str:
    """The report as text for the command line."""
    a, b = r.arms
    lines = [
        f"session {r.session_id}: {a} vs {b} (closed {r.closed_at})" + (" SIMULATED" if r.simulated else ""),
        f"pairs: {r.pairs.headline} in the headline, {r.pairs.holdout} holdout, "
        f"{r.pairs.mirrored} mirrored; {r.judgments} judgments by {len(r.reviewers)} people",
        f"verdict: {r.verdict.text}",
        "",
    ]
    lines += _block("headline", r.result, a)
    lines += ["  " + x for x in caveat_lines(r)]
    lines += _block("holdout", r.holdout, a)
    for cls, x in r.by_class.items():
        lines += _block(f"class {cls}", x, a)
    lp = r.left_preference.all
    lines += [
        "",
        f"people chose the left answer in {_pct(lp.share)} of decided judgments "
        f"({_iv(lp.interval)}, p = {lp.p_value:.3g})"
        if lp.n
        else "people: no decided judgments",
    ]
    mc = r.mirror_consistency.all
    if mc.n:
        lines.append(f"consistent on mirrored pairs: {mc.consistent} of {mc.n} ({_pct(mc.share)})")
    al = r.agreement.krippendorff_alpha
    if al.alpha is not None:
        lines.append(f"agreement between people: Krippendorff's alpha {al.alpha:.3f} over {al.units} pairs")
    for k in r.agreement.pairwise:
        if k.kappa is not None:
            lines.append(f"  kappa {k.a} / {k.b}: {k.kappa:.3f} on {k.n} pairs")
    ident = r.identifiability or {}
    for when in ("before", "after"):
        c = ident.get(when)
        if c:
            lines.append(f"identifiability {when} normalisation: {blinding.describe(c)}")
    for rev, p in r.probe.items():
        if p.answered:
            lines.append(
                f"probe {rev}: the side called X was {a} in {_pct(p.first_arm_share)} of "
                f"{p.answered} pairs (p = {p.p_value:.3g})"
            )
    for g in r.graders:
        lines += _grader_lines(g, a)
    return "\n".join(lines)


def _grader_lines(g: Grader, a: str) -> list[str]:
    """A model grader's part of the report (``a``: the first arm)."""
    f = g.flips
    po = g.position
    pf = po.flips
    lines = [
        "",
        f"model grader {g.run_id} ({g.judge_model}){polluted(g.status, g.errored_verdicts, g.verdicts)}:",
        f"  order flips {f.flips} of {f.compared} pairs ({_pct(f.share)}), reversals {f.reversals}",
        f"  first-position preference {_pct(g.first_position.share)} ({_iv(g.first_position.interval)})",
        f"  flips towards the first shown {pf.towards_first_shown}, towards the second "
        f"{pf.towards_second_shown}, to or from a tie {pf.to_or_from_a_tie}; agreement between orders "
        f"{_pct(po.agreement_between_orders.share)}",
    ]
    for order, o in po.orders.items():
        lines.append(
            f"  {order.replace('_', ' ')}: accuracy vs people {_pct(o.vs_people.share)} on "
            f"{o.vs_people.n} pairs ({o.unparseable} {MISSES}), ties {o.ties} of {o.verdicts}"
        )
    if po.mean_accuracy_over_orders is not None:
        lines.append(f"  accuracy averaged over both orders {_pct(po.mean_accuracy_over_orders)}")
    lines += ["  " + s for s in _block("averaged over both orders", g.averaged_over_orders, a)]
    pv = g.pair_verdicts
    lines += ["  " + s for s in _block("pairs it judged the same in both orders", pv.consistent_result, a)]
    lines.append(
        f"  inconsistent pairs (the two orders disagree): {pv.counts['inconsistent']}, "
        f"queued for people first: {pv.queued_for_people}"
    )
    km = g.kappa_vs_majority
    if km.kappa is not None:
        lines.append(f"  kappa vs people's majority: {km.kappa:.3f} on {km.n} pairs")
    c = g.cost
    lines.append(
        f"  cost: {c.calls} calls, "
        + ("unknown" if c.cost_usd is None else f"${c.cost_usd:.4f}")
        + (f" (${c.cost_per_pair_usd:.4f} per pair)" if c.cost_per_pair_usd is not None else "")
    )
    return lines
