"""The next pair of arms to judge, chosen where it settles most which arm is best, within the
session's balance; and the stopping rule "the top arm is settled". Pure numbers in and out (numpy
and scipy); randomness only from the caller's seed.

The criterion
-------------
The question a many-arm session asks first is "which arm is best", and the stopping rule is that
question's answer (the leader's P(best) at ``level``, below). So the schedule chooses the arm pair
whose next judgment is expected to reduce most the **expected number of misordered leader
contrasts**: with the current leader t (the largest fitted strength) and each other arm c,

    m_c = min(P(beta_c > beta_t), P(beta_c < beta_t)),    score = sum over c of (m_c - E[m_c after]),

where m_c is 0 when the order of c and t is certain and 1/2 when it is a coin toss; the sum bounds
1 - P(leader best) from above when each m_c is the probability of c ahead of t. It is computed in the
Laplace (normal) approximation, cheaply and in closed form:

* the strengths are normal around the fit of :func:`evalcore.stats.bradleyterry.fit` with covariance
  Sigma = (H + r I)^-1, H the expected Fisher information of the judgments so far (per judgment of
  arms i and j, w_ij = var(score) / 4 about beta_i - beta_j under Davidson's model at the fitted
  strengths and tie parameter, which is held fixed) and r = ``bradleyterry.RIDGE`` (that module's
  weak prior; it reaches only the mean of the strengths, which no contrast reads, once every arm is
  connected);
* one more judgment of (i, j), x = e_i - e_j, shrinks the variance of a contrast g = e_t - e_c from
  v = g'Sigma g to v' = v - s2, s2 = w (g'Sigma x)^2 / (1 + w x'Sigma x), and moves its mean by a
  normal amount of variance s2 (the preposterior: the mean's change has the variance the
  variance loses);
* with D ~ N(d, s2) the contrast's mean afterwards, E[Phi(-|D| / sqrt(v'))] = 2 T(d / sqrt(v),
  sqrt(v' / s2)), T Owen's function (``scipy.special.owens_t``): the orthant probabilities of
  (D, D + sqrt(v') Z) reduce to it exactly. Now m_c = Phi(-|d| / sqrt(v)).

A pair whose arms are already far apart (m_c near 0 for every contrast it reaches) scores near 0;
a close pair at the top scores most. Expected misorders are concave in the mean, so a judgment's
expected value is positive (the probabilities themselves are martingales: their expected change
is 0). The item and the sides do not enter the score (the model gives every item of a pair the
same information); among the best pair's candidates the items judged least often come first.

Balance (the pool)
------------------
The choice is drawn from a *pool* of the candidates, decided by the history alone:

1. **No arm pair starved**: an unordered arm pair with fewer than ``max(1, min_share * n / P)``
   judgments (n so far, P = K(K-1)/2 pairs; ``min_share`` 0.2 is a fifth of the balanced share) is
   starved; when a candidate of a starved pair exists, the pool is the candidates of the starved
   pairs with the fewest judgments (the first P judgments are thus a balanced round: the warm-up).
2. **The grader's sides**: for the grader choosing, every arm's count of left and right showings
   stays within one: a candidate is kept when its left arm has not been shown left more often than
   right, and its right arm not right more often than left. When no candidate of the pool passes,
   the pool keeps those whose largest resulting imbalance is least (``sides_relaxed``).

Within the pool a share ``epsilon`` (0.1) is drawn uniformly and the rest goes to the greedy
choice (the best-scoring arm pair's candidates, least-judged items first, equally):

    p(candidate) = epsilon / |pool| + (1 - epsilon) * [candidate greedy] / |greedy|,

0 outside the pool; the probabilities of all candidates sum to 1 and the choice is drawn from them
with the caller's seed. The same history, candidates and seed give the same choice.

What is recorded, and how the analysis uses it
----------------------------------------------
Each :class:`Choice` records the candidate, its selection probability ``p`` given the history,
the pool's size, the reason (``warm-up``, ``starved pair``, ``most informative``, ``explore``),
``sides_relaxed`` and the score. The choice depends only on earlier judgments, so the likelihood
of the outcomes given the pairs judged is the same as under a fixed design: the Bradley-Terry
strengths, their intervals and P(best) need no weights. A figure that averages over the pairs
judged as a balanced session would (a raw win rate, the win matrix's shares, a length-controlled
rate averaged over opponents) should weight each judgment by ``weight = 1 / (|pool| * p)``, the
ratio of a uniform draw from the same pool to the schedule's probability (Horvitz-Thompson); with
``epsilon > 0`` every weight is at most 1 / epsilon.

The stopping rule
-----------------
:func:`settled`: the arm with the largest P(best) (the share of bootstrap-over-items replicates of
:func:`evalcore.stats.bradleyterry.bradley_terry` in which it is strongest, less the share of
replicates that needed the ridge) is settled when that P(best) is at least ``level`` (0.9). bench/active_schedule.py measures both by simulation
(docs/PAIRWISE.md, "The next pair and when to stop").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from evalcore.errors import InputError
from evalcore.stats import bradleyterry as bt
from evalcore.stats.association import check_level
from evalcore.stats.bootstrap import Seed, generator

EPSILON = 0.1
MIN_SHARE = 0.2


@dataclass(frozen=True)
class History:
    """Judgments so far: arms ``a``, ``b`` (0..k-1), arm a's score ``y`` (1, 0.5, 0), ``item``
    labels, ``a_left`` (arm a was shown on the left) and ``grader`` labels."""

    k: int
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    item: np.ndarray
    a_left: np.ndarray
    grader: np.ndarray


@dataclass(frozen=True)
class Candidates:
    """Pairs not yet judged: the arm shown ``left``, the arm shown ``right``, the ``item``."""

    left: np.ndarray
    right: np.ndarray
    item: np.ndarray


@dataclass(frozen=True)
class Choice:
    """The chosen candidate (``index`` into the candidates, its arms and item), its selection
    probability ``p`` given the history, ``weight`` = 1 / (``pool`` * p), the ``reason``, whether
    the sides had to be relaxed, and the score (expected misorders removed) of its arm pair."""

    index: int
    left: int
    right: int
    item: object
    p: float
    weight: float
    pool: int
    reason: str
    sides_relaxed: bool
    score: float


class Settled(NamedTuple):
    """The stopping rule's answer: ``settled`` when the ``top`` arm's ``p_best`` >= the level."""

    settled: bool
    top: int
    p_best: float


# --------------------------------------------------------------------------- input


def history(a, b, outcome, *, k: int, item=None, a_left=None, grader=None) -> History:
    """Checks and packs the judgments so far (may be empty); one :class:`InputError` names the field."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise InputError(f"the number of arms must be an integer of at least 2, got {k!r}", field="k")
    aa, bb = _arms(a, "a", k), _arms(b, "b", k)
    y = np.asarray(outcome, dtype=float).reshape(-1)
    n = aa.size
    if bb.size != n or y.size != n:
        raise InputError(f"a, b and outcome must have one entry per judgment, got {n}, {bb.size}, {y.size}")
    if (aa == bb).any():
        raise InputError(f"judgment {int(np.argmax(aa == bb))} compares an arm with itself", field="b")
    if not np.isin(y, (0.0, 0.5, 1.0)).all():
        raise InputError("an outcome is not 1 (arm a wins), 0.5 (tie) or 0", field="outcome")
    return History(
        int(k), aa, bb, y, _column(item, n, "item", np.arange(n)), _column(a_left, n, "a_left", np.ones(n, bool)).astype(bool),
        _column(grader, n, "grader", np.zeros(n, int)),
    )  # fmt: skip


def candidates(left, right, item, *, k: int) -> Candidates:
    """Checks and packs the candidate pairs (at least one); one :class:`InputError` names the field."""
    lo, ri = _arms(left, "left", k), _arms(right, "right", k)
    if lo.size == 0:
        raise InputError("no candidate pair is left to judge", field="left")
    if ri.size != lo.size:
        raise InputError(f"left and right must have one entry per candidate, got {lo.size} and {ri.size}")
    if (lo == ri).any():
        raise InputError(f"candidate {int(np.argmax(lo == ri))} pairs an arm with itself", field="right")
    return Candidates(lo, ri, _column(item, lo.size, "item", None))


def _arms(x, name: str, k: int) -> np.ndarray:
    arr = np.asarray(x).reshape(-1)
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= k):
        raise InputError(f"arms must be integers 0..{k - 1}, got {arr.tolist()[:1]}", field=name)
    return arr.astype(np.int64)


def _column(x, n: int, name: str, default) -> np.ndarray:
    if x is None:
        if default is None:
            raise InputError(f"{name} is required", field=name)
        return default
    arr = np.asarray(x).reshape(-1)
    if arr.size != n:
        raise InputError(f"{name} must have one entry per row, got {arr.size} for {n}", field=name)
    return arr


# --------------------------------------------------------------------------- the score


def pair_scores(hist: History, fit: bt.BTFit | None = None) -> np.ndarray:
    """(k, k) symmetric: the expected misordered leader contrasts one judgment of arms (i, j) removes
    (the module's docstring); zeros while an arm has no judgment. ``fit`` defaults to the fit of
    the history (a caller may pass an earlier one to save the refit)."""
    k = hist.k
    seen = np.union1d(hist.a, hist.b)
    if seen.size < k:
        return np.zeros((k, k))
    if fit is None:
        fit = bt.fit(bt.judgments(hist.a, hist.b, hist.y, k=k))
    beta = np.asarray(fit.strengths)
    ii, jj = np.triu_indices(k, 1)
    w = _information(beta, fit.theta, ii, jj)
    counts = np.zeros((k, k))
    np.add.at(counts, (np.minimum(hist.a, hist.b), np.maximum(hist.a, hist.b)), 1.0)
    h = np.zeros((k, k))
    nw = counts[ii, jj] * w
    np.add.at(h, (ii, ii), nw)
    np.add.at(h, (jj, jj), nw)
    np.add.at(h, (ii, jj), -nw)
    np.add.at(h, (jj, ii), -nw)
    sigma = np.linalg.inv(h + bt.RIDGE * np.eye(k))
    top = int(np.argmax(beta))
    others = np.array([c for c in range(k) if c != top])
    g = -np.eye(k)[others]
    g[:, top] = 1.0  # rows: e_t - e_c
    x = np.zeros((k, ii.size))
    x[ii, np.arange(ii.size)], x[jj, np.arange(ii.size)] = 1.0, -1.0
    gs = g @ sigma
    v = np.einsum("ck,ck->c", gs, g)
    q = np.einsum("kp,kp->p", x, sigma @ x)
    s2 = w * (gs @ x) ** 2 / (1.0 + w * q)  # (contrasts, pairs)
    score = misorder_reduction((beta[top] - beta[others])[:, None], v[:, None], s2).sum(axis=0)
    out = np.zeros((k, k))
    out[ii, jj] = out[jj, ii] = score
    return out


def _information(beta: np.ndarray, theta: float | None, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per judgment of arms i and j: the Fisher information about beta_i - beta_j (Davidson's
    model, theta held fixed): the variance of the score of u = (beta_i - beta_j) / 2, over 4."""
    p = bt._probs(beta, theta, i, j)
    return ((p[:, 0] + p[:, 1]) - (p[:, 0] - p[:, 1]) ** 2) / 4.0


def misorder_reduction(d, v, s2) -> np.ndarray:
    """Phi(-|d| / sqrt(v)) - E[Phi(-|D| / sqrt(v - s2))] with D ~ N(d, s2): the expected fall of a
    normal contrast's misorder probability when a judgment moves its mean by N(0, s2) and leaves
    variance v - s2; in closed form 2 T(d / sqrt(v), sqrt((v - s2) / s2)), T Owen's function."""
    from scipy.special import ndtr, owens_t

    d, v, s2 = np.broadcast_arrays(*(np.asarray(t, dtype=float) for t in (d, v, s2)))
    h = d / np.sqrt(v)
    moved = s2 > 1e-15 * v
    ratio = np.sqrt(np.clip(v - s2, 0.0, None) / np.where(moved, s2, 1.0))
    after = np.where(moved, 2.0 * owens_t(h, ratio), ndtr(-np.abs(h)))
    return np.maximum(ndtr(-np.abs(h)) - after, 0.0)  # >= 0 exactly; rounding can leave -1e-17


# --------------------------------------------------------------------------- the choice


def probabilities(
    hist: History,
    cands: Candidates,
    *,
    grader=None,
    epsilon: float = EPSILON,
    min_share: float = MIN_SHARE,
    fit: bt.BTFit | None = None,
) -> tuple[np.ndarray, dict]:
    """Each candidate's selection probability (sums to 1, 0 outside the pool) and the pool's
    record (``pool``, ``reason``, ``sides_relaxed``, ``scores``): the rule of the module's docstring."""
    if not (0.0 <= float(epsilon) <= 1.0):
        raise InputError(f"epsilon must lie between 0 and 1, got {epsilon!r}", field="epsilon")
    if not (0.0 <= float(min_share) <= 1.0):
        raise InputError(f"min_share must lie between 0 and 1, got {min_share!r}", field="min_share")
    k = hist.k
    lo, hi = np.minimum(cands.left, cands.right), np.maximum(cands.left, cands.right)
    counts = np.zeros((k, k))
    np.add.at(counts, (np.minimum(hist.a, hist.b), np.maximum(hist.a, hist.b)), 1.0)
    floor = max(1.0, min_share * hist.a.size / (k * (k - 1) / 2))
    own = counts[lo, hi]
    pool = own == own.min() if own.min() < floor else np.ones(lo.size, bool)
    reason = ("warm-up" if counts[np.triu_indices(k, 1)].min() < 1 else "starved pair") if own.min() < floor else ""
    pool, relaxed = _sides(hist, cands, pool, grader)
    scores = pair_scores(hist, fit)
    cand_score = scores[lo, hi]
    best = pool & (cand_score >= cand_score[pool].max() - 1e-12 * abs(cand_score[pool].max()))
    used = _item_uses(hist, cands)
    best &= used == used[best].min()
    p = np.where(pool, epsilon / pool.sum(), 0.0) + np.where(best, (1.0 - epsilon) / best.sum(), 0.0)
    return p, {"pool": pool, "best": best, "reason": reason, "sides_relaxed": relaxed, "scores": cand_score}


def _sides(hist: History, cands: Candidates, pool: np.ndarray, grader) -> tuple[np.ndarray, bool]:
    """The pool's candidates that keep the grader's left-minus-right count of every arm within one
    (or, when none does, those whose largest imbalance is least), and whether that was relaxed."""
    k = hist.k
    mine = hist.grader == grader if grader is not None else np.ones(hist.a.size, bool)
    left = np.where(hist.a_left, hist.a, hist.b)[mine]
    right = np.where(hist.a_left, hist.b, hist.a)[mine]
    lean = np.bincount(left, minlength=k) - np.bincount(right, minlength=k)  # left minus right
    after = np.maximum(lean[cands.left] + 1, -(lean[cands.right] - 1))
    ok = pool & (after <= 1)
    if ok.any():
        return ok, False
    return pool & (after == after[pool].min()), True


def _item_uses(hist: History, cands: Candidates) -> np.ndarray:
    """How many judgments each candidate's item has had."""
    labels, codes = np.unique(np.concatenate([hist.item, cands.item]), return_inverse=True)
    n = np.bincount(codes[: hist.item.size], minlength=labels.size)
    return n[codes[hist.item.size :]]


def choose(
    hist: History,
    cands: Candidates,
    *,
    grader=None,
    epsilon: float = EPSILON,
    min_share: float = MIN_SHARE,
    seed: Seed = 0,
    fit: bt.BTFit | None = None,
) -> Choice:
    """The next pair for ``grader`` (None: the sides over all judgments), drawn with ``seed`` from
    :func:`probabilities`, with what the analysis needs to weight for it. Pass a seed that changes
    with each choice (e.g. ``[session_seed, len(history)]``)."""
    p, rec = probabilities(hist, cands, grader=grader, epsilon=epsilon, min_share=min_share, fit=fit)
    index = int(generator(seed).choice(p.size, p=p))
    reason = rec["reason"] or ("most informative" if rec["best"][index] else "explore")
    n_pool = int(rec["pool"].sum())
    return Choice(
        index=index, left=int(cands.left[index]), right=int(cands.right[index]), item=_plain(cands.item[index]), p=float(p[index]),
        weight=float(1.0 / (n_pool * p[index])), pool=n_pool, reason=reason,
        sides_relaxed=bool(rec["sides_relaxed"]), score=float(rec["scores"][index]),
    )  # fmt: skip


def _plain(value):
    """A numpy scalar as the Python value it holds (a label of any other type as it is)."""
    return value.item() if isinstance(value, np.generic) else value


# --------------------------------------------------------------------------- the stopping rule


def settled(
    a, b, outcome, *, k: int, item=None, weight=None, level: float = 0.9, n_boot: int = 1000, seed: Seed = 0
) -> Settled:
    """Whether the top arm is settled at ``level``: the arm of largest P(best) (bootstrap over
    items, :func:`evalcore.stats.bradleyterry.bradley_terry`) and its P(best) counted
    conservatively, settled when that is >= level.

    A bootstrap replicate that needed the ridge (its judgments separate the arms: the maximum
    likelihood is at infinity and the ridge alone ranks them) is not counted in the top arm's
    favour: ``p_best`` = the top arm's share of replicates - the share that needed the ridge. On a
    few judgments per arm many replicates do, and this keeps the rule from firing on them. While
    the judgments themselves separate the arms nothing is settled and nothing is resampled: the
    answer is the fit's leader with ``p_best`` 0.0."""
    check_level(level)
    first = bt.fit(bt.judgments(a, b, outcome, k=k, item=item, weight=weight))
    if first.ridge > 0:
        return Settled(False, int(np.argmax(first.strengths)), 0.0)
    res = bt.bradley_terry(a, b, outcome, k=k, item=item, weight=weight, level=level, n_boot=n_boot, seed=seed)
    top = int(np.argmax(res.p_best))
    p = max(res.p_best[top] - res.boot_ridge / res.n_boot, 0.0)
    return Settled(bool(p >= level), top, float(p))
