"""Building a review queue: detect the raised cases on a generation (the stored detection), sample
the audit stratum of agreed cases, order everything, and append the queue to the label store.
:func:`evalcore.review.audit.draw` and :func:`order_cases` define the draw and the order;
:func:`build_queue` applies them to arrays over the stored detection (:func:`queue_plan`), never to
per-case objects. See
:mod:`evalcore.review.queue` for the queue's design (audit stratum, priority order)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from evalcore.analysis.suites import holdout_ids
from evalcore.errors import InputError
from evalcore.review.audit import check_method, draw
from evalcore.review.detect import DETECTOR_VERSION, PRIORITY, Detection, stored_detection
from evalcore.review.queue import write_queue_file
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import utcnow
from evalcore.storage.roles import acting
from evalcore.storage.store import Store


def order_cases(raised: list[dict], audited: list[dict], seed: int) -> list[dict]:
    """The queue's priority order (see the module docstring): raised cases by their most serious
    reason, more reasons first, then a seeded random order; audited agreed cases (each with its
    ``place`` in the audit's order, :class:`evalcore.review.audit.AuditDraw`) spread through it by
    their place, and a raised case that is audited too at the earlier of its two places."""
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
    d = len(keyed)
    pos = [(min((i + 0.5) / d, c.get("place", math.inf)), 0, k, c) for k, (i, (c, _)) in enumerate(enumerate(keyed))]
    pos += [(c["place"], 1, d + j, c) for j, c in enumerate(audited)]
    pos.sort(key=lambda t: (t[0], t[1], t[2]))
    return [c for _, _, _, c in pos]


def build_queue(
    store: Store,
    gen_id: str,
    *,
    audit_rate: float = 0.05,
    seed: int = 0,
    reviewers_required: int = 1,
    created_by: str | None = None,
    audit: str = "uniform",
    audit_epsilon: float | None = None,
    claims: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Detect (the stored detection, :func:`evalcore.review.detect.stored_detection`), sample the
    audit, order, and append the queue to the label store (state directory). Returns the queue's
    header with counts. The audit (``audit``: uniform or active, :mod:`evalcore.review.audit`)
    draws ``ceil(audit_rate * M)`` of each criterion's M cases, raised or agreed. Building again makes a new queue; decisions belong to cases, not to
    queues, so they carry over.

    No case becomes a Python object: the audit draw and the priority order are numpy arrays over
    the stored detection's positions (the same draws and the same order as :func:`evalcore.review.audit.draw`
    and :func:`order_cases` over :func:`evalcore.review.detect.detect`'s lists), and DuckDB reads
    the cases in rank order into the label store in batches of ``BATCH_ROWS``."""
    # whoever builds holds a reviewing role now (roles file and login read at this moment)
    created_by = (
        acting(store.state, "reviewer", "adjudicator", "admin", name=created_by or "", claims=claims).name or None
    )
    check_method(audit, audit_epsilon)
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
    con = store.connect()
    try:
        plan = queue_plan(store, det, audit_rate, int(seed), audit, audit_epsilon, con=con)
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
            "audit_sampled": plan.audited_agreed,
            "detector_version": DETECTOR_VERSION,
            "audit_design": plan.design,
        }
        labels.write_queue_rows(header, _case_rows(det, queue_id, plan, con))
        _write_copy(store, header, det, plan, con)
    finally:
        con.close()
    return {**header, "counts": det.counts}


class QueuePlan(NamedTuple):
    """The queue's cases in rank order as row numbers of the stored detection's file (``rows``),
    with each one's audit key and size (NaN when not audited) and inclusion probability (1 for a
    raised case; min(1, size tau_c) for an audited agreed one); the audit's design."""

    rows: np.ndarray
    key: np.ndarray
    size: np.ndarray
    pi: np.ndarray
    audited_agreed: int
    design: dict[str, Any]


def queue_plan(
    store: Store, det: Detection, rate: float, seed: int, method: str, epsilon: float | None, *, con: Any = None
) -> QueuePlan:
    """Draw the audit over the stored detection (:func:`evalcore.review.audit.draw`) and order the
    queue as :func:`order_cases` does: raised cases by (first reason's priority, more reasons
    first, the seeded uniform, the key), audited cases by their place in the audit, a raised case
    that is audited too at the earlier of its two places. The suite's holdout items are outside the
    audit (reviewers do not see them unless they ask)."""
    hold = holdout_ids(store, store.generation(det.gen_id).manifest.suite_id)
    cols = store.sql_df(
        "SELECT raised, priority, n_reasons, dense_rank() OVER (ORDER BY criterion) - 1 AS c, "
        "dense_rank() OVER (ORDER BY item_id, gen_round) - 1 AS a, NOT list_contains(?::VARCHAR[], item_id) AS eligible "
        "FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number",
        [hold, str(det.path)],
        con=con,
    )
    names = [
        r[0] for r in store.sql("SELECT DISTINCT criterion FROM read_parquet(?) ORDER BY 1", [str(det.path)], con=con)
    ]
    raised = cols["raised"].to_numpy(dtype=bool)
    a = draw(
        cols["a"].to_numpy(dtype=np.int64), cols["c"].to_numpy(dtype=np.int64), names, raised, rate, seed, method,
        epsilon, eligible=cols["eligible"].to_numpy(dtype=bool),
    )  # fmt: skip
    priority = cols["priority"].to_numpy(dtype=np.int64)[raised]
    n_reasons = cols["n_reasons"].to_numpy(dtype=np.int64)[raised]
    del cols
    n = raised.size
    key, size, pi, place = (np.full(n, np.nan) for _ in range(4))
    key[a.rows], size[a.rows], pi[a.rows], place[a.rows] = a.key, a.size, a.pi, a.place
    raised_rows = np.flatnonzero(raised)
    agreed_rows = a.rows[~raised[a.rows]]
    d = len(raised_rows)
    u = np.random.default_rng([seed, 1]).random(d)
    # lexsort is stable and the raised cases are in key order, so ties fall back to the key
    by_priority = raised_rows[np.lexsort((u, -n_reasons, priority))]
    raised_pos = np.fmin((np.arange(d) + 0.5) / d, place[by_priority])  # fmin: NaN (not audited) loses
    pos = np.concatenate([raised_pos, place[agreed_rows]])
    stratum = np.concatenate([np.zeros(d, dtype=np.int8), np.ones(len(agreed_rows), dtype=np.int8)])
    rows = np.concatenate([by_priority, agreed_rows])[np.lexsort((np.arange(pos.size), stratum, pos))]
    probs = np.where(raised[rows], 1.0, pi[rows])
    return QueuePlan(rows, key[rows], size[rows], probs, len(agreed_rows), a.design)


BATCH_ROWS = 50_000


def _ranks(plan: QueuePlan) -> Any:
    """The plan as an Arrow table: detection row, rank, audit key and size (null when not
    audited), inclusion probability."""
    import pyarrow as pa  # type: ignore[import-untyped]

    audited = ~np.isnan(plan.key)
    return pa.table(
        {
            "row": pa.array(plan.rows, pa.int64()),
            "rank": pa.array(np.arange(1, len(plan.rows) + 1)),
            "audit_key": pa.array(plan.key, pa.float64(), mask=~audited),
            "audit_size": pa.array(plan.size, pa.float64(), mask=~audited),
            "inclusion_prob": pa.array(plan.pi, pa.float64()),
        }
    )


def _write_copy(store: Store, header: dict[str, Any], det: Detection, plan: QueuePlan, con: Any) -> None:
    """The queue's Parquet copy (:func:`evalcore.review.queue.queue_file`), from the same rows as
    the label store's, so that the report card never reads the cases back from the label store."""
    con.register("ec_ranks", _ranks(plan))
    try:
        write_queue_file(
            store,
            header,
            "SELECT c.item_id, c.gen_round::BIGINT AS gen_round, c.criterion, c.class, "
            "CASE WHEN c.raised THEN 'disagreement' ELSE 'audit' END AS stratum, "
            "r.inclusion_prob, r.audit_key, r.audit_size "
            "FROM ec_ranks r JOIN read_parquet(?, file_row_number = true) c ON c.file_row_number = r.row ORDER BY r.rank",
            [str(det.path)],
            con,
        )
    finally:
        con.unregister("ec_ranks")


def _case_rows(det: Detection, queue_id: str, plan: QueuePlan, con: Any) -> Iterator[list[tuple]]:
    """The queue's cases in rank order as rows of ``LabelStore.CASE_COLUMNS`` (the JSON columns as
    the stored detection's text), ``BATCH_ROWS`` at a time."""
    if not len(plan.rows):
        return
    con.register("ec_ranks", _ranks(plan))
    try:
        res = con.execute(
            "SELECT ?::VARCHAR, r.rank, c.gen_id, c.item_id, c.gen_round, c.criterion, c.class, "
            "CASE WHEN c.raised THEN 'disagreement' ELSE 'audit' END, c.reasons_json, c.runs_json, c.detail, "
            "r.inclusion_prob, r.audit_key, r.audit_size "
            "FROM ec_ranks r JOIN read_parquet(?, file_row_number = true) c ON c.file_row_number = r.row "
            "ORDER BY r.rank",
            [queue_id, str(det.path)],
        )
        while batch := res.fetchmany(BATCH_ROWS):
            yield batch
    finally:
        con.unregister("ec_ranks")
