"""Length-controlled win rates of K arms, in the manner of AlpacaEval 2 (Dubois et al. 2024), and
the position bias of the graders. Pure numbers in and out (numpy, statsmodels).

The regression
--------------
Each judgment compares arm i with arm j; arm i's score y is 1, 0.5 (a tie) or 0. A logistic
regression (statsmodels' binomial GLM, no intercept, arm 0 as the reference) models

    logit P(i wins) = beta_i - beta_j + gamma * tanh((len_i - len_j) / sd) + delta * side

where sd is the standard deviation of the judgments' length differences, and side is +1 when arm
i's answer was shown first, -1 when second (left out when the sides are not given). gamma is the
length effect (> 0: the longer answer is preferred), delta the position bias (> 0: the answer shown
first is preferred). A tie counts as half a win (a fractional binomial outcome). Standard errors
are cluster-robust with items as clusters (a judgment without an item is its own cluster).

The length-controlled win rate of arm c is the mean over the other arms m of
sigmoid(beta_c - beta_m): its rate against each other arm with the length difference and the side
set to 0, averaged over the arms equally. The raw rate is the same quantity from the regression
without the length term. Intervals are normal, by the delta method, clipped to [0, 1].

The share of the ranking that length explains is 1 - SS(lc) / SS(raw), at least 0, where SS is
the sum of squares of the arms' centred strengths: the part of the spread between arms that goes
when length is held equal.

The caveat (:data:`CAVEAT_SHARE`): length explains the win when gamma's interval excludes 0 and
either the top arm changes when length is held equal or length explains at least half of the
spread.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from evalcore.errors import InputError
from evalcore.stats.association import check_level
from evalcore.stats.bradleyterry import judgments

#: length "explains the win" (with gamma's interval excluding 0) from this share of the spread on
CAVEAT_SHARE = 0.5


@dataclass(frozen=True)
class Coefficient:
    value: float
    lo: float
    hi: float
    p_value: float


@dataclass(frozen=True)
class LengthControlled:
    """Per arm: ``raw_rate`` and ``lc_rate`` with intervals at ``level``; ``length`` (gamma) and
    ``position`` (delta, None without sides) coefficients; ``length_share`` the share of the spread
    between arms that length explains; ``caveat`` one line in words when length explains the win
    (else None); ``position_caveat`` likewise when delta's interval excludes 0."""

    raw_rate: tuple[float, ...]
    raw_lo: tuple[float, ...]
    raw_hi: tuple[float, ...]
    lc_rate: tuple[float, ...]
    lc_lo: tuple[float, ...]
    lc_hi: tuple[float, ...]
    length: Coefficient
    position: Coefficient | None
    length_share: float
    caveat: str | None
    position_caveat: str | None
    level: float


@dataclass(frozen=True)
class _Fit:
    beta: np.ndarray  # k strengths, arm 0 = 0
    cov: np.ndarray  # cluster-robust covariance of (beta_1..beta_{k-1}, extra terms)
    extra: list[Coefficient]


def _regress(y, design: np.ndarray, k: int, groups: np.ndarray, z: float) -> _Fit:
    import statsmodels.api as sm

    model = sm.GLM(y, design, family=sm.families.Binomial())
    res = model.fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    params, cov = np.asarray(res.params), np.asarray(res.cov_params())
    extra = []
    for c in range(k - 1, design.shape[1]):
        se = float(np.sqrt(cov[c, c]))
        extra.append(
            Coefficient(float(params[c]), float(params[c] - z * se), float(params[c] + z * se), float(res.pvalues[c]))
        )
    return _Fit(np.concatenate([[0.0], params[: k - 1]]), cov, extra)


def _rates(f: _Fit, k: int, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each arm's mean of sigmoid(beta_c - beta_m) over the other arms, with delta-method intervals."""
    diff = f.beta[:, None] - f.beta[None, :]
    sig = 1.0 / (1.0 + np.exp(-diff))
    np.fill_diagonal(sig, np.nan)
    rate = np.nanmean(sig, axis=1)
    dens = sig * (1.0 - sig)  # d sigmoid(beta_c - beta_m) / d beta_c; minus that for beta_m
    np.fill_diagonal(dens, 0.0)
    grad = (np.diag(dens.sum(axis=1)) - dens) / (k - 1)  # row c: d rate_c / d beta
    g = grad[:, 1:]  # beta_0 is fixed at 0
    var = np.einsum("ca,ab,cb->c", g, f.cov[: k - 1, : k - 1], g)
    se = np.sqrt(np.clip(var, 0.0, None))
    return rate, np.clip(rate - z * se, 0.0, 1.0), np.clip(rate + z * se, 0.0, 1.0)


def _share(raw: np.ndarray, lc: np.ndarray) -> float:
    ss_raw = float(np.sum((raw - raw.mean()) ** 2))
    ss_lc = float(np.sum((lc - lc.mean()) ** 2))
    return 0.0 if ss_raw == 0 else max(0.0, 1.0 - ss_lc / ss_raw)


def _caveats(
    length: Coefficient, position, raw, lc, share: float, level: float, names
) -> tuple[str | None, str | None]:
    pct = f"{level:.0%}"
    caveat = None
    top_raw, top_lc = int(np.argmax(raw)), int(np.argmax(lc))
    if (length.lo > 0 or length.hi < 0) and (top_raw != top_lc or share >= CAVEAT_SHARE):
        side = "longer" if length.value > 0 else "shorter"
        why = (
            f"with length held equal {names[top_raw]} is no longer first ({names[top_lc]} is)"
            if top_raw != top_lc
            else f"length explains {share:.0%} of the spread between arms"
        )
        caveat = f"Length explains the win: the {side} answer is preferred (coefficient {length.value:.2f}, {pct} interval {length.lo:.2f} to {length.hi:.2f}); {why}."
    pos = None
    if position is not None and (position.lo > 0 or position.hi < 0):
        which = "first" if position.value > 0 else "second"
        pos = f"Position bias: the answer shown {which} is preferred (coefficient {position.value:.2f}, {pct} interval {position.lo:.2f} to {position.hi:.2f})."
    return caveat, pos


def length_controlled(
    arm_i, arm_j, outcome, len_i, len_j, *, k: int, first=None, item=None, level: float = 0.9, names=None
) -> LengthControlled:
    """Raw and length-controlled win rates per arm, the length and position coefficients, the share
    of the ranking length explains and the caveats (see the module's docstring). ``first`` is 1 where
    arm i's answer was shown first, 0 where second; ``names`` label the arms in the caveat."""
    check_level(level)
    data = judgments(arm_i, arm_j, outcome, k=k, item=item)
    li, lj = np.asarray(len_i, dtype=float).reshape(-1), np.asarray(len_j, dtype=float).reshape(-1)
    n = data.i.size
    if li.size != n or lj.size != n or not (np.isfinite(li).all() and np.isfinite(lj).all()):
        raise InputError(f"len_i and len_j must be one finite length per judgment ({n})", field="len_i")
    delta = li - lj
    sd = float(delta.std())
    if sd == 0:
        raise InputError(
            "every judgment has the same length difference: the length effect cannot be estimated", field="len_i"
        )
    arms = np.zeros((n, k))
    arms[np.arange(n), data.i] += 1.0
    arms[np.arange(n), data.j] -= 1.0
    columns = [arms[:, 1:]]
    if first is not None:
        side = np.asarray(first).reshape(-1)
        if side.size != n or not np.isin(side, (0, 1)).all():
            raise InputError(f"first must be 1 (arm i shown first) or 0 per judgment ({n})", field="first")
        columns.append((2.0 * side - 1.0)[:, None])
    z = NormalDist().inv_cdf(0.5 + level / 2)
    raw = _regress(data.y, np.hstack(columns), k, data.item, z)
    lc = _regress(data.y, np.hstack(columns + [np.tanh(delta / sd)[:, None]]), k, data.item, z)
    raw_rate, raw_lo, raw_hi = _rates(raw, k, z)
    lc_rate, lc_lo, lc_hi = _rates(lc, k, z)
    length = lc.extra[-1]
    position = lc.extra[0] if first is not None else None
    share = _share(raw.beta, lc.beta)
    names = [str(c) for c in range(k)] if names is None else [str(x) for x in names]
    caveat, pos = _caveats(length, position, raw_rate, lc_rate, share, level, names)

    def t(x) -> tuple[float, ...]:
        return tuple(float(v) for v in x)

    return LengthControlled(
        t(raw_rate),
        t(raw_lo),
        t(raw_hi),
        t(lc_rate),
        t(lc_lo),
        t(lc_hi),
        length,
        position,
        share,
        caveat,
        pos,
        float(level),
    )
