"""Scores as scores: correlations of an instrument with people, criterion-by-criterion matrices and
reliability across raters. Pure functions, numbers in and dicts / :class:`Stat` out; resampling
through :mod:`evalcore.stats.bootstrap`.

* :func:`pearson` (``scipy.stats.pearsonr``), with :func:`~evalcore.stats.correlation.spearman` and
  :func:`~evalcore.stats.correlation.kendall_tau_b` the three correlations of :data:`METHODS`;
  each undefined (with a reason) below 3 pairs or on a constant side.
* :func:`score_correlations` compares two score vectors (a judge's and people's, over the same answers) in
  two ways: **pooled** (one correlation over every answer) and **within groups** (the G-Eval /
  UniEval "summary-level" convention: the correlation over the outputs of one input, e.g. the 16
  systems' summaries of one article, then the mean over inputs; a group whose correlation is
  undefined, fewer than 3 outputs or a constant side, is left out and counted). Intervals: a
  seeded percentile bootstrap over groups (clusters: the outputs of one input stay together), or
  over answers when no groups are given. Within groups, a resample of groups averages the groups'
  own correlations, which a resample does not change.
* :func:`rank_matrix`: Spearman and Kendall's tau-b for every pair of criteria of one instrument,
  over the answers where every criterion has a value (listwise).
* :func:`icc`: the intraclass correlations of Shrout & Fleiss (1979) from the two-way ANOVA of an
  (items x raters) table without missing cells: ICC(1) / ICC(1,k) (one-way random: each item
  rated by its own raters, so rater *slots* and interchangeable judge rounds), ICC(2,1) / ICC(2,k)
  (two-way random: the same k raters, a sample of raters) and ICC(3,1) / ICC(3,k) (two-way mixed:
  these k raters, consistency).
* :func:`criterion_reliability`: per criterion, Krippendorff's alpha at the level of the criterion's kind
  (interval, ordinal, nominal; :func:`~evalcore.stats.agreement.krippendorff_alpha`, missing
  ratings allowed), the ICCs on the complete items of a numeric criterion (ICC(2,1) and ICC(3,1)
  only when the raters are fixed people), and Fleiss' kappa on a nominal one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from evalcore.stats.agreement import AlphaLevel, fleiss_kappa, krippendorff_alpha
from evalcore.stats.association import Stat, scipy_stats
from evalcore.stats.bootstrap import generator, percentile_interval, resample
from evalcore.stats.correlation import _rank_inputs, kendall_tau_b, spearman

METHODS = ("pearson", "spearman", "kendall")
Level = AlphaLevel
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
Raters = Literal["fixed", "slots", "rounds"]


# --------------------------------------------------------------------------- correlations


def pearson(x, y) -> Stat:
    """Pearson's r (``scipy.stats.pearsonr``). Undefined (with a reason) for n < 3 or a constant x
    or y; ValueError on mismatched lengths or nan, as the rank correlations."""
    xa, ya, bad = _rank_inputs(x, y)
    if bad is not None:
        return bad
    return Stat(float(scipy_stats().pearsonr(xa, ya).statistic), None)


_FUNCS = {"pearson": pearson, "spearman": spearman, "kendall": kendall_tau_b}


def _three(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The three correlations of x and y, nan where undefined (the bootstrap's statistic)."""
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return np.full(3, np.nan)
    r = float(np.corrcoef(x, y)[0, 1])
    rho = float(np.corrcoef(scipy_stats().rankdata(x), scipy_stats().rankdata(y))[0, 1])
    tau = float(scipy_stats().kendalltau(x, y, variant="b").statistic)
    return np.array([r, rho, tau])


def _groups(groups, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    g = np.asarray(groups)
    if g.ndim != 1 or g.size != n:
        raise ValueError(f"groups must name one group per answer ({n}), got shape {g.shape}")
    _, codes = np.unique(g, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return codes, np.split(order, bounds)


def score_correlations(
    x,
    y,
    groups=None,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
) -> dict[str, Any]:
    """Pearson, Spearman and Kendall's tau-b of ``x`` against ``y`` (same answers, no nan), pooled
    and, with ``groups`` (one label per answer: the input it answers), averaged within groups.

    Returns ``{"n", "groups", "pooled": {method: {"value", "reason", "lo", "hi"}},
    "within_groups": {method: {"value", "reason", "lo", "hi", "groups_used", "groups_skipped"}} or None}``
    (a group is skipped when its correlation is undefined). The
    interval is the ``level`` percentile interval of ``n_boot`` resamples (seeded) of the groups,
    or of the answers without groups; ``lo`` / ``hi`` are None when no resample is defined."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.ndim != 1 or ya.ndim != 1 or xa.size != ya.size:
        raise ValueError(f"x and y must be one-dimensional and of the same length, got {xa.shape} and {ya.shape}")
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y contain missing values (nan): drop those answers first")
    n = int(xa.size)
    rng = generator([int(seed), 0x5C0E])
    pooled_stats = {m: _FUNCS[m](xa, ya) for m in METHODS}
    members: list[np.ndarray] | None = None
    if groups is not None:
        _, members = _groups(groups, n)
        members = [m for m in members if m.size]
    units = len(members) if members is not None else n

    def pooled_stat(block: np.ndarray) -> np.ndarray:
        out = np.empty((block.shape[0], 3))
        for r, row in enumerate(block):
            idx = np.concatenate([members[i] for i in row]) if members is not None else row
            out[r] = _three(xa[idx], ya[idx])
        return out

    pooled: dict[str, dict[str, Any]] = {}
    boot = resample(pooled_stat, units, n_boot, rng) if n >= 3 and units >= 2 else None
    for j, m in enumerate(METHODS):
        s = pooled_stats[m]
        iv = percentile_interval(boot[:, j], level) if boot is not None and s.value is not None else None
        pooled[m] = {"value": s.value, "reason": s.reason, "lo": iv.lo if iv else None, "hi": iv.hi if iv else None}
    within = within_groups(xa, ya, members, rng, n_boot, level) if members is not None else None
    return {"n": n, "groups": len(members) if members is not None else None, "pooled": pooled, "within_groups": within}


def grouped_correlations(x, y, groups, *, seed: int = 0, n_boot: int = 1000, level: float = 0.95) -> dict[str, Any]:
    """:func:`within_groups` of ``x`` against ``y`` (no nan) for any grouping of the answers (one
    label per answer: a conversation, a system, a difficulty tier): ``{"groups", "within_groups"}``.
    Its resamples are seeded apart from :func:`score_correlations`' own."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1 or np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y must be one-dimensional, of the same length, without nan")
    _, members = _groups(groups, int(xa.size))
    members = [m for m in members if m.size]
    rng = generator([int(seed), 0x5C0E, 1])
    return {"groups": len(members), "within_groups": within_groups(xa, ya, members, rng, n_boot, level)}


def within_groups(
    xa: np.ndarray, ya: np.ndarray, members: list[np.ndarray], rng: np.random.Generator, n_boot: int, level: float
) -> dict[str, dict[str, Any]]:
    """The within-group half of :func:`score_correlations`: per method the mean over groups (each a
    list of answer indices) of the group's own correlation, the groups whose correlation is undefined
    skipped and counted, with the percentile interval of ``n_boot`` resamples of the groups."""
    per = np.array([_three(xa[idx], ya[idx]) for idx in members]).reshape(len(members), 3)
    within: dict[str, dict[str, Any]] = {}
    for j, m in enumerate(METHODS):
        col = per[:, j]
        ok = ~np.isnan(col)
        used = int(ok.sum())
        if not used:
            sizes = sorted({int(idx.size) for idx in members})
            why = (
                f"no group has a defined correlation (group sizes {', '.join(map(str, sizes[:5]))}): "
                "within-group correlations need at least 3 outputs of one input with scores that vary"
                if members
                else "no answers"
            )
            within[m] = {
                "value": None,
                "reason": why,
                "lo": None,
                "hi": None,
                "groups_used": 0,
                "groups_skipped": len(members),
            }
            continue
        vals = resample(_group_means(col), len(members), n_boot, rng)
        iv = percentile_interval(vals, level)
        within[m] = {
            "value": float(col[ok].mean()),
            "reason": None,
            "lo": iv.lo,
            "hi": iv.hi,
            "groups_used": used,
            "groups_skipped": len(members) - used,
        }
    return within


def _nanmean_rows(v: np.ndarray) -> np.ndarray:
    """The mean of each row's defined values (nan for a row with none), without numpy's warning."""
    ok = ~np.isnan(v)
    counts = ok.sum(axis=1)
    sums = np.where(ok, v, 0.0).sum(axis=1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _group_means(col: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The bootstrap statistic of the within-group figure: the mean of the resampled groups' own values."""

    def stat(block: np.ndarray) -> np.ndarray:
        return _nanmean_rows(col[block])

    return stat


def rank_matrix(table: dict[str, Any]) -> dict[str, Any]:
    """Pearson, Spearman and Kendall's tau-b between every two criteria of one instrument. ``table`` maps a
    criterion to its scores over the same answers (nan = no score); the rows where every criterion
    has a score are used (listwise). Returns ``{"n", "criteria", "pearson": {a: {b: value}},
    "spearman": {...}, "kendall": {...}, "reasons": {a: {b: reason}}}`` with 1.0 on the diagonal of a criterion that
    varies."""
    names = list(table)
    cols = [np.asarray(table[c], dtype=float) for c in names]
    if len({c.size for c in cols}) > 1:
        raise ValueError("every criterion needs one score per answer")
    keep = np.all([~np.isnan(c) for c in cols], axis=0) if cols else np.array([], dtype=bool)
    cols = [c[keep] for c in cols]
    out: dict[str, Any] = {"n": int(keep.sum()), "criteria": names, "pearson": {}, "spearman": {}, "kendall": {}}
    out["reasons"] = {}
    for i, a in enumerate(names):
        for key in ("pearson", "spearman", "kendall", "reasons"):
            out[key][a] = {}
        for j, b in enumerate(names):
            rho, tau = spearman(cols[i], cols[j]), kendall_tau_b(cols[i], cols[j])
            out["pearson"][a][b] = pearson(cols[i], cols[j]).value
            out["spearman"][a][b] = rho.value
            out["kendall"][a][b] = tau.value
            out["reasons"][a][b] = rho.reason or tau.reason
    return out


# --------------------------------------------------------------------------- reliability


ICC_NAMES = ("icc1", "icc1k", "icc2_1", "icc2k", "icc3_1", "icc3k")


def icc(ratings) -> dict[str, Any]:
    """The six ICCs of Shrout & Fleiss (1979) for an (n items x k raters) table with no missing
    cell, from the two-way ANOVA's mean squares: between items BMS = k sum (m_i - m)^2 / (n - 1),
    within items WMS = sum (x_ij - m_i)^2 / (n (k - 1)), between raters JMS = n sum (m_j - m)^2 /
    (k - 1), residual EMS = (SS_total - SS_items - SS_raters) / ((n - 1)(k - 1)):

    * ICC(1) = (BMS - WMS) / (BMS + (k - 1) WMS), ICC(1,k) = (BMS - WMS) / BMS
    * ICC(2,1) = (BMS - EMS) / (BMS + (k - 1) EMS + k (JMS - EMS) / n),
      ICC(2,k) = (BMS - EMS) / (BMS + (JMS - EMS) / n)
    * ICC(3,1) = (BMS - EMS) / (BMS + (k - 1) EMS), ICC(3,k) = (BMS - EMS) / BMS

    Returns the six (None where a denominator is 0) with n, k and the mean squares; every value
    None with a reason below 2 items or 2 raters."""
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"ratings must be items x raters, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("ratings contain missing cells: keep the complete items first")
    n, k = x.shape
    out: dict[str, Any] = {"n": int(n), "k": int(k), **{name: None for name in ICC_NAMES}, "reason": None}
    if n < 2 or k < 2:
        out["reason"] = f"{n} complete item(s) x {k} rater(s): an ICC needs at least 2 of each"
        return out
    grand = x.mean()
    ss_items = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_raters = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((x - grand) ** 2).sum())
    bms = ss_items / (n - 1)
    wms = (ss_total - ss_items) / (n * (k - 1))
    jms = ss_raters / (k - 1)
    ems = (ss_total - ss_items - ss_raters) / ((n - 1) * (k - 1))

    def ratio(num: float, den: float) -> float | None:
        return None if den == 0 or math.isnan(den) else num / den

    out.update(
        icc1=ratio(bms - wms, bms + (k - 1) * wms),
        icc1k=ratio(bms - wms, bms),
        icc2_1=ratio(bms - ems, bms + (k - 1) * ems + k * (jms - ems) / n),
        icc2k=ratio(bms - ems, bms + (jms - ems) / n),
        icc3_1=ratio(bms - ems, bms + (k - 1) * ems),
        icc3k=ratio(bms - ems, bms),
        ms={"items": bms, "within": wms, "raters": jms, "residual": ems},
    )
    if all(out[name] is None for name in ICC_NAMES):
        out["reason"] = "every rating is the same: the ICCs are undefined"
    return out


FIXED_ONLY = "icc2_1", "icc2k", "icc3_1", "icc3k"
NOT_FIXED = {
    "slots": "rater slots, not fixed people (each item rated by its own raters): ICC(1) and ICC(1,k) are the "
    "right ones; ICC(2,1) and ICC(3,1) assume the same raters rated every item and are not given",
    "rounds": "judge rounds are interchangeable replicates of one judge, not distinct raters: ICC(1) and ICC(1,k) "
    "are the right ones; ICC(2,1) and ICC(3,1) are not given",
}


def within_spread(ratings) -> dict[str, Any]:
    """How far one item's ratings spread (an (items x raters) array, nan = not rated), over the items
    rated twice or more: ``mean_sd`` the mean over items of their ratings' sample standard deviation
    (ddof 1), ``pooled_sd`` the square root of the within-item mean square, sum (x - m_i)^2 / sum
    (n_i - 1). None with a reason when no item has two ratings."""
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"ratings must be items x raters, got shape {x.shape}")
    counts = (~np.isnan(x)).sum(axis=1)
    x = x[counts >= 2]
    n_i = counts[counts >= 2]
    if not x.shape[0]:
        return {"items": 0, "mean_sd": None, "pooled_sd": None, "reason": "no item rated twice: no spread"}
    dev2 = np.where(np.isnan(x), 0.0, (x - _nanmean_rows(x)[:, None]) ** 2).sum(axis=1)
    return {
        "items": int(x.shape[0]),
        "mean_sd": float(np.mean(np.sqrt(dev2 / (n_i - 1)))),
        "pooled_sd": float(np.sqrt(dev2.sum() / (n_i - 1).sum())),
        "reason": None,
    }


def _fleiss_nominal(complete: np.ndarray) -> Stat:
    """Fleiss' kappa reading each distinct value as a category (a 1-5 scale as five categories)."""
    if not (complete.shape[0] and complete.shape[1] >= 2):
        return Stat(None, "no item rated by every rater: Fleiss' kappa is undefined")
    if not np.all(complete == np.round(complete)):
        return Stat(None, "the scores are not whole numbers: Fleiss' kappa needs categories")
    values = np.unique(complete)
    return fleiss_kappa(np.stack([(complete == v).sum(axis=1) for v in values], axis=1))


def criterion_reliability(
    ratings, level: Level, raters: Raters = "fixed", numeric: bool | None = None
) -> dict[str, Any]:
    """Reliability of one criterion over an (items x raters) array (nan = not rated).

    * ``alpha``: Krippendorff's alpha at ``level`` over every item with two ratings or more;
    * ``icc`` and ``spread`` (:func:`within_spread`) for scores (``numeric``, by default a level
      other than nominal): :func:`icc` over the items every rater rated; with ``raters``
      ``"slots"`` or ``"rounds"`` only ICC(1) and ICC(1,k) (the others None, ``icc_note`` says why);
    * ``fleiss``: Fleiss' kappa over the complete items, each distinct value a category (category
      codes, or a 1-5 scale read as five nominal categories); undefined for values that are not
      whole numbers.
    """
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"ratings must be items x raters, got shape {x.shape}")
    if numeric is None:
        numeric = level != "nominal"
    a = krippendorff_alpha(x.T, level=level, codes=False)
    complete = x[~np.isnan(x).any(axis=1)] if x.size else x
    out: dict[str, Any] = {
        "items": int(x.shape[0]),
        "raters": int(x.shape[1]),
        "rater_kind": raters,
        "complete_items": int(complete.shape[0]),
        "level": level,
        "alpha": a.value,
        "alpha_reason": a.reason,
        "icc": None,
        "icc_note": None,
    }
    if numeric:
        res = icc(complete)
        if raters != "fixed":
            for name in FIXED_ONLY:
                res[name] = None
            out["icc_note"] = NOT_FIXED[raters]
        out["icc"] = res
        out["spread"] = within_spread(x)
    f = _fleiss_nominal(complete)
    out["fleiss"], out["fleiss_reason"] = f.value, f.reason
    return out
