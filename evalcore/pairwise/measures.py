"""The pairwise report's statistics on choices, pure (:mod:`evalcore.pairwise.results` assembles them).

* :func:`win_stats`: the paired result of arm A over arm B from per-pair scores, with a seeded
  percentile bootstrap over pairs (:mod:`evalcore.stats.bootstrap`) and the sign test.
* :func:`cohen_kappa` and :func:`krippendorff_alpha_nominal`: agreement on the choices as report
  rows, the statistics being :mod:`evalcore.stats.agreement`'s.
* :func:`proportion`: a share with its Wilson interval and binomial p-value against 50%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalcore.contract.results import OMIT, Result
from evalcore.pairwise.sessions import CHOICES
from evalcore.stats import agreement
from evalcore.stats.association import scipy_stats
from evalcore.stats.bootstrap import generator, percentile_interval, resample


def binomial_p(k: int, n: int) -> float:
    """The exact two-sided binomial p-value of ``k`` of ``n`` against 50%."""
    return float(scipy_stats().binomtest(k, n, 0.5).pvalue)


@dataclass
class Kappa(Result):
    """:func:`cohen_kappa`: two raters' kappa and raw agreement (kappa None with a reason when undefined)."""

    kappa: float | None
    n: int
    agreement: float | None
    reason: str | None


@dataclass
class Alpha(Result):
    """:func:`krippendorff_alpha_nominal`: alpha over the units rated by two or more."""

    alpha: float | None
    units: int
    reason: str | None


@dataclass
class SignTest(Result):
    """Pairs arm A won and lost (ties apart) and the exact two-sided binomial p-value."""

    a_pairs: int
    b_pairs: int
    tied_pairs: int
    p_value: float


@dataclass
class WinStats(Result):
    """:func:`win_stats`: arm A's win rate over pairs, its bootstrap interval and the sign test."""

    pairs: int
    win_rate: float | None
    interval: list[float | None] | None
    level: float = OMIT
    sign_test: SignTest | None = None
    reason: str | None = None


@dataclass
class Proportion(Result):
    """A share of ``n`` with its Wilson interval and the binomial p-value against 50%."""

    k: int
    n: int
    share: float | None
    interval: list[float] | None
    p_value: float | None


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = CHOICES) -> Kappa:
    """Cohen's kappa of two raters' choices over the same pairs, as a report row: the statistic is
    :func:`evalcore.stats.agreement.cohen_kappa` (unweighted) on the choices coded by
    ``categories``. Undefined (None with a reason) with no pairs or when both raters used one and
    the same choice throughout (chance agreement 1)."""
    n = len(a)
    if n != len(b):
        raise ValueError("cohen_kappa needs two equally long sequences")
    if n == 0:
        return Kappa(None, 0, None, "no units rated by both")
    code = {c: i for i, c in enumerate(categories)}
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    s = agreement.cohen_kappa([code[x] for x in a], [code[y] for y in b], len(categories))
    if s.value is None:
        return Kappa(
            None, n, po, "both used a single category throughout: chance agreement is 1 and kappa is undefined"
        )
    return Kappa(s.value, n, po, None)


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> Alpha:
    """Krippendorff's alpha for nominal choices, any number of people per pair (pairs with fewer
    than two choices are left out), as a report row: the statistic is
    :func:`evalcore.stats.agreement.krippendorff_alpha` (the ``krippendorff`` package) over a
    slots x pairs array (alpha depends on the values within each unit, not on who gave them).
    Undefined when a single value occurs (no disagreement is possible)."""
    kept = [list(u) for u in units if len(u) >= 2]
    cats = sorted({v for u in kept for v in u})
    if not kept:
        return Alpha(None, 0, "no unit was rated by two or more people")
    if len(cats) < 2:
        return Alpha(None, len(kept), "only one value occurs: alpha is undefined")
    code = {c: i for i, c in enumerate(cats)}
    data = np.full((max(len(u) for u in kept), len(kept)), float(agreement.MISSING))
    for j, u in enumerate(kept):
        data[: len(u), j] = [code[v] for v in u]
    s = agreement.krippendorff_alpha(data, "nominal", len(cats))
    return Alpha(s.value, len(kept), s.reason)


def win_stats(scores: Sequence[float], *, seed: int, n_boot: int = 2000, level: float = 0.95) -> WinStats:
    """Paired result of arm A over arm B from per-pair scores s_i in [0, 1] (1: A won the pair,
    0: B won, 0.5: a tie; several people on one pair average). ``win_rate`` is the mean of s_i,
    its interval a seeded percentile bootstrap over pairs (each pair resampled whole: the paired
    design), and the sign test counts pairs with s_i > 0.5 against s_i < 0.5 (exact two-sided
    binomial, ties left out)."""
    s = np.asarray(list(scores), dtype=float)
    n = len(s)
    if n == 0:
        return WinStats(0, None, None, reason="no graded pairs")
    iv = percentile_interval(
        resample(lambda idx: s[idx].mean(axis=1), n, n_boot, generator([int(seed), 0xB007])), level
    )
    a, b = int((s > 0.5).sum()), int((s < 0.5).sum())
    sign = SignTest(a, b, n - a - b, binomial_p(a, a + b) if a + b else 1.0)
    return WinStats(n, float(s.mean()), [iv.lo, iv.hi], level, sign)


def proportion(k: int, n: int) -> Proportion:
    """``k`` of ``n`` as a :class:`Proportion` (share, interval and p-value None when ``n`` is 0)."""
    if n == 0:
        return Proportion(0, 0, None, None, None)
    ci = scipy_stats().binomtest(k, n).proportion_ci(method="wilson")
    return Proportion(k, n, k / n, [float(ci.low), float(ci.high)], binomial_p(k, n))
