"""Statistics for the pages: pure functions, no I/O, no DuckDB, no pandas.

Everything here takes counts or numpy arrays that a query has already reduced, and returns small
frozen values. Where a statistic is undefined the functions say so with a ``reason`` instead of
returning ``nan``; randomness only ever comes from an explicit ``seed``.

Conventions
-----------
Two binary criteria A (rows) and B (columns) are cross-tabulated over *answers*. Throughout,
**"fail" is coded 1 and "pass" 0**, so a positive phi means the two criteria fail together. A
:class:`TwoByTwo` stores the four cells by name::

                      B pass            B fail
    A pass   a_pass_b_pass (n00)   a_pass_b_fail (n01)    r0 = a_pass
    A fail   a_fail_b_pass (n10)   a_fail_b_fail (n11)    r1 = a_fail
                c0 = b_pass          c1 = b_fail            n

Contents
--------
* :func:`phi`, :func:`conditioned_rates`: the 2x2 and what the criteria-association page shows.
* :func:`phi_interval_bootstrap`, :func:`phi_interval_analytic`, :func:`phi_interval_posterior`,
  :func:`phi_interval`, :func:`phi_intervals_paired`: intervals for phi (a sparse table takes the
  posterior interval of :func:`evalcore.stats.bootstrap.posterior_interval` whatever its size).
* :func:`kendall_tau_b`, :func:`spearman`: ordinal / continuous criteria.
* :func:`classify_association`: the ``induced`` / ``real`` / ``undetermined`` rule.
* :func:`wilson`, :func:`mcnemar`, :func:`ternary_headline`: helpers for attribution and flips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal, NamedTuple

import numpy as np

from evalcore.stats.bootstrap import (
    generator,
    percentile_interval,
    posterior_interval,
    resample,
    resample_counts,
    sparse_table,
)


def scipy_stats() -> Any:
    """scipy.stats, imported on first use (it costs about a second of start-up)."""
    from scipy import stats

    return stats


#: |phi| that counts as an association worth a class (see :func:`classify_association`).
ASSOCIATION_THRESHOLD = 0.25
#: Two-sided level of the phi intervals the class rule reads: 90%, i.e. each bound is a
#: one-sided 95% bound (5% in each tail).
DEFAULT_LEVEL = 0.90
#: A people instrument with fewer labelled answers than this never decides a class.
MIN_PEOPLE = 30
#: An instrument whose column of either criterion has fewer failures (or fewer passes) than this
#: cannot show an association absent: a handful of failures cannot tell "never together" from
#: chance, whatever the interval (see :func:`classify_association`).
MIN_CELL_FAILURES = 5


# --------------------------------------------------------------------------------------------
# Small value types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stat:
    """A statistic that may be undefined: ``value`` is None exactly when ``reason`` says why."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class TwoByTwo:
    """Counts of answers by the verdicts on A (rows) and B (columns). Non-negative integers."""

    a_pass_b_pass: int
    a_pass_b_fail: int
    a_fail_b_pass: int
    a_fail_b_fail: int

    def __post_init__(self) -> None:
        for name in ("a_pass_b_pass", "a_pass_b_fail", "a_fail_b_pass", "a_fail_b_fail"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"TwoByTwo.{name} must be a non-negative integer, got {v!r}")
            object.__setattr__(self, name, int(v))

    # row totals (A) ---------------------------------------------------------------------------
    @property
    def a_pass(self) -> int:
        return self.a_pass_b_pass + self.a_pass_b_fail

    @property
    def a_fail(self) -> int:
        return self.a_fail_b_pass + self.a_fail_b_fail

    # column totals (B) ------------------------------------------------------------------------
    @property
    def b_pass(self) -> int:
        return self.a_pass_b_pass + self.a_fail_b_pass

    @property
    def b_fail(self) -> int:
        return self.a_pass_b_fail + self.a_fail_b_fail

    @property
    def n(self) -> int:
        return self.a_pass_b_pass + self.a_pass_b_fail + self.a_fail_b_pass + self.a_fail_b_fail

    @classmethod
    def from_fails(cls, a_fail: np.ndarray, b_fail: np.ndarray, weights: np.ndarray | None = None) -> TwoByTwo:
        """Cross-tabulate two aligned boolean "failed" columns (one entry per answer; with
        ``weights``, entry i stands for ``weights[i]`` answers: patterns and their numbers)."""
        a, b = _fail_pair(a_fail, b_fail)
        if weights is not None:
            w = np.asarray(weights, dtype=np.int64)
            if w.shape != a.shape:
                raise ValueError(f"weights must give one number per entry, got {w.shape} for {a.shape}")
            n11, r1, c1 = int(w[a & b].sum()), int(w[a].sum()), int(w[b].sum())
            return cls(int(w.sum()) - r1 - c1 + n11, c1 - n11, r1 - n11, n11)
        n11 = int(np.count_nonzero(a & b))
        r1 = int(np.count_nonzero(a))
        c1 = int(np.count_nonzero(b))
        return cls(a.size - r1 - c1 + n11, c1 - n11, r1 - n11, n11)


class BootstrapInterval(NamedTuple):
    """Percentile bootstrap bounds (None when no resample had a defined phi) and the number of
    resamples they rest on."""

    lo: float | None
    hi: float | None
    n_used: int


class PhiInterval(NamedTuple):
    """phi on the full sample with an interval. A tuple whose first three fields are those of
    :class:`BootstrapInterval` (so ``iv[0], iv[1]`` are the bounds).

    ``method`` is ``"bootstrap"`` (``n_boot`` resamples drawn, ``n_used`` of them had a defined
    phi), ``"analytic"`` (``n_boot == 0`` and ``n_used == n`` when phi is defined) or
    ``"posterior"`` (a sparse table: ``n_boot`` draws of its cells' shares,
    :func:`phi_interval_posterior`). ``reason`` says why ``value`` is None, or notes dropped
    resamples.
    """

    lo: float | None
    hi: float | None
    n_used: int
    value: float | None
    level: float
    method: Literal["bootstrap", "analytic", "posterior"]
    n: int
    n_boot: int
    reason: str | None = None


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _fail_pair(a_fail, b_fail) -> tuple[np.ndarray, np.ndarray]:
    a = _bool_column(a_fail, "a_fail")
    b = _bool_column(b_fail, "b_fail")
    if a.shape != b.shape:
        raise ValueError(f"a_fail and b_fail must have the same length, got {a.size} and {b.size}")
    return a, b


def _bool_column(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.size == 0:
        return arr.astype(bool)
    if arr.dtype.kind in "iuf" and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise ValueError(f"{name} must hold booleans (or 0/1), got dtype {arr.dtype}")


def check_level(level: float) -> None:
    if not (0.0 < float(level) < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")


def _answers(n: int) -> str:
    return f"{n} answer" if n == 1 else f"{n} answers"


def _in_these(n: int) -> str:
    return "in the only answer" if n == 1 else f"in these {n} answers"


# --------------------------------------------------------------------------------------------
# phi and the conditioned rates
# --------------------------------------------------------------------------------------------


def _phi_from_counts(n11, r1, c1, n):
    """phi from the fail/fail cell and the fail margins; vectorised, nan where undefined.

    n11*n00 - n10*n01 simplifies to n*n11 - r1*c1 (substitute n00 = n - r1 - c1 + n11,
    n10 = r1 - n11, n01 = c1 - n11), so only three counts are needed.
    """
    n11 = np.asarray(n11, dtype=float)
    r1 = np.asarray(r1, dtype=float)
    c1 = np.asarray(c1, dtype=float)
    n = np.asarray(n, dtype=float)
    den = r1 * (n - r1) * c1 * (n - c1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (n * n11 - r1 * c1) / np.sqrt(den)
    return np.where(den > 0, np.clip(out, -1.0, 1.0), np.nan)


def phi(t: TwoByTwo, *, a: str = "A", b: str = "B") -> Stat:
    """The phi coefficient of a 2x2, with "fail" coded 1::

        phi = (n11*n00 - n10*n01) / sqrt(r1 * r0 * c1 * c0)

    It is Pearson's correlation of the two 0/1 "failed" columns; +1 when A and B always fail
    together, -1 when exactly one of them fails on every answer, 0 when the fail/fail cell is what
    independence predicts (n11 = r1*c1/n). Flipping the coding of *both* criteria leaves it
    unchanged; flipping one flips its sign.

    Edge cases
    ----------
    * ``n == 0``: undefined, reason "no answers: phi is undefined".
    * a row or column total is 0 (a criterion that never fails, or fails on every answer, in
      these answers; with one answer this is always the case): undefined, because the
      denominator is 0 -- a constant column carries no information about co-failure. The
      reason names the criterion using the ``a`` / ``b`` labels (default "A" / "B"), e.g.
      ``phi(t, b="answers_question")`` gives "answers_question never fails in these 600
      answers: phi is undefined for a constant column".
    * an empty *cell* is fine: phi is defined (and is +-1 when both off-diagonal or both
      diagonal cells are empty).
    """
    n = t.n
    if n == 0:
        return Stat(None, "no answers: phi is undefined")
    constant = []
    for name, fails in ((a, t.a_fail), (b, t.b_fail)):
        if fails == 0:
            constant.append(f"{name} never fails")
        elif fails == n:
            constant.append(f"{name} fails on every answer")
    if constant:
        what = "a constant column" if len(constant) == 1 else "constant columns"
        return Stat(None, f"{' and '.join(constant)} {_in_these(n)}: phi is undefined for {what}")
    value = float(_phi_from_counts(t.a_fail_b_fail, t.a_fail, t.b_fail, n))
    return Stat(value, None)


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion k/n (``scipy.stats.binomtest(k, n)
    .proportion_ci(method="wilson")``)::

        centre = (k + z^2/2) / (n + z^2),   half = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)

    with z the (1 + level)/2 normal quantile. Unlike the Wald interval it stays inside [0, 1]
    and is not degenerate at k = 0 or k = n (k = 0 gives [0, z^2 / (n + z^2)]).
    Returns None when n == 0 (no proportion to bound).
    """
    check_level(level)
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None
    # the interval in closed form, with the arithmetic of scipy.stats.binomtest's wilson method and
    # the standard library's normal quantile (within a few units in the last place of scipy's bounds,
    # tests/test_stats.py): importing scipy.stats costs about a second, scipy.special a tenth
    z = NormalDist().inv_cdf(0.5 + 0.5 * level)
    p = k / n
    denom = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else centre - delta, 1.0 if k == n else centre + delta)


def conditioned_rates(t: TwoByTwo, *, a: str = "A", b: str = "B", level: float = 0.95) -> dict:
    """Rate at which B fails within each row of A, their ratio, and Wilson intervals.

    Returns plain data::

        {"pass_row": {"k": a_pass_b_fail, "n": a_pass, "rate": k/n, "ci": (lo, hi), "reason": None},
         "fail_row": {"k": a_fail_b_fail, "n": a_fail, "rate": k/n, "ci": (lo, hi), "reason": None},
         "ratio":    {"value": fail_row rate / pass_row rate, "reason": None}}

    ``ci`` is the Wilson interval at ``level`` (default 95%, see :func:`wilson`). Dividing each
    cell by its own row total is what makes the rows comparable when they hold different numbers
    of answers; a ratio far from 1 says knowing A's verdict tells you about B's.

    Edge cases: an empty row has ``rate`` and ``ci`` None with a reason, and then the ratio is
    undefined too; a pass-row rate of 0 leaves the ratio undefined (division by zero) although
    both rates are defined; a fail-row rate of 0 over a positive pass-row rate gives ratio 0.
    The ``a`` / ``b`` labels only name the criteria in the reasons.
    """
    out: dict = {}
    rows = (
        ("pass_row", t.a_pass_b_fail, t.a_pass, f"no answers where {a} passes"),
        ("fail_row", t.a_fail_b_fail, t.a_fail, f"no answers where {a} fails"),
    )
    for key, k, n, empty in rows:
        if n == 0:
            out[key] = {"k": k, "n": n, "rate": None, "ci": None, "reason": f"{empty}: the rate is undefined"}
        else:
            out[key] = {"k": k, "n": n, "rate": k / n, "ci": wilson(k, n, level), "reason": None}
    p_pass, p_fail = out["pass_row"], out["fail_row"]
    if p_pass["rate"] is None:
        ratio = {"value": None, "reason": f"{p_pass['reason']}, so the ratio is too"}
    elif p_fail["rate"] is None:
        ratio = {"value": None, "reason": f"{p_fail['reason']}, so the ratio is too"}
    elif p_pass["rate"] == 0:
        ratio = {"value": None, "reason": f"{b} never fails where {a} passes: the ratio divides by zero"}
    else:
        ratio = {"value": p_fail["rate"] / p_pass["rate"], "reason": None}
    out["ratio"] = ratio
    return out


# --------------------------------------------------------------------------------------------
# Intervals for phi
# --------------------------------------------------------------------------------------------


def _bootstrap_phis(
    columns: list[tuple[np.ndarray, np.ndarray]], n: int, rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    """phi of every column pair on ``n_boot`` resamples of the ``n`` answers; the same resampled
    answers for every pair. Returns an (n_boot, len(columns)) array, nan where undefined.

    Every phi reads an answer only through its pattern of fail flags over all the columns, so a
    resample is drawn as how many of its n answers have each pattern: multinomial(n, the patterns'
    shares), the distribution of n answers drawn with replacement, at the cost of one number per
    pattern (a few dozen for people's labels on six criteria) instead of one per answer; with
    nearly as many patterns as answers, n answers are drawn and counted by pattern. Then
    n11 = w . (a & b), r1 = w . a, c1 = w . b per pair, w the pattern counts. Resamples are drawn
    in chunks to bound memory.
    """
    k = len(columns)
    # the distinct columns (criteria repeat across pairs), then the answers' distinct patterns
    cols: list[np.ndarray] = []
    where: list[tuple[int, int]] = []
    for a, b in columns:
        pos = []
        for c in (a, b):
            hit = next((i for i, d in enumerate(cols) if np.array_equal(c, d)), None)
            if hit is None:
                cols.append(np.asarray(c, dtype=bool))
                hit = len(cols) - 1
            pos.append(hit)
        where.append((pos[0], pos[1]))
    patterns, inverse, counts = np.unique(np.column_stack(cols), axis=0, return_inverse=True, return_counts=True)
    p = patterns.shape[0]
    x = np.empty((p, 3 * k), dtype=float)
    for j, (ia, ib) in enumerate(where):
        a, b = patterns[:, ia], patterns[:, ib]
        x[:, 3 * j] = a & b
        x[:, 3 * j + 1] = a
        x[:, 3 * j + 2] = b
    inverse = np.asarray(inverse).reshape(-1)

    def phis(w: np.ndarray) -> np.ndarray:
        s = w @ x  # (m, 3k): n11, r1, c1 per pair, w the pattern counts of m resamples
        return _phi_from_counts(s[:, 0::3], s[:, 1::3], s[:, 2::3], n)

    def drawn(idx: np.ndarray) -> np.ndarray:  # answers drawn, counted by pattern
        m = idx.shape[0]
        return phis(np.bincount((inverse[idx] + p * np.arange(m)[:, None]).ravel(), minlength=m * p).reshape(m, p))

    # few patterns: multinomial counts (p numbers a resample); many (close to one per answer): n
    # draws of an answer, counted by pattern (the same distribution, at n numbers a resample)
    if p * 8 <= n:
        return resample_counts(phis, counts, n_boot, rng).reshape(n_boot, k)
    return resample(drawn, n, n_boot, rng).reshape(n_boot, k)


def _percentile(values: np.ndarray, level: float) -> BootstrapInterval:
    p = percentile_interval(values, level)
    return BootstrapInterval(p.lo, p.hi, p.used)


def phi_interval_bootstrap(
    a_fail: np.ndarray, b_fail: np.ndarray, *, seed, n_boot: int = 2000, level: float = DEFAULT_LEVEL
) -> BootstrapInterval:
    """Percentile bootstrap interval for phi over answers.

    Draws ``n_boot`` resamples of the answers with replacement (``numpy.random.defaultgenerator(seed)``),
    computes phi on each, and returns the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles
    (numpy's default linear interpolation) as ``(lo, hi, n_used)``. The default level 0.90 makes
    each bound a one-sided 95% bound.

    A resample in which A or B happens to be constant has no phi; it is *dropped and counted*:
    ``n_used`` is the number of resamples the bounds rest on. When ``n_used`` is well below
    ``n_boot`` the failures are rare and the interval is optimistic (conditioned on seeing at
    least one failure of each). If phi is undefined on the full sample (a constant column) every
    resample is too, and the result is ``(None, None, 0)``; likewise for empty input.

    Same seed, same data -> same interval. Resampling is the same as in
    :func:`phi_intervals_paired`, so a one-instrument paired call gives identical bounds.
    """
    a, b = _fail_pair(a_fail, b_fail)
    check_level(level)
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    rng = generator(seed)
    if a.size == 0:
        return BootstrapInterval(None, None, 0)
    return _percentile(_bootstrap_phis([(a, b)], a.size, rng, n_boot)[:, 0], level)


def _phi_se(t: TwoByTwo, value: float) -> float:
    """Asymptotic standard error of phi (Bishop, Fienberg & Holland 1975, section 11.3; the
    delta method on the multinomial cell proportions)::

        n var = 1 - phi^2 + (phi + phi^3/2) * (p1 - q1)(p2 - q2) / sqrt(p1 q1 p2 q2)
                - (3/4) phi^2 * ((p1 - q1)^2 / (p1 q1) + (p2 - q2)^2 / (p2 q2))

    where p1 = r1/n, q1 = r0/n (A's margins) and p2 = c1/n, q2 = c0/n (B's).
    At phi = 0 this is 1/n. It vanishes at |phi| = 1 (a perfect table has no first-order
    sampling variance), so the normal interval collapses to a point there.
    """
    n = t.n
    p1, q1 = t.a_fail / n, t.a_pass / n
    p2, q2 = t.b_fail / n, t.b_pass / n
    ph = value
    var = (
        1
        - ph**2
        + (ph + ph**3 / 2) * (p1 - q1) * (p2 - q2) / math.sqrt(p1 * q1 * p2 * q2)
        - 0.75 * ph**2 * ((p1 - q1) ** 2 / (p1 * q1) + (p2 - q2) ** 2 / (p2 * q2))
    ) / n
    return math.sqrt(max(var, 0.0))


def phi_interval_analytic(t: TwoByTwo, level: float = DEFAULT_LEVEL) -> tuple[float | None, float | None]:
    """Large-n normal interval ``phi +- z * SE``, clipped to [-1, 1].

    SE is the asymptotic standard error of phi from Bishop, Fienberg & Holland (1975), i.e. the
    delta method on the four cell proportions (see ``_phi_se``); z is the ``(1 + level)/2``
    standard normal quantile (1.645 at the default 90%). Not Fisher's z: that transform is
    variance-stabilising for bivariate-normal data, not for 0/1 columns with skewed margins.
    Meant for large n (the :func:`phi_interval` default switches to it above 20,000 answers,
    where the bootstrap is costly and the two agree); at |phi| = 1 it degenerates to a point.
    Returns ``(None, None)`` when phi is undefined (see :func:`phi` for the reason).
    """
    check_level(level)
    s = phi(t)
    if not s.defined:
        return (None, None)
    assert s.value is not None
    z = NormalDist().inv_cdf((1 + level) / 2)
    half = z * _phi_se(t, s.value)
    return (max(-1.0, s.value - half), min(1.0, s.value + half))


def phi_interval(
    a_fail: np.ndarray,
    b_fail: np.ndarray,
    *,
    seed,
    n_boot: int = 2000,
    level: float = DEFAULT_LEVEL,
    analytic_above: int = 20000,
) -> PhiInterval:
    """phi with an interval: for a sparse table (:func:`evalcore.stats.bootstrap.sparse_table`: a cell,
    observed or expected, below 5 answers) the posterior interval (:func:`phi_interval_posterior`,
    ``n_boot`` draws), else the percentile bootstrap (:func:`phi_interval_bootstrap`) up to
    ``analytic_above`` answers and the analytic interval (:func:`phi_interval_analytic`) above.
    ``seed`` is required whatever branch a call takes, so that it is reproducible."""
    a, b = _fail_pair(a_fail, b_fail)
    t = TwoByTwo.from_fails(a, b)
    s = phi(t)
    if _sparse(t):
        return phi_interval_posterior(t, seed=seed, n_draws=n_boot, level=level)
    if t.n > analytic_above:
        return _analytic(t, level)
    lo, hi, used = phi_interval_bootstrap(a, b, seed=seed, n_boot=n_boot, level=level)
    return PhiInterval(lo, hi, used, s.value, level, "bootstrap", t.n, n_boot, _boot_reason(s, used, n_boot))


def _sparse(t: TwoByTwo) -> bool:
    return sparse_table(np.array([[t.a_pass_b_pass, t.a_pass_b_fail], [t.a_fail_b_pass, t.a_fail_b_fail]]))


def _phi_of_shares(shares: np.ndarray) -> np.ndarray:
    """phi of (m, 4) shares of the cells in TwoByTwo's order (n00, n01, n10, n11)."""
    n11 = shares[:, 3]
    return _phi_from_counts(n11, shares[:, 2] + n11, shares[:, 1] + n11, 1.0)


def phi_interval_posterior(t: TwoByTwo, *, seed, n_draws: int = 2000, level: float = DEFAULT_LEVEL) -> PhiInterval:
    """phi with the interval for sparse tables: the equal-tailed ``level`` quantiles of phi over
    ``n_draws`` draws of the four cells' shares from Dirichlet(cells + 0.75)
    (:func:`evalcore.stats.bootstrap.posterior_interval`). Unlike the percentile bootstrap it does not
    collapse on an empty or nearly empty cell: on 44 / 8 / 8 / 0 answers (phi -0.15, Fisher's exact
    p = 0.58) it reaches above 0. Its coverage at n = 30-120 is in docs/ANALYSIS.md (bench/coverage.py).
    Undefined (no interval, with :func:`phi`'s reason) when a column is constant."""
    check_level(level)
    s = phi(t)
    if not s.defined:
        return PhiInterval(None, None, 0, None, level, "posterior", t.n, n_draws, s.reason)
    cells = [t.a_pass_b_pass, t.a_pass_b_fail, t.a_fail_b_pass, t.a_fail_b_fail]
    p = posterior_interval(cells, _phi_of_shares, rng=generator(seed), n_draws=n_draws, level=level)
    return PhiInterval(p.lo, p.hi, p.used, s.value, level, "posterior", t.n, n_draws, _boot_reason(s, p.used, n_draws))


def _analytic(t: TwoByTwo, level: float) -> PhiInterval:
    s = phi(t)
    lo, hi = phi_interval_analytic(t, level)
    return PhiInterval(lo, hi, t.n if s.defined else 0, s.value, level, "analytic", t.n, 0, s.reason)


def _boot_reason(s: Stat, used: int, n_boot: int) -> str | None:
    if not s.defined:
        return s.reason
    if used < n_boot:
        return f"{n_boot - used} of {n_boot} resamples had a constant column and were dropped"
    return None


def phi_intervals_paired(
    columns: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    seed,
    n_boot: int = 2000,
    level: float = DEFAULT_LEVEL,
    analytic_above: int | None = None,
    weights: np.ndarray | None = None,
) -> dict[str, PhiInterval]:
    """Bootstrap intervals for several instruments on the *same* answers, paired.

    ``columns`` maps an instrument name to its ``(a_fail, b_fail)`` columns; every column must be
    aligned on the same answers (index i is the same answer for every instrument). Each
    resample draws one set of answer indices and applies it to every instrument, so the
    intervals share their sampling noise and can be compared with each other (the difference of
    two instruments' phis on one resample is a paired difference). Undefined resamples are
    dropped per instrument and counted in ``n_used``.

    With ``analytic_above`` set and more answers than that, every instrument gets the analytic
    interval instead (:func:`phi_interval_analytic`; at that size sampling noise is small and
    the pairing no longer matters for reading the intervals). The default (None) always
    bootstraps. Whatever the size, an instrument whose 2x2 is sparse (a cell, observed or expected,
    below 5 answers) gets the posterior interval of :func:`phi_interval_posterior` instead, drawn
    after the resamples from the same seeded generator: the bootstrap collapses on such a table. ``weights``: the columns are patterns, entry i standing for ``weights[i]``
    answers; only above ``analytic_above`` answers (a bootstrap resamples answers, not patterns).
    """
    check_level(level)
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    names = list(columns)
    pairs = [_fail_pair(*columns[k]) for k in names]
    sizes = {p[0].size for p in pairs}
    if len(sizes) > 1:
        raise ValueError(f"paired instruments must cover the same answers, got lengths {sorted(sizes)}")
    rng = generator(seed)
    n = sizes.pop() if sizes else 0
    if weights is not None:
        n = int(np.asarray(weights).sum())
        if analytic_above is None or n <= analytic_above:
            raise ValueError("weighted columns take the analytic interval: give analytic_above below their total")
    tables = [TwoByTwo.from_fails(a, b, weights) for a, b in pairs]
    out = {}
    if analytic_above is not None and n > analytic_above:
        out = {name: _analytic(t, level) for name, t in zip(names, tables)}
    else:
        boots = _bootstrap_phis(pairs, n, rng, n_boot) if n and pairs else np.full((n_boot, len(pairs)), np.nan)
        for j, (name, t) in enumerate(zip(names, tables)):
            s = phi(t)
            lo, hi, used = _percentile(boots[:, j], level)
            out[name] = PhiInterval(lo, hi, used, s.value, level, "bootstrap", n, n_boot, _boot_reason(s, used, n_boot))
    for name, t in zip(names, tables):
        if _sparse(t):
            out[name] = phi_interval_posterior(t, seed=rng, n_draws=n_boot, level=level)
    return out


# --------------------------------------------------------------------------------------------
# The association class rule
# --------------------------------------------------------------------------------------------

Kind = Literal["single", "one_criterion", "grouped", "people", "other"]  # "other": an imported run, passed over


@dataclass(frozen=True)
class InstrumentEvidence:
    """One instrument's phi for one criterion pair, on the answers it shares with the others.

    ``kind``: ``"single"`` = one call returned both criteria; ``"one_criterion"`` = the two
    criteria were judged in separate calls; ``"people"`` = human labels; ``"grouped"`` = a
    grouped run the caller has not resolved -- it is shown but never counted (pass ``"single"``
    when both criteria sat in one group's call, ``"one_criterion"`` otherwise). ``n`` is the
    number of answers; ``reason`` may carry why ``value`` / the interval is None.
    """

    name: str
    kind: Kind
    value: float | None
    lo: float | None
    hi: float | None
    n: int
    reason: str | None = None
    #: answers failing each criterion (None: not known), read by the sparse-table rule
    a_fail: int | None = None
    b_fail: int | None = None

    @classmethod
    def from_interval(cls, name: str, kind: Kind, iv: PhiInterval) -> InstrumentEvidence:
        return cls(name, kind, iv.value, iv.lo, iv.hi, iv.n, iv.reason)


def phi_bound(n: int, a_fail: int, b_fail: int) -> float:
    """The largest |phi| two criteria can reach on ``n`` answers with these failure counts
    (Guilford's phi_max): sqrt(p (1 - q) / (q (1 - p))) with p <= q the smaller and larger failure
    rate (for a negative association the same with one rate turned over); 0 when a column is
    constant."""
    if n <= 0 or not (0 < a_fail < n and 0 < b_fail < n):
        return 0.0
    pa, pb = a_fail / n, b_fail / n

    def bound(p: float, q: float) -> float:
        p, q = min(p, q), max(p, q)
        return math.sqrt(p * (1 - q) / (q * (1 - p)))

    return max(bound(pa, pb), bound(pa, 1 - pb))


def _too_sparse(e: InstrumentEvidence, t: float) -> str | None:
    """Why an instrument's table is too sparse to read an association as absent, or None."""
    if e.a_fail is None or e.b_fail is None or e.n <= 0:
        return None
    column = "people column" if e.kind == "people" else f"{e.name} column"
    for which, k in (("first", e.a_fail), ("second", e.b_fail)):
        if min(k, e.n - k) < MIN_CELL_FAILURES:
            what = "failures" if k < e.n - k else "passes"
            return (
                f"too few {what} in the {column} ({min(k, e.n - k)} of {e.n} on the {which} criterion, fewer than "
                f"{MIN_CELL_FAILURES}): an absence cannot be read"
            )
    cap = phi_bound(e.n, e.a_fail, e.b_fail)
    if cap <= t:
        return (
            f"too few failures in the {column} ({e.a_fail} and {e.b_fail} of {e.n}): phi cannot exceed {cap:.2f} "
            f"here, so it cannot show an association of {t:g} absent"
        )
    return None


@dataclass(frozen=True)
class Classification:
    cls: Literal["induced", "real", "undetermined"]
    reason: str


def _fmt_iv(e: InstrumentEvidence) -> str:
    return f"[{e.lo:.2f}, {e.hi:.2f}]"


def _reading(e: InstrumentEvidence, t: float) -> tuple[str, str]:
    """("present" | "absent" | "straddles" | "none", description)."""
    if e.lo is None or e.hi is None:
        why = f" ({e.reason})" if e.reason else ""
        return "none", f"{e.name}: no interval{why}"
    if e.lo > t:
        return "present", f"{e.name}: interval {_fmt_iv(e)} lies above {t:g}"
    if e.hi < -t:
        return "present", f"{e.name}: interval {_fmt_iv(e)} lies below -{t:g}"
    if -t < e.lo and e.hi < t:
        sparse = _too_sparse(e, t)
        if sparse is not None:
            return "none", f"{e.name}: interval {_fmt_iv(e)}, but {sparse}"
        return "absent", f"{e.name}: interval {_fmt_iv(e)} lies inside (-{t:g}, {t:g})"
    edge = t if e.hi >= t else -t
    return "straddles", f"{e.name}: interval {_fmt_iv(e)} straddles {edge:g}"


def classify_association(
    instruments: list[InstrumentEvidence], *, threshold: float = ASSOCIATION_THRESHOLD, min_people: int = MIN_PEOPLE
) -> Classification:
    """Class one criterion pair as ``induced``, ``real`` or ``undetermined``.

    Every instrument is read through its interval (90% by default, so each bound is one-sided
    95%) against the threshold T (default 0.25):

    * **present**: lo > +T, or hi < -T (a negative association, handled symmetrically);
    * **absent**: the whole interval lies inside (-T, +T), and the table can show an association
      at all: each criterion's column has at least :data:`MIN_CELL_FAILURES` failures and passes
      (``a_fail`` / ``b_fail`` given), and the failure rates let |phi| exceed T
      (:func:`phi_bound`). A sparse table reads as no interval, with the reason ("too few failures
      in the people column"): 3 failures, none together, say nothing about whether the two
      criteria fail together. (A sparse 2x2 gets the posterior interval of
      :func:`phi_interval_posterior`, which the percentile bootstrap's collapse on empty cells
      made necessary: 44 / 8 / 8 / 0 gave [-0.22, -0.09], excluding 0 at Fisher's p = 0.58.)
    * otherwise the interval **straddles** +T or -T (or there is no interval at all).

    People instruments with ``n < min_people`` never count. Then:

    * ``real``: people (n >= min_people) show it present. People outrank every model instrument:
      an association a one-criterion harness destroys is still real when people see it.
    * ``induced``: at least one single-call instrument shows it present, *every* one-criterion
      instrument given shows it absent (at least one must be given), and people
      (n >= min_people) show it absent.
    * otherwise ``undetermined``, with the first missing piece as the reason, checked in this
      order: no people at all ("no human labels on the shared answers"); only small people
      instruments ("too few human labels (15 < 30)"); people straddling or without an interval;
      several people instruments disagreeing; no single-call instrument showing it present; no
      one-criterion instrument; a one-criterion instrument not showing it absent.

    ``grouped`` instruments are ignored (the caller resolves them to single / one_criterion).
    The intervals must come from the same shared answers for the comparison to mean anything;
    that is the caller's job (see :func:`phi_intervals_paired`).
    """
    t = float(threshold)
    if not t > 0:
        raise ValueError(f"threshold must be positive, got {threshold!r}")
    people = [e for e in instruments if e.kind == "people"]
    if not people:
        return Classification("undetermined", "no human labels on the shared answers")
    counted = [e for e in people if e.n >= min_people]
    if not counted:
        most = max(e.n for e in people)
        return Classification("undetermined", f"too few human labels ({most} < {min_people})")
    readings = [(e, *_reading(e, t)) for e in counted]
    present = [r for r in readings if r[1] == "present"]
    absent = [r for r in readings if r[1] == "absent"]
    unclear = [r for r in readings if r[1] in ("straddles", "none")]
    if present and not absent and not unclear:
        return Classification("real", "; ".join(r[2] for r in present))
    if unclear:
        return Classification("undetermined", "; ".join(r[2] for r in unclear))
    if present and absent:
        return Classification("undetermined", "people disagree: " + "; ".join(r[2] for r in readings))
    # people (every counted instrument) show it absent
    singles = [(e, *_reading(e, t)) for e in instruments if e.kind == "single"]
    shown = [r for r in singles if r[1] == "present"]
    if not shown:
        if not singles:
            return Classification("undetermined", "no single-call instrument to show an induced association")
        return Classification(
            "undetermined", "no single-call instrument shows the association: " + "; ".join(r[2] for r in singles)
        )
    splits = [(e, *_reading(e, t)) for e in instruments if e.kind == "one_criterion"]
    if not splits:
        return Classification("undetermined", "no one-criterion instrument to compare with")
    not_absent = [r for r in splits if r[1] != "absent"]
    if not_absent:
        return Classification("undetermined", "; ".join(r[2] for r in not_absent))
    return Classification(
        "induced", "; ".join(r[2] for r in shown) + "; but " + "; ".join(r[2] for r in splits + absent)
    )


def ternary_headline(correct: int, partial: int, wrong: int) -> float | None:
    """The ternary headline (correct + 0.5 * partial) / N with N = correct + partial + wrong:
    a partial answer counts half. None when N == 0 (no graded answers)."""
    counts = (int(correct), int(partial), int(wrong))
    if min(counts) < 0:
        raise ValueError(f"ternary_headline needs non-negative counts, got {counts}")
    n = sum(counts)
    if n == 0:
        return None
    return (counts[0] + 0.5 * counts[1]) / n
