"""Rank correlations and McNemar's test: pure functions, no I/O, numbers in and a
:class:`~evalcore.stats.association.Stat` (a value, or None with the reason it is undefined) out.

* :func:`kendall_tau_b` and :func:`spearman`: the association of two ordinal or continuous
  criteria over the same answers (scipy's ``kendalltau`` variant b and ``spearmanr``); undefined
  for fewer than 3 answers or a constant side, ValueError on mismatched lengths or nan.
* :func:`mcnemar`: the exact test on the discordant pairs of a paired 2x2 (answers that changed
  one way, and the other), as flips between two harnesses use it.
"""

from __future__ import annotations

import numpy as np

from evalcore.stats.association import Stat, _answers, _in_these, scipy_stats

# --------------------------------------------------------------------------------------------
# Ordinal and continuous criteria
# --------------------------------------------------------------------------------------------


def _rank_inputs(x, y) -> tuple[np.ndarray, np.ndarray, Stat | None]:
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 1 or ya.ndim != 1 or xa.size != ya.size:
        raise ValueError(f"x and y must be one-dimensional and of the same length, got {xa.shape} and {ya.shape}")
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y contain missing values (nan): drop those answers first")
    if xa.size < 3:
        return xa, ya, Stat(None, f"only {_answers(xa.size)}: a rank correlation needs at least 3")
    for name, v in (("x", xa), ("y", ya)):
        if np.all(v == v[0]):
            return (
                xa,
                ya,
                Stat(
                    None,
                    f"{name} is constant {_in_these(v.size)}: a rank correlation is undefined for a constant column",
                ),
            )
    return xa, ya, None


def kendall_tau_b(x, y) -> Stat:
    """Kendall's tau-b (``scipy.stats.kendalltau(x, y, variant="b")``): concordant minus
    discordant pairs over sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2 and n1, n2 the pairs tied in x,
    in y. The tie correction makes it the right choice for ordinal scores with many ties.
    Undefined (with a reason) for n < 3 or a constant x or y. Raises ValueError on mismatched
    lengths or nan."""
    xa, ya, bad = _rank_inputs(x, y)
    if bad is not None:
        return bad
    return Stat(float(scipy_stats().kendalltau(xa, ya, variant="b").statistic), None)


def spearman(x, y) -> Stat:
    """Spearman's rho (``scipy.stats.spearmanr``): Pearson's correlation of the mid-ranks.
    Undefined (with a reason) for n < 3 or a constant x or y. Raises ValueError on mismatched
    lengths or nan."""
    xa, ya, bad = _rank_inputs(x, y)
    if bad is not None:
        return bad
    return Stat(float(scipy_stats().spearmanr(xa, ya).statistic), None)


# --------------------------------------------------------------------------------------------
# Helpers for the attribution and flips pages
# --------------------------------------------------------------------------------------------


def mcnemar(b: int, c: int) -> dict:
    """Exact McNemar test on the discordant pairs of a paired 2x2: ``b`` answers changed one
    way, ``c`` the other. Under H0 each discordant pair goes either way with probability 1/2,
    so the two-sided p-value is ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``
    (= min(1, 2 * P(X <= min(b, c))) for X ~ Binomial(b + c, 1/2)). The concordant pairs do not
    enter. With b + c == 0 there is no evidence either way: statistic 0, p = 1.0.

    Returns ``{"b": b, "c": c, "statistic": min(b, c), "p_value": p}``."""
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar needs non-negative counts, got b={b}, c={c}")
    if b + c == 0:
        return {"b": 0, "c": 0, "statistic": 0, "p_value": 1.0}
    # the symmetric binomial's two tails, from scipy.special's incomplete beta (bdtr), not
    # scipy.stats (about a second to import): within 1e-9 of binomtest's p relative to it, 1e-11 for
    # b + c under 1,500 (tests/test_stats.py)
    from scipy.special import bdtr

    k, n = min(b, c), b + c
    p = 1.0 if 2 * k >= n else min(1.0, 2.0 * float(bdtr(k, n, 0.5)))
    return {"b": b, "c": c, "statistic": k, "p_value": p}
