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
  shown and each reviewer's probe, people's and each model grader's position preference, each
  model grader's status and its noise: order flips and disagreement with people) and the verdict
  in words, by the rules of :data:`VERDICT_RULES`: "Not blind: ..." first when the arms were told
  apart, and each model grader's result set against its own noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.pairwise.grading import JudgmentStore, load_pairs, session_status
from evalcore.pairwise.leakage import leaking_words
from evalcore.storage.store import Store

if TYPE_CHECKING:  # results imports this module
    from evalcore.pairwise.measures import Proportion
    from evalcore.pairwise.results import ArmResult, Grader, LeftPreference, Probe

GRADER_INCONSISTENT = "grader_inconsistent"
PAIR_VERDICTS = ("left", "right", "same", "inconsistent", "one_order")
MIN_PAIRS = 10

#: a reviewer's probe tells the arms apart below this p-value (Holm-adjusted over the reviewers who answered it)
PROBE_ALPHA = 0.05

VERDICT_RULES = (
    "no_result: no headline pair was graded by a person",
    f"too_few_pairs: fewer than {MIN_PAIRS} headline pairs were graded; nothing is concluded",
    "a_preferred / b_preferred: the win rate's 95% bootstrap interval lies above / below 50%",
    "no_difference: the interval contains 50% (no difference detected, which is not evidence of none)",
    "caveat not_blind, said first: a reviewer's probe put X on one arm more often than chance (binomial p, "
    f"Holm-adjusted over the reviewers who answered it, below {PROBE_ALPHA}), or the identifiability interval of "
    "the answers as shown lies above 50%: the result cannot be read as blind",
    "caveat identifiability_not_measured: the check could not be run on the answers as shown",
    "caveat people_position: people's left share's Wilson interval excludes 50%",
    "caveat grader_polluted: a model grader run is polluted (some of its verdicts have no choice)",
    "caveat grader_position: a model grader's first-position share's Wilson interval excludes 50%",
    "caveat grader_noise: a model grader's result averaged over both orders is inside its own noise: its interval "
    "contains 50%, or its margin between the arms (|2 x win rate - 1|, a share of pairs) is no larger than the "
    "share of pairs whose verdict swapping the order changed or than its disagreement with people's majority",
    "caveat grader_disagrees: a model grader outside its noise prefers another arm than people do",
    "a model grader outside its noise that agrees with people is named with its figures, without a caveat code",
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
    """The identifiability check of the answers as shown (reason ``not measured`` without one);
    ``leaking_feature`` in words (a marker with its word or opening)."""

    accuracy: float | None
    interval: list[float] | None
    p_value: float | None
    identifiable: bool | None
    leaking_feature: str | None
    reason: str | None


@dataclass
class CaveatProbe(Result):
    """A reviewer's identification probe: X put on one arm ``same_arm`` of ``answered`` times, the
    binomial p-value, the same Holm-adjusted over the reviewers who answered, and whether that
    tells the arms apart (below :data:`PROBE_ALPHA`)."""

    reviewer: str
    answered: int
    same_arm: int
    p_value: float | None
    adjusted_p: float | None
    told_apart: bool


@dataclass
class CaveatGrader(Result):
    """A model grader: its first-position share (Wilson interval) and pair verdicts' counts; its
    run's status and verdicts without a choice; its result averaged over both orders with its
    interval; its order flips; its disagreement with people's majority (1 - accuracy averaged over
    the orders, no verdict a miss) and kappa against it."""

    run_id: str
    first_position_share: float | None
    interval: list[float] | None
    n: int
    pair_verdicts: dict[str, int]
    status: str
    verdicts: int
    errored_verdicts: int
    win_rate: float | None
    win_interval: list[float | None] | None
    pairs: int
    order_flips: int
    compared: int
    disagreement: float | None
    kappa_vs_people: float | None
    kappa_n: int


@dataclass
class Caveats(Result):
    """:func:`caveats`: what must be read beside the headline."""

    identifiability: CaveatIdentifiability
    probe: list[CaveatProbe]
    people_left_share: Proportion
    graders: list[CaveatGrader]


@dataclass
class Verdict(Result):
    """:func:`verdict`: the headline in words."""

    code: str
    caveats: list[str]
    text: str


def _probe_caveats(probes: Mapping[str, Probe]) -> list[CaveatProbe]:
    """Each reviewer who answered the probe: how often X was one arm, p, Holm-adjusted p."""
    answered = [(r, p) for r, p in probes.items() if p.answered and p.p_value is not None]
    if not answered:
        return []
    from statsmodels.stats.multitest import multipletests

    adjusted = multipletests([p.p_value for _, p in answered], method="holm")[1]
    return [
        CaveatProbe(
            r,
            p.answered,
            round((p.consistency or 0.0) * p.answered),
            p.p_value,
            float(a),
            bool(a < PROBE_ALPHA),
        )
        for (r, p), a in zip(answered, adjusted)
    ]


def _grader_caveat(g: Grader) -> CaveatGrader:
    r, f, acc = g.averaged_over_orders, g.flips, g.position.mean_accuracy_over_orders
    pv = g.pair_verdicts.counts
    return CaveatGrader(
        g.run_id,
        g.first_position.share,
        g.first_position.interval,
        g.first_position.n,
        pv,
        g.status,
        g.verdicts,
        g.errored_verdicts,
        r.win_rate,
        r.interval,
        r.pairs,
        f.flips,
        f.compared,
        None if acc is None else 1.0 - acc,
        g.kappa_vs_majority.kappa,
        g.kappa_vs_majority.n,
    )


def caveats(
    identifiability: dict | None,
    left_preference: LeftPreference,
    graders: Sequence[Grader],
    probes: Mapping[str, Probe] | None = None,
) -> Caveats:
    """What must be read beside the headline: identifiability of the answers as shown (accuracy,
    interval, leaking feature), each reviewer's probe, people's left share (Wilson interval), each
    model grader's first-position share, pair verdicts' counts, status and noise."""
    after = (identifiability or {}).get("after") or {}
    return Caveats(
        CaveatIdentifiability(
            after.get("accuracy"),
            after.get("interval"),
            after.get("p_value"),
            after.get("identifiable"),
            leaking_words(after) if after else None,
            after.get("reason") if after else "not measured",
        ),
        _probe_caveats(probes or {}),
        left_preference.all,
        [_grader_caveat(g) for g in graders],
    )


def _p(x: float | None) -> str:
    return "-" if x is None else f"{x:.2g}"


def _main(result: ArmResult, arms: Sequence[str]) -> tuple[str, str]:
    """The result's code and sentence, before any caveat."""
    a, b = arms
    n, wr, ci = result.pairs, result.win_rate, result.interval
    if not n or wr is None:
        return "no_result", "No result: no headline pair was graded by a person"
    if n < MIN_PAIRS:
        return "too_few_pairs", f"Too few pairs to say ({n} graded, fewer than {MIN_PAIRS})"
    won = f"{a} won {_pct(wr)} {_iv(ci)} of {n} pairs"
    if _excludes_half(ci):
        return ("a_preferred", f"{a} preferred ({won})") if wr > 0.5 else ("b_preferred", f"{b} preferred ({won})")
    return "no_difference", f"No difference detected ({won})"


def _blinding(cav: Caveats, code: str) -> tuple[list[tuple[str | None, str]], str]:
    """The not-blind evidence as one sentence said first (empty when blind as far as measured),
    and the caveat that the surface check was not run."""
    evidence = [
        f"reviewer {p.reviewer} told the arms apart {p.same_arm} of {p.answered} times in the probe "
        f"(p = {_p(p.p_value)}" + (f", Holm-adjusted {_p(p.adjusted_p)})" if len(cav.probe) > 1 else ")")
        for p in cav.probe
        if p.told_apart
    ]
    idf = cav.identifiability
    if idf.accuracy is not None and idf.identifiable:
        leak = f", mostly by {idf.leaking_feature}" if idf.leaking_feature else ""
        evidence.append(
            f"the shown answers' surface told the arms apart {_pct(idf.accuracy)} {_iv(idf.interval)} of the time{leak}"
        )
    notes: list[tuple[str | None, str]] = []
    if idf.accuracy is None:
        notes.append(("identifiability_not_measured", "whether the arms could be told apart was not measured"))
    if not evidence:
        return notes, ""
    what = "preference" if code in ("a_preferred", "b_preferred") else "result"
    notes.insert(0, ("not_blind", ""))
    return notes, "Not blind: " + "; ".join(evidence) + f": the {what} cannot be read as blind. "


def _grader_noise(g: CaveatGrader, arms: Sequence[str], people: str | None) -> tuple[str | None, str] | None:
    """A model grader's result set against its own noise: its interval, its order flips and its
    disagreement with people's majority, each against its margin between the arms."""
    wr, ci = g.win_rate, g.win_interval
    if not g.pairs or wr is None:
        return None
    a, b = arms
    margin = abs(2 * wr - 1)
    flips = g.order_flips / g.compared if g.compared else None
    kappa = "" if g.kappa_vs_people is None else f" (kappa {g.kappa_vs_people:.2f} on {g.kappa_n} pairs)"
    said = {
        "its interval contains 50%": not _excludes_half(ci),
        f"swapping the order changed its verdict on {g.order_flips} of {g.compared} pairs ({_pct(flips)})": (
            flips is not None and flips >= margin
        ),
        f"it disagrees with people's majority on {_pct(g.disagreement)} of pairs{kappa}": (
            g.disagreement is not None and g.disagreement >= margin
        ),
    }
    head = (
        f"model grader {g.run_id} has {a} winning {_pct(wr)} {_iv(ci)} of {g.pairs} pairs over both orders, "
        f"a margin of {_pct(margin)} of pairs"
    )
    inside = [k for k, v in said.items() if v]
    if inside:
        listed = ", ".join(inside[:-1]) + (" and " if len(inside) > 1 else "") + inside[-1]
        return "grader_noise", f"{head}, inside its own noise: {listed}"
    beyond = f"{head}, beyond its order flips ({_pct(flips)}) and its disagreement with people ({_pct(g.disagreement)})"
    side = a if wr > 0.5 else b
    if people != side:
        return "grader_disagrees", f"{beyond}, yet people's verdict is not that {side} is preferred"
    return None, beyond


def verdict(result: ArmResult, cav: Caveats, arms: Sequence[str]) -> Verdict:
    """The headline in words, by :data:`VERDICT_RULES`: ``code`` (``a_preferred``, ``b_preferred``,
    ``no_difference``, ``too_few_pairs``, ``no_result``), the ``caveats`` that apply (codes) and
    ``text``: "Not blind: ..." first when the arms were told apart, then one sentence with the
    caveats after it."""
    a, b = arms
    code, main = _main(result, arms)
    notes, lead = _blinding(cav, code)
    lp = cav.people_left_share
    if lp.n and _excludes_half(lp.interval):
        notes.append(
            (
                "people_position",
                f"people chose the left answer {_pct(lp.share)} {_iv(lp.interval)} of the time "
                "(the balanced sides keep it out of the win rate)",
            )
        )
    people = {"a_preferred": a, "b_preferred": b}.get(code)
    for g in cav.graders:
        if g.status == "polluted":
            notes.append(
                (
                    "grader_polluted",
                    f"model grader {g.run_id} is a polluted run: {g.errored_verdicts} of {g.verdicts} verdicts have "
                    "no choice (misses against people)",
                )
            )
        if g.n and _excludes_half(g.interval):
            notes.append(
                (
                    "grader_position",
                    f"model grader {g.run_id} chose the answer shown first {_pct(g.first_position_share)} "
                    f"{_iv(g.interval)} of the time",
                )
            )
        if (noise := _grader_noise(g, arms, people)) is not None:
            notes.append(noise)
    if code == "no_result":
        return Verdict(code, [], main + ".")
    said = [t for _, t in notes if t]
    joiner = ", but " if code in ("a_preferred", "b_preferred") else "; note: "
    text = lead + main + (joiner + "; ".join(said) if said else "") + "."
    return Verdict(code, [c for c, _ in notes if c], text)
