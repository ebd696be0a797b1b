"""The mean of a criterion's scores with its interval (issue 40; seed 002's per-criterion ``avg``).

The interval is Student's t on n - 1 degrees of freedom, from the count, the mean and the sample
standard deviation (which a caller gets from DuckDB's own ``count``, ``avg`` and ``stddev_samp``
over millions of verdicts without reading them into Python); above :data:`T_MAX_N` answers the
t quantile is replaced by its normal limit, as the ternary headline's interval does
(:func:`evalcore.analysis.failures._ternary_ci95`), so that ``evalcore runs`` and the Runs page
start without loading scipy: at 101 answers the normal half-width is 1.2% narrower than t's, at
540 answers 0.2% (``python -c "from scipy.stats import t, norm; print(t.ppf(.975, 100) /
norm.ppf(.975), t.ppf(.975, 539) / norm.ppf(.975))"``: 1.0122, 1.0023).

Why t and not the bootstrap of :mod:`evalcore.stats.bootstrap`: the mean of n independent
answers' scores is what the t interval is for; it is deterministic (the same figure on every page
and in every command, no seed), costs nothing at 18M verdicts, and for scores on a bounded scale
the central limit theorem makes it accurate from some tens of answers on. It assumes the answers
are independent: where generation rounds are pooled, the rounds of one item are not, and the
interval is read as a little narrow. With one answer, or every score equal, there is no spread to
estimate: the interval is None (``reason`` says why) rather than a zero width.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

#: above this many answers the interval takes the normal quantile for t's (no scipy at start-up)
T_MAX_N = 100


class MeanInterval(NamedTuple):
    """``mean`` of ``n`` scores, their sample standard deviation ``sd``, and the interval
    ``lo``..``hi`` at ``level`` (None, with ``reason``, when it cannot be estimated)."""

    n: int
    mean: float | None
    sd: float | None
    lo: float | None
    hi: float | None
    level: float
    reason: str | None = None


def t_interval(n: int, mean: float | None, sd: float | None, level: float = 0.95) -> MeanInterval:
    """Student's t interval for a mean from its sufficient statistics: ``mean`` +/- t(1 - (1 -
    level) / 2, n - 1) * ``sd`` / sqrt(n) (the normal quantile above :data:`T_MAX_N` answers)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    if n < 1 or mean is None:
        return MeanInterval(0, None, None, None, None, level, "no score")
    if n < 2 or sd is None or not math.isfinite(sd):
        return MeanInterval(n, float(mean), None, None, None, level, "one score: no spread to estimate")
    if sd == 0:
        return MeanInterval(n, float(mean), 0.0, None, None, level, "every score is the same: no spread to estimate")
    p = 1 - (1 - level) / 2
    if n > T_MAX_N:
        q = NormalDist().inv_cdf(p)
    else:
        from scipy.stats import t

        q = float(t.ppf(p, n - 1))
    half = q * float(sd) / math.sqrt(n)
    return MeanInterval(n, float(mean), float(sd), float(mean) - half, float(mean) + half, level)
