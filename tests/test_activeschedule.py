"""The active schedule and the stopping rule (evalcore.stats.activeschedule): the closed form of
the expected misorder reduction against numerical integration, the pair scores against a
hand-written Laplace computation, determinism, the balance of sides and arm pairs, the recorded
probabilities, and the stopping rule on a lopsided and an even world."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from evalcore.errors import InputError
from evalcore.stats import activeschedule as act
from evalcore.stats import bradleyterry as bt


def _draw(rng: np.random.Generator, beta, a, b, nu: float = 0.5) -> np.ndarray:
    """Arm a's scores drawn from Davidson's model."""
    pa, pb = np.exp(beta[a]), np.exp(beta[b])
    tie = nu * np.sqrt(pa * pb)
    u = rng.random(np.size(a)) * (pa + pb + tie)
    return np.where(u < pa, 1.0, np.where(u < pa + pb, 0.0, 0.5))


def _world(seed: int, beta, n: int):
    rng = np.random.default_rng(seed)
    k = len(beta)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    return a, b, _draw(rng, np.asarray(beta), a, b)


def _all_pairs(k: int, item) -> act.Candidates:
    left, right = (np.array(v) for v in zip(*itertools.permutations(range(k), 2)))
    return act.candidates(left, right, np.full(left.size, item), k=k)


def test_misorder_reduction_equals_numerical_integration():
    rng = np.random.default_rng(7)
    for _ in range(6):
        d, v = rng.normal(0, 0.5), rng.uniform(0.05, 1.0)
        s2 = rng.uniform(0.01, 0.9) * v
        after = sum(
            integrate.quad(
                lambda x: stats.norm.cdf(-abs(x) / math.sqrt(v - s2)) * stats.norm.pdf(x, d, math.sqrt(s2)),
                lo, hi, epsabs=1e-14, epsrel=1e-13,
            )[0]
            for lo, hi in ((-np.inf, 0.0), (0.0, np.inf))
        )  # fmt: skip
        expected = stats.norm.cdf(-abs(d) / math.sqrt(v)) - after
        assert act.misorder_reduction(d, v, s2) == pytest.approx(expected, abs=1e-12)
    assert act.misorder_reduction(0.3, 0.2, 0.0) == 0.0  # a judgment that does not reach the contrast


def test_pair_scores_equal_a_hand_written_laplace_computation():
    beta_true = [0.6, 0.4, 0.0, -0.5]
    a, b, y = _world(3, beta_true, 300)
    hist = act.history(a, b, y, k=4)
    fit = bt.fit(bt.judgments(a, b, y, k=4))
    beta, nu = np.asarray(fit.strengths), math.exp(fit.theta)
    h = bt.RIDGE * np.eye(4)
    info = {}
    for i, j in itertools.combinations(range(4), 2):  # Davidson's probabilities written out
        pi, pj = math.exp(beta[i]), math.exp(beta[j])
        den = pi + pj + nu * math.sqrt(pi * pj)
        p_i, p_j = pi / den, pj / den
        info[i, j] = (p_i + p_j - (p_i - p_j) ** 2) / 4
        x = np.eye(4)[i] - np.eye(4)[j]
        h += np.sum((np.minimum(a, b) == i) & (np.maximum(a, b) == j)) * info[i, j] * np.outer(x, x)
    sigma = np.linalg.inv(h)
    top = int(np.argmax(beta))
    scores = act.pair_scores(hist, fit)
    for (i, j), w in info.items():
        x = np.eye(4)[i] - np.eye(4)[j]
        after = np.linalg.inv(h + w * np.outer(x, x))  # the covariance after one more judgment
        total = 0.0
        for c in set(range(4)) - {top}:
            g = np.eye(4)[top] - np.eye(4)[c]
            v, v2 = g @ sigma @ g, g @ after @ g
            d = beta[top] - beta[c]
            total += act.misorder_reduction(d, v, v - v2)
        assert scores[i, j] == pytest.approx(total, abs=1e-12)
        assert scores[j, i] == scores[i, j]


def test_a_close_pair_is_chosen_over_a_pair_already_far_apart():
    a, b, y = _world(5, [1.0, 0.95, -1.95], 240)
    hist = act.history(a, b, y, k=3)
    scores = act.pair_scores(hist)
    assert scores[0, 1] > 10 * max(scores[0, 2], scores[1, 2])
    choice = act.choose(hist, _all_pairs(3, "new"), epsilon=0.0, seed=1)
    assert {choice.left, choice.right} == {0, 1} and choice.reason == "most informative"


def test_the_choice_is_deterministic_for_a_seed():
    a, b, y = _world(11, [0.3, 0.2, 0.0, -0.5], 60)
    hist = act.history(a, b, y, k=4, a_left=np.arange(60) % 2 == 0)
    cands = _all_pairs(4, 99)
    fit = bt.fit(bt.judgments(a, b, y, k=4))
    first = [act.choose(hist, cands, epsilon=0.5, seed=[4, s], fit=fit) for s in range(20)]
    again = [act.choose(hist, cands, epsilon=0.5, seed=[4, s], fit=fit) for s in range(20)]
    assert act.choose(hist, cands, epsilon=0.5, seed=[4, 0]) == first[0]  # the same as fitting inside
    assert first == again
    assert len({c.index for c in first}) > 1  # the seed does move the draw when epsilon > 0


def test_sides_stay_within_one_per_grader_and_no_arm_pair_is_starved():
    rng = np.random.default_rng(2)
    k, beta = 4, np.array([0.8, 0.7, -0.5, -1.0])
    a, b, y, grader, fit = [], [], [], [], None
    for n in range(48):
        hist = act.history(a, b, y, k=k, item=np.arange(n), a_left=np.ones(n, bool), grader=grader)
        if n >= 6 and n % 6 == 0:  # the fit refreshed every six judgments, as a session might
            fit = bt.fit(bt.judgments(a, b, y, k=k))
        g = n % 2
        c = act.choose(hist, _all_pairs(k, n), grader=g, seed=[9, n], fit=fit)
        assert not c.sides_relaxed
        a.append(c.left), b.append(c.right), grader.append(g)
        y.append(float(_draw(rng, beta, [c.left], [c.right])[0]))
        for who in (0, 1):
            mine = np.array(grader) == who
            lean = np.bincount(np.array(a)[mine], minlength=k) - np.bincount(np.array(b)[mine], minlength=k)
            assert np.abs(lean).max() <= 1
        counts = np.zeros((k, k))
        np.add.at(counts, (np.minimum(a, b), np.maximum(a, b)), 1)
        pairs = counts[np.triu_indices(k, 1)]
        if n + 1 >= 6:  # after the warm-up round every pair keeps its minimum share (within one judgment)
            assert pairs.min() >= act.MIN_SHARE * (n + 1) / 6 - 1
    assert pairs.min() < pairs.max() - 4  # and the schedule was not simply balanced


def test_the_recorded_probabilities_sum_to_one_and_are_the_draw():
    a, b, y = _world(13, [0.3, 0.25, -0.1, -0.45], 80)
    hist = act.history(a, b, y, k=4)
    cands = _all_pairs(4, "x")
    fit = bt.fit(bt.judgments(a, b, y, k=4))
    p, rec = act.probabilities(hist, cands, epsilon=0.3, fit=fit)
    assert p.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.all(p[~rec["pool"]] == 0.0) and np.all(p[rec["pool"]] >= 0.3 / rec["pool"].sum())
    draws = [act.choose(hist, cands, epsilon=0.3, seed=[1, s], fit=fit) for s in range(600)]
    for c in draws[:5]:
        assert c.p == p[c.index] and c.weight == pytest.approx(1.0 / (c.pool * c.p))
    freq = np.bincount([c.index for c in draws], minlength=p.size) / len(draws)
    assert np.all(np.abs(freq - p) <= 4.5 * np.sqrt(p * (1 - p) / len(draws)) + 1e-12)


def test_the_stopping_rule_fires_on_a_lopsided_world_and_not_on_an_even_one():
    a, b, y = _world(17, [1.5, -0.5, -0.5, -0.5], 300)
    lopsided = act.settled(a, b, y, k=4, n_boot=200, seed=1)
    assert lopsided.settled and lopsided.top == 0 and lopsided.p_best >= 0.9
    a, b, y = _world(19, [0.0, 0.0, 0.0, 0.0], 300)
    even = act.settled(a, b, y, k=4, n_boot=200, seed=1)
    assert not even.settled and even.p_best < 0.9
    assert act.settled([0, 0, 1], [1, 2, 2], [1.0, 1.0, 1.0], k=3) == act.Settled(False, 0, 0.0)  # separated
    # four judgments per pair of 3 arms, arm 0 never losing (one tie against each other arm): not
    # separated, but the replicates that drew neither tie are, and they are not counted for arm 0
    a, b = np.repeat([0, 0, 1], 4), np.repeat([1, 2, 2], 4)
    y = np.array([1, 1, 1, 0.5, 1, 1, 1, 0.5, 1, 1, 0, 0])
    raw = bt.bradley_terry(a, b, y, k=3, n_boot=200, seed=3)
    thin = act.settled(a, b, y, k=3, n_boot=200, seed=3)
    assert raw.fit.ridge == 0.0 and raw.p_best[0] >= 0.9 and raw.boot_ridge > 0
    assert thin == act.Settled(False, 0, max(raw.p_best[0] - raw.boot_ridge / 200, 0.0))


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: act.candidates([], [], [], k=3), "left"),
        (lambda: act.candidates([0, 1], [0, 2], [1, 2], k=3), "right"),
        (lambda: act.candidates([0, 3], [1, 2], [1, 2], k=3), "left"),
        (lambda: act.history([0], [1], [0.3], k=3), "outcome"),
        (lambda: act.history([0], [1], [1.0], k=3, grader=[1, 2]), "grader"),
        (lambda: act.choose(act.history([], [], [], k=3), _all_pairs(3, 0), epsilon=1.5), "epsilon"),
    ],
)
def test_bad_input_raises_one_error_naming_the_field(call, field):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field
