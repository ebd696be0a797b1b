"""The audit of a review queue: a sequential Poisson sample of the generation's cases, per
criterion, that any decided prefix of is a probability sample (docs/REVIEW.md, "The audit").

Every case of the population (an answer on a criterion judged by at least one run, raised or not)
gets a size and a key ``u / size``; the audit of criterion c is its ``B_c = ceil(rate * M_c)``
cases of smallest key, and the queue holds the raised cases plus the audited ones. The uniform
``u`` is drawn once per *answer* (item and generation round) by ``numpy.random.default_rng([seed,
2])`` over the answers in key order and shared by the answer's criteria (permanent random
numbers), so that the answers audited on every criterion are a sample too (for the all-pass rate).

The suite's holdout items are outside the audit (reviewers do not see them unless they ask) and
so outside the rates it corrects.

* ``uniform``: every case has size 1; the audit of a criterion is a simple random sample of it.
* ``active``: a case's size is :func:`evalcore.stats.ppi.uncertainty_size` of the share of the
  judges that pass it, taken as 1/2 on a raised case (runs, harnesses, rounds or a judge's own
  statement disagree) and 0 or 1 on an agreed one: ``0.5 + epsilon`` against ``epsilon``, so a
  raised case is drawn more often, and no case is ever out of reach (Zrnic & Candes 2024).

What a decided prefix stands for is :func:`evalcore.stats.ppi.prefix_inclusion`: the first m cases
in key order, each with inclusion probability ``min(1, size * tau)``, ``tau`` the (m+1)-th key. The
queue records each audited case's key and size (the label store's ``audit_key``, ``audit_size``)
and each criterion's ``(M_c, B_c, tau_c)`` in the queue's ``audit_design``, with tau_c the
(B_c+1)-th key (None when every case is audited)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from evalcore.errors import InputError
from evalcore.stats.ppi import order_keys, prefix_inclusion, uncertainty_size

METHODS = ("uniform", "active")
#: the active audit's epsilon: sizes 1.0 (raised) against 0.5 (agreed); on PandaLM the default of
#: :func:`uncertainty_size` (0.05) made intervals from 100 or 200 labels wider than labels alone
ACTIVE_EPSILON = 0.5


class AuditDraw(NamedTuple):
    """The audited cases as positions in the population's arrays (``rows``), their key, size and
    inclusion probability at the full budget (``pi``), their place in the audit's order (``place``:
    (rank within the criterion + 0.5) / B_c, so criteria advance together), and the design."""

    rows: np.ndarray
    key: np.ndarray
    size: np.ndarray
    pi: np.ndarray
    place: np.ndarray
    design: dict[str, Any]


def check_method(method: str, epsilon: float | None) -> float:
    """The epsilon of the method (``ACTIVE_EPSILON`` when not given), or one clear error."""
    if method not in METHODS:
        raise InputError(f"the audit is one of {', '.join(METHODS)}, not {method!r}", field="--audit")
    eps = ACTIVE_EPSILON if epsilon is None else float(epsilon)
    if method == "active" and not (math.isfinite(eps) and eps > 0):
        raise InputError(
            f"the active audit's epsilon must be a positive number (a case of size 0 could never be drawn), not {epsilon!r}",
            field="--audit-epsilon",
        )
    return eps


def sizes(raised: np.ndarray, method: str, epsilon: float) -> np.ndarray:
    """Each case's size: 1 (uniform), or uncertainty_size(1/2 raised, 0 agreed, epsilon) (active)."""
    if method == "uniform":
        return np.ones(raised.size)
    return uncertainty_size(np.where(raised, 0.5, 0.0), epsilon)


def draw(
    answer: np.ndarray,
    criterion: np.ndarray,
    names: list[str],
    raised: np.ndarray,
    rate: float,
    seed: int,
    method: str = "uniform",
    epsilon: float | None = None,
    *,
    eligible: np.ndarray | None = None,
) -> AuditDraw:
    """The audit over a population given per case its answer's index (0..A-1, answers in key
    order), its criterion's index into ``names`` and whether it is raised; only ``eligible`` cases
    (default all; the suite's holdout items are not) are drawn, each criterion's M_c counting
    them."""
    if not (0.0 <= rate <= 1.0) or math.isnan(rate):
        raise InputError(f"the audit rate must lie between 0 and 1, not {rate!r}", field="--audit-rate")
    eps = check_method(method, epsilon)
    n_answers = int(answer.max()) + 1 if answer.size else 0
    u = np.random.default_rng([int(seed), 2]).random(n_answers)
    u = np.clip(u, np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0))
    size = sizes(raised, method, eps)
    keys = order_keys(size, u[answer]) if answer.size else np.zeros(0)
    rows, key, sz, pi, place = [], [], [], [], []
    per: dict[str, dict[str, Any]] = {}
    for c, name in enumerate(names):
        at = np.flatnonzero((criterion == c) if eligible is None else (criterion == c) & eligible)
        m_c = at.size
        b_c = min(m_c, math.ceil(rate * m_c - 1e-9)) if m_c else 0
        if b_c:
            pre = prefix_inclusion(size[at], keys[at], b_c)
            got = at[pre.positions]
            rows.append(got)
            key.append(keys[got])
            sz.append(size[got])
            pi.append(pre.pi)
            place.append((np.arange(b_c) + 0.5) / b_c)
            tau = pre.tau
        else:
            tau = float(np.min(keys[at])) if m_c else math.inf
        per[name] = {"cases": int(m_c), "budget": int(b_c), "tau": None if math.isinf(tau) else float(tau)}

    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return AuditDraw(
        rows=cat(rows, np.int64),
        key=cat(key, float),
        size=cat(sz, float),
        pi=cat(pi, float),
        place=cat(place, float),
        design={"method": method, "epsilon": eps if method == "active" else None, "rate": float(rate),
                "seed": int(seed), "criteria": per},
    )  # fmt: skip
