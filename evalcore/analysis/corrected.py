"""Decisions on the judge-corrected scale (docs/COMPARE.md, "The corrected delta"): where gold exists
for both configurations, the difference of their prediction-powered (PPI++) pass rates, each the
report card's own estimate (read one layer up, by :mod:`evalcore.review.corrected`, which hands
compare and the gate its ``correct`` hook), with the interval of a difference of two independent
estimates (the gold of two generations are different answers), and whether the raw and corrected
deltas disagree in sign or significance. A judge that agrees with people more on one
configuration's failures than on the other's moves the raw delta and not the corrected one (seed
004: agreement is not correctness). Pure reading; nothing is written."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from evalcore.analysis.bar import _pct
from evalcore.contract.results import Result
from evalcore.storage.store import Store


@dataclass
class CorrectedSide(Result):
    """One run's corrected rate: the report card's PPI++ entry for the headline."""

    run_id: str
    gen_id: str
    observed: float | None
    value: float | None
    ci: list[float | None]
    se: float | None
    n_labels: int | None
    sample: str | None
    reason: str | None


@dataclass
class CorrectedDelta(Result):
    """:func:`corrected_delta`: both sides, the corrected difference with its interval, the raw one
    beside it, and the sentence that sets them against each other."""

    headline: str
    level: float
    baseline: CorrectedSide
    candidate: CorrectedSide
    delta: float | None
    ci: list[float | None]
    raw_delta: float | None
    raw_ci: list[float | None]
    disagrees: bool | None
    text: str


def has_gold(store: Store, gen_id: str) -> bool:
    """Whether the generation has any gold: a shipped label set on it, or gold in the label store."""
    if any(store.labelset(lid).manifest.gen_id == gen_id for lid in store.ids("labelset")):
        return True
    if store.state is None:
        return False
    from evalcore.storage.gold import settled
    from evalcore.storage.labels import LabelStore

    return bool(settled(LabelStore(store), gen_id))


def _significant(ci: list[float | None]) -> bool | None:
    lo, hi = ci
    return None if lo is None or hi is None else (lo > 0 or hi < 0)


def corrected_delta(
    a: CorrectedSide,
    b: CorrectedSide,
    raw_delta: float | None,
    raw_ci: list[float | None],
    *,
    headline: str = "all_pass",
    level: float = 0.95,
) -> CorrectedDelta:
    """The corrected difference candidate - baseline of ``headline`` (``all_pass`` or a criterion)
    from each side's corrected rate (:func:`evalcore.review.corrected.side`), at ``level``: the PPI++
    estimates' difference, its normal interval from their standard errors added in quadrature
    (independent samples of gold: two generations, two sets of answers), and the raw paired delta
    (``raw_delta``, ``raw_ci``) set against it. Pure."""

    def out(delta: float | None, ci: list[float | None], disagrees: bool | None, text: str) -> CorrectedDelta:
        return CorrectedDelta(headline, level, a, b, delta, ci, raw_delta, list(raw_ci), disagrees, text)

    if a.gen_id == b.gen_id:
        return out(None, [None, None], None, "no corrected delta: both runs judge one generation, so the "
                   "same gold corrects both and the difference is the judges', not the systems'")  # fmt: skip
    missing = [f"{s.run_id}: {s.reason}" for s in (a, b) if s.value is None or s.se is None]
    if missing:
        return out(None, [None, None], None, "no corrected delta: " + "; ".join(missing))
    assert a.value is not None and b.value is not None and a.se is not None and b.se is not None
    delta = b.value - a.value
    half = NormalDist().inv_cdf((1 + level) / 2) * math.sqrt(a.se**2 + b.se**2)
    ci: list[float | None] = [delta - half, delta + half]
    raw_sig, sig = _significant(raw_ci), _significant(ci)
    sign_differs = raw_delta is not None and (raw_delta > 0) != (delta > 0) and raw_delta != 0 and delta != 0
    disagrees = sign_differs or (raw_sig is not None and raw_sig != sig)
    words = (
        f"corrected delta {_pct(delta, True)} [{_pct(delta - half, True)}, {_pct(delta + half, True)}] ({level:.0%}, PPI++ on "
        f"{a.n_labels} and {b.n_labels} gold answers)"
    )
    if raw_delta is None:
        return out(delta, ci, None, words)
    raw = f"raw delta {_pct(raw_delta, True)}" + (
        f" [{_pct(raw_ci[0], True)}, {_pct(raw_ci[1], True)}]"
        if raw_ci[0] is not None and raw_ci[1] is not None
        else ""
    )
    if sign_differs:
        verdict = "the raw and corrected deltas point in opposite directions: the judge's errors, not the systems, make the raw one"
    elif disagrees:
        verdict = (
            "the raw delta is significant and the corrected one is not: the judge's errors may make the raw one"
            if raw_sig
            else "the corrected delta is significant and the raw one is not"
        )
    else:
        verdict = "the raw and corrected deltas agree in sign and significance"
    return out(delta, ci, disagrees, f"{raw}; {words}: {verdict}")
