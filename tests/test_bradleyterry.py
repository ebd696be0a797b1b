"""Bradley-Terry strengths (Davidson ties), their intervals, P(best), the win matrix and the
length-controlled win rates (evalcore.stats.bradleyterry, evalcore.stats.lengthcontrol), each
against an independent computation: choix, a hand-written maximum likelihood, pandas' crosstab,
statsmodels' cluster-robust covariance, and simulated worlds with known truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from evalcore.errors import InputError
from evalcore.stats import bradleyterry as bt
from evalcore.stats.lengthcontrol import CAVEAT_SHARE, length_controlled


def _world(seed: int, k: int, n: int, nu: float = 0.0, per_item: int = 1):
    """n judgments of random pairs of k arms drawn from Davidson's model with tie parameter nu."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=k)
    beta -= beta.mean()
    i = rng.integers(0, k, n)
    j = (i + rng.integers(1, k, n)) % k
    pi, pj, tie = np.exp(beta[i]), np.exp(beta[j]), nu * np.sqrt(np.exp(beta[i] + beta[j]))
    u = rng.random(n) * (pi + pj + tie)
    y = np.where(u < pi, 1.0, np.where(u < pi + pj, 0.0, 0.5))
    return beta, i, j, y, np.arange(n) // per_item


def test_no_ties_strengths_equal_choix():
    choix = pytest.importorskip("choix")
    _, i, j, y, _ = _world(1, 6, 1500)
    ours = bt.fit(bt.judgments(i, j, y, k=6))
    pairs = [(a, b) if s == 1.0 else (b, a) for a, b, s in zip(i, j, y)]
    theirs = choix.ilsr_pairwise(6, pairs, alpha=0.0, tol=1e-12)
    assert ours.theta is None and ours.ridge == 0.0
    np.testing.assert_allclose(ours.strengths, theirs - theirs.mean(), atol=1e-6)  # both sum to zero


def _davidson_by_hand(i, j, y, k):
    """Davidson's likelihood written out plainly, arm 0 fixed at 0, maximised by BFGS (central
    differences for the gradient)."""

    def nll(x):
        beta = np.concatenate([[0.0], x[: k - 1]])
        nu = np.exp(x[k - 1])
        pa, pb = np.exp(beta[i]), np.exp(beta[j])
        tie = nu * np.sqrt(pa * pb)
        mine = np.where(y == 1.0, pa, np.where(y == 0.0, pb, tie))
        return -np.sum(np.log(mine / (pa + pb + tie)))

    res = minimize(nll, np.zeros(k), method="BFGS", jac="3-point", options={"gtol": 1e-10})
    beta = np.concatenate([[0.0], res.x[: k - 1]])
    return beta - beta.mean(), res.x[k - 1]


def test_davidson_ties_equal_a_hand_written_mle():
    _, i, j, y, _ = _world(2, 4, 600, nu=0.8)
    assert (y == 0.5).sum() > 50
    ours = bt.fit(bt.judgments(i, j, y, k=4))
    beta, theta = _davidson_by_hand(i, j, y, 4)
    np.testing.assert_allclose(ours.strengths, beta, atol=1e-6)
    assert ours.theta == pytest.approx(theta, abs=1e-6)


def test_win_matrix_equals_pandas_crosstab():
    _, i, j, y, _ = _world(3, 5, 800, nu=0.6)
    got = bt.win_matrix(bt.judgments(i, j, y, k=5))
    frame = pd.DataFrame({"i": i, "j": j, "y": y})
    decided = frame[frame.y != 0.5]
    winner = np.where(decided.y == 1.0, decided.i, decided.j)
    loser = np.where(decided.y == 1.0, decided.j, decided.i)
    wins = pd.crosstab(winner, loser).reindex(index=range(5), columns=range(5), fill_value=0)
    tied = frame[frame.y == 0.5]
    ties = pd.crosstab(tied.i, tied.j).reindex(index=range(5), columns=range(5), fill_value=0).to_numpy()
    np.testing.assert_array_equal(got.wins, wins.to_numpy())
    np.testing.assert_array_equal(got.losses, wins.to_numpy().T)
    np.testing.assert_array_equal(got.ties, ties + ties.T)


def test_sandwich_equals_statsmodels_cluster_robust():
    sm = pytest.importorskip("statsmodels.api")
    k = 5
    _, i, j, y, item = _world(4, k, 900, per_item=3)
    data = bt.judgments(i, j, y, k=k, item=item)
    cov = bt.sandwich_cov(data, bt.fit(data))
    design = np.zeros((i.size, k))
    design[np.arange(i.size), i] += 1.0
    design[np.arange(i.size), j] -= 1.0
    res = sm.GLM(y, design[:, 1:], family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": item, "use_correction": False}, tol=1e-14
    )
    to_full = np.vstack([np.zeros(k - 1), np.eye(k - 1)])  # beta_0 = 0
    centre = np.eye(k) - 1.0 / k
    expected = centre @ to_full @ np.asarray(res.cov_params()) @ to_full.T @ centre
    np.testing.assert_allclose(cov, expected, atol=1e-10)


def _davidson_loglik(x, i, j, y, k):
    """Davidson's log-likelihood of judgments at strengths x[:k] and theta x[k], written out plainly."""
    pa, pb = np.exp(x[:k][i]), np.exp(x[:k][j])
    tie = np.exp(x[k]) * np.sqrt(pa * pb)
    mine = np.where(y == 1.0, pa, np.where(y == 0.0, pb, tie))
    return float(np.sum(np.log(mine / (pa + pb + tie))))


def _central_gradient(f, x, h=1e-5):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_sandwich_with_ties_equals_one_built_from_numerical_derivatives():
    """The analytic scores and information (ties included) against central differences of the
    plainly written log-likelihood: per-item scores for the meat, the Hessian for the bread."""
    k = 4
    _, i, j, y, item = _world(12, k, 240, nu=0.7, per_item=3)
    data = bt.judgments(i, j, y, k=k, item=item)
    fitted = bt.fit(data)
    x = np.array(fitted.strengths + (fitted.theta,))
    scores = np.array(
        [_central_gradient(lambda v, m=item == c: _davidson_loglik(v, i[m], j[m], y[m], k), x) for c in np.unique(item)]
    )
    total = lambda v: _central_gradient(lambda w: _davidson_loglik(w, i, j, y, k), v)  # noqa: E731
    hessian = -np.array([(total(x + 1e-4 * e) - total(x - 1e-4 * e)) / 2e-4 for e in np.eye(k + 1)])
    gauge = np.zeros((k + 1, k + 1))
    gauge[:k, :k] = 1.0
    bread = np.linalg.inv((hessian + hessian.T) / 2 + gauge)
    centre = np.eye(k) - 1.0 / k
    expected = centre @ (bread @ scores.T @ scores @ bread)[:k, :k] @ centre
    np.testing.assert_allclose(bt.sandwich_cov(data, fitted), expected, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("nu", [0.0, 0.7])
def test_bootstrap_replicates_equal_lbfgs_refits(nu):
    """The bootstrap's batched Newton fits equal L-BFGS fits of the same resampled items."""
    k = 5
    _, i, j, y, item = _world(5, k, 600, nu=nu, per_item=2)
    data = bt.judgments(i, j, y, k=k, item=item)
    full = bt.fit(data)
    rng = np.random.default_rng(7)
    a, b, _ = bt._cells(data, data.w)
    times = [np.bincount(rng.integers(0, data.n_items, data.n_items), minlength=data.n_items) for _ in range(4)]
    counts = []
    for t in times:
        ra, rb, c = bt._cells(data, data.w * t[data.item])
        cell = {(x, z): r for r, (x, z) in enumerate(zip(ra, rb))}
        counts.append(np.array([c[cell[(x, z)]] if (x, z) in cell else np.zeros(3) for x, z in zip(a, b)]))
    got = bt._newton_batch(full, a, b, np.array(counts), np.zeros(4))
    for row, t in zip(got, times):
        refit = bt.fit(bt.judgments(i, j, y, k=k, item=item, weight=t[data.item]))
        np.testing.assert_allclose(row, refit.strengths, atol=1e-6)


def test_bradley_terry_result_p_best_and_elo():
    k = 5
    rng = np.random.default_rng(6)
    n = 1200
    i = rng.integers(0, k, n)
    j = (i + rng.integers(1, k, n)) % k
    beta = np.array([1.5, 0.0, -0.2, 0.1, -0.4])  # arm 0 clearly best
    y = (rng.random(n) < 1 / (1 + np.exp(beta[j] - beta[i]))).astype(float)
    res = bt.bradley_terry(i, j, y, k=k, item=np.arange(n) // 2, n_boot=300, seed=11)
    assert sum(res.p_best) == pytest.approx(1.0, abs=1e-12)
    assert res.p_best[0] > 0.99
    assert all(lo < s < hi for lo, s, hi in zip(res.lo, res.fit.strengths, res.hi))
    assert all(lo < s < hi for lo, s, hi in zip(res.sandwich_lo, res.fit.strengths, res.sandwich_hi))
    assert res.elo[0] - res.elo[1] == pytest.approx(400 / math.log(10) * (res.fit.strengths[0] - res.fit.strengths[1]))
    assert sum(res.elo) == pytest.approx(1000 * k)
    again = bt.bradley_terry(i, j, y, k=k, item=np.arange(n) // 2, n_boot=300, seed=11)
    assert (again.lo, again.hi, again.p_best) == (res.lo, res.hi, res.p_best)  # seeded


def test_p_best_splits_a_shared_maximum():
    shares = bt.p_best(np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]]))
    np.testing.assert_allclose(shares, [0.25, 0.75, 0.0])


def test_separated_arms_take_the_ridge_and_say_so():
    i = np.array([0, 0, 1, 1, 2])
    j = np.array([1, 2, 2, 2, 1])
    y = np.array([1.0, 1.0, 1.0, 0.0, 1.0])  # arm 0 never loses: its MLE is at infinity
    res = bt.fit(bt.judgments(i, j, y, k=3))
    assert res.ridge == bt.RIDGE
    assert np.isfinite(res.strengths).all() and res.strengths[0] == max(res.strengths)
    y[0] = 0.0  # arm 0 loses once: no separation
    assert bt.fit(bt.judgments(i, j, y, k=3)).ridge == 0.0


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"outcome": [1.0, 0.3]}, "outcome", "0.3 is not 1"),
        ({"arm_j": [1, 3]}, "arm_j", "integers 0..2"),
        ({"arm_j": [1, 0], "arm_i": [1, 2]}, "arm_j", "compares arm 1 with itself"),
        ({"k": 4}, "arm_i", "arm 3 has no judgment"),
        ({"weight": [1.0, -1.0]}, "weight", "non-negative"),
    ],
)
def test_bad_judgments_raise_one_clear_error(kwargs, field, words):
    args = {"arm_i": [0, 1], "arm_j": [1, 2], "outcome": [1.0, 0.5], "k": 3} | kwargs
    with pytest.raises(InputError) as err:
        bt.judgments(args.pop("arm_i"), args.pop("arm_j"), args.pop("outcome"), **args)
    assert err.value.field == field and words in err.value.problem


def _length_world(seed: int, gamma: float, delta: float, n: int = 3000):
    """Four arms of known strengths; arm 0 answers twice as long; the longer answer gains gamma on
    the logit scale (through tanh of the standardised length difference), the first shown delta."""
    rng = np.random.default_rng(seed)
    beta = np.array([-0.1, 0.25, -0.2, 0.05])
    k = 4
    i = rng.integers(0, k, n)
    j = (i + rng.integers(1, k, n)) % k
    mean_len = np.array([600.0, 300.0, 300.0, 300.0])
    li, lj = rng.normal(mean_len[i], 80), rng.normal(mean_len[j], 80)
    d = li - lj
    first = rng.integers(0, 2, n)
    eta = beta[i] - beta[j] + gamma * np.tanh(d / d.std()) + delta * (2 * first - 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    sig = 1 / (1 + np.exp(-(beta[:, None] - beta[None, :])))
    np.fill_diagonal(sig, np.nan)
    return i, j, y, li, lj, first, np.nanmean(sig, axis=1)


def test_length_controlled_rates_remove_a_planted_length_preference():
    i, j, y, li, lj, first, truth = _length_world(8, gamma=1.0, delta=0.0)
    res = length_controlled(i, j, y, li, lj, k=4, first=first, item=np.arange(y.size), names="ABCD")
    assert res.raw_lo[0] > truth[0] + 0.05  # the long-answering arm's raw rate is inflated
    assert all(lo <= t <= hi for lo, t, hi in zip(res.lc_lo, truth, res.lc_hi))
    assert res.length.lo > 0.5 and res.length.lo <= 1.0 <= res.length.hi
    assert res.length_share > CAVEAT_SHARE
    assert res.caveat is not None and res.caveat.startswith("Length explains the win: the longer answer")
    assert "A is no longer first (B is)" in res.caveat
    assert res.position is not None and res.position.lo <= 0.0 <= res.position.hi and res.position_caveat is None


def test_no_length_effect_no_caveat():
    i, j, y, li, lj, first, truth = _length_world(9, gamma=0.0, delta=0.0)
    res = length_controlled(i, j, y, li, lj, k=4, first=first)
    assert res.length.lo <= 0.0 <= res.length.hi
    assert res.caveat is None
    assert all(lo <= t <= hi for lo, t, hi in zip(res.raw_lo, truth, res.raw_hi))


def test_planted_position_bias_is_recovered():
    i, j, y, li, lj, first, truth = _length_world(10, gamma=0.0, delta=0.4)
    res = length_controlled(i, j, y, li, lj, k=4, first=first, item=np.arange(y.size) // 2)
    assert res.position is not None and res.position.lo <= 0.4 <= res.position.hi and res.position.lo > 0.2
    assert res.position_caveat is not None and "shown first is preferred" in res.position_caveat
    assert all(lo <= t <= hi for lo, t, hi in zip(res.lc_lo, truth, res.lc_hi))


def test_length_controlled_refuses_constant_lengths():
    with pytest.raises(InputError) as err:
        length_controlled([0, 1, 2], [1, 2, 0], [1.0, 0.0, 1.0], [5, 5, 5], [3, 3, 3], k=3)
    assert err.value.field == "len_i" and "same length difference" in err.value.problem
