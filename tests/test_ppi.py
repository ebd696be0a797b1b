"""evalcore.stats.ppi: prediction-powered inference against hand derivations (in the comments),
the PPI++ formula, ppi_python, simulated worlds with a known rate, and PandaLM's human labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evalcore.stats.ppi import (
    LabelsNeeded,
    PPIEstimate,
    inclusion_probs,
    labels_needed,
    order_keys,
    ppi_mean,
    prefix_inclusion,
    uncertainty_size,
)

Z90 = 1.6448536269514722  # standard normal 0.95 quantile (two-sided 90%)
PANDALM = Path(__file__).parent.parent.parent / "shared/datasets/pandalm/data"
PANDALM_DRAWS = 2000


def sums(f) -> tuple[int, float, float]:
    f = np.asarray(f, dtype=float)
    return (f.size, float(f.sum()), float((f * f).sum()))


# --------------------------------------------------------------------------- by hand


def test_small_case_by_hand():
    # N = 10 cases, 4 labelled uniformly: w = 10/4 = 2.5, and sum w = N so g = w.
    # labelled y = 1 1 0 1, f = 1 0 0 1; the 6 others have f = 1 1 1 1 0 0 (sum_f = 6 = sumsq_f).
    # ybar = 0.75, fbar_w = 0.5, fbar = 0.6.
    # A = 2.5 (y - .75) = .625 .625 -1.875 .625      sum A^2 = 3 * .390625 + 3.515625 = 4.6875
    # F = 2.5 (f - .5)  = 1.25 -1.25 -1.25 1.25      sum A F = .78125 - .78125 + 2.34375 + .78125 = 3.125
    # sum F^2 = 6.25; sum A f = .625 + .625 = 1.25; sum f F = 2.5
    # labelled part, times k = 4/3:  (4/3)(4.6875 - 2 lam 3.125 + lam^2 6.25) = 25/4 - (25/3) lam + (25/3) lam^2
    # the rest: 2 lam 1.25 + lam^2 (6 - 2 * 2.5 - 36/10) = 2.5 lam - 2.6 lam^2
    # 9 Var(Z) = 25/4 - (35/6) lam + (86/15) lam^2  ->  lam* = (35/6) / (2 * 86/15) = 175/344
    # theta = lam .6 + .75 - lam .5 = .75 + .1 lam; se^2 = 9 Var(Z) / 90 at lam*
    # labels only: se0^2 = (25/4) / 90, value .75
    y, f = np.array([1, 1, 0, 1.0]), np.array([1, 0, 0, 1.0])
    others = np.array([1, 1, 1, 1, 0, 0.0])
    e = ppi_mean(y, f, np.full(4, 2.5), sums(np.concatenate([f, others])))
    lam = 175 / 344
    assert e.reason is None
    assert e.lam == pytest.approx(lam, abs=1e-12)
    assert e.value == pytest.approx(0.75 + 0.1 * lam, abs=1e-12)
    assert e.se**2 == pytest.approx((25 / 4 - 35 / 6 * lam + 86 / 15 * lam**2) / 90, abs=1e-12)
    assert e.labels_only_value == pytest.approx(0.75, abs=1e-12)
    assert e.labels_only_se == pytest.approx(math.sqrt(25 / 4 / 90), abs=1e-12)
    assert e.lo == pytest.approx(e.value - Z90 * e.se, abs=1e-12)
    assert e.hi == 1.0  # .80 + 1.645 * .23 is above 1: clipped, the values being rates
    assert e.n_labels == 4 and e.n_population == 10
    # the variance is that of the explicit Z_i = lam f_i + xi_i w_i (r_i - rbar) over the 10 cases,
    # its labelled part times 4/3
    r = y - lam * f
    d = 2.5 * (r - r.mean())
    z = np.concatenate([lam * f + d, lam * others])
    assert e.se**2 == pytest.approx((np.var(z, ddof=1) + (4 / 3 - 1) * (d @ d) / 9) / 10, abs=1e-12)
    assert e.var_labelled == pytest.approx(4 / 3 * (d @ d) / 90, abs=1e-12)
    assert e.var_labelled + e.var_population == pytest.approx(e.se**2, abs=1e-12)
    # n_eff: weighted variance of y (3/16) over se^2
    assert e.n_eff == pytest.approx((3 / 16) / e.se**2, abs=1e-9)
    # a fixed lam = 1 is classic PPI: 9 Var(Z) = 25/4 - 35/6 + 86/15
    e1 = ppi_mean(y, f, np.full(4, 2.5), sums(np.concatenate([f, others])), lam=1.0)
    assert e1.value == pytest.approx(0.85, abs=1e-12)
    assert e1.se**2 == pytest.approx((25 / 4 - 35 / 6 + 86 / 15) / 90, abs=1e-12)


def test_lam_zero_is_the_hajek_weighted_mean_of_the_labels():
    rng = np.random.default_rng(0)
    f_all = (rng.random(300) < 0.6).astype(float)
    y = (rng.random(40) < 0.7).astype(float)
    w = 1.0 + 9.0 * rng.random(40)
    e = ppi_mean(y, f_all[:40], w, sums(f_all), lam=0.0)
    assert e.value == pytest.approx(float(w @ y / w.sum()), abs=1e-12)
    assert e.value == e.labels_only_value and e.se == e.labels_only_se


@pytest.mark.parametrize("lam", [0.3, 1.0, None])
def test_uniform_one_stratum_is_the_ppi_plus_plus_formula(lam):
    rng = np.random.default_rng(1)
    f_all = (rng.random(2000) < 0.55).astype(float)
    idx = rng.choice(2000, 150, replace=False)
    y = np.where(rng.random(150) < 0.8, f_all[idx], 1 - f_all[idx])
    e = ppi_mean(y, f_all[idx], np.full(150, 2000 / 150), sums(f_all), lam=lam)
    used = e.lam if lam is None else lam
    assert e.value == pytest.approx(used * f_all.mean() + (y - used * f_all[idx]).mean(), abs=1e-12)
    if lam is None:  # the tuned lam is about the labelled regression slope Cov(y, f) / Var(f)
        slope = np.cov(y, f_all[idx])[0, 1] / np.var(f_all[idx], ddof=1)
        assert e.lam == pytest.approx(slope, abs=0.02)


def test_perfect_judge_gets_lam_near_one_and_a_much_narrower_interval():
    rng = np.random.default_rng(2)
    f_all = (rng.random(5000) < 0.7).astype(float)
    idx = rng.choice(5000, 200, replace=False)
    e = ppi_mean(f_all[idx], f_all[idx], np.full(200, 25.0), sums(f_all))
    assert e.lam > 0.95
    # only the population's own noise is left: se about sqrt(.21 / 5000) = .0065 against sqrt(.21 / 200) = .032
    assert e.se < 0.3 * e.labels_only_se, (e.se, e.labels_only_se)
    assert e.value == pytest.approx(f_all.mean(), abs=0.01)
    assert e.n_eff > 2000


def test_useless_judge_gets_lam_near_zero_and_never_a_wider_interval():
    rng = np.random.default_rng(3)
    lams, ratios = [], []
    for _ in range(200):
        f_all = (rng.random(3000) < 0.5).astype(float)
        idx = rng.choice(3000, 200, replace=False)
        y = (rng.random(200) < 0.7).astype(float)  # independent of f
        e = ppi_mean(y, f_all[idx], np.full(200, 15.0), sums(f_all))
        assert e.se <= e.labels_only_se * (1 + 1e-12)  # the tuned lam minimises the same quadratic
        lams.append(e.lam)
        ratios.append(e.se / e.labels_only_se)
    assert np.mean(lams) < 0.1 and np.quantile(lams, 0.9) < 0.25
    assert min(ratios) > 0.97, min(ratios)


def test_stratified_weights_reproduce_a_stratified_mean():
    rng = np.random.default_rng(4)
    sizes, labelled = {"easy": 800, "hard": 200}, {"easy": 20, "hard": 40}
    ys, fs, ws, hs, pop, truth, ppi = [], [], [], [], {}, 0.0, 0.0
    for h, n_h in sizes.items():
        f_all = (rng.random(n_h) < (0.9 if h == "easy" else 0.4)).astype(float)
        m = labelled[h]
        y = np.where(rng.random(m) < 0.85, f_all[:m], 1 - f_all[:m])
        ys.append(y)
        fs.append(f_all[:m])
        ws.append(np.full(m, n_h / m))
        hs += [h] * m
        pop[h] = sums(f_all)
        truth += n_h / 1000 * y.mean()
        ppi += n_h / 1000 * (0.5 * f_all.mean() + (y - 0.5 * f_all[:m]).mean())
    args = (np.concatenate(ys), np.concatenate(fs), np.concatenate(ws), pop)
    assert ppi_mean(*args, strata=hs, lam=0.0).value == pytest.approx(truth, abs=1e-12)
    assert ppi_mean(*args, strata=hs, lam=0.5).value == pytest.approx(ppi, abs=1e-12)
    # the weights' scale inside a stratum does not matter (Hajek), their ratio across strata neither
    scaled = np.concatenate([ws[0] * 1.0, ws[1] * 3.0])
    assert ppi_mean(args[0], args[1], scaled, pop, strata=hs, lam=0.0).value == pytest.approx(truth, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"f": [1, 0]}, "f"),
        ({"w": [1, 1, 0.5]}, "w"),
        ({"level": 1.0}, "level"),
        ({"level": 0}, "level"),
        ({"strata": ["a", "b"]}, "strata"),
        ({"pop": {"a": (10, 5, 5)}, "strata": ["a", "a", "b"]}, "pop"),
        ({"pop": (2, 1.0, 1.0)}, "pop"),  # fewer cases than labelled
        ({"pop": (10, 0.0, 0.0)}, "pop"),  # the labelled f = 1 are not counted in the sums
        ({"pop": (10.5, 5.0, 5.0)}, "pop"),
        ({"y": [[1, 0, 1]]}, "y"),
        ({"y": [1, np.nan, 0]}, "y"),
        ({"lam": math.inf}, "lam"),
    ],
)
def test_bad_input_raises_naming_the_field(kwargs, field):
    args = {"y": [1, 0, 1], "f": [1, 0, 1], "w": [2, 2, 2], "pop": (10, 5.0, 5.0)}
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("strata", "level", "lam") if k in args}
    with pytest.raises(ValueError, match=field):
        ppi_mean(args["y"], args["f"], args["w"], args["pop"], **extra)


def test_undefined_estimates_say_why():
    e = ppi_mean([], [], [], (10, 5.0, 5.0))
    assert e.value is None and e.lo is None and "no labelled" in e.reason
    e = ppi_mean([1, 0, 1], [1, 0, 1], [2, 2, 5], {"a": (10, 5, 5), "b": (4, 1, 1)}, strata=["a", "a", "b"])
    assert e.value is None and "'b'" in e.reason and "at least 2" in e.reason
    e = ppi_mean([1, 1, 1], [1, 1, 1], [3, 3, 3], (9, 9.0, 9.0))
    assert e.value is None and "variance is 0" in e.reason
    assert isinstance(e, PPIEstimate) and e.n_labels == 3
    # a stratum without cases needs no labels
    e = ppi_mean([1, 0, 1], [1, 0, 1], [3, 3, 3], {"a": (9, 5, 5), "empty": (0, 0, 0)}, strata=["a"] * 3)
    assert e.value is not None


# --------------------------------------------------------------------------- labels needed


def test_labels_needed():
    rng = np.random.default_rng(5)
    f_all = (rng.random(5000) < 0.6).astype(float)
    idx = rng.choice(5000, 100, replace=False)
    y = np.where(rng.random(100) < 0.8, f_all[idx], 1 - f_all[idx])
    e = ppi_mean(y, f_all[idx], np.full(100, 50.0), sums(f_all))
    hw = Z90 * e.se
    met = labels_needed(e, hw * 1.01)
    assert isinstance(met, LabelsNeeded) and met.value == 0 and met.half_width == pytest.approx(hw)
    assert met.floor_half_width < hw
    target = hw / 2
    k = labels_needed(e, target).value
    assert k is not None and k > 0

    def half_width(extra):
        return Z90 * math.sqrt(e.var_population + e.var_labelled * 100 / (100 + extra))

    assert half_width(k) <= target < half_width(k - 1)
    assert 250 < k < 450  # about 3n: the labelled part dominates and halving it takes 4x the labels
    out = labels_needed(e, 1e-4)  # below what labelling all 5000 cases gives
    assert out.value is None and "unreachable" in out.reason and out.floor_half_width > 1e-4
    assert labels_needed(ppi_mean([], [], [], (10, 5.0, 5.0)), 0.1).value is None
    with pytest.raises(ValueError, match="target_half_width"):
        labels_needed(e, 0.0)


# --------------------------------------------------------------------------- active audit


def test_uncertainty_size():
    s = uncertainty_size([0.0, 0.5, 1.0, 0.2], epsilon=0.05)
    assert s == pytest.approx([0.05, 0.55, 0.05, 0.45])
    with pytest.raises(ValueError, match="p_pass"):
        uncertainty_size([1.2])


def test_inclusion_probs_pps_with_capping_and_floor():
    size = np.array([100.0, 1, 1, 2, 2, 4, 10])
    pi = inclusion_probs(size, 3.0)
    # the 100 is capped at 1; the other 2 go proportionally to 1,1,2,2,4,10 (sum 20): c = 2/20;
    # then 10 * 0.1 = 1 is capped too and the last 1 goes over 1,1,2,2,4 (sum 10): c = 0.1 again
    assert pi == pytest.approx([1, 0.1, 0.1, 0.2, 0.2, 0.4, 1.0])
    assert pi.sum() == pytest.approx(3.0)
    pi = inclusion_probs(size, 3.0, floor=0.5)
    assert pi.sum() == pytest.approx(3.0) and pi.min() >= 0.5 * 3 / 7 - 1e-12 and pi.max() <= 1
    assert inclusion_probs(size, 3.0, floor=1.0) == pytest.approx(np.full(7, 3 / 7))
    big = inclusion_probs(uncertainty_size(np.random.default_rng(0).random(5000)), 200, floor=0.2)
    assert big.sum() == pytest.approx(200) and big.min() >= 0.2 * 200 / 5000 - 1e-12
    for kwargs, field in [({"budget": 8}, "budget"), ({"floor": 1.5}, "floor"), ({"size": [1, 0, 2]}, "size")]:
        args = {"size": size[:3] if "size" not in kwargs else kwargs["size"], "budget": 2, "floor": 0.0}
        args.update(kwargs)
        with pytest.raises(ValueError, match=field):
            inclusion_probs(args["size"], args["budget"], args["floor"])


def test_prefix_inclusion_is_unbiased_for_totals_and_exact_at_the_ends():
    """Priority sampling (Duffield, Lund & Thorup 2007): the Horvitz-Thompson total over any prefix
    with pi = min(1, size * tau) is unbiased. 20,000 queues of 40 cases, prefix of 8."""
    rng = np.random.default_rng(6)
    size = np.concatenate([[30.0], rng.random(39) + 0.1])
    y = rng.random(40) * size  # values that track the size, as the design wants
    u = rng.random((20000, 40))
    keys = u / size
    order = np.argsort(keys, axis=1)
    tau = np.take_along_axis(keys, order[:, 8:9], axis=1)
    pi = np.minimum(1.0, size[order[:, :8]] * tau)
    ht = (y[order[:, :8]] / pi).sum(axis=1)
    assert abs(ht.mean() - y.sum()) < 4 * ht.std() / math.sqrt(ht.size), (ht.mean(), y.sum())
    # one queue through the functions agrees with the vectorised rule
    p = prefix_inclusion(size, order_keys(size, u[0]), 8)
    assert list(p.positions) == list(order[0, :8]) and p.pi == pytest.approx(pi[0]) and p.tau == tau[0, 0]
    assert p.pi[0] == 1.0  # the size-30 case is always first in line and stands for itself
    full = prefix_inclusion(size, order_keys(size, u[0]), 40)
    assert full.tau == math.inf and np.all(full.pi == 1)
    with pytest.raises(ValueError, match="size"):
        order_keys([1, 0], [0.5, 0.5])
    with pytest.raises(ValueError, match="m must"):
        prefix_inclusion(size, keys[0], 41)


def test_finite_population_by_hand():
    # the same 10 cases and 4 uniform labels as test_small_case_by_hand, for the 10 cases' own share:
    # labels only, se^2 = (1 - n/N) s^2 / n with s^2 the labels' sample variance (3/16 * 4/3 = 1/4):
    # (1 - .4) * .25 / 4 = .0375; the population part is gone
    y, f = np.array([1, 1, 0, 1.0]), np.array([1, 0, 0, 1.0])
    pop = sums(np.concatenate([f, [1, 1, 1, 1, 0, 0.0]]))
    e = ppi_mean(y, f, np.full(4, 2.5), pop, lam=0.0, finite=True)
    assert e.finite and e.se**2 == pytest.approx(0.6 * 0.25 / 4, abs=1e-12) and e.var_population == 0.0
    # the interval takes Student's t on n - 1 = 3 degrees of freedom: 2.3534 at 90%
    assert e.lo == pytest.approx(0.75 - 2.353363434801823 * math.sqrt(0.0375), abs=1e-9)
    assert e.value == pytest.approx(0.75, abs=1e-12)
    # n_eff: the uniform labels-only sample of n' with s2y (1/n' - 1/N) = se^2, s2y = 3/16: at lam 0 it is n
    # (up to the n/(n - 1) of the labelled residuals: s2y uses 1/n, s^2 1/(n - 1))
    assert e.n_eff == pytest.approx(1 / (0.0375 / (3 / 16) + 1 / 10), abs=1e-12)
    tuned = ppi_mean(y, f, np.full(4, 2.5), pop, finite=True)
    assert tuned.se <= e.se + 1e-15 and tuned.se < ppi_mean(y, f, np.full(4, 2.5), pop).se
    # a census: every case labelled with pi = 1 is the mean itself
    yy = np.array([1, 0, 1, 1, 0, 1.0])
    c = ppi_mean(yy, yy, np.ones(6), sums(yy), finite=True)
    assert (c.value, c.lo, c.hi, c.se) == (pytest.approx(4 / 6), pytest.approx(4 / 6), pytest.approx(4 / 6), 0.0)
    assert labels_needed(c, 0.01).value == 0


def test_labels_needed_finite():
    # v_lab = S^2 (1/n - 1/N); at n + k it is S^2 (1/(n + k) - 1/N). S^2 = .25, n = 20, N = 100:
    # v_lab = .25 * (.05 - .01) = .01; target half-width .1 at 90% with Student's t on n - 1 = 19
    # degrees of freedom (1.7291): target var = (.1 / 1.7291)^2 = .0033446
    # n + k >= 1 / (.0033446 / .25 + .01) = 42.77 -> k = 23
    t19 = 1.729132811521367
    est = PPIEstimate(0.5, 0.3, 0.7, 0.1, 0.5, 20, 25.0, 0.90, 0.5, 0.3, 0.7, 0.1, 0.01, 0.0, 100, None, True)
    need = labels_needed(est, 0.1)
    assert need.value == 23 and need.floor_half_width == 0.0
    assert need.half_width == pytest.approx(t19 * 0.1, abs=1e-9)
    assert labels_needed(est, 0.5).value == 0
    assert labels_needed(est, 1e-6).value == 80  # every other case: a census reaches any target


# --------------------------------------------------------------------------- simulated worlds

TRUE_RATE, N_CASES, N_LABELS, N_WORLDS = 0.7, 5000, 200, 3000


@pytest.fixture(scope="module")
def worlds():
    """3,000 worlds (seed 2024, drawn 500 at a time) of N = 5,000 cases with pass rate 0.7 drawn
    case by case; a judge of sensitivity 0.85 and specificity 0.75; per case a share p of judge
    rounds passing it, Beta(1, 6) away from the verdict when the judge is right and Beta(3, 3) when
    wrong (so sqrt(p (1 - p)) tracks the judge's errors). Budget 200 labels: uniform without
    replacement; active Poisson with pi = inclusion_probs(uncertainty_size(p), 200, floor=0.2); the
    first 200 of a queue in order_keys(pi, u) order with prefix_inclusion's pi. Each estimate is a
    90% interval; a world covers when its interval holds 0.7.

    Why 3,000 and not 1,000: over 10,000 worlds (seed 11, a separate run) the coverage was PPI
    uniform 89.5%, lam fixed at 1 89.7%, labels only 90.8%, active 89.8%, prefix 89.5% (Monte
    Carlo s.e. 0.3 points; the PPI z-scores' s.d. was 1.016: the normal approximation with a
    rectifier y - lam f that is mostly 0 leaves the se about 1.6% small). At 89.5%, 1,000 worlds
    (s.e. 0.95 points) fall below 88% for about one seed in ten, and an earlier 1,000-world version
    of this test did (87.9% uniform, seed 2024). 3,000 worlds (s.e. 0.55) keep the band honest.
    """
    rng = np.random.default_rng(2024)
    out = {k: [] for k in ("uniform", "labels_only", "active", "prefix")}
    lams = []
    for _ in range(N_WORLDS // 500):
        y = (rng.random((500, N_CASES)) < TRUE_RATE).astype(float)
        right = rng.random((500, N_CASES)) < np.where(y == 1, 0.85, 0.75)
        f = np.where(right, y, 1 - y)
        away = np.where(right, rng.beta(1, 6, y.shape), rng.beta(3, 3, y.shape))
        p_pass = np.where(f == 1, 1 - away, away)
        for i in range(500):
            yi, fi, pop = y[i], f[i], sums(f[i])
            idx = rng.choice(N_CASES, N_LABELS, replace=False)
            e = ppi_mean(yi[idx], fi[idx], np.full(N_LABELS, N_CASES / N_LABELS), pop)
            out["uniform"].append((e.lo, e.hi))
            out["labels_only"].append((e.labels_only_lo, e.labels_only_hi))
            lams.append(e.lam)
            pi = inclusion_probs(uncertainty_size(p_pass[i]), N_LABELS, floor=0.2)
            sel = rng.random(N_CASES) < pi
            e = ppi_mean(yi[sel], fi[sel], 1 / pi[sel], pop)
            out["active"].append((e.lo, e.hi))
            q = prefix_inclusion(pi, order_keys(pi, rng.random(N_CASES)), N_LABELS)
            e = ppi_mean(yi[q.positions], fi[q.positions], 1 / q.pi, pop)
            out["prefix"].append((e.lo, e.hi))
    res = {k: np.array(v) for k, v in out.items()}
    cover = {k: float(np.mean((v[:, 0] <= TRUE_RATE) & (TRUE_RATE <= v[:, 1]))) for k, v in res.items()}
    width = {k: float(np.mean(v[:, 1] - v[:, 0])) for k, v in res.items()}
    return cover, width, float(np.mean(lams))


@pytest.mark.parametrize("design", ["uniform", "active", "prefix", "labels_only"])
def test_simulated_coverage_is_nominal(worlds, design):
    """Measured (seed 2024, 3,000 worlds): coverage uniform 0.896, active 0.890, prefix 0.891,
    labels only 0.906."""
    cover, width, _ = worlds
    assert 0.88 <= cover[design] <= 0.92, f"{design}: {cover[design]:.3f} of {N_WORLDS} worlds covered ({cover}, widths {width})"


def test_simulated_ppi_is_narrower_than_labels_only(worlds):
    """Measured (seed 2024, 3,000 worlds): mean width 0.1065 labels only; over it PPI uniform 0.816,
    active 0.759, prefix 0.759; mean tuned lam 0.57."""
    cover, width, lam = worlds
    ratios = {k: width[k] / width["labels_only"] for k in ("uniform", "active", "prefix")}
    assert all(r < 0.95 for r in ratios.values()), f"width ratios {ratios}, mean lam {lam:.3f}"
    assert width["active"] < width["uniform"], f"width ratios {ratios}"


# --------------------------------------------------------------------------- PandaLM


def _majority_is_1(row) -> bool:
    votes = [row["annotator1"], row["annotator2"], row["annotator3"]]
    return votes.count(1) >= 2


@pytest.fixture(scope="module")
def pandalm():
    if not (PANDALM / "testset-v1.json").exists():
        pytest.skip(f"PandaLM data not found at {PANDALM}")
    people = json.loads((PANDALM / "testset-v1.json").read_text())
    gpt = json.loads((PANDALM / "gpt-3.5-turbo-testset-v1.json").read_text())
    small = json.loads((PANDALM / "pandalm-7b-testset-v1.json").read_text())
    assert [r["idx"] for r in people] == [r["idx"] for r in gpt] == [r["idx"] for r in small]
    y = np.array([_majority_is_1(r) for r in people], dtype=float)
    f = np.array([r["gpt_result"] == "1" for r in gpt], dtype=float)
    f2 = np.array([r["pandalm_result"] == 1 for r in small], dtype=float)
    return y, f, f2


@pytest.fixture(scope="module")
def pandalm_runs(pandalm):
    """For budgets 50, 100, 200: 2,000 draws each (seed 7) of uniform labels without replacement, and
    of active audits: Poisson with pi = inclusion_probs(uncertainty_size(p, epsilon), budget,
    floor=0.2), p the share of gpt-3.5 and PandaLM-7B saying '1' (0, 1/2 or 1), so that pairs where
    the two judges disagree are likelier. "active" takes epsilon = 0.5 (a disagreement weighs 1.0,
    an agreement 0.5: pi about twice as high); "active_sharp" the default 0.05 (eleven times)."""
    y, f, f2 = pandalm
    n_all, truth, pop = y.size, y.mean(), sums(f)
    rng = np.random.default_rng(7)
    out = {}
    for budget in (50, 100, 200):
        pis = {
            "active": inclusion_probs(uncertainty_size((f + f2) / 2, epsilon=0.5), budget, floor=0.2),
            "active_sharp": inclusion_probs(uncertainty_size((f + f2) / 2), budget, floor=0.2),
        }
        rows = {k: [] for k in ("uniform", "labels_only", *pis, "uniform_finite", "labels_only_finite",
                                "active_finite")}  # fmt: skip
        for _ in range(PANDALM_DRAWS):
            idx = rng.choice(n_all, budget, replace=False)
            e = ppi_mean(y[idx], f[idx], np.full(budget, n_all / budget), pop)
            rows["uniform"].append((e.lo, e.hi))
            rows["labels_only"].append((e.labels_only_lo, e.labels_only_hi))
            e = ppi_mean(y[idx], f[idx], np.full(budget, n_all / budget), pop, finite=True)
            rows["uniform_finite"].append((e.lo, e.hi))
            rows["labels_only_finite"].append((e.labels_only_lo, e.labels_only_hi))
            for k, pi in pis.items():
                sel = rng.random(n_all) < pi
                e = ppi_mean(y[sel], f[sel], 1 / pi[sel], pop)
                rows[k].append((e.lo, e.hi))
                if k == "active":
                    e = ppi_mean(y[sel], f[sel], 1 / pi[sel], pop, finite=True)
                    rows["active_finite"].append((e.lo, e.hi))
        for k, v in rows.items():
            v = np.array(v)
            out[budget, k] = (float(np.mean((v[:, 0] <= truth) & (truth <= v[:, 1]))), float(np.mean(v[:, 1] - v[:, 0])))
    return out


@pytest.mark.parametrize("budget", [50, 100, 200])
def test_pandalm_coverage_and_width(pandalm_runs, budget):
    """Y: the three people's strict majority prefers response 1 (42.2% of the 999 pairs); f:
    gpt-3.5 says '1'. The target is the share of Y over all 999 pairs. Measured (seed 7, 2,000
    draws each), coverage and mean width over the labels-only width (uniform labels):

    ======  ============  ==============  ==============  =====================
    budget  labels only   PPI uniform     PPI active      PPI active_sharp
    ======  ============  ==============  ==============  =====================
    50      0.891 (0.230) 0.892, 0.827    0.893, 0.820    0.870, 0.952
    100     0.907 (0.163) 0.916, 0.842    0.918, 0.836    0.883, 1.005
    200     0.935 (0.115) 0.941, 0.864    0.943, 0.854    0.938, 1.032
    ======  ============  ==============  ==============  =====================

    (labels only: coverage and mean width). For the 999 pairs' own share (``finite=True``, what
    the report card shows), coverage and mean width over the finite labels-only width:

    ======  ============  ==============  ==============
    budget  labels only   PPI uniform     PPI active
    ======  ============  ==============  ==============
    50      0.891 (0.228) 0.884, 0.817    0.887, 0.809
    100     0.906 (0.156) 0.896, 0.822    0.896, 0.815
    200     0.896 (0.103) 0.894, 0.827    0.899, 0.813
    ======  ============  ==============  ==============

    Why 2,000 draws and not 500: a 6,000-draw run (seed 5)
    put the uniform PPI coverage at budget 50 at 89.7%, so 500 draws (s.e. 1.4 points) fall below
    88% one time in ten (an earlier 500-draw version of this test, before the labelled part's
    n/(n - 1), measured 87.0%). The intervals over-cover at 200 because they are for the process
    (superpopulation): they count the population's own noise Var(y)/N, which for the share of these
    999 pairs is no noise, and which is about a quarter of se^2 at 200 labels.
    """
    runs = {k: v for (b, k), v in pandalm_runs.items() if b == budget}
    msg = f"budget {budget}: " + ", ".join(f"{k} cover {c:.3f} width {w:.4f}" for k, (c, w) in runs.items())
    for design in ("uniform", "active"):
        assert runs[design][0] >= 0.88, msg
        assert runs[design][1] < runs["labels_only"][1], msg
        # the finite population's interval (what the report card shows): the same coverage band,
        # narrower than the process's, and narrower than labels only on the same footing
        assert 0.88 <= runs[design + "_finite"][0] <= 0.93, msg
        assert runs[design + "_finite"][1] < runs[design][1], msg
        assert runs[design + "_finite"][1] < runs["labels_only_finite"][1], msg
    if budget >= 100:
        # the two judges' agreement is no sign of being right (gpt-3.5 is wrong on 15% of the pairs
        # where they agree, 42% where they disagree): tilting eleven to one spends the budget badly
        assert runs["active_sharp"][1] > runs["active"][1], msg


# --------------------------------------------------------------------------- ppi_python


def test_agrees_with_ppi_python():
    """ppi_py takes the unlabelled cases as a set apart from the labelled ones; here the population
    is both (N = n + N_u) with w = N/n. The estimates differ by terms of relative order n/N
    (fbar over N against over N_u; the covariance of f with the rectifier over the shared cases,
    2 lam Cov(f, y - lam f)/N, which ppi_py has no reason to count; N/(N - 1) against 1): with
    n = 200 and N_u = 100,000 that is 0.2%, and we allow 2 n/N of the half-width. The tuned lams differ
    more: ours is about Cov(y, f)/Var(f) over the labelled, ppi_py's Cov(y, f)/((1 + n/N) Var(f)) with
    Var(f) over all cases, so they agree to sampling noise only, and the interval to second order.
    Our labelled part carries n/(n - 1), ppi_py's none: another 1/(2n) of the half-width, allowed
    as 1/n."""
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(8)
    n, n_u = 200, 100_000

    def draw(m):
        y = (rng.random(m) < 0.7).astype(float)
        return y, np.where(rng.random(m) < np.where(y == 1, 0.85, 0.75), y, 1 - y)

    y, f = draw(n)
    _, f_u = draw(n_u)
    f_all = np.concatenate([f, f_u])
    pop, w, tol = sums(f_all), np.full(n, f_all.size / n), 2 * n / f_all.size + 1 / n
    for lam in (1.0, None):
        e = ppi_mean(y, f, w, pop, lam=lam)
        # with the population as ppi_py's unlabelled set, the point estimates are one formula
        same = ppi_py.ppi_mean_pointestimate(y, f, f_all, lam=e.lam)
        assert e.value == pytest.approx(float(np.ravel(same)[0]), abs=1e-12)
        lo, hi = (float(np.ravel(b)[0]) for b in ppi_py.ppi_mean_ci(y, f, f_u, alpha=0.1, lam=lam))
        theirs = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, f_u, lam=lam))[0])
        lam_py = 1.0 if lam else (theirs - y.mean()) / (f_u.mean() - f.mean())
        assert abs(e.lam - lam_py) < 0.05, (e.lam, lam_py)
        # the centres differ by the lams' difference times fbar_u - fbar_n, and lam n/N (fbar_n - fbar_u)
        gap = abs(e.lam - lam_py) * abs(f_u.mean() - f.mean()) + e.lam * n / f_all.size * abs(f.mean() - f_u.mean())
        slack = gap + tol * (hi - lo) / 2 + 1e-12
        assert abs(e.lo - lo) <= slack and abs(e.hi - hi) <= slack, ((e.lo, e.hi), (lo, hi), slack)
        assert (e.hi - e.lo) / (hi - lo) == pytest.approx(1.0, abs=tol), ((e.lo, e.hi), (lo, hi))
