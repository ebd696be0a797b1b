"""Bradley-Terry strengths of K arms from pairwise judgments, with ties, intervals and the
probability that each arm is best. Pure numbers in and out (numpy and scipy); randomness only from
the caller's seed, through :mod:`evalcore.stats.bootstrap`.

The model
---------
A judgment compares arm i with arm j and records arm i's score: 1 (i wins), 0.5 (a tie) or 0
(j wins). Ties follow Davidson's (1970) model: with strengths ``beta`` and a tie parameter
``nu = exp(theta)``,

    P(i wins) = pi_i / D,  P(j wins) = pi_j / D,  P(tie) = nu * sqrt(pi_i * pi_j) / D,
    pi = exp(beta),  D = pi_i + pi_j + nu * sqrt(pi_i * pi_j).

Without a tie in the data the tie term is dropped (nu = 0) and this is the plain Bradley-Terry
model, P(i wins) = 1 / (1 + exp(beta_j - beta_i)). Only differences of strengths are identified:
the strengths are reported summing to zero (the mean arm is 0).

The fit is the maximum of the (weighted) log-likelihood by L-BFGS (``scipy.optimize.minimize``)
with its analytic gradient. When the data separate the arms (some group of arms never loses nor
ties against the rest: the maximum lies at infinity) a ridge of :data:`RIDGE` times half the sum
of squared strengths is added (a normal prior of sd 10 on the log scale) and the result records it
(``ridge``).

Intervals
---------
Judgments of the same item are correlated (several graders, or both orders of a pair), so the
intervals treat the item as the unit: a percentile bootstrap that resamples items with
replacement (a judgment without an item id is its own item), and beside it the cluster-robust
sandwich (items as clusters) with a normal interval. ``p_best`` is the share of bootstrap
replicates in which the arm has the largest strength. bench/bt_coverage.py measures both
intervals' coverage by simulation (docs/PAIRWISE.md, "Many arms: the statistics").

``elo`` puts the strengths on the familiar Elo scale, 400 / ln 10 * beta + 1000: a change of
scale only, with no information the strengths do not have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from evalcore.errors import InputError
from evalcore.stats.association import check_level
from evalcore.stats.bootstrap import Seed, generator, percentile_interval, resample

#: the ridge added (to half the sum of squared strengths) only when the data separate the arms
RIDGE = 0.01
#: Newton steps per bootstrap replicate before it is refitted by L-BFGS (damped steps need 5-30)
NEWTON_STEPS = 100
#: Elo points per unit of strength (natural log odds): 400 / ln 10
ELO_PER_UNIT = 400.0 / math.log(10.0)
ELO_CENTRE = 1000.0
_OUTCOMES = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Judgments:
    """Validated judgments: arms ``i``, ``j`` (ints in 0..k-1), arm i's score ``y`` (0, 0.5, 1),
    ``w`` weights, ``item`` item codes 0..n_items-1."""

    k: int
    i: np.ndarray
    j: np.ndarray
    y: np.ndarray
    w: np.ndarray
    item: np.ndarray
    n_items: int


@dataclass(frozen=True)
class WinMatrix:
    """Per ordered pair of arms (row r, column c): the weight of judgments r won against c, tied
    with c, and lost to c. ``wins[r, c] == losses[c, r]``; ``ties`` is symmetric."""

    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray


@dataclass(frozen=True)
class BTFit:
    """A fit: ``strengths`` (sum to zero), ``theta`` (log of Davidson's nu; None without ties), the
    log-likelihood, the ridge used (0.0 unless the data separate the arms)."""

    strengths: tuple[float, ...]
    theta: float | None
    loglik: float
    ridge: float


@dataclass(frozen=True)
class BTResult:
    """Strengths with intervals at ``level``: bootstrap percentile (``lo``, ``hi``) and sandwich
    (``se``, ``sandwich_lo``, ``sandwich_hi``); ``p_best`` per arm (sums to 1); ``elo`` the
    strengths on the Elo scale; ``n_boot`` replicates of which ``boot_ridge`` needed the ridge."""

    fit: BTFit
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    se: tuple[float, ...]
    sandwich_lo: tuple[float, ...]
    sandwich_hi: tuple[float, ...]
    p_best: tuple[float, ...]
    elo: tuple[float, ...]
    wins: WinMatrix
    level: float
    n_boot: int
    boot_ridge: int
    n_judgments: int
    n_items: int


# --------------------------------------------------------------------------- input


def judgments(arm_i, arm_j, outcome, *, k: int, item=None, weight=None) -> Judgments:
    """Checks and packs judgments; bad input raises one :class:`InputError` naming the field."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise InputError(f"the number of arms must be an integer of at least 2, got {k!r}", field="k")
    a, b = _arms(arm_i, "arm_i", k), _arms(arm_j, "arm_j", k)
    y = np.asarray(outcome, dtype=float).reshape(-1)
    n = a.size
    if b.size != n or y.size != n:
        raise InputError(f"arm_i, arm_j and outcome must have one entry per judgment, got {n}, {b.size}, {y.size}")
    if n == 0:
        raise InputError("no judgments", field="outcome")
    if (a == b).any():
        raise InputError(
            f"judgment {int(np.argmax(a == b))} compares arm {int(a[a == b][0])} with itself", field="arm_j"
        )
    bad = ~np.isin(y, _OUTCOMES)
    if bad.any():
        raise InputError(
            f"judgment {int(np.argmax(bad))}: {float(y[bad][0])} is not 1 (arm_i wins), 0.5 (tie) or 0", field="outcome"
        )
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float).reshape(-1)
    if w.size != n or not np.all(np.isfinite(w)) or (w < 0).any():
        raise InputError("weights must be one finite non-negative number per judgment", field="weight")
    unseen = sorted(set(range(k)) - set(a[w > 0].tolist()) - set(b[w > 0].tolist()))
    if unseen:
        raise InputError(f"arm {unseen[0]} has no judgment: its strength cannot be estimated", field="arm_i")
    if item is None:
        codes, n_items = np.arange(n), n
    else:
        labels = np.asarray(item).reshape(-1)
        if labels.size != n:
            raise InputError(f"item must have one entry per judgment, got {labels.size} for {n}", field="item")
        _, codes = np.unique(labels, return_inverse=True)
        n_items = int(codes.max()) + 1
    return Judgments(int(k), a, b, y, w, codes.reshape(-1), n_items)


def _arms(x, name: str, k: int) -> np.ndarray:
    arr = np.asarray(x).reshape(-1)
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= k):
        raise InputError(f"arms must be integers 0..{k - 1}, got {arr.tolist()[:1]}", field=name)
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- win matrix


def win_matrix(data: Judgments) -> WinMatrix:
    """Weighted wins, ties and losses per ordered pair of arms (row against column)."""
    k = data.k
    wins = np.zeros((k, k))
    ties = np.zeros((k, k))
    np.add.at(wins, (data.i, data.j), data.w * (data.y == 1.0))
    np.add.at(wins, (data.j, data.i), data.w * (data.y == 0.0))
    np.add.at(ties, (data.i, data.j), data.w * (data.y == 0.5))
    ties = ties + ties.T
    return WinMatrix(wins, ties, wins.T.copy())


# --------------------------------------------------------------------------- the fit


def _cells(data: Judgments, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judgments summed into cells (pair i<j, outcome): rows i, j and the weight of (i wins, j wins,
    tie) per pair, so a fit reads at most K(K-1)/2 rows whatever the number of judgments."""
    lo, hi = np.minimum(data.i, data.j), np.maximum(data.i, data.j)
    # the score from the lower arm's side: 0 lower wins, 1 higher wins, 2 tie
    lower_first = data.i == lo
    kind = np.where(data.y == 0.5, 2, np.where((data.y == 1.0) == lower_first, 0, 1))
    k = data.k
    flat = np.bincount((lo * k + hi) * 3 + kind, weights=weights, minlength=k * k * 3).reshape(k * k, 3)
    keep = flat.sum(axis=1) > 0
    pairs = np.flatnonzero(keep)
    return pairs // k, pairs % k, flat[keep]


def _probs(beta: np.ndarray, theta: float | None, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, 3): P(a wins), P(b wins), P(tie) per cell, from the logits (u, -u, theta), u = (beta_a - beta_b)/2."""
    u = 0.5 * (beta[a] - beta[b])
    t = np.full_like(u, -np.inf if theta is None else theta)
    logits = np.stack([u, -u, t], axis=1)
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def _objective(params: np.ndarray, a, b, counts, k: int, ties: bool, ridge: float) -> tuple[float, np.ndarray]:
    """Minus the log-likelihood (+ the gauge and the ridge) and its gradient."""
    beta = params[:k]
    theta = float(params[k]) if ties else None
    u = 0.5 * (beta[a] - beta[b])
    t = np.full_like(u, -np.inf if theta is None else theta)
    logits = np.stack([u, -u, t], axis=1)
    m = logits.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))).reshape(-1)
    n_cell = counts.sum(axis=1)
    ll = counts[:, 0] @ u - counts[:, 1] @ u + (counts[:, 2].sum() * theta if ties else 0.0) - n_cell @ lse
    p = np.exp(logits - lse[:, None])
    g_u = counts[:, 0] - counts[:, 1] - n_cell * (p[:, 0] - p[:, 1])
    grad = np.zeros_like(params)
    np.add.at(grad, a, -0.5 * g_u)
    np.add.at(grad, b, 0.5 * g_u)
    s = beta.sum()  # the gauge: 0.5 s^2 pins the sum of strengths at 0 without moving their differences
    grad[:k] += s + ridge * beta
    if ties:
        grad[k] = -(counts[:, 2].sum() - n_cell @ p[:, 2])
    return float(-ll + 0.5 * s * s + 0.5 * ridge * beta @ beta), grad


def separated(k: int, a: np.ndarray, b: np.ndarray, counts: np.ndarray) -> bool:
    """Whether the maximum likelihood is at infinity: the graph "r beat or tied c" is not strongly
    connected (Ford's condition, ties counting both ways)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    a_over = (counts[:, 0] + counts[:, 2]) > 0
    b_over = (counts[:, 1] + counts[:, 2]) > 0
    rows = np.concatenate([a[a_over], b[b_over]])
    cols = np.concatenate([b[a_over], a[b_over]])
    graph = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(k, k))
    n, _ = connected_components(graph, directed=True, connection="strong")
    return n > 1


def _fit_cells(k: int, a, b, counts, ties: bool, start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The parameters (strengths, then theta when ``ties``) maximising the likelihood, and the ridge used."""
    from scipy.optimize import minimize

    ridge = RIDGE if separated(k, a, b, counts) else 0.0
    x0 = np.zeros(k + int(ties)) if start is None else start
    res = minimize(
        _objective, x0, args=(a, b, counts, k, ties, ridge), jac=True, method="L-BFGS-B",
        options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 2000},
    )  # fmt: skip
    x = res.x.copy()
    x[:k] -= x[:k].mean()
    return x, ridge


def fit(data: Judgments) -> BTFit:
    """The maximum-likelihood strengths (sum to zero) of ``data``."""
    a, b, counts = _cells(data, data.w)
    ties = bool(counts[:, 2].sum() > 0)
    x, ridge = _fit_cells(data.k, a, b, counts, ties)
    beta = x[: data.k]
    theta = float(x[data.k]) if ties else None
    p = _probs(beta, theta, a, b)
    ll = float(np.sum(counts * np.log(np.where(counts > 0, p, 1.0))))
    return BTFit(tuple(float(v) for v in beta), theta, ll, ridge)


def elo(strengths) -> tuple[float, ...]:
    """Strengths on the Elo scale: 400 / ln 10 * beta + 1000."""
    return tuple(float(ELO_PER_UNIT * s + ELO_CENTRE) for s in strengths)


# --------------------------------------------------------------------------- intervals


def sandwich_cov(data: Judgments, bt: BTFit) -> np.ndarray:
    """The cluster-robust (items as clusters) covariance of the sum-to-zero strengths: the strengths'
    block of B M B, B the inverse of H + 11' (H the Fisher information of the strengths and theta
    together; 11' on the strengths pins their sum, along which the likelihood is flat and every
    score is 0) and M the sum over items of the outer products of each item's summed score."""
    k = data.k
    beta = np.asarray(bt.strengths)
    ties = bt.theta is not None
    p = _probs(beta, bt.theta, data.i, data.j)
    su = np.where(data.y == 1.0, 1.0, np.where(data.y == 0.0, -1.0, 0.0))
    st = (data.y == 0.5).astype(float)
    d = k + int(ties)
    # per judgment: the score and the information of (u, theta), mapped to (beta, theta) by du/dbeta
    jac = np.zeros((data.i.size, d))
    np.add.at(jac, (np.arange(data.i.size), data.i), 0.5)
    np.add.at(jac, (np.arange(data.i.size), data.j), -0.5)
    score_u = su - (p[:, 0] - p[:, 1])
    var_u = (p[:, 0] + p[:, 1]) - (p[:, 0] - p[:, 1]) ** 2
    scores = jac * (data.w * score_u)[:, None]
    info = (jac * (data.w * var_u)[:, None]).T @ jac
    if ties:
        jt = np.zeros(d)
        jt[k] = 1.0
        scores += np.outer(data.w * (st - p[:, 2]), jt)
        cross = jac.T @ (data.w * -(p[:, 0] - p[:, 1]) * p[:, 2])
        info += np.outer(cross, jt) + np.outer(jt, cross)
        info[k, k] = float(np.sum(data.w * p[:, 2] * (1 - p[:, 2])))
    by_item = np.zeros((data.n_items, d))
    np.add.at(by_item, data.item, scores)
    meat = by_item.T @ by_item
    info[:k, :k] += 1.0  # the gauge (strengths summing to 0): H is singular along the ones, the scores are 0 there
    bread = np.linalg.inv(info)
    cov = bread @ meat @ bread
    centre = np.eye(k) - 1.0 / k
    return centre @ cov[:k, :k] @ centre


def _boot_strengths(data: Judgments, bt: BTFit, n_boot: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """(n_boot, k) strengths refitted on items resampled with replacement, and how many needed the ridge."""
    a, b, _ = _cells(data, data.w)
    k, n_cell = data.k, a.size
    # each judgment's cell column: the replicates' cell counts are (times per judgment) @ this one-hot
    code = {(int(x), int(z)): c for c, (x, z) in enumerate(zip(a, b))}
    lo, hi = np.minimum(data.i, data.j), np.maximum(data.i, data.j)
    kind = np.where(data.y == 0.5, 2, np.where((data.y == 1.0) == (data.i == lo), 0, 1))
    column = np.array([code[(int(x), int(z))] for x, z in zip(lo, hi)]) * 3 + kind
    ridged = [0]

    def statistic(block: np.ndarray) -> np.ndarray:
        m = block.shape[0]
        times = np.zeros((m, data.n_items))
        np.add.at(times, (np.repeat(np.arange(m), block.shape[1]), block.reshape(-1)), 1.0)
        flat = np.zeros((m, n_cell * 3))
        for r in range(m):
            flat[r] = np.bincount(column, weights=data.w * times[r, data.item], minlength=n_cell * 3)
        counts = flat.reshape(m, n_cell, 3)
        ridge = np.array([RIDGE if separated(k, a, b, c) else 0.0 for c in counts])
        ridged[0] += int((ridge > 0).sum())
        return _newton_batch(bt, a, b, counts, ridge)

    return resample(statistic, data.n_items, n_boot, rng), ridged[0]


def _newton_batch(bt: BTFit, a, b, counts: np.ndarray, ridge: np.ndarray) -> np.ndarray:
    """The strengths of many replicates at once (counts: replicates x cells x 3) by Newton's method
    on the same objective as :func:`_fit_cells`, from the full data's fit, each step halved until it
    lowers the replicate's objective (the objective is convex: the damped steps converge from any
    start, also for a replicate whose arms separate, far from the full data's fit; undamped, such
    replicates overshot and went to L-BFGS one at a time: 147 CPU s for 120 judgments of 10 arms);
    a replicate that has not converged after :data:`NEWTON_STEPS` steps is refitted by L-BFGS.
    Replicates without a tie fit theta towards -inf, which leaves the strengths those of the plain model."""
    k, m = len(bt.strengths), counts.shape[0]
    ties = bt.theta is not None
    d = k + int(ties)
    x = np.tile(np.array(bt.strengths + ((bt.theta,) if ties else ())), (m, 1))
    design = np.zeros((a.size, d))
    design[np.arange(a.size), a] = 0.5
    design[np.arange(a.size), b] = -0.5
    gauge = np.zeros((d, d))
    gauge[:k, :k] = 1.0
    pen = np.zeros((m, d, d))
    pen[:, np.arange(k), np.arange(k)] = ridge[:, None]
    n_cell = counts.sum(axis=2)
    n_ties = counts[..., 2].sum(axis=1)

    def probs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        u = x @ design.T
        t = x[:, k][:, None] if ties else np.full_like(u, -np.inf)
        logits = np.stack([u, -u, np.broadcast_to(t, u.shape)], axis=2)
        top = logits.max(axis=2, keepdims=True)
        lse = top[..., 0] + np.log(np.exp(logits - top).sum(axis=2))
        return u, lse, np.exp(logits - lse[..., None])

    def objective(x: np.ndarray, r: np.ndarray, at: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        u, lse = at if at is not None else probs(x)[:2]
        c = counts[r]
        ll = ((c[..., 0] - c[..., 1]) * u).sum(axis=1) - (n_cell[r] * lse).sum(axis=1)
        if ties:
            ll = ll + n_ties[r] * x[:, k]
        beta = x[:, :k]
        return -ll + 0.5 * beta.sum(axis=1) ** 2 + 0.5 * ridge[r] * (beta * beta).sum(axis=1)

    done = np.zeros(m, dtype=bool)
    for _ in range(NEWTON_STEPS):
        u, lse, p = probs(x)
        g_u = counts[..., 0] - counts[..., 1] - n_cell * (p[..., 0] - p[..., 1])
        var_u = (p[..., 0] + p[..., 1]) - (p[..., 0] - p[..., 1]) ** 2
        grad = -(g_u @ design)
        hess = np.einsum("cd,rc,ce->rde", design, n_cell * var_u, design)
        if ties:
            grad[:, k] = -(n_ties - (n_cell * p[..., 2]).sum(axis=1))
            cross = (n_cell * -(p[..., 0] - p[..., 1]) * p[..., 2]) @ design
            hess[:, :, k] += cross
            hess[:, k, :] += cross
            hess[:, k, k] = (n_cell * p[..., 2] * (1 - p[..., 2])).sum(axis=1)
        s = x[:, :k].sum(axis=1)
        grad[:, :k] += s[:, None] + ridge[:, None] * x[:, :k]
        finite = np.isfinite(grad).all(axis=1)
        done = finite & (np.abs(np.where(np.isfinite(grad), grad, 0.0)).max(axis=1) < 1e-9)
        live = np.flatnonzero(~done & finite)  # a replicate gone non-finite waits for L-BFGS below
        if not live.size:
            break
        try:
            step = np.linalg.solve(hess[live] + gauge + pen[live], grad[live][..., None])[..., 0]
        except np.linalg.LinAlgError:  # a replicate diverged (its values are not finite): L-BFGS refits below
            break
        x[live] = _damped(x[live], step, live, objective, objective(x[live], live, (u[live], lse[live])))
    for r in np.flatnonzero(~done | ~np.isfinite(x).all(axis=1)):
        tied = bool(ties and counts[r, :, 2].sum() > 0)
        x[r, : k + int(tied)] = _fit_cells(k, a, b, counts[r], tied)[0]
    return x[:, :k] - x[:, :k].mean(axis=1, keepdims=True)


def _damped(x: np.ndarray, step: np.ndarray, rows: np.ndarray, objective, before: np.ndarray) -> np.ndarray:
    """``x - t * step`` per row, t the first of 1, 1/2, 1/4, ... that does not raise the row's
    objective from ``before`` (its value at ``x``; after 40 halvings the row stays where it is)."""
    out, t = x.copy(), np.ones(len(rows))
    todo = np.arange(len(rows))
    for _ in range(40):
        trial = x[todo] - t[todo, None] * step[todo]
        ok = objective(trial, rows[todo]) <= before[todo] + 1e-12 * np.abs(before[todo])
        out[todo[ok]] = trial[ok]
        todo = todo[~ok]
        if not todo.size:
            break
        t[todo] *= 0.5
    return out


def p_best(draws: np.ndarray) -> np.ndarray:
    """Per arm, the share of rows of ``draws`` (replicates x arms) in which it is largest; a row
    with a shared maximum gives each of those arms an equal part, so the shares sum to 1."""
    top = draws == draws.max(axis=1, keepdims=True)
    return (top / top.sum(axis=1, keepdims=True)).mean(axis=0)


def bradley_terry(
    arm_i, arm_j, outcome, *, k: int, item=None, weight=None, level: float = 0.9, n_boot: int = 1000, seed: Seed = 0
) -> BTResult:
    """Strengths of ``k`` arms with bootstrap-over-items and sandwich intervals at ``level``, the
    probability each arm is best, the win matrix and the Elo scale (see the module's docstring)."""
    check_level(level)
    data = judgments(arm_i, arm_j, outcome, k=k, item=item, weight=weight)
    bt = fit(data)
    draws, boot_ridge = _boot_strengths(data, bt, n_boot, generator(seed))
    bounds = [percentile_interval(draws[:, c], level) for c in range(data.k)]
    se = np.sqrt(np.clip(np.diag(sandwich_cov(data, bt)), 0.0, None))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    beta = np.asarray(bt.strengths)
    return BTResult(
        fit=bt,
        lo=tuple(float(p.lo) for p in bounds),  # type: ignore[arg-type]
        hi=tuple(float(p.hi) for p in bounds),  # type: ignore[arg-type]
        se=tuple(float(v) for v in se),
        sandwich_lo=tuple(float(v) for v in beta - z * se),
        sandwich_hi=tuple(float(v) for v in beta + z * se),
        p_best=tuple(float(v) for v in p_best(draws)),
        elo=elo(bt.strengths),
        wins=win_matrix(data),
        level=float(level),
        n_boot=int(n_boot),
        boot_ridge=int(boot_ridge),
        n_judgments=int(data.i.size),
        n_items=int(data.n_items),
    )
