"""The power of a paired comparison (:func:`power`): the minimum detectable effect at the noise
:func:`evalcore.analysis.comparison.compare` measured, and the items or generation rounds needed to
see a given effect (:func:`items_needed`, the paired t-test's sample sizes at once)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evalcore.contract.results import OMIT, Result

#: the sizes around the normal approximation's among which :func:`items_needed` looks for the t-test's
_T_WINDOW = 128


def items_needed(effects: Sequence[float], alpha: float, power_: float) -> list[int | None]:
    """For each standardised effect, the fewest items at which a two-sided paired t-test reaches
    ``power_``: the smallest whole ``n`` whose power (statsmodels' ``ttest_power``, one call over
    every effect and the candidate sizes) is at least ``power_`` -- what ``TTestPower.solve_power``
    finds rounded up, within its root search's tolerance, without that search per effect (0.02 s
    each). The candidates are :data:`_T_WINDOW` sizes around the normal approximation's; None where
    the smallest is not among them, or scipy's noncentral t gives no power at one (the caller
    solves for those)."""
    from scipy.stats import norm
    from statsmodels.stats.power import ttest_power

    d = np.asarray(effects, dtype=float)
    out: list[int | None] = [None] * len(d)
    ok = d > 0
    if not ok.any():
        return out
    z = norm.isf(alpha / 2) + norm.isf(1 - power_)
    start = np.maximum(2, np.floor((z / d[ok]) ** 2) - _T_WINDOW // 2).astype(np.int64)
    n = start[:, None] + np.arange(_T_WINDOW)[None, :]
    with np.errstate(all="ignore"):
        pw = ttest_power(d[ok][:, None], n.astype(float), alpha, alternative="two-sided")
    reach = pw >= power_
    at = reach.argmax(axis=1)
    # (scipy's noncentral t gives NaN for large effects at a few items: those are solved instead)
    clean = ~np.array([np.isnan(row[: k + 1]).any() for row, k in zip(pw, at.tolist())], dtype=bool)
    # found, and the window starts below it (or at 2 items, the fewest a t-test takes)
    found = reach.any(axis=1) & clean & ((start == 2) | ~reach[:, 0])
    first = np.where(found, n[np.arange(len(n)), at], -1)
    for k, v in zip(np.flatnonzero(ok).tolist(), first.tolist()):
        out[k] = int(v) if v >= 0 else None
    return out


@dataclass
class Power(Result):
    """:func:`power`; ``reason`` (and no ``tau2``, ``within_var`` or ``rounds_note``) when there is
    no spread to size a test from."""

    alpha: float
    power: float
    effect: float
    items: int
    rounds: int
    mde: float | None = None
    reason: str = OMIT
    tau2: float = OMIT
    within_var: float = OMIT
    items_needed: dict[str, int | None] = field(default_factory=dict)
    rounds_needed: int | None = None
    rounds_note: str | None = OMIT


@dataclass
class Skipped(Result):
    """In place of :class:`Power` when :func:`compare` leaves it out."""

    skipped: bool = True


def power(
    sd_delta: float | None,
    within_var: float | None,
    rounds: int,
    n_items: int,
    effect: float,
    *,
    alpha: float = 0.05,
    power_: float = 0.8,
) -> Power:
    """Minimum detectable effect of the paired comparison at this noise, and the items (at 1, 2,
    3, 5, 10 rounds) or rounds (at these items) needed to see ``effect``. The per-item delta's
    variance splits into item-to-item spread tau^2 and round noise w/R (w = the two
    configurations' within-item round variances added): var(R) = tau^2 + w / R."""
    from statsmodels.stats.power import TTestPower

    tp = TTestPower()
    out = Power(alpha, power_, effect, n_items, rounds)
    if sd_delta is None or n_items < 2 or sd_delta == 0:
        out.reason = "no spread in the per-item deltas to size a test from" if n_items >= 2 else "fewer than two items"
        return out
    w = within_var or 0.0
    tau2 = max(0.0, sd_delta**2 - w / max(rounds, 1))

    def sd_at(r: int) -> float:
        return math.sqrt(tau2 + w / r)

    def n_for(r: int) -> int | None:
        s = sd_at(r)
        if s == 0:
            return None
        try:
            n = tp.solve_power(effect_size=effect / s, nobs=None, alpha=alpha, power=power_, alternative="two-sided")
        except Exception:
            return None
        return int(math.ceil(float(np.atleast_1d(n)[0])))

    sizes = (1, 2, 3, 5, 10)
    needed = items_needed([effect / sd_at(r) if sd_at(r) > 0 else 0.0 for r in sizes], alpha, power_)
    es = float(
        np.atleast_1d(
            tp.solve_power(effect_size=None, nobs=n_items, alpha=alpha, power=power_, alternative="two-sided")
        )[0]
    )
    out.mde, out.tau2, out.within_var = es * sd_delta, tau2, w
    out.items_needed = {
        str(r): (n if n is not None else n_for(r)) if sd_at(r) > 0 else None for r, n in zip(sizes, needed)
    }
    out.rounds_needed = next((r for r in range(1, 51) if es * sd_at(r) <= effect), None)
    out.rounds_note = (
        None
        if out.rounds_needed is not None
        else f"item-to-item spread alone (sd {math.sqrt(tau2):.3f}) keeps the minimum detectable effect "
        f"above {effect:g} at {n_items} items: more rounds cannot reach it, more items can"
    )
    return out
