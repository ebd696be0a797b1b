"""The aggregates behind evalcore.analysis.cost, in DuckDB over calls.parquet and outputs.parquet:
totals, per-criterion shares by the sharing rule, and the wording of a partly priced sum. See
evalcore.analysis.cost for the definitions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.analysis.selection import item_condition
from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import NotFoundError
from evalcore.storage import aggregates
from evalcore.storage.aggregates import (
    LAT,
    Table,
    call_scan,
    num,
    output_totals,
    per_criterion_rows,
    per_unit,
    src,
    unnest_criteria,
)
from evalcore.storage.store import Store

SHARING_RULE = (
    "a call that asks several criteria gives each an equal share (1/number of its criteria) of its "
    "tokens, cost and latency; per-criterion calls count the calls that asked it; per-criterion "
    "latency mean/p50/p95 are those of the calls that asked it"
)

# ----------------------------------------------------------------------------- aggregates (DuckDB)

# The aggregates themselves are evalcore.storage.aggregates: over a whole run's or generation's
# table they answer from its derived set, else they scan.
_src = src
_num = num
_per_unit = per_unit
_LAT = LAT
_call_scan = call_scan
_unnest = unnest_criteria
NO_CRITERION = aggregates.NO_CRITERION


def cost_label(cost_usd: float | None, unknown: int, n: int, unit: str = "calls", none: str = "unknown") -> str:
    """A total cost as text: ``$X`` when every one of the ``n`` calls (outputs) is priced, ``$X
    (partly priced: N of M calls)`` beside the sum of the known costs when ``unknown`` of them are
    not, and ``none`` (default "unknown") only when no call is priced."""
    priced = n - unknown
    if cost_usd is None or (n and priced <= 0):
        return none
    text = f"${cost_usd:.4f}"
    return text + (f" (partly priced: {priced} of {n} {unit})" if unknown else "")


def stored_cost(store: Store, kind: str, eid: str) -> tuple[float | None, int, int] | None:
    """(sum of the known costs, calls with unknown cost, calls) of a stored run's calls.parquet
    (``kind`` "run") or a generation's outputs.parquet (``kind`` "generation"); None when the table
    is missing."""
    try:
        path = store.path_of(kind, eid, "calls" if kind == "run" else "outputs")
    except NotFoundError:
        return None
    t = Table(path, kind=kind, eid=eid)
    if kind == "run":
        tot = call_scan(store, t)[0]
        return tot["cost_usd"], int(tot["cost_unknown_calls"]), int(tot["calls"])
    out = output_totals(store, t)
    return out["cost_usd"], int(out["cost_unknown_outputs"]), int(out["outputs"])


@dataclass
class CallTotals(Result):
    """A run's judge calls: :func:`call_totals`, or its manifest's totals when it has no calls."""

    calls: int
    failed_calls: int
    answers: int | None
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    cost_unknown_calls: int
    cost_usd_per_answer: float | None
    latency_ms_mean: float | None
    latency_ms_p50: float | None
    latency_ms_p95: float | None
    latency_ms_total: float | None
    cache_hits: int
    source: str


def call_totals(store: Store, calls_path: str | Table) -> CallTotals:
    """Totals over one run's calls.parquet: calls, failed calls, answers judged, tokens, cost
    (known costs summed; the unknown ones counted), latency mean / p50 / p95 / total, cache hits."""
    return CallTotals(**_call_scan(store, calls_path)[0])


def _manifest_totals(t: S.Totals) -> CallTotals:
    """A run without a calls table (imported, or simulated without calls): its manifest's totals."""
    return CallTotals(
        calls=t.calls,
        failed_calls=t.failed_calls,
        answers=None,
        tokens_in=t.tokens_in,
        tokens_out=t.tokens_out,
        cost_usd=t.cost_usd,
        cost_unknown_calls=0 if t.cost_usd is not None else t.calls,
        cost_usd_per_answer=None,
        latency_ms_mean=t.latency_ms_mean,
        latency_ms_p50=None,
        latency_ms_p95=t.latency_ms_p95,
        latency_ms_total=None,
        cache_hits=0,
        source="manifest totals (no calls in calls.parquet)",
    )


@dataclass
class CriterionCost(Result):
    """One criterion of :func:`per_criterion`, by the sharing rule."""

    criterion: str
    calls: int
    failed_calls: int
    tokens_in: float
    tokens_out: float
    cost_usd: float | None
    cost_unknown_calls: int
    latency_ms_total: float | None
    latency_ms_mean: float | None
    latency_ms_p50: float | None
    latency_ms_p95: float | None


def per_criterion(store: Store, calls_path: str | Table, order: Sequence[str] = ()) -> list[CriterionCost]:
    """One row per criterion asked in the run (``order`` first, then any other by name), by the
    sharing rule: calls that asked it, failed ones among them, its equal shares of tokens in and
    out, cost (known shares summed, null when none is known) and latency, the calls asking it
    whose cost is unknown, and the latency mean / p50 / p95 of the calls that asked it."""
    rows = per_criterion_rows(store, calls_path)
    rank = {name: i for i, name in enumerate(order)}
    rows.sort(key=lambda r: (rank.get(r[0], len(rank)), r[0]))
    return [
        CriterionCost(
            name, calls, failed, _num(tin) or 0.0, _num(tout) or 0.0, _num(cost), unknown, *map(_num, latency)
        )
        for name, calls, failed, tin, tout, cost, unknown, *latency, _, _ in rows
    ]


def _sliced(store: Store, suite_id: str, kind: str, eid: str, name: str, classes: tuple[str, ...]) -> Table:
    where, params = item_condition(store, suite_id, classes=classes)
    return Table(store.path_of(kind, eid, name), where, tuple(params), kind, eid)
