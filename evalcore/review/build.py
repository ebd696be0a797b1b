"""Building a review queue: detect the raised cases on a generation (the stored detection), sample
the audit stratum of agreed cases, order everything, and append the queue to the label store.
:func:`audit_sample` and :func:`order_cases` define the draw and the order; :func:`build_queue`
applies them to arrays over the stored detection (:func:`queue_order`), never to per-case objects. See
:mod:`evalcore.review.queue` for the queue's design (audit stratum, priority order)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from evalcore.errors import InputError
from evalcore.review.detect import DETECTOR_VERSION, PRIORITY, Detection, stored_detection
from evalcore.review.queue import write_queue_file
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
    """Detect (the stored detection, :func:`evalcore.review.detect.stored_detection`), sample the
    audit, order, and append the queue to the label store (state directory). Returns the queue's
    header with counts. Building again makes a new queue; decisions belong to cases, not to
    queues, so they carry over.

    No case becomes a Python object: the audit draw and the priority order are numpy arrays over
    the stored detection's positions (the same draws and the same order as :func:`audit_sample`
    and :func:`order_cases` over :func:`evalcore.review.detect.detect`'s lists), and DuckDB reads
    the cases in rank order into the label store in batches of ``BATCH_ROWS``."""
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
    det = stored_detection(store, gen_id)
    idx, prob = audit_sample(det.agreed, audit_rate, int(seed))
    con = store.connect()
    try:
        rows = queue_order(store, det, idx, int(seed), con=con)
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
            "runs": det.runs,
            "population": det.population,
            "flagged": det.raised,
            "agreed": det.agreed,
            "audit_sampled": len(idx),
            "detector_version": DETECTOR_VERSION,
        }
        labels.write_queue_rows(header, _case_rows(det, queue_id, rows, prob, con))
        _write_copy(store, header, det, rows, prob, con)
    finally:
        con.close()
    return {**header, "counts": det.counts, "audit_inclusion_prob": prob}


def queue_order(store: Store, det: Detection, audited: np.ndarray, seed: int, *, con: Any = None) -> np.ndarray:
    """The queue's cases in rank order, as row numbers of the stored detection's file (which is in
    key order). ``audited`` are the audit draw's positions among the agreed cases (in draw order).
    The same order as :func:`order_cases`: raised cases by (first reason's priority, more reasons
    first, the seeded uniform, the key), audited cases spread evenly through them."""
    cols = store.sql_df("SELECT raised, priority, n_reasons FROM read_parquet(?)", [str(det.path)], con=con)
    raised = cols["raised"].to_numpy(dtype=bool)
    priority = cols["priority"].to_numpy(dtype=np.int64)[raised]
    n_reasons = cols["n_reasons"].to_numpy(dtype=np.int64)[raised]
    del cols
    raised_rows, agreed_rows = np.flatnonzero(raised), np.flatnonzero(~raised)
    d, a = len(raised_rows), len(audited)
    u = np.random.default_rng([seed, 1]).random(d)
    # lexsort is stable and the raised cases are in key order, so ties fall back to the key
    by_priority = np.lexsort((u, -n_reasons, priority))
    pos = np.concatenate([(np.arange(d) + 0.5) / d, (np.arange(a) + 0.5) / a])
    stratum = np.concatenate([np.zeros(d, dtype=np.int8), np.ones(a, dtype=np.int8)])
    order = np.lexsort((stratum, pos))
    return np.concatenate([raised_rows[by_priority], agreed_rows[np.asarray(audited, dtype=np.int64)]])[order]


BATCH_ROWS = 50_000


def _write_copy(store: Store, header: dict[str, Any], det: Detection, rows: np.ndarray, prob: float, con: Any) -> None:
    """The queue's Parquet copy (:func:`evalcore.review.queue.queue_file`), from the same rows as
    the label store's, so that the report card never reads the cases back from the label store."""
    import pyarrow as pa  # type: ignore[import-untyped]

    ranks = pa.table({"row": pa.array(rows, pa.int64()), "rank": pa.array(np.arange(1, len(rows) + 1))})
    con.register("ec_ranks", ranks)
    try:
        write_queue_file(
            store,
            header,
            "SELECT c.item_id, c.gen_round::BIGINT AS gen_round, c.criterion, c.class, "
            "CASE WHEN c.raised THEN 'disagreement' ELSE 'audit' END AS stratum, "
            "CASE WHEN c.raised THEN 1.0 ELSE ?::DOUBLE END AS inclusion_prob "
            "FROM ec_ranks r JOIN read_parquet(?, file_row_number = true) c ON c.file_row_number = r.row ORDER BY r.rank",
            [prob, str(det.path)],
            con,
        )
    finally:
        con.unregister("ec_ranks")


def _case_rows(det: Detection, queue_id: str, rows: np.ndarray, prob: float, con: Any) -> Iterator[list[tuple]]:
    """The queue's cases in rank order as rows of ``LabelStore.CASE_COLUMNS`` (the JSON columns as
    the stored detection's text), ``BATCH_ROWS`` at a time."""
    import pyarrow as pa

    if not len(rows):
        return
    ranks = pa.table({"row": pa.array(rows, pa.int64()), "rank": pa.array(np.arange(1, len(rows) + 1))})
    con.register("ec_ranks", ranks)
    try:
        res = con.execute(
            "SELECT ?::VARCHAR, r.rank, c.gen_id, c.item_id, c.gen_round, c.criterion, c.class, "
            "CASE WHEN c.raised THEN 'disagreement' ELSE 'audit' END, c.reasons_json, c.runs_json, c.detail, "
            "CASE WHEN c.raised THEN 1.0 ELSE ?::DOUBLE END "
            "FROM ec_ranks r JOIN read_parquet(?, file_row_number = true) c ON c.file_row_number = r.row "
            "ORDER BY r.rank",
            [queue_id, prob, str(det.path)],
        )
        while batch := res.fetchmany(BATCH_ROWS):
            yield batch
    finally:
        con.unregister("ec_ranks")
