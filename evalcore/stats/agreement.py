"""Agreement statistics for the judge report card: pure functions, no I/O, no DuckDB, no pandas.

Ratings are **category codes**: integers ``0 .. k-1`` in numpy arrays (for ordered scales the code
order is the scale order: fail < pass, wrong < partial < correct, 0 < 1 < ... on an ordinal
scale); a missing rating is ``-1`` (:data:`MISSING`). Every function returns a
:class:`evalcore.stats.Stat` (a value, or None with the reason it is undefined) or a small frozen
value; randomness only ever comes from an explicit ``seed``.

Contents
--------
* :func:`confusion`, :func:`weight_matrix`, :func:`cohen_kappa`, :func:`cohen_kappa_interval`,
  :func:`accuracy`: one rater against another (a judge against gold, two judges, two people).
* :func:`fleiss_kappa`, :func:`fleiss_kappa_from_sums`, :func:`krippendorff_alpha`: more than two
  raters, or interchangeable rater slots (repeat rounds of a judge, crowd slots).
* :func:`strict_majority`: the majority label of several raters (None on a tie).
* :func:`rogan_gladen`, :func:`weighted_se_sp`, :func:`corrected_pass_rate`: a judge's pass rate
  corrected for its measured sensitivity and specificity, with a seeded stratified bootstrap.

Which statistic for which raters
--------------------------------
Cohen's kappa compares two *fixed* raters: the same person (or judge) gave every rating in one
column. Rater *slots* (column "rater 1" holding whoever happened to rate each item, as crowd data
sets ship them; or judge rounds, which are interchangeable replicates) are not people, and Cohen's
kappa between slots depends on an arbitrary assignment; for them use Fleiss' kappa and
Krippendorff's alpha, which do not depend on which slot holds which rating. The report card
(:mod:`evalcore.review.reportcard`) follows this rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from evalcore.stats.association import Stat, check_level
from evalcore.stats.bootstrap import generator, percentile_interval, posterior_interval, resample_counts, sparse_table

MISSING = -1
Weights = Literal["linear", "quadratic"] | None


# --------------------------------------------------------------------------- helpers


def _codes(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "b":
            return arr.astype(np.int64)
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            return arr.astype(np.int64)
        raise ValueError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = _codes(a, "a"), _codes(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
    keep = (a != MISSING) & (b != MISSING)
    return a[keep], b[keep]


def _k(k: int | None, *arrays: np.ndarray) -> int:
    top = max((int(x.max()) + 1 for x in arrays if x.size), default=0)
    if k is None:
        return max(top, 1)
    if top > k or any(x.size and int(x.min()) < 0 for x in arrays):
        raise ValueError(f"category codes must lie in 0..{k - 1}")
    return int(k)


# --------------------------------------------------------------------------- two raters


def confusion(a, b, k: int | None = None) -> np.ndarray:
    """The k x k table of counts: rows are ``a``'s categories, columns ``b``'s. Pairs where either
    rating is missing (-1) are left out."""
    a, b = _pair(a, b)
    k = _k(k, a, b)
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k)


def weight_matrix(k: int, weights: Weights = None) -> np.ndarray:
    """Agreement weights w_ij (1 on the diagonal): unweighted ``None`` is the identity; ``linear``
    is ``1 - |i - j| / (k - 1)``; ``quadratic`` is ``1 - ((i - j) / (k - 1))^2``."""
    i, j = np.indices((k, k))
    if weights is None or k == 1:
        return (i == j).astype(float)
    d = np.abs(i - j) / (k - 1)
    if weights == "linear":
        return 1.0 - d
    if weights == "quadratic":
        return 1.0 - d**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def _kappa_counts(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """kappa from (..., k, k) count tables; nan where undefined (no pairs, or chance agreement 1)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n[..., None, None]
        po = (p * w).sum(axis=(-2, -1))
        r, c = p.sum(axis=-1), p.sum(axis=-2)
        pe = np.einsum("...i,ij,...j->...", r, w, c)
        out = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (1.0 - pe > 1e-12), out, np.nan)


def cohen_kappa(a, b, k: int | None = None, weights: Weights = None) -> Stat:
    """Cohen's kappa of two fixed raters, weighted for ordered scales::

        kappa = (p_o - p_e) / (1 - p_e),   p_o = sum_ij w_ij p_ij,   p_e = sum_ij w_ij p_i. p_.j

    with p_ij the share of items rated i by ``a`` and j by ``b`` and w the agreement weights of
    :func:`weight_matrix` (unweighted: w = identity, p_o is the share of exact agreement). 1 is
    perfect agreement, 0 what chance agreement between these two margins gives, below 0 worse.

    Items where either rating is missing (-1) are left out. Undefined with a reason when no item
    has both ratings, or when chance agreement is already 1 (both raters gave every item the same
    single category: agreement is perfect but says nothing).
    """
    a, b = _pair(a, b)
    k = _k(k, a, b)
    if a.size == 0:
        return Stat(None, "no item has both ratings: kappa is undefined")
    value = float(_kappa_counts(confusion(a, b, k), weight_matrix(k, weights)))
    if math.isnan(value):
        return Stat(
            None,
            f"both raters use one and the same category on all {a.size} items: chance agreement "
            "is 1 and kappa is undefined",
        )
    return Stat(value)


def kappa_from_confusion(table, weights: Weights = None) -> Stat:
    """:func:`cohen_kappa` from a k x k table of counts (rows one rater, columns the other), as a
    query returns it."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"table must be k x k, got shape {t.shape}")
    if t.sum() == 0:
        return Stat(None, "no item has both ratings: kappa is undefined")
    value = float(_kappa_counts(t, weight_matrix(t.shape[0], weights)))
    if math.isnan(value):
        return Stat(
            None,
            f"both raters use one and the same category on all {int(t.sum())} items: chance agreement "
            "is 1 and kappa is undefined",
        )
    return Stat(value)


class KappaInterval(NamedTuple):
    """kappa on the full sample with a percentile bootstrap interval (``n_used`` of ``n_boot``
    resamples had a defined kappa)."""

    value: float | None
    lo: float | None
    hi: float | None
    n: int
    level: float
    n_boot: int
    n_used: int
    weights: str | None
    reason: str | None = None


def cohen_kappa_interval(
    a, b, *, seed, k: int | None = None, weights: Weights = None, n_boot: int = 1000, level: float = 0.95
) -> KappaInterval:
    """:func:`cohen_kappa` with a percentile bootstrap interval over items: ``n_boot`` resamples
    with replacement drawn by ``numpy.random.defaultgenerator(seed)``; the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles of the resampled kappas. A resample whose kappa is undefined is
    dropped and counted (``n_used``). Same seed and data, same interval. Each resample is drawn as
    its table of counts (multinomial over the observed cells: the distribution of a resample of
    items, at the cost of k x k numbers instead of n)."""
    check_level(level)
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    a, b = _pair(a, b)
    k = _k(k, a, b)
    s = cohen_kappa(a, b, k, weights)
    n = int(a.size)
    if s.value is None:
        return KappaInterval(None, None, None, n, level, n_boot, 0, weights, s.reason)
    w = weight_matrix(k, weights)
    # kappa depends on the items only through their table of counts, and the table of a resample of
    # n items drawn with replacement is multinomial(n, the observed shares): drawn as such (k x k
    # numbers per resample instead of n indices), the same distribution of resampled kappas
    cells = np.bincount(a * k + b, minlength=k * k)
    statistic = lambda t: _kappa_counts(t.reshape(-1, k, k), w)  # noqa: E731
    if k == 2 and sparse_table(cells.reshape(2, 2)):
        # a sparse pass/fail table: the posterior interval (bench/coverage.py: 93.7-96.8% at 95%, n = 60,
        # where these resamples covered 68.4-94.5%); larger tables are not simulated yet
        p = posterior_interval(cells, statistic, rng=generator(seed), n_draws=n_boot, level=level)
    else:
        p = percentile_interval(resample_counts(statistic, cells, n_boot, generator(seed)), level)
    if p.lo is None or p.hi is None:
        return KappaInterval(s.value, None, None, n, level, n_boot, 0, weights, "no resample had a defined kappa")
    reason = None if p.used == n_boot else f"{n_boot - p.used} of {n_boot} resamples had no kappa and were dropped"
    return KappaInterval(s.value, p.lo, p.hi, n, level, n_boot, p.used, weights, reason)


def accuracy(a, b) -> Stat:
    """Share of items where the two ratings are equal, over items where both are present. To count
    a missing rating as a miss (an unparseable judge verdict), code it as its own category instead
    of -1."""
    a, b = _pair(a, b)
    if a.size == 0:
        return Stat(None, "no item has both ratings: accuracy is undefined")
    return Stat(float(np.mean(a == b)))


# --------------------------------------------------------------------------- several raters


def fleiss_kappa_from_sums(n_units: int, m: int, sum_sq: float, totals: Sequence[float]) -> Stat:
    """Fleiss' kappa from the sums a query can compute: ``n_units`` items each rated by ``m``
    raters, ``sum_sq`` = sum over items and categories of n_ij^2 (n_ij = raters putting item i in
    category j), ``totals[j]`` = sum over items of n_ij::

        P_i = (sum_j n_ij^2 - m) / (m (m - 1)),   P_bar = mean_i P_i = (sum_sq - N m) / (N m (m - 1))
        p_j = totals[j] / (N m),   P_e = sum_j p_j^2,   kappa = (P_bar - P_e) / (1 - P_e)
    """
    if n_units <= 0:
        return Stat(None, "no item has ratings from every rater: Fleiss' kappa is undefined")
    if m < 2:
        return Stat(None, "Fleiss' kappa needs at least two ratings per item")
    tot = np.asarray(totals, dtype=float)
    nm = n_units * m
    if not math.isclose(tot.sum(), nm):
        raise ValueError(f"category totals sum to {tot.sum()}, expected n_units * m = {nm}")
    p_bar = (sum_sq - nm) / (nm * (m - 1))
    pe = float(((tot / nm) ** 2).sum())
    if 1.0 - pe <= 1e-12:
        return Stat(None, f"every rating of the {n_units} items is the same category: Fleiss' kappa is undefined")
    return Stat(float((p_bar - pe) / (1.0 - pe)))


def fleiss_kappa(table) -> Stat:
    """Fleiss' kappa from an (items x categories) table of counts, every row summing to the same
    number m >= 2 of ratings (see :func:`fleiss_kappa_from_sums`). The raters need not be the same
    people from item to item: it is the statistic for interchangeable rater slots."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2:
        raise ValueError(f"table must be items x categories, got shape {t.shape}")
    if t.shape[0] == 0:
        return Stat(None, "no items: Fleiss' kappa is undefined")
    rows = t.sum(axis=1)
    if not np.allclose(rows, rows[0]):
        raise ValueError("every item must have the same number of ratings")
    return fleiss_kappa_from_sums(t.shape[0], int(round(rows[0])), float((t**2).sum()), t.sum(axis=0))


AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(data, level: AlphaLevel = "nominal", k: int | None = None, codes: bool = True) -> Stat:
    """Krippendorff's alpha (the ``krippendorff`` package) over a (raters x items) array of
    category codes with -1 (or NaN) for a missing rating: ``1 - D_o / D_e``, observed over expected
    disagreement among the pairable ratings of each item. Any number of raters, missing ratings
    allowed, and the raters may be interchangeable slots. ``level`` picks the distance: nominal
    (any difference counts 1), ordinal (by ranks), interval (squared difference), ratio (squared
    difference over the squared sum: the values' distance from zero matters). With ``codes`` False
    the values are scores (a -1 is a score) and only NaN is missing."""
    import krippendorff

    arr = np.asarray(data, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"data must be raters x items, got shape {arr.shape}")
    if codes:
        arr = np.where(arr == MISSING, np.nan, arr)
    pairable = np.sum(~np.isnan(arr), axis=0) >= 2
    if not pairable.any():
        return Stat(None, "no item has two ratings: alpha is undefined")
    arr = arr[:, pairable]
    values = np.unique(arr[~np.isnan(arr)])
    if values.size < 2:
        return Stat(None, f"every rating of the {int(pairable.sum())} items is the same value: alpha is undefined")
    domain = np.arange(k, dtype=float) if k is not None else values
    value = float(krippendorff.alpha(reliability_data=arr, level_of_measurement=level, value_domain=domain))
    if math.isnan(value):  # pragma: no cover - guarded above
        return Stat(None, "alpha is undefined on these ratings")
    return Stat(value)


def krippendorff_alpha_counts(
    value_counts, level: Literal["nominal", "ordinal", "interval"] = "nominal", weights=None
) -> Stat:
    """:func:`krippendorff_alpha` from an (items x values) table of how many ratings each item got
    of each value (the ``krippendorff`` package's ``value_counts``; the columns in value order): the
    same alpha, the same reasons, for data whose ratings per item are known only as counts (a run's
    judge rounds counted per answer in DuckDB).

    ``weights`` (nominal only): row r stands for ``weights[r]`` items with the same counts (the
    distinct patterns of a million answers, not the answers). Alpha is a function of the
    coincidence matrix, a sum over items, so identical items' contributions add up:
    o_ck = sum_u w_u n_uc (n_uk - [c = k]) / (m_u - 1), and nominal alpha = 1 - (n - 1) *
    sum_{c != k} o_ck / sum_{c != k} n_c n_k (Krippendorff 2011), n_c the column sums of o; the
    package's value for the repeated rows (tests/test_stats.py)."""
    vc = np.asarray(value_counts, dtype=float)
    if vc.ndim != 2:
        raise ValueError(f"value_counts must be items x values, got shape {vc.shape}")
    w = np.ones(len(vc)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (len(vc),):
        raise ValueError(f"weights must give one number per row of value_counts, got shape {w.shape}")
    pairable = (vc.sum(axis=1) >= 2) & (w > 0)
    if not pairable.any():
        return Stat(None, "no item has two ratings: alpha is undefined")
    vc, w = vc[pairable], w[pairable]
    seen = (vc * w[:, None]).sum(axis=0) > 0
    if int(seen.sum()) < 2:
        return Stat(None, f"every rating of the {int(w.sum())} items is the same value: alpha is undefined")
    vc = vc[:, seen]
    if weights is not None:
        if level != "nominal":
            raise ValueError("weighted value_counts are for nominal alpha only")
        m = vc.sum(axis=1)
        o = np.einsum("u,uc,uk->ck", w / (m - 1), vc, vc) - np.diag((w / (m - 1)) @ vc)
        n_c = o.sum(axis=0)
        n = n_c.sum()
        off = ~np.eye(len(n_c), dtype=bool)
        value = float(1 - (n - 1) * o[off].sum() / np.outer(n_c, n_c)[off].sum())
        return Stat(value)
    import krippendorff

    value = float(krippendorff.alpha(value_counts=vc, level_of_measurement=level))
    if math.isnan(value):  # pragma: no cover - guarded above
        return Stat(None, "alpha is undefined on these ratings")
    return Stat(value)


def strict_majority(ratings: Sequence[int]) -> int | None:
    """The category more than half of the present ratings give, or None (a tie, or no rating)."""
    vals = [int(r) for r in ratings if r is not None and int(r) != MISSING]
    # a handful of ratings a case (judge rounds, raters): counted in Python, which is several times
    # faster than numpy at this size and is called once per case
    for v in set(vals):
        if 2 * vals.count(v) > len(vals):  # at most one category can hold more than half
            return v
    return None


# --------------------------------------------------------------------------- corrected pass rates


def rogan_gladen(p_obs: float, se: float, sp: float) -> Stat:
    """The Rogan-Gladen estimate of the true pass rate from the judge's observed pass rate and its
    sensitivity (P(judge passes | gold passes)) and specificity (P(judge fails | gold fails))::

        p_true = (p_obs + sp - 1) / (se + sp - 1)

    clipped to [0, 1] (the reason says so when it clips). Undefined when se + sp <= 1: the judge is
    no better than chance against gold, so its verdicts carry no information to correct."""
    if se is None or sp is None or p_obs is None:
        return Stat(None, "sensitivity, specificity or the observed rate is unknown")
    j = se + sp - 1.0
    if j <= 1e-12:
        return Stat(
            None,
            f"sensitivity {se:.3f} + specificity {sp:.3f} <= 1: the judge does no better than chance "
            "against gold, nothing to correct with",
        )
    v = (p_obs + sp - 1.0) / j
    if v < 0.0 or v > 1.0:
        return Stat(min(1.0, max(0.0, v)), f"the estimate {v:.3f} fell outside [0, 1] and was clipped")
    return Stat(float(v))


def weighted_se_sp(judge_pass, gold_pass, weights=None) -> tuple[Stat, Stat]:
    """Weighted sensitivity sum(w [J and G]) / sum(w [G]) and specificity
    sum(w [not J and not G]) / sum(w [not G]), "pass" being the positive class."""
    j = np.asarray(judge_pass, dtype=bool)
    g = np.asarray(gold_pass, dtype=bool)
    w = np.ones(j.size) if weights is None else np.asarray(weights, dtype=float)
    if not (j.size == g.size == w.size):
        raise ValueError("judge_pass, gold_pass and weights must have the same length")
    pos, neg = float(w[g].sum()), float(w[~g].sum())
    se = (
        Stat(float(w[j & g].sum() / pos))
        if pos > 0
        else Stat(None, "no gold pass in the sample: sensitivity is undefined")
    )
    sp = (
        Stat(float(w[~j & ~g].sum() / neg))
        if neg > 0
        else Stat(None, "no gold fail in the sample: specificity is undefined")
    )
    return se, sp


class CorrectedRate(NamedTuple):
    """A corrected pass rate with its bootstrap interval and the pieces it rests on."""

    value: float | None
    lo: float | None
    hi: float | None
    observed: float
    sensitivity: float | None
    specificity: float | None
    n_gold: int
    n_observed: int
    level: float
    n_boot: int
    n_used: int
    reason: str | None = None


def _corrected_draws(j, g, h, labels: list, stratum_sizes: dict, p_star: np.ndarray, rng) -> np.ndarray:
    """:func:`corrected_pass_rate` on each resample of the gold cases (``p_star``: the observed
    rate of each), NaN where the correction is undefined."""
    n_boot = p_star.size
    # the cases stratum by stratum (a stable sort: each stratum keeps its order, so the draws
    # below pick the same cases), so that each stratum's counts fill a block of columns
    # every case of a stratum weighs the same, so a resample counts for its cells only: per stratum
    # how many of its n_h draws are (judge, gold) = (pass, pass), (fail, pass), (pass, fail), (fail,
    # fail), multinomial(n_h, the stratum's shares), the distribution of n_h cases drawn with
    # replacement (four numbers per resample instead of n_h)
    cells = np.zeros((n_boot, 4))  # weighted: pass-pass, fail-pass, pass-fail, fail-fail
    for s in labels:
        m = h == s
        size = int(m.sum())
        code = np.where(g[m], 0, 2) + np.where(j[m], 0, 1)
        draws = resample_counts(lambda w: w, np.bincount(code, minlength=4), n_boot, rng)
        cells += draws * (stratum_sizes[s] / size)
    pos, neg = cells[:, 0] + cells[:, 1], cells[:, 2] + cells[:, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        se_b = cells[:, 0] / pos
        sp_b = cells[:, 3] / neg
        jj = se_b + sp_b - 1.0
        vals = np.clip((p_star + sp_b - 1.0) / jj, 0.0, 1.0)
    return np.where((pos > 0) & (neg > 0) & (jj > 1e-12), vals, np.nan)


def corrected_pass_rate(
    judge_pass,
    gold_pass,
    strata,
    stratum_sizes: dict,
    observed_k: int,
    observed_n: int,
    *,
    seed,
    n_boot: int = 1000,
    level: float = 0.95,
) -> CorrectedRate:
    """The judge's pass rate over all ``observed_n`` verdicts (``observed_k`` passes), corrected by
    :func:`rogan_gladen` for the sensitivity and specificity it shows against gold on a sample.

    The sample is the gold-labelled cases: ``judge_pass`` / ``gold_pass`` per case and its
    ``strata`` label. ``stratum_sizes[h]`` is the (estimated) number of cases of stratum h in the
    whole run; each sampled case weighs ``stratum_sizes[h] / n_h`` (n_h the sampled cases of h), so
    that a stratum sampled at a low rate (the audit of agreed cases) counts for the cases it stands
    for. With every case of a stratum reviewed this is the inverse inclusion probability.

    The interval is a seeded percentile bootstrap: each resample draws n_h cases with replacement
    within every stratum (as the multinomial counts of the stratum's four judge / gold cells, which
    is what the correction reads), and the observed rate from Binomial(observed_n, observed_k /
    observed_n);
    resamples where the correction is undefined are dropped and counted."""
    check_level(level)
    j = np.asarray(judge_pass, dtype=bool)
    g = np.asarray(gold_pass, dtype=bool)
    h = np.asarray(strata)
    if not (j.size == g.size == h.size):
        raise ValueError("judge_pass, gold_pass and strata must have the same length")
    if observed_n <= 0:
        return CorrectedRate(
            None, None, None, float("nan"), None, None, int(j.size), 0, level, n_boot, 0, "the judge has no verdicts"
        )
    p_obs = observed_k / observed_n
    labels = sorted(set(h.tolist()))
    missing = [s for s in labels if s not in stratum_sizes]
    if missing:
        raise ValueError(f"no size for stratum {missing[0]!r}")
    w = np.zeros(j.size)
    for s in labels:
        m = h == s
        w[m] = stratum_sizes[s] / m.sum()
    se, sp = weighted_se_sp(j, g, w)
    none = CorrectedRate(None, None, None, p_obs, se.value, sp.value, int(j.size), observed_n, level, n_boot, 0)
    if se.value is None or sp.value is None:
        return none._replace(reason=se.reason or sp.reason)
    est = rogan_gladen(p_obs, se.value, sp.value)
    if est.value is None:
        return none._replace(reason=est.reason)
    rng = generator(seed)
    p_star = rng.binomial(observed_n, p_obs, size=n_boot) / observed_n
    vals = _corrected_draws(j, g, h, labels, stratum_sizes, p_star, rng)
    iv = percentile_interval(vals, level)
    lo, hi = iv.lo, iv.hi
    ok = vals[~np.isnan(vals)]
    reason = est.reason
    if ok.size < n_boot:
        reason = "; ".join(
            x for x in (reason, f"{n_boot - ok.size} of {n_boot} resamples had no correction and were dropped") if x
        )
    return CorrectedRate(
        est.value, lo, hi, p_obs, se.value, sp.value, int(j.size), observed_n, level, n_boot, int(ok.size), reason
    )
