"""Building a review queue: detect the raised cases on a generation, sample the audit stratum of
agreed cases, order everything, and append the queue to the label store. See
:mod:`evalcore.review.queue` for the queue's design (audit stratum, priority order)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from evalcore.errors import InputError
from evalcore.review.detect import DETECTOR_VERSION, PRIORITY, detect
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import utcnow
from evalcore.storage.store import Store


def audit_sample(n_agreed: int, rate: float, seed: int) -> tuple[np.ndarray, float]:
    """Indices of the audited cases among ``n_agreed`` agreed cases (in their sorted order) and their
    inclusion probability: ``ceil(rate * n)`` drawn without replacement by
    ``numpy.random.default_rng(seed)``, so each has probability ``n_audit / n_agreed``."""
    if not (0.0 <= rate <= 1.0) or math.isnan(rate):
        raise InputError(f"the audit rate must lie between 0 and 1, not {rate!r}", field="--audit-rate")
    if n_agreed == 0 or rate == 0:
        return np.array([], dtype=int), 0.0
    n = min(n_agreed, math.ceil(rate * n_agreed - 1e-9))
    idx = np.random.default_rng(seed).choice(n_agreed, size=n, replace=False)
    return idx, n / n_agreed


def order_cases(raised: list[dict], audited: list[dict], seed: int) -> list[dict]:
    """The queue's priority order (see the module docstring): raised cases by their most serious
    reason, more reasons first, then a seeded random order; audited cases (already in their random
    draw order) spread evenly through it."""
    rng = np.random.default_rng([seed, 1])
    u = rng.random(len(raised))
    keyed = sorted(
        zip(raised, u),
        key=lambda t: (
            PRIORITY.index(t[0]["reasons"][0]),
            -len(t[0]["reasons"]),
            t[1],
            t[0]["item_id"],
            t[0]["gen_round"],
            t[0]["criterion"],
        ),
    )
    d, a = len(keyed), len(audited)
    pos = [((i + 0.5) / d, 0, c) for i, (c, _) in enumerate(keyed)] + [
        ((j + 0.5) / a, 1, c) for j, c in enumerate(audited)
    ]
    pos.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in pos]


def build_queue(
    store: Store,
    gen_id: str,
    *,
    audit_rate: float = 0.05,
    seed: int = 0,
    reviewers_required: int = 1,
    created_by: str | None = None,
) -> dict[str, Any]:
    """Detect, sample the audit, order, and append the queue to the label store (state directory).
    Returns the queue's header with counts. Building again makes a new queue; decisions belong to
    cases, not to queues, so they carry over."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"the seed must be an integer, not {seed!r}", field="--seed")
    if (
        isinstance(reviewers_required, bool)
        or not isinstance(reviewers_required, (int, np.integer))
        or reviewers_required < 1
    ):
        raise InputError(
            f"reviewers per case must be a whole number of at least 1, not {reviewers_required!r}", field="--reviewers"
        )
    audit_rate = float(audit_rate)
    labels = LabelStore(store)
    det = detect(store, gen_id)
    idx, prob = audit_sample(len(det["agreed"]), audit_rate, int(seed))
    audited = [{**det["agreed"][i], "stratum": "audit", "inclusion_prob": prob} for i in idx]
    raised = [{**c, "stratum": "disagreement", "inclusion_prob": 1.0} for c in det["raised"]]
    ordered = order_cases(raised, audited, int(seed))
    existing = labels.queues(gen_id)
    queue_id = f"{gen_id}.q{len(existing) + 1}"
    taken = {q["queue_id"] for q in labels.queues()}
    while queue_id in taken:
        queue_id += "x"
    header = {
        "queue_id": queue_id,
        "gen_id": gen_id,
        "created_at": utcnow().isoformat(),
        "created_by": created_by,
        "seed": int(seed),
        "audit_rate": audit_rate,
        "reviewers_required": int(reviewers_required),
        "runs": det["runs"],
        "population": det["population"],
        "flagged": len(raised),
        "agreed": len(det["agreed"]),
        "audit_sampled": len(audited),
        "detector_version": DETECTOR_VERSION,
    }
    cases = [{**c, "queue_id": queue_id, "rank": k + 1} for k, c in enumerate(ordered)]
    labels.write_queue(header, cases)
    return {**header, "counts": det["counts"], "audit_inclusion_prob": prob}
