"""evalcore.stats against values derived by hand (derivations in the comments), a published
table, and the bundled demo."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from evalcore.stats.association import (
    ASSOCIATION_THRESHOLD,
    DEFAULT_LEVEL,
    MIN_PEOPLE,
    Classification,
    InstrumentEvidence,
    PhiInterval,
    Stat,
    TwoByTwo,
    classify_association,
    conditioned_rates,
    phi,
    phi_interval,
    phi_interval_analytic,
    phi_interval_bootstrap,
    phi_intervals_paired,
    ternary_headline,
    wilson,
)
from evalcore.stats.correlation import kendall_tau_b, mcnemar, spearman

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"

Z95 = 1.959963984540054    # standard normal 0.975 quantile (two-sided 95%)
Z90 = 1.6448536269514722   # standard normal 0.95 quantile (two-sided 90%)


def fails_from(t: TwoByTwo) -> tuple[np.ndarray, np.ndarray]:
    """Answer-level columns that cross-tabulate to t (cell order: pp, pf, fp, ff)."""
    a = [False] * (t.a_pass_b_pass + t.a_pass_b_fail) + [True] * (t.a_fail_b_pass + t.a_fail_b_fail)
    b = ([False] * t.a_pass_b_pass + [True] * t.a_pass_b_fail
         + [False] * t.a_fail_b_pass + [True] * t.a_fail_b_fail)
    return np.array(a), np.array(b)


# ---------------------------------------------------------------------------------------------
# TwoByTwo
# ---------------------------------------------------------------------------------------------

def test_two_by_two_totals():
    t = TwoByTwo(358, 8, 161, 73)
    assert (t.a_pass, t.a_fail) == (366, 234)          # 358 + 8, 161 + 73
    assert (t.b_pass, t.b_fail) == (519, 81)           # 358 + 161, 8 + 73
    assert t.n == 600


def test_two_by_two_from_fails_and_validation():
    a = np.array([True, True, False, False, False])
    b = np.array([True, False, True, False, False])
    # answer 0 fails both, 1 fails A only, 2 fails B only, 3 and 4 pass both
    assert TwoByTwo.from_fails(a, b) == TwoByTwo(2, 1, 1, 1)
    assert TwoByTwo.from_fails(np.array([1, 0]), np.array([0, 0])) == TwoByTwo(1, 0, 1, 0)
    with pytest.raises(ValueError):
        TwoByTwo(-1, 0, 0, 0)
    with pytest.raises(ValueError):
        TwoByTwo(1.5, 0, 0, 0)
    with pytest.raises(ValueError):
        TwoByTwo.from_fails(a, b[:3])
    with pytest.raises(ValueError):
        TwoByTwo.from_fails(np.array([0.5, 1.0]), np.array([0, 1]))


# ---------------------------------------------------------------------------------------------
# The published table: C3 cites_source as rows (A), C1 answers_question as columns (B)
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def seed_table() -> TwoByTwo:
    # cites pass: 358 answer-pass, 8 answer-fail; cites fail: 161 answer-pass, 73 answer-fail
    return TwoByTwo(a_pass_b_pass=358, a_pass_b_fail=8, a_fail_b_pass=161, a_fail_b_fail=73)


def test_seed_table_phi(seed_table):
    # n11*n00 - n10*n01 = 73*358 - 161*8 = 26134 - 1288 = 24846
    # r1 r0 c1 c0 = 234 * 366 * 81 * 519 = 85644 * 42039 = 3,600,388,116; sqrt = 60003.23
    # phi = 24846 / 60003.23 = 0.41408
    s = phi(seed_table)
    assert s.reason is None
    assert round(s.value, 3) == 0.414
    assert s.value == pytest.approx(24846 / math.sqrt(3_600_388_116), rel=1e-12)


def test_seed_table_conditioned_rates(seed_table):
    r = conditioned_rates(seed_table, a="cites_source", b="answers_question")
    # 8/366 = 0.021858 -> 2.2%; 73/234 = 0.311966 -> 31.2%
    assert round(100 * r["pass_row"]["rate"], 1) == 2.2
    assert round(100 * r["fail_row"]["rate"], 1) == 31.2
    assert (r["pass_row"]["k"], r["pass_row"]["n"]) == (8, 366)
    assert (r["fail_row"]["k"], r["fail_row"]["n"]) == (73, 234)
    # ratio = (73/234) / (8/366) = 73*366 / (234*8) = 26718 / 1872 = 14.2724
    assert round(r["ratio"]["value"], 2) == 14.27
    assert r["ratio"]["value"] == pytest.approx(26718 / 1872, rel=1e-12)
    assert r["ratio"]["reason"] is None
    # Wilson 95%: centre (k + z^2/2)/(n + z^2), half z/(n + z^2) sqrt(k(n-k)/n + z^2/4)
    for key, k, n in (("pass_row", 8, 366), ("fail_row", 73, 234)):
        z2 = Z95 ** 2
        centre = (k + z2 / 2) / (n + z2)
        half = Z95 / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
        lo, hi = r[key]["ci"]
        assert lo == pytest.approx(centre - half, abs=1e-9)
        assert hi == pytest.approx(centre + half, abs=1e-9)
    # 8/366: [0.0111, 0.0425]; 73/234: [0.2560, 0.3740]
    assert r["pass_row"]["ci"] == pytest.approx((0.0111, 0.0425), abs=1e-4)
    assert r["fail_row"]["ci"] == pytest.approx((0.2560, 0.3740), abs=1e-4)


# ---------------------------------------------------------------------------------------------
# phi: small tables by hand, and the degenerate cases
# ---------------------------------------------------------------------------------------------

def test_phi_small_table_by_hand():
    # n11 = 3, n00 = 3, n10 = n01 = 1; every margin is 4: phi = (9 - 1) / sqrt(4^4) = 8/16
    assert phi(TwoByTwo(3, 1, 1, 3)) == Stat(0.5, None)
    # independence, (pp, pf, fp, ff) = (4, 4, 1, 1): r1 = 2, c1 = 5, n = 10, and
    # n11*n00 - n10*n01 = 1*4 - 1*4 = 0 (the fail/fail cell is exactly r1*c1/n = 1)
    assert phi(TwoByTwo(4, 4, 1, 1)).value == 0.0
    # "fail" is coded 1: A and B failing together gives a positive phi, and swapping the
    # coding of both criteria (pp <-> ff, pf <-> fp) leaves it unchanged
    # (10, 20, 30, 40): n11*n00 - n10*n01 = 40*10 - 30*20 = -200;
    # r1 = 70, r0 = 30, c1 = 60, c0 = 40: phi = -200 / sqrt(70*30*60*40) = -200/2244.99 = -0.0890871
    t = TwoByTwo(10, 20, 30, 40)
    assert phi(t).value == pytest.approx(-200 / math.sqrt(70 * 30 * 60 * 40), rel=1e-12)
    assert phi(TwoByTwo(40, 30, 20, 10)).value == pytest.approx(phi(t).value, rel=1e-12)


def test_phi_equals_pearson_on_the_fail_columns():
    rng = np.random.default_rng(7)
    a = rng.random(500) < 0.3
    b = (rng.random(500) < 0.2) | (a & (rng.random(500) < 0.4))
    assert phi(TwoByTwo.from_fails(a, b)).value == pytest.approx(np.corrcoef(a, b)[0, 1], abs=1e-12)


def test_phi_empty_cell_is_still_defined():
    # (pp, pf, fp, ff) = (5, 0, 2, 3): n11 n00 - n10 n01 = 15 - 0 = 15
    # r1 = 5, r0 = 5, c1 = 3, c0 = 7: phi = 15 / sqrt(525) = 0.654654
    assert phi(TwoByTwo(5, 0, 2, 3)).value == pytest.approx(15 / math.sqrt(525), rel=1e-12)
    # both off-diagonal cells empty: perfect co-failure, phi = 24 / sqrt(6*4*4*6) = 1
    assert phi(TwoByTwo(4, 0, 0, 6)).value == pytest.approx(1.0)
    # both diagonal cells empty: exactly one of them fails on every answer, phi = -1
    assert phi(TwoByTwo(0, 4, 6, 0)).value == pytest.approx(-1.0)


def test_phi_constant_column():
    # answers_question (B) never fails on 600 answers: column total c1 = 0
    s = phi(TwoByTwo(500, 0, 100, 0), a="cites_source", b="answers_question")
    assert s.value is None
    assert s.reason == "answers_question never fails in these 600 answers: phi is undefined for a constant column"
    # generic labels when the caller gives none
    s = phi(TwoByTwo(0, 0, 3, 2))
    assert s.value is None and s.reason.startswith("A fails on every answer in these 5 answers")
    s = phi(TwoByTwo(7, 0, 0, 0))
    assert s.value is None and "A never fails and B never fails" in s.reason and "constant columns" in s.reason


def test_phi_one_item_and_all_zeros():
    # one answer: each margin is 0 or 1, so both columns are constant
    s = phi(TwoByTwo.from_fails(np.array([True]), np.array([False])))
    assert s == Stat(None, "A fails on every answer and B never fails in the only answer: "
                           "phi is undefined for constant columns")
    s = phi(TwoByTwo(0, 0, 0, 0))
    assert s == Stat(None, "no answers: phi is undefined")


def test_conditioned_rates_degenerate():
    # empty cell: B never fails where A passes -> pass-row rate 0/5, fail-row rate 3/5,
    # ratio divides by zero
    r = conditioned_rates(TwoByTwo(5, 0, 2, 3), a="grounded", b="no_fabrication")
    assert r["pass_row"]["rate"] == 0.0 and r["fail_row"]["rate"] == pytest.approx(0.6)
    assert r["ratio"] == {"value": None,
                          "reason": "no_fabrication never fails where grounded passes: the ratio divides by zero"}
    # Wilson at k = 0: [0, z^2/(n + z^2)] = [0, 3.8415/8.8415] = [0, 0.43448]
    assert r["pass_row"]["ci"] == pytest.approx((0.0, Z95 ** 2 / (5 + Z95 ** 2)), abs=1e-9)
    # empty row: A never fails -> the fail-row rate and the ratio are undefined
    r = conditioned_rates(TwoByTwo(3, 2, 0, 0), a="grounded")
    assert r["pass_row"]["rate"] == pytest.approx(0.4)
    assert r["fail_row"] == {"k": 0, "n": 0, "rate": None, "ci": None,
                             "reason": "no answers where grounded fails: the rate is undefined"}
    assert r["ratio"]["value"] is None and r["ratio"]["reason"].startswith("no answers where grounded fails")
    # fail-row rate 0 over a positive pass-row rate: ratio 0 (defined)
    assert conditioned_rates(TwoByTwo(3, 1, 4, 0))["ratio"]["value"] == 0.0
    # all zeros: nothing is defined
    r = conditioned_rates(TwoByTwo(0, 0, 0, 0))
    assert r["pass_row"]["rate"] is None and r["fail_row"]["rate"] is None and r["ratio"]["value"] is None
    assert r["pass_row"]["ci"] is None and r["fail_row"]["ci"] is None
    # small table by hand: (3, 1, 1, 3): 1/4 and 3/4, ratio 3
    r = conditioned_rates(TwoByTwo(3, 1, 1, 3))
    assert (r["pass_row"]["rate"], r["fail_row"]["rate"], r["ratio"]["value"]) == (0.25, 0.75, 3.0)


# ---------------------------------------------------------------------------------------------
# Intervals for phi
# ---------------------------------------------------------------------------------------------

def test_analytic_interval_balanced_margins_by_hand():
    # phi = 0 with every margin 1/2: n var = 1, so SE = 1/sqrt(100) = 0.1; 90%: +- 1.64485 * 0.1
    lo, hi = phi_interval_analytic(TwoByTwo(25, 25, 25, 25))
    assert (lo, hi) == pytest.approx((-Z90 * 0.1, Z90 * 0.1), abs=1e-12)
    # (30, 10, 10, 30): phi = (900 - 100)/40^2 = 0.5; balanced margins kill both margin terms,
    # n var = 1 - phi^2 = 0.75, SE = sqrt(0.75/80) = 0.0968246, half = 0.159262
    lo, hi = phi_interval_analytic(TwoByTwo(30, 10, 10, 30))
    half = Z90 * math.sqrt(0.75 / 80)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)
    assert lo == pytest.approx(0.340738, abs=1e-6)
    # at 95%, the same SE times 1.95996
    lo95, hi95 = phi_interval_analytic(TwoByTwo(30, 10, 10, 30), level=0.95)
    assert hi95 - 0.5 == pytest.approx(Z95 * math.sqrt(0.75 / 80), abs=1e-12)


def test_analytic_interval_is_the_delta_method(seed_table):
    # independent derivation: numerical gradient of phi(p) over the four cell proportions and
    # the multinomial covariance (diag(p) - p p')/n
    def phi_p(p):
        p11, p10, p01, _ = p
        r1, c1 = p11 + p10, p11 + p01
        return (p11 - r1 * c1) / math.sqrt(r1 * (1 - r1) * c1 * (1 - c1))

    t = seed_table
    p = np.array([t.a_fail_b_fail, t.a_fail_b_pass, t.a_pass_b_fail, t.a_pass_b_pass]) / t.n
    g = np.array([(phi_p(p + e) - phi_p(p - e)) / 2e-7 for e in np.eye(4) * 1e-7])
    se = math.sqrt(g @ (np.diag(p) - np.outer(p, p)) @ g / t.n)
    lo, hi = phi_interval_analytic(t)
    assert (hi - lo) / 2 == pytest.approx(Z90 * se, rel=1e-6)   # se = 0.03288
    assert (lo + hi) / 2 == pytest.approx(phi(t).value, abs=1e-12)


def test_analytic_interval_degenerate():
    assert phi_interval_analytic(TwoByTwo(500, 0, 100, 0)) == (None, None)
    assert phi_interval_analytic(TwoByTwo(0, 0, 0, 0)) == (None, None)
    # |phi| = 1: the first-order variance vanishes and the interval is the point
    assert phi_interval_analytic(TwoByTwo(4, 0, 0, 6)) == pytest.approx((1.0, 1.0))
    with pytest.raises(ValueError):
        phi_interval_analytic(TwoByTwo(3, 1, 1, 3), level=1.0)


def test_bootstrap_is_seeded_and_agrees_with_analytic_at_n600(seed_table):
    a, b = fails_from(seed_table)
    r1 = phi_interval_bootstrap(a, b, seed=11)
    assert r1 == phi_interval_bootstrap(a, b, seed=11)
    assert r1 != phi_interval_bootstrap(a, b, seed=12)
    assert r1.n_used == 2000                 # 234 and 81 failures: no resample is constant
    # analytic: 0.414 +- 1.645 * 0.0329 = [0.360, 0.468]; the percentile bootstrap lands close
    lo, hi = phi_interval_analytic(seed_table)
    assert r1.lo == pytest.approx(lo, abs=0.015) and r1.hi == pytest.approx(hi, abs=0.015)
    assert r1.lo < phi(seed_table).value < r1.hi


def test_bootstrap_drops_and_counts_undefined_resamples():
    # A fails on exactly one of 10 answers. A resample misses that answer with probability
    # (9/10)^10 = 0.3487, and then A is constant and phi undefined: expect
    # n_used ~ 2000 * 0.6513 = 1302.6 (sd sqrt(2000 * 0.3487 * 0.6513) = 21.3)
    a = np.array([True] + [False] * 9)
    b = np.array([True, True, True] + [False] * 7)
    lo, hi, used = phi_interval_bootstrap(a, b, seed=3)
    assert 1200 < used < 1400
    assert lo is not None and hi is not None
    # phi_interval does not bootstrap this sparse table (cells of 0, 1 and 2): its posterior draws
    # of the cells' shares never leave a column constant, so none is dropped (issue 37.4)
    iv = phi_interval(a, b, seed=3)
    assert (iv.method, iv.n_used, iv.reason) == ("posterior", 2000, None)


def test_bootstrap_degenerate():
    # constant column: every resample is constant too
    a, b = fails_from(TwoByTwo(500, 0, 100, 0))
    assert phi_interval_bootstrap(a, b, seed=0) == (None, None, 0)
    iv = phi_interval(a, b, seed=0)
    assert iv.value is None and iv.lo is None and "constant column" in iv.reason
    # no answers; one answer
    assert phi_interval_bootstrap(np.array([], bool), np.array([], bool), seed=0) == (None, None, 0)
    assert phi_interval_bootstrap(np.array([True]), np.array([True]), seed=0) == (None, None, 0)
    # perfect co-failure: every defined resample is perfect as well, so the interval is [1, 1]
    a, b = fails_from(TwoByTwo(4, 0, 0, 6))
    lo, hi, used = phi_interval_bootstrap(a, b, seed=0, n_boot=500)
    assert (lo, hi) == pytest.approx((1.0, 1.0)) and 0 < used <= 500
    with pytest.raises(ValueError):
        phi_interval_bootstrap(a, b, seed=None)
    with pytest.raises(ValueError):
        phi_interval_bootstrap(a, b, seed=0, n_boot=0)


def test_phi_interval_chooses_the_method(seed_table):
    a, b = fails_from(seed_table)
    boot = phi_interval(a, b, seed=5, n_boot=400)
    assert isinstance(boot, PhiInterval)
    assert (boot.method, boot.n, boot.n_boot, boot.level) == ("bootstrap", 600, 400, DEFAULT_LEVEL)
    assert (boot.lo, boot.hi, boot.n_used) == phi_interval_bootstrap(a, b, seed=5, n_boot=400)
    assert boot[:3] == phi_interval_bootstrap(a, b, seed=5, n_boot=400)     # lo, hi, n_used first
    ana = phi_interval(a, b, seed=5, analytic_above=599)   # 600 > 599: analytic
    assert ana.method == "analytic" and ana.n_boot == 0 and ana.n_used == 600
    assert (ana.lo, ana.hi) == phi_interval_analytic(seed_table)
    assert ana.value == pytest.approx(0.41408, abs=1e-5)


def test_paired_bootstrap_uses_the_same_indices():
    rng = np.random.default_rng(1)
    a = rng.random(300) < 0.3
    b1 = (rng.random(300) < 0.2) | (a & (rng.random(300) < 0.5))
    b2 = rng.random(300) < 0.25
    out = phi_intervals_paired({"single": (a, b1), "split": (a, b2), "copy": (a, b1)}, seed=9, n_boot=800)
    assert list(out) == ["single", "split", "copy"]
    # one resample of the answers serves every instrument: a copy gets the same bounds, and one
    # instrument paired with nothing is the stand-alone bootstrap with the same seed
    assert (out["copy"].lo, out["copy"].hi) == (out["single"].lo, out["single"].hi)
    one = phi_intervals_paired({"single": (a, b1)}, seed=9, n_boot=800)["single"]
    assert (one.lo, one.hi, one.n_used) == phi_interval_bootstrap(a, b1, seed=9, n_boot=800)
    # each paired interval is the stand-alone one's distribution (drawn from other patterns, so
    # not the same numbers): close with many resamples
    many = phi_intervals_paired({"single": (a, b1), "split": (a, b2)}, seed=9, n_boot=20000)
    for name, (x, y) in (("single", (a, b1)), ("split", (a, b2))):
        alone = phi_interval_bootstrap(x, y, seed=4, n_boot=20000)
        assert abs(many[name].lo - alone.lo) < 0.01 and abs(many[name].hi - alone.hi) < 0.01
    assert out["single"].value == pytest.approx(np.corrcoef(a, b1)[0, 1])
    with pytest.raises(ValueError):
        phi_intervals_paired({"x": (a, b1), "y": (a[:10], b2[:10])}, seed=0)
    # above analytic_above every instrument gets the analytic interval
    ana = phi_intervals_paired({"single": (a, b1), "split": (a, b2)}, seed=9, analytic_above=299)
    for name, (x, y) in (("single", (a, b1)), ("split", (a, b2))):
        assert ana[name].method == "analytic"
        assert (ana[name].lo, ana[name].hi) == phi_interval_analytic(TwoByTwo.from_fails(x, y))
    assert phi_intervals_paired({"single": (a, b1)}, seed=9, n_boot=50, analytic_above=300)["single"].method \
        == "bootstrap"


def test_the_phi_bootstrap_drawn_as_pattern_counts_matches_resampling_the_answers():
    """A resample is drawn as the multinomial counts of the answers' fail-flag patterns; drawing
    the answers' indices with replacement (the usual way) gives the same distribution of phi."""
    rng = np.random.default_rng(3)
    a = rng.random(400) < 0.35
    b = (rng.random(400) < 0.15) | (a & (rng.random(400) < 0.6))
    iv = phi_interval_bootstrap(a, b, seed=0, n_boot=20000)
    idx = np.random.default_rng(1).integers(0, 400, size=(5000, 400))
    direct = [np.corrcoef(a[i], b[i])[0, 1] for i in idx]
    lo, hi = np.quantile(direct, [0.05, 0.95])  # the default level: 0.90
    assert abs(iv.lo - lo) < 0.01 and abs(iv.hi - hi) < 0.01


# ---------------------------------------------------------------------------------------------
# Ordinal / continuous
# ---------------------------------------------------------------------------------------------


def test_rank_correlations_by_hand():
    # x = 1 2 3 4, y = 1 3 2 4: pairs C C C D C C -> tau = (5 - 1)/6 = 0.6667
    # d = 0 1 1 0, sum d^2 = 2: rho = 1 - 6*2/(4*15) = 0.8
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]).value == pytest.approx(4 / 6)
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]).value == pytest.approx(0.8)
    # ties: x = 1 1 2 3, y = 1 2 2 3: C = 4, D = 0, one pair tied in x, one in y
    # tau-b = 4 / sqrt((6 - 1)(6 - 1)) = 0.8
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]).value == pytest.approx(0.8)
    # mid-ranks 1.5 1.5 3 4 and 1 2.5 2.5 4: deviations -1 -1 .5 1.5 and -1.5 0 0 1.5,
    # sum of products 3.75, sums of squares 4.5 and 4.5: rho = 3.75/4.5 = 0.8333
    assert spearman([1, 1, 2, 3], [1, 2, 2, 3]).value == pytest.approx(3.75 / 4.5)
    assert kendall_tau_b([3, 2, 1], [1, 2, 3]).value == pytest.approx(-1.0)


def test_rank_correlations_undefined():
    for f in (kendall_tau_b, spearman):
        s = f([2, 2, 2, 2], [1, 2, 3, 4])
        assert s.value is None and "x is constant in these 4 answers" in s.reason
        s = f([1, 2, 3], [5, 5, 5])
        assert s.value is None and "y is constant" in s.reason
        assert f([1, 2], [2, 1]).value is None and "needs at least 3" in f([1, 2], [2, 1]).reason
        assert f([], []).value is None
        with pytest.raises(ValueError):
            f([1, 2, 3], [1, 2])
        with pytest.raises(ValueError):
            f([1, 2, float("nan")], [1, 2, 3])


# ---------------------------------------------------------------------------------------------
# The association class rule: a truth table (T = 0.25)
# ---------------------------------------------------------------------------------------------

def ev(name, kind, lo, hi, n=600):
    return InstrumentEvidence(name, kind, (lo + hi) / 2, lo, hi, n)


SINGLE_PRESENT = ev("single", "single", 0.49, 0.63)
SPLIT_ABSENT = ev("split", "one_criterion", -0.04, 0.11)
PEOPLE_ABSENT = ev("people", "people", -0.17, 0.22, n=60)
PEOPLE_PRESENT = ev("people", "people", 0.30, 0.77, n=60)


def test_defaults():
    assert (ASSOCIATION_THRESHOLD, DEFAULT_LEVEL, MIN_PEOPLE) == (0.25, 0.90, 30)


def test_induced():
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, PEOPLE_ABSENT])
    assert c.cls == "induced"
    assert "single: interval [0.49, 0.63] lies above 0.25" in c.reason
    assert "split: interval [-0.04, 0.11] lies inside (-0.25, 0.25)" in c.reason


def test_real_association_that_the_split_destroys_is_real():
    # people present, single present, split absent: people outrank the harnesses
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, PEOPLE_PRESENT])
    assert c == Classification("real", "people: interval [0.30, 0.77] lies above 0.25")


def test_real_needs_only_people():
    assert classify_association([PEOPLE_PRESENT]).cls == "real"


def test_too_few_people():
    few = ev("people", "people", 0.35, 0.80, n=15)
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, few])
    assert c == Classification("undetermined", "too few human labels (15 < 30)")
    # the same interval on 30 labels counts
    assert classify_association([SINGLE_PRESENT, SPLIT_ABSENT, ev("people", "people", 0.35, 0.80, n=30)]).cls == "real"
    # a small people instrument beside a large one is simply ignored
    assert classify_association([SINGLE_PRESENT, SPLIT_ABSENT, PEOPLE_ABSENT, few]).cls == "induced"


def test_no_people():
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT])
    assert c == Classification("undetermined", "no human labels on the shared answers")


def test_people_straddling_the_threshold():
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, ev("people", "people", 0.05, 0.31, n=60)])
    assert c == Classification("undetermined", "people: interval [0.05, 0.31] straddles 0.25")
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, ev("people", "people", -0.30, 0.10, n=60)])
    assert c == Classification("undetermined", "people: interval [-0.30, 0.10] straddles -0.25")
    # boundaries are strict: lo == T is not above T, hi == T is not inside
    assert classify_association([ev("people", "people", 0.25, 0.60, n=60)]).cls == "undetermined"
    assert classify_association([SINGLE_PRESENT, SPLIT_ABSENT, ev("people", "people", -0.1, 0.25, n=60)]).cls \
        == "undetermined"


def test_split_straddling_or_present_blocks_induced():
    c = classify_association([SINGLE_PRESENT, ev("split", "one_criterion", 0.20, 0.34), PEOPLE_ABSENT])
    assert c == Classification("undetermined", "split: interval [0.20, 0.34] straddles 0.25")
    # every one-criterion instrument must show absence
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, ev("split-B", "one_criterion", 0.30, 0.45),
                              PEOPLE_ABSENT])
    assert c.cls == "undetermined" and c.reason == "split-B: interval [0.30, 0.45] lies above 0.25"


def test_no_one_criterion_instrument():
    c = classify_association([SINGLE_PRESENT, PEOPLE_ABSENT])
    assert c == Classification("undetermined", "no one-criterion instrument to compare with")
    # an unresolved grouped instrument is not a one-criterion instrument
    c = classify_association([SINGLE_PRESENT, ev("grouped", "grouped", -0.05, 0.05), PEOPLE_ABSENT])
    assert c.cls == "undetermined"


def test_no_single_call_showing_it():
    c = classify_association([ev("single", "single", 0.10, 0.24), SPLIT_ABSENT, PEOPLE_ABSENT])
    assert c.cls == "undetermined" and c.reason.startswith("no single-call instrument shows the association")
    c = classify_association([SPLIT_ABSENT, PEOPLE_ABSENT])
    assert c.cls == "undetermined" and "no single-call instrument" in c.reason
    # one of two single-call instruments is enough
    c = classify_association([ev("single-indep", "single", 0.10, 0.24), SINGLE_PRESENT, SPLIT_ABSENT, PEOPLE_ABSENT])
    assert c.cls == "induced"


def test_negative_associations_are_symmetric():
    neg = lambda e: InstrumentEvidence(e.name, e.kind, -e.value, -e.hi, -e.lo, e.n)  # noqa: E731
    c = classify_association([neg(SINGLE_PRESENT), neg(SPLIT_ABSENT), neg(PEOPLE_ABSENT)])
    assert c.cls == "induced" and "single: interval [-0.63, -0.49] lies below -0.25" in c.reason
    assert classify_association([neg(SINGLE_PRESENT), neg(SPLIT_ABSENT), neg(PEOPLE_PRESENT)]) \
        == Classification("real", "people: interval [-0.77, -0.30] lies below -0.25")


def test_people_without_interval_or_disagreeing():
    undefined = InstrumentEvidence("people", "people", None, None, None, 60,
                                   "answers_question never fails in these 60 answers: "
                                   "phi is undefined for a constant column")
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, undefined])
    assert c.cls == "undetermined" and "people: no interval (answers_question never fails" in c.reason
    c = classify_association([PEOPLE_PRESENT, ev("people-2", "people", -0.1, 0.1, n=40)])
    assert c.cls == "undetermined" and c.reason.startswith("people disagree")


def test_threshold_is_a_parameter():
    # with T = 0.2 the same people interval [-0.17, 0.22] straddles 0.2
    c = classify_association([SINGLE_PRESENT, SPLIT_ABSENT, PEOPLE_ABSENT], threshold=0.2)
    assert c == Classification("undetermined", "people: interval [-0.17, 0.22] straddles 0.2")
    assert classify_association([ev("p", "people", 0.3, 0.5, n=20)], min_people=20).cls == "real"


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

def test_wilson_by_hand():
    # k = 0, n = 10: [0, z^2/(n + z^2)] = [0, 3.84146/13.84146] = [0, 0.277533]
    assert wilson(0, 10) == pytest.approx((0.0, 0.277533), abs=1e-6)
    # k = 5, n = 10: centre 0.5, half = 1.95996/13.84146 * sqrt(2.5 + 0.960365) = 0.263407
    assert wilson(5, 10) == pytest.approx((0.236593, 0.763407), abs=1e-6)
    # k = n = 10 mirrors k = 0
    assert wilson(10, 10) == pytest.approx((1 - 0.277533, 1.0), abs=1e-6)
    # level 0.90 uses z = 1.64485: k = 0, n = 10 -> 2.70554/12.70554 = 0.212942
    assert wilson(0, 10, level=0.90) == pytest.approx((0.0, Z90 ** 2 / (10 + Z90 ** 2)), abs=1e-9)
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_wilson_is_scipys_wilson():
    """wilson is the closed form with the standard library's normal quantile (scipy.stats loads in
    ~1 s): every bound equals scipy.stats.binomtest(k, n).proportion_ci(method="wilson") to 1e-14."""
    from scipy.stats import binomtest

    cases = [(k, n) for n in (1, 2, 3, 7, 10, 57, 600, 12345) for k in sorted({0, 1, n // 3, n // 2, n - 1, n})]
    for level in (0.9, 0.95, 0.99):
        for k, n in cases:
            ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
            assert wilson(k, n, level) == pytest.approx((float(ci.low), float(ci.high)), rel=1e-14, abs=1e-15), (
                k, n, level)


def test_mcnemar_is_scipys_exact_binomial_test():
    from scipy.stats import binomtest

    cases = [(b, c) for b in range(0, 60) for c in range(0, 60) if b + c] + [(700, 800), (5000, 5120), (12, 20000)]
    for b, c in cases:
        q = binomtest(b, b + c, 0.5).pvalue
        assert mcnemar(b, c)["p_value"] == pytest.approx(q, rel=1e-9 if b + c > 1500 else 1e-11, abs=1e-300), (b, c)


def test_mcnemar_by_hand():
    # b = 0, c = 5: P(X <= 0) = 1/32 for X ~ Bin(5, 1/2); two-sided 2/32 = 0.0625
    assert mcnemar(0, 5) == {"b": 0, "c": 5, "statistic": 0, "p_value": 0.0625}
    # b = 1, c = 9: P(X <= 1) = (1 + 10)/1024; two-sided 22/1024 = 0.021484375
    assert mcnemar(1, 9)["p_value"] == pytest.approx(22 / 1024) and mcnemar(1, 9)["statistic"] == 1
    assert mcnemar(9, 1)["p_value"] == mcnemar(1, 9)["p_value"]
    # balanced discordance: p = 1
    assert mcnemar(5, 5)["p_value"] == pytest.approx(1.0)
    # no discordant pairs: no evidence either way
    assert mcnemar(0, 0) == {"b": 0, "c": 0, "statistic": 0, "p_value": 1.0}
    with pytest.raises(ValueError):
        mcnemar(-1, 2)


def test_ternary_headline():
    # (6 + 0.5 * 2) / 10 = 0.7
    assert ternary_headline(6, 2, 2) == pytest.approx(0.7)
    assert ternary_headline(0, 4, 0) == 0.5
    assert ternary_headline(0, 0, 3) == 0.0
    assert ternary_headline(0, 0, 0) is None
    with pytest.raises(ValueError):
        ternary_headline(-1, 0, 2)


# ---------------------------------------------------------------------------------------------
# The bundled demo: answers_question x cites_source is induced, grounded x no_fabrication real
# ---------------------------------------------------------------------------------------------

def _demo_run(run_id):
    import pyarrow.parquet as pq

    d = pq.read_table(DEMO / "runs" / run_id / "verdicts.parquet",
                      columns=["item_id", "gen_round", "criterion", "judge_round", "passed"]).to_pydict()
    out = defaultdict(dict)
    for i, g, c, j, p in zip(d["item_id"], d["gen_round"], d["criterion"], d["judge_round"], d["passed"]):
        if g == 1 and j == 1:
            out[c][i] = p
    return out


def _demo_people():
    import pyarrow.parquet as pq

    d = pq.read_table(DEMO / "labels" / "support-human" / "labels.parquet").to_pydict()
    out = defaultdict(dict)
    # 12 items carry two annotators' labels; the first annotator in name order is taken (on
    # these two pairs both choices give the same phi)
    for i, c, a, p in sorted(zip(d["item_id"], d["criterion"], d["annotator"], d["passed"])):
        out[c].setdefault(i, p)
    return out


def _cols(m, a, b, items):
    return (np.array([m[a][i] is False for i in items]), np.array([m[b][i] is False for i in items]))


@pytest.mark.skipif(not (DEMO / "runs" / "support-single").exists(), reason="no bundled demo")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_demo_classes(seed):
    single, split, people = _demo_run("support-single"), _demo_run("support-split"), _demo_people()
    expected = {("answers_question", "cites_source"): ("induced", 0.488, 0.034, -0.154),
                ("grounded", "no_fabrication"): ("real", None, 0.308, 0.559)}
    for (a, b), (cls, v_single, v_split, v_people) in expected.items():
        items = sorted(single[a])
        assert len(items) == 600
        big = phi_intervals_paired({"single": _cols(single, a, b, items), "split": _cols(split, a, b, items)},
                                   seed=seed)
        pitems = sorted(people[a])
        assert len(pitems) == 60
        ppl = phi_interval(*_cols(people, a, b, pitems), seed=seed)
        if v_single is not None:
            assert round(big["single"].value, 3) == v_single
        assert round(big["split"].value, 3) == v_split
        assert round(ppl.value, 3) == v_people
        c = classify_association([InstrumentEvidence.from_interval("support-single", "single", big["single"]),
                                  InstrumentEvidence.from_interval("support-split", "one_criterion", big["split"]),
                                  InstrumentEvidence.from_interval("support-human", "people", ppl)])
        assert c.cls == cls, c.reason
        if cls == "induced":
            # people's 8 and 8 failures never coincide (44 / 8 / 8 / 0, Fisher's exact p = 0.58): their
            # interval reaches above 0 (the percentile bootstrap's [-0.22, -0.09] did not, issue 37.4)
            # and lies inside (-T, T)
            assert ppl.method == "posterior" and -ASSOCIATION_THRESHOLD < ppl.lo < 0 < ppl.hi < ASSOCIATION_THRESHOLD
            assert big["single"].lo > ASSOCIATION_THRESHOLD + 0.15
            assert max(abs(big["split"].lo), abs(big["split"].hi)) < ASSOCIATION_THRESHOLD - 0.1
        else:
            assert ppl.lo > ASSOCIATION_THRESHOLD


def test_a_sparse_people_column_cannot_show_an_association_absent():
    """Issue 15: 3 failures in the people column and none together give a tight percentile
    interval just below 0 ([-0.18, -0.06] on the demo) that used to read as `absent`, so the pair
    was classed `induced`. With the failure counts given, the rule says the table is too sparse."""
    from evalcore.stats import MIN_CELL_FAILURES, phi_bound

    n = 60
    a = np.zeros(n, dtype=bool)
    a[:3] = True  # 3 failures of the first criterion
    b = np.zeros(n, dtype=bool)
    b[10:30] = True  # 20 of the second, never with the first
    # the percentile bootstrap's degenerate interval, inside (-T, T) (phi_interval now gives this
    # sparse table the posterior interval; the rule must hold whatever interval it is fed)
    iv = phi_interval_bootstrap(a, b, seed=0, n_boot=2000, level=0.90)
    assert iv.hi < 0 and iv.lo > -0.25
    value = phi(TwoByTwo.from_fails(a, b)).value
    single = InstrumentEvidence("single", "single", 0.6, 0.45, 0.75, n)
    split = InstrumentEvidence("split", "one_criterion", 0.02, -0.1, 0.12, n)
    blind = InstrumentEvidence("people", "people", value, iv.lo, iv.hi, n)  # counts unknown: as before
    assert classify_association([single, split, blind]).cls == "induced"
    people = InstrumentEvidence("people", "people", value, iv.lo, iv.hi, n, a_fail=3, b_fail=20)
    c = classify_association([single, split, people])
    assert c.cls == "undetermined"
    assert "too few failures in the people column (3 of 60" in c.reason and str(MIN_CELL_FAILURES) in c.reason
    enough = InstrumentEvidence("people", "people", value, iv.lo, iv.hi, n, a_fail=8, b_fail=20)
    assert classify_association([single, split, enough]).cls == "induced"
    # phi's ceiling from the margins (Guilford): 3 and 20 of 60 allow at most sqrt(.05 * (2/3) / (1/3 * .95))
    assert phi_bound(60, 3, 20) == pytest.approx(math.sqrt(0.05 * (2 / 3) / ((1 / 3) * 0.95)))
    assert phi_bound(60, 0, 20) == 0.0
    capped = InstrumentEvidence("people", "people", 0.0, -0.1, 0.1, 400, a_fail=6, b_fail=300)
    assert phi_bound(400, 6, 300) < 0.25
    c = classify_association([single, split, capped])
    assert c.cls == "undetermined" and "phi cannot exceed" in c.reason


def test_weighted_alpha_counts_equal_the_package_on_the_repeated_rows():
    """Krippendorff's alpha from distinct count patterns and their numbers equals the krippendorff
    package's alpha over the rows repeated (nominal, two and three values, units with 1-5 ratings)."""
    import krippendorff

    from evalcore.stats.agreement import krippendorff_alpha_counts

    rng = np.random.default_rng(7)
    for values in (2, 3):
        for _ in range(20):
            pats = rng.integers(0, 4, size=(int(rng.integers(3, 12)), values))
            pats[0] = [2] + [0] * (values - 1)  # at least one pairable unit of each of two values
            pats[1] = [0, 3] + [0] * (values - 2)
            w = rng.integers(1, 50, size=len(pats))
            got = krippendorff_alpha_counts(pats, "nominal", weights=w)
            rows = np.repeat(pats, w, axis=0)
            rows = rows[rows.sum(axis=1) >= 2]
            want = krippendorff.alpha(value_counts=rows[:, rows.sum(axis=0) > 0].astype(float),
                                      level_of_measurement="nominal")
            assert got.value == pytest.approx(want, rel=1e-9, abs=1e-12)
            assert krippendorff_alpha_counts(np.repeat(pats, w, axis=0), "nominal").value == pytest.approx(want)
    # one value only: undefined, said the same way with or without weights
    same = krippendorff_alpha_counts([[3, 0], [2, 0]], "nominal", weights=[5, 1])
    assert same.value is None and "6 items" in same.reason
    with pytest.raises(ValueError, match="nominal"):
        krippendorff_alpha_counts([[1, 1], [2, 0]], "ordinal", weights=[1, 1])


def test_a_two_by_two_of_weighted_patterns_equals_the_repeated_answers():
    from evalcore.stats.association import TwoByTwo

    rng = np.random.default_rng(3)
    a, b = rng.random(40) < 0.4, rng.random(40) < 0.3
    w = rng.integers(0, 30, size=40)
    assert TwoByTwo.from_fails(a, b, w) == TwoByTwo.from_fails(np.repeat(a, w), np.repeat(b, w))
    with pytest.raises(ValueError, match="one number per entry"):
        TwoByTwo.from_fails(a, b, w[:3])
