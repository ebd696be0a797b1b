"""Prediction-powered inference: a population's pass rate from a few human labels and the judge's
verdict on every case. Pure functions, no I/O, no DuckDB, no pandas; randomness only from the
caller's generator.

Contents
--------
* :func:`ppi_mean`: PPI++ (Angelopoulos, Duchi & Zrnic 2023) with power tuning, for a uniform,
  stratified or active (Zrnic & Candes 2024) sample of labelled cases, with the labels-only
  estimate beside it (:class:`PPIEstimate`).
* :func:`labels_needed`: how many more labels a target interval half-width takes.
* :func:`uncertainty_size`, :func:`inclusion_probs`: the active audit's inclusion probabilities.
* :func:`order_keys`, :func:`prefix_inclusion`: sequential Poisson (order) sampling, so that any
  decided prefix of a review queue is a sample with known inclusion probabilities.

What the estimates assume
-------------------------
*Superpopulation.* The N cases are taken as independent draws from the process that produces
cases, and the target is that process's mean (the rate a new case would pass with). The variance
therefore includes the population's own sampling noise (of order 1/N) besides the labels' (of
order 1/n). Read as an interval for the finite population's own share it is conservative by that
part, which matters when the labels are a sizeable share of the cases (a quarter of the variance
with 200 labels of 999).

*Finite population.* With ``finite=True`` the target is the N cases' own share (what the report
card shows): the population part goes, each labelled case's share of the variance is multiplied
by 1 - pi_i (1 - n/N for a uniform sample), labelling every case gives the share itself, and the
interval takes Student's t. On PandaLM (tests/test_ppi.py) it covers the full-data share at the
nominal rate where the superpopulation interval over-covers.

*The design.* Each case is labelled or not by a draw that does not look at its gold value: a
uniform sample without replacement (w = N/n), a Poisson sample (case i independently with
probability pi_i, w_i = 1/pi_i), or strata with either inside. ``w`` must be the inverse of the
probability the case had *before* the draw; a probability computed after looking at the labels,
or cases whose labelling was skipped because they were hard, break the estimate. Every case of the
population must have had a positive probability: a case that can never be drawn is a case the
estimate cannot correct (hence the floor of :func:`inclusion_probs`).

*Decided prefix.* A review queue ordered by :func:`order_keys` is a sample whatever its length,
but only as a prefix: the estimate may use the first m cases in key order when all m are decided.
Decided cases after an undecided one wait until it is decided (or the undecided one is given up,
which ends the prefix there). Choosing m by looking at the running estimate (stop when it looks
good) is optional stopping and makes the interval too narrow; stop on a label count, or on
:func:`labels_needed`, which sees the labels only through variances (a milder dependence).

*Large samples.* The interval is the normal one from a linearised variance. It needs at least two
labelled cases in every stratum that has cases, and in practice some tens; with a handful of
labels, or a rate within a few labels of 0 or 1, read it as indicative. In the simulations of
tests/test_ppi.py nominal 90% intervals from 200 labels covered 89.5% (the rectifier y - lam f is
mostly 0, and a normal interval for rare errors runs a little short); with 50 PandaLM labels,
89.7%.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from evalcore.stats.association import check_level

#: the tolerance of the consistency checks on the population's sums (floating-point sums of rates)
_TOL = 1e-9


class PPIEstimate(NamedTuple):
    """A PPI++ estimate of a mean and the labels-only estimate from the same labels.

    ``value`` (None exactly when ``reason`` says why), the interval ``lo``..``hi`` at ``level``
    (normal, clipped to [0, 1] when every value is a rate) and its standard error ``se``; ``lam``
    the weight given to the judge (0 labels only, 1 classic PPI); ``n_labels`` the labelled cases;
    ``n_eff`` the uniformly drawn labels that alone would give ``se`` (weighted variance of the
    gold values / se^2); ``labels_only_*`` the same estimator at lam = 0; ``var_labelled`` and
    ``var_population`` the parts of se^2 that shrink with more labels (as 1/n) and with more cases
    (as 1/N); ``n_population`` N.
    """

    value: float | None
    lo: float | None
    hi: float | None
    se: float | None
    lam: float | None
    n_labels: int
    n_eff: float | None
    level: float
    labels_only_value: float | None
    labels_only_lo: float | None
    labels_only_hi: float | None
    labels_only_se: float | None
    var_labelled: float | None = None
    var_population: float | None = None
    n_population: int = 0
    reason: str | None = None
    finite: bool = False


class LabelsNeeded(NamedTuple):
    """Further labels to a target half-width (``value``, None exactly when ``reason`` says why),
    the half-width now and the narrowest one more labels could reach (every case labelled)."""

    value: int | None
    half_width: float | None
    floor_half_width: float | None
    reason: str | None = None


class PrefixSample(NamedTuple):
    """The first m cases in key order: their positions in the input (``positions``), their inclusion
    probabilities ``pi`` and the threshold ``tau`` (the (m+1)-th smallest key; inf if m is all)."""

    positions: np.ndarray
    pi: np.ndarray
    tau: float


class _Parts(NamedTuple):
    """One stratum: its weight and means, and the coefficients of its share of se^2 as quadratics
    in lam (``lab`` the labelled part, ``pop`` the population part; see :func:`_parts`)."""

    share: float  # N_h / N
    fbar: float  # population mean of f
    ybar: float  # Hajek mean of y over the labelled
    fbar_w: float  # Hajek mean of f over the labelled
    lab: tuple[float, float, float]  # var_labelled = lab[0] + lab[1] lam + lab[2] lam^2
    pop: tuple[float, float, float]  # var_population likewise
    g: np.ndarray  # the Hajek weights of the labelled cases
    idx: list[int]  # their positions in the input


# --------------------------------------------------------------------------- validation


def _vector(x, name: str, n: int | None = None) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have the same length as y ({n}), got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite numbers")
    return arr


def _population(pop, strata) -> dict[Hashable, tuple[int, float, float]]:
    if isinstance(pop, tuple):
        if strata is not None:
            raise ValueError("pop must be a dict stratum -> (N, sum_f, sumsq_f) when strata are given")
        pop = {None: pop}
    if not isinstance(pop, Mapping) or not pop:
        raise ValueError("pop must be a non-empty dict stratum -> (N, sum_f, sumsq_f)")
    out = {}
    for h, entry in pop.items():
        try:
            n_h, s1, s2 = entry
        except (TypeError, ValueError):
            raise ValueError(f"pop[{h!r}] must be a triple (N, sum_f, sumsq_f), got {entry!r}") from None
        if isinstance(n_h, bool) or not float(n_h).is_integer() or n_h < 0:
            raise ValueError(f"pop[{h!r}]: N must be a non-negative integer, got {n_h!r}")
        if not (math.isfinite(s1) and math.isfinite(s2)) or s2 < -_TOL:
            raise ValueError(f"pop[{h!r}]: sum_f and sumsq_f must be finite and sumsq_f >= 0")
        out[h] = (int(n_h), float(s1), float(s2))
    return out


# --------------------------------------------------------------------------- PPI++


def _quantile(level: float, df: int | None) -> float:
    """The two-sided ``level`` quantile: normal, or Student's t with ``df`` degrees of freedom (the
    finite-population interval's, n minus the strata, as survey sampling does: with 50 PandaLM
    labels the normal one covered 87.9% at nominal 90%)."""
    if df is None:
        return NormalDist().inv_cdf(0.5 + level / 2.0)
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2.0, max(int(df), 1)))


def _parts(y, f, w, n_h: int, s1: float, s2: float, share: float, h, idx: list[int], finite: bool = False) -> _Parts:
    """Z = A + lam * B over the stratum's N cases, from the labelled arrays and the sums; with
    ``finite`` the labelled part is the finite population's (each case's term times 1 - pi_i) and
    there is no population part.

    Variance. Write g_i = w_i N_h / sum w (the weights scaled to sum to N_h; g = w exactly for a
    uniform sample without replacement, the usual Hajek ratio linearisation otherwise). To first
    order rbar_h - R_h = sum_i xi_i g_i (r_i - R_h) / N_h over all N_h cases (xi_i = 1 when
    labelled, R_h the mean of r), so theta_h is the mean over the N_h cases of::

        Z_i = lam f_i + xi_i g_i (r_i - rbar_h)

    The Z_i are independent when the cases are independent draws and the design draws case by
    case, so Var(theta_h) = Var(Z)/N_h, estimated by the sample variance of Z over the N_h cases.
    The unlabelled cases need only their sums (their Z is lam f). With L the labelled cases,
    A_i = g_i (y_i - ybar_h) and F_i = g_i (f_i - fbar_w,h) on L (ybar_h, fbar_w,h the Hajek means
    of y and f over L; both sum to 0 over L), Z = lam f + A - lam F on L and lam f elsewhere, so
    sum Z = lam sum_f_h and::

        (N_h - 1) Var(Z) = sum_L (A - lam F)^2                                  [labelled part]
                         + 2 lam sum_L A f + lam^2 (sumsq_f_h - 2 sum_L f F - sum_f_h^2 / N_h)

    The labelled part (about (N_h/n_h)^2 n_h Var(r)) is multiplied by n_h / (n_h - 1), because the
    residuals are centred on their own mean rbar_h (the usual correction; it is 4/3 with 4 labels
    and 1.005 with 200, and the plain sample variance of Z otherwise). Then se^2 = sum_h
    (N_h/N)^2 Var(Z_h) / N_h, whose labelled part (``var_labelled``, about Var(r)/n) shrinks as
    labels are added and whose rest (``var_population``, about (Var(y) - Var(r))/N) does not; the
    latter is negative when lam is far from its optimum, the sum is not.
    """
    n = y.size
    s1u, s2u = s1 - f.sum(), s2 - (f * f).sum()  # the unlabelled cases' sums
    if n > n_h or s2u < -_TOL * max(1.0, s2) or s1u * s1u > (n_h - n) * s2u + _TOL * max(1.0, s1 * s1):
        raise ValueError(
            f"pop[{h!r}] is not consistent with the {n} labelled cases of the stratum: N, sum_f and "
            "sumsq_f must count every case of the stratum, the labelled ones included"
        )
    g = w * (n_h / w.sum())  # Hajek weights: sum g = N_h
    ybar, fbar_w = float(g @ y) / n_h, float(g @ f) / n_h
    a = g * (y - ybar)  # A on the labelled (0 elsewhere); sums to 0
    gf = g * (f - fbar_w)  # B = f - gf on the labelled (f elsewhere); gf sums to 0
    c = share * share / n_h / (n_h - 1)  # (N_h/N)^2 / N_h, and the sample variance's N_h - 1
    k = n / (n - 1)  # the labelled residuals are centred on their own mean
    if finite:  # N_h - 1 -> N_h: the finite population's own variance, no sampling of cases
        c *= (n_h - 1) / n_h
        q = np.clip(1.0 - 1.0 / w, 0.0, 1.0)  # 1 - pi_i: a case labelled for sure adds nothing
        lab = (k * c * float(q @ (a * a)), -2.0 * k * c * float(q @ (a * gf)), k * c * float(q @ (gf * gf)))
        return _Parts(share, s1 / n_h, ybar, fbar_w, lab, (0.0, 0.0, 0.0), g, idx)
    lab = (k * c * float(a @ a), -2.0 * k * c * float(a @ gf), k * c * float(gf @ gf))
    pop_ = (0.0, 2.0 * c * float(a @ f), c * (s2 - 2.0 * float(f @ gf) - s1 * s1 / n_h))
    return _Parts(share, s1 / n_h, ybar, fbar_w, lab, pop_, g, idx)


def _combine(parts: list[_Parts], lam: float) -> tuple[float, float, float]:
    """theta, the labelled and the population parts of its variance at this lam."""
    theta = var_lab = var_pop = 0.0
    for p in parts:
        theta += p.share * (lam * p.fbar + p.ybar - lam * p.fbar_w)
        var_lab += p.lab[0] + lam * p.lab[1] + lam * lam * p.lab[2]
        var_pop += p.pop[0] + lam * p.pop[1] + lam * lam * p.pop[2]
    return theta, var_lab, var_pop


def _inputs(y, f, w, pop, strata, lam) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict, dict[Hashable, list[int]]]:
    """:func:`ppi_mean`'s arguments checked: y, f and w as arrays, the population per stratum and
    the labelled cases' positions per stratum."""
    y = _vector(y, "y")
    f = _vector(f, "f", y.size)
    w = _vector(w, "w", y.size)
    if np.any(w < 1.0 - 1e-12):
        raise ValueError("w holds inverse inclusion probabilities 1/pi and must be >= 1 everywhere")
    if lam is not None and not math.isfinite(lam):
        raise ValueError(f"lam must be None or a finite number, got {lam!r}")
    pops = _population(pop, strata)
    labels = [None] * y.size if strata is None else list(strata)
    if len(labels) != y.size:
        raise ValueError(f"strata must have the same length as y ({y.size}), got {len(labels)}")
    groups: dict[Hashable, list[int]] = {}
    for i, h in enumerate(labels):
        groups.setdefault(h, []).append(i)
    missing = [h for h in groups if h not in pops]
    if missing:
        raise ValueError(f"strata {missing!r} have labelled cases but no entry in pop")
    return y, f, w, pops, groups


def _strata_parts(y, f, w, pops, groups, n_total: int, finite: bool) -> list[_Parts] | str:
    """:func:`_parts` of every stratum with cases, or why the estimate is undefined (a stratum with
    cases but fewer than 2 labelled)."""
    parts = []
    for h, (n_h, s1, s2) in pops.items():
        idx = groups.get(h, [])
        if n_h == 0:
            if idx:
                raise ValueError(f"pop[{h!r}] has N = 0 but {len(idx)} labelled cases")
            continue
        if len(idx) < 2:
            where = "the population" if h is None else f"stratum {h!r}"
            return f"{where} has {n_h} cases but {len(idx)} labelled: its variance needs at least 2 labelled"
        parts.append(_parts(y[idx], f[idx], w[idx], n_h, s1, s2, n_h / n_total, h, idx, finite))
    return parts


def _tuned_lam(parts: list[_Parts]) -> float:
    """The weight of the judge that minimises se^2.

    Power tuning. se^2 is a convex quadratic in lam, minimised at lam* = -q_1 / (2 q_2) with q_1,
    q_2 its coefficients of lam and lam^2 summed over strata: about Cov(y, f)/Var(f) over the
    labelled (the labelled cases are part of the population here, so the PPI++ factor
    1/(1 + n/N) of a separate unlabelled set does not appear). lam* is clipped to [0, 1]: below 0
    the judge would be used against its own verdicts, above 1 trusted beyond its own scale. The
    clipped lam is the best in [0, 1], so the tuned se is never above the labels-only se (lam = 0).
    lam is 0 when f has no variance.
    """
    q1 = sum(p.lab[1] + p.pop[1] for p in parts)
    q2 = sum(p.lab[2] + p.pop[2] for p in parts)
    return 0.0 if q2 <= 0 else min(1.0, max(0.0, -q1 / (2.0 * q2)))


def _interval(t: float, s: float, z: float, rates: bool) -> tuple[float, float]:
    """t -+ z s, clipped to [0, 1] when every value is a rate."""
    lo, hi = t - z * s, t + z * s
    return (max(lo, 0.0), min(hi, 1.0)) if rates else (lo, hi)


def _n_eff(y: np.ndarray, parts: list[_Parts], theta0: float, var: float, n_total: int, finite: bool) -> float:
    """The uniformly drawn labels that alone would give the variance ``var``: the weighted variance
    of the gold values over it."""
    # the weight of each labelled case in the labels-only estimate is g_i / N (they sum to 1)
    omega = np.zeros(y.size)
    for p in parts:
        omega[p.idx] = p.g / n_total
    s2y = float(omega @ (y - theta0) ** 2)
    # finite: the uniform labels-only sample of n' with s2y (1/n' - 1/N) = var
    return 1.0 / (var / s2y + 1.0 / n_total) if finite and s2y > 0 else s2y / var


def ppi_mean(
    y, f, w, pop, *, strata=None, level: float = 0.90, lam: float | None = None, finite: bool = False
) -> PPIEstimate:
    """The PPI++ estimate of the population mean of y (a pass rate) from labelled cases and the
    judge's value f on every case.

    ``finite`` makes the target the N cases' own mean rather than the process's (see the module
    docstring): the labelled part of the variance is the Horvitz-Thompson one of a Poisson design,
    each labelled case's term times 1 - pi_i (the usual 1 - n/N for a uniform sample), and there is
    no population part; labelling every case gives the mean itself (se 0, a census). Its interval
    takes Student's t with n - (strata) degrees of freedom instead of the normal quantile.

    ``y``, ``f``, ``w`` (and ``strata``) hold one entry per labelled case: the gold value, the
    judge's value and the inverse inclusion probability 1/pi_i (>= 1). ``pop`` maps each stratum to
    ``(N_h, sum of f, sum of f^2)`` over every case of the stratum, the labelled ones included
    (a plain triple when ``strata`` is None). ``lam`` None tunes the weight of the judge
    (:func:`_tuned_lam`); the variance is :func:`_parts`'s.

    Estimator. With r = y - lam f, in each stratum h::

        theta_h = lam * fbar_h + rbar_h,   fbar_h = sum_f_h / N_h,   rbar_h = sum w r / sum w
        theta   = sum_h (N_h / N) theta_h

    (rbar_h the Hajek mean over the stratum's labelled cases). At lam = 0 it is the labels-only
    (Hajek, stratified) estimate; with w = N/n and one stratum it is the PPI++ estimate
    lam * mean_N(f) + mean_n(y - lam f).

    Undefined (value None, with the reason): no labelled case; a stratum with cases but fewer
    than 2 labelled; an estimated variance of 0 (a normal interval would be a point).
    """
    check_level(level)
    y, f, w, pops, groups = _inputs(y, f, w, pop, strata, lam)
    n_total = sum(n_h for n_h, _, _ in pops.values())
    rates = bool(np.all((y >= 0) & (y <= 1) & (f >= 0) & (f <= 1))) and all(
        -_TOL <= s1 <= n_h + _TOL and s2 <= s1 + _TOL for n_h, s1, s2 in pops.values()
    )

    def undefined(reason: str) -> PPIEstimate:
        return PPIEstimate(None, None, None, None, None, y.size, None, level, None, None, None, None,
                           None, None, n_total, reason)  # fmt: skip

    if y.size == 0:
        return undefined("no labelled case: the estimate needs labels")
    parts = _strata_parts(y, f, w, pops, groups, n_total, finite)
    if isinstance(parts, str):
        return undefined(parts)
    lam = float(_tuned_lam(parts) if lam is None else lam)
    theta, var_lab, var_pop = _combine(parts, lam)
    theta0, var_lab0, var_pop0 = _combine(parts, 0.0)
    var, var0 = max(var_lab + var_pop, 0.0), max(var_lab0 + var_pop0, 0.0)
    if finite and bool(np.all(w <= 1.0 + 1e-12)) and y.size == n_total:  # a census: the mean itself
        return PPIEstimate(theta0, theta0, theta0, 0.0, 0.0, int(y.size), float(n_total), float(level), theta0,
                           theta0, theta0, 0.0, 0.0, 0.0, n_total, None, True)  # fmt: skip
    if var <= 0.0:
        return undefined(
            "the estimated variance is 0 (every labelled gold value equals the estimate and the "
            "judge adds no variation): a normal interval would be a single point"
        )
    z = _quantile(level, y.size - len(parts) if finite else None)
    se, se0 = math.sqrt(var), math.sqrt(var0)
    (lo, hi), (lo0, hi0) = _interval(theta, se, z, rates), _interval(theta0, se0, z, rates)
    return PPIEstimate(
        value=theta,
        lo=lo,
        hi=hi,
        se=se,
        lam=lam,
        n_labels=int(y.size),
        n_eff=_n_eff(y, parts, theta0, var, n_total, finite),
        level=float(level),
        labels_only_value=theta0,
        labels_only_lo=lo0,
        labels_only_hi=hi0,
        labels_only_se=se0,
        var_labelled=var_lab,
        var_population=var_pop,
        n_population=n_total,
        finite=bool(finite),
    )


# --------------------------------------------------------------------------- labels needed


def labels_needed(est: PPIEstimate, target_half_width: float, *, level: float | None = None) -> LabelsNeeded:
    """The expected number of further labels (drawn as the current ones were) to bring the
    interval's half-width z * se down to ``target_half_width`` at ``level`` (the estimate's own
    by default).

    The variance components are assumed to stay as measured (same lam, same per-label variance):
    with n labels now and n + k then, se^2(k) = var_population + var_labelled * n / (n + k). The
    smallest integer k that meets the target is returned (0 when it is already met). Unreachable
    (None, with the reason) when even labelling every case (n + k = N) would leave the interval
    wider: the population part is what labels cannot remove. The half-width is before clipping
    to [0, 1]. For a ``finite`` estimate the variance per label is S^2 (1/n - 1/N) and labelling
    every case reaches any target (floor 0); the quantile is then Student's t with n - 1 degrees of
    freedom, now and at the target (a little conservative as labels are added)."""
    lvl = est.level if level is None else level
    check_level(lvl)
    if not (math.isfinite(target_half_width) and target_half_width > 0):
        raise ValueError(f"target_half_width must be a positive number, got {target_half_width!r}")
    if est.value is None or est.var_labelled is None or est.var_population is None:
        return LabelsNeeded(None, None, None, est.reason or "the estimate is undefined")
    z = _quantile(lvl, est.n_labels - 1 if est.finite else None)
    n, big_n = est.n_labels, est.n_population
    v_lab, v_pop = est.var_labelled, est.var_population
    target_var = (target_half_width / z) ** 2
    if est.finite:  # v_lab = S^2 (1/n - 1/N): at n + k, S^2 (1/(n + k) - 1/N); 0 when every case is labelled
        now = z * math.sqrt(max(v_lab, 0.0))
        if v_lab <= target_var or n >= big_n:
            return LabelsNeeded(0, now, 0.0)
        s2 = v_lab / (1.0 / n - 1.0 / big_n)
        k = math.ceil(1.0 / (target_var / s2 + 1.0 / big_n) - n - 1e-9)
        return LabelsNeeded(min(max(k, 0), big_n - n), now, 0.0)
    now = z * math.sqrt(max(v_lab + v_pop, 0.0))
    floor = z * math.sqrt(max(v_pop + v_lab * n / big_n, 0.0))
    if v_lab + v_pop <= target_var:
        return LabelsNeeded(0, now, floor)
    if v_pop + v_lab * n / big_n > target_var or v_lab <= 0:
        return LabelsNeeded(
            None, now, floor,
            f"unreachable: labelling all {big_n} cases would still leave a half-width of {floor:.4g} "
            f"(target {target_half_width:.4g})",
        )  # fmt: skip
    # v_pop + v_lab n / (n + k) <= target_var  <=>  n + k >= v_lab n / (target_var - v_pop)
    k = math.ceil(v_lab * n / (target_var - v_pop) - n - 1e-9)
    return LabelsNeeded(min(max(k, 0), big_n - n), now, floor)


# --------------------------------------------------------------------------- active audit


def uncertainty_size(p_pass, epsilon: float = 0.05) -> np.ndarray:
    """The size measure of an active audit: sqrt(p (1 - p)) + epsilon for each case, where p is the
    share of the judge's rounds (or of several judges) that pass it, or a score's distance to its
    threshold turned into a probability.

    Zrnic & Candes (2024): the variance of the estimate is smallest when pi_i is proportional to
    the square root of the expected squared error E[(y - f)^2 | case] of the judge on the case.
    If y is a Bernoulli(p) given what the judges said, that error is p (1 - p) for f = p (and
    min(p, 1 - p) for f rounded): largest at p = 1/2, zero when the judges are unanimous. The
    ``epsilon`` keeps unanimous cases drawable (:func:`inclusion_probs`' floor guarantees it) and
    says how wrong unanimous judges still are: a coarse signal needs a large one. Two judges that
    agree or not give p in {0, 1/2, 1}; on PandaLM, where gpt-3.5 is wrong on 15% of the pairs the
    two agree on and 42% of the others, the default (sizes 0.05 against 0.55) made the interval from 100 or 200 labels
    wider than labels only, and epsilon = 0.5 (0.5 against 1.0) narrower (tests/test_ppi.py)."""
    p = np.asarray(p_pass, dtype=float)
    if p.ndim != 1 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError("p_pass must be a one-dimensional array of shares in [0, 1]")
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a non-negative number, got {epsilon!r}")
    return np.sqrt(p * (1.0 - p)) + epsilon


def _pps(size: np.ndarray, budget: float) -> np.ndarray:
    """pi = min(1, c size) with sum pi = budget: the largest cases are capped at 1 one round at a
    time, c recomputed over the rest, until no uncapped pi exceeds 1."""
    pi = np.zeros(size.size)
    capped = np.zeros(size.size, dtype=bool)
    while True:
        free = ~capped
        rest = budget - capped.sum()
        total = size[free].sum()
        if rest <= 0 or total <= 0:
            break
        c = rest / total
        over = free & (c * size >= 1.0)
        if not over.any():
            pi[free] = c * size[free]
            break
        capped |= over
    pi[capped] = 1.0
    return pi


def inclusion_probs(size, budget: float, floor: float = 0.0) -> np.ndarray:
    """Inclusion probabilities of an active audit with ``budget`` expected labels over M cases.

    pi = (1 - floor) * pps + floor * budget / M: the share ``1 - floor`` of the budget goes
    probability-proportional-to-size (pps_i = min(1, c size_i), sum pps = budget, the largest
    capped at 1 iteratively) and the share ``floor`` uniformly. So sum pi = budget, pi <= 1, and
    every pi >= floor * budget / M: every case stays drawable (the estimate is unbiased only over
    cases that can be drawn) and its weight 1/pi is at most M / (floor * budget), which bounds the
    variance an unlucky draw can cost. ``floor = 0`` is pure pps and needs every size > 0;
    ``floor = 1`` is uniform."""
    s = np.asarray(size, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError("size must be a non-empty one-dimensional array of non-negative numbers")
    if not (0.0 <= floor <= 1.0):
        raise ValueError(f"floor must lie in [0, 1], got {floor!r}")
    if not (0.0 < budget <= s.size):
        raise ValueError(f"budget must lie in (0, {s.size}] (the number of cases), got {budget!r}")
    if floor < 1.0 and (np.any(s <= 0) if floor == 0.0 else not np.any(s > 0)):
        raise ValueError("size must be positive for every case when floor is 0 (a case with size 0 "
                         "could never be drawn), and for some case otherwise")  # fmt: skip
    if floor < 1.0 and np.count_nonzero(s > 0) < budget:
        raise ValueError(f"budget {budget!r} exceeds the {np.count_nonzero(s > 0)} cases of positive size")
    pps = _pps(s, float(budget)) if floor < 1.0 else np.zeros(s.size)
    return np.minimum((1.0 - floor) * pps + floor * budget / s.size, 1.0)


# --------------------------------------------------------------------------- sequential Poisson


def order_keys(size, u) -> np.ndarray:
    """Sequential Poisson sampling keys u_i / size_i (Ohlsson 1998); ``u`` uniform on (0, 1), one per
    case, from the caller's seeded generator (``rng.random(M)``). Review the cases in increasing
    key order; :func:`prefix_inclusion` gives the inclusion probabilities of any prefix. ``size``
    may be :func:`inclusion_probs` (for a target budget) or any positive size measure: only ratios
    matter."""
    s = np.asarray(size, dtype=float)
    uu = np.asarray(u, dtype=float)
    if s.ndim != 1 or uu.shape != s.shape:
        raise ValueError(f"size and u must be one-dimensional of the same length, got {s.shape} and {uu.shape}")
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ValueError("size must be positive and finite for every case (a case of size 0 is never drawn)")
    if not np.all((uu > 0) & (uu < 1)):
        raise ValueError("u must lie strictly between 0 and 1")
    return uu / s


def prefix_inclusion(size, keys, m: int) -> PrefixSample:
    """The first ``m`` cases in key order as a sample: their positions and pi_i = min(1, size_i tau),
    tau the (m+1)-th smallest key.

    With u_i uniform, case i is in the prefix when u_i / size_i < tau, which has probability
    min(1, size_i tau) had tau been fixed. tau is random, but it is the key of a case outside the
    prefix, and given it the prefix is exactly the sample this fixed-threshold (Poisson) rule
    draws: Horvitz-Thompson sums with these pi are unbiased (this is priority sampling, Duffield,
    Lund & Thorup 2007; Ohlsson 1998 shows the sample behaves as a Poisson sample of fixed size).
    Cases whose size_i tau is 1 or more are in every prefix that long and get pi = 1 (weight 1,
    they stand for themselves). With m = M (every case), tau = inf and pi = 1 for all."""
    s = np.asarray(size, dtype=float)
    k = np.asarray(keys, dtype=float)
    if s.ndim != 1 or k.shape != s.shape:
        raise ValueError(f"size and keys must be one-dimensional of the same length, got {s.shape} and {k.shape}")
    if isinstance(m, bool) or int(m) != m or not (0 <= m <= s.size):
        raise ValueError(f"m must be an integer in [0, {s.size}], got {m!r}")
    m = int(m)
    order = np.argsort(k, kind="stable")
    index = order[:m]
    tau = float(k[order[m]]) if m < s.size else math.inf
    pi = np.ones(m) if m == s.size else np.minimum(1.0, s[index] * tau)
    return PrefixSample(positions=index, pi=pi, tau=tau)
