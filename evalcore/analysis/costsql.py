"""The aggregates behind evalcore.analysis.cost, in DuckDB over calls.parquet and outputs.parquet:
totals, per-criterion shares by the sharing rule, and the wording of a partly priced sum. See
evalcore.analysis.cost for the definitions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.analysis.selection import item_condition
from evalcore.contract import schema as S
from evalcore.errors import NotFoundError
from evalcore.storage.store import Store

NO_CRITERION = "(none)"
SHARING_RULE = (
    "a call that asks several criteria gives each an equal share (1/number of its criteria) of its "
    "tokens, cost and latency; per-criterion calls count the calls that asked it; per-criterion "
    "latency mean/p50/p95 are those of the calls that asked it"
)

# ----------------------------------------------------------------------------- aggregates (DuckDB)


@dataclass(frozen=True)
class Table:
    """A Parquet file read whole, or only the rows of a slice (``where``: a SQL condition on
    ``item_id`` with its ``params``, :func:`evalcore.analysis.selection.item_condition`)."""

    path: str
    where: str = ""
    params: tuple[Any, ...] = ()

    def sql(self) -> tuple[str, list[Any]]:
        if not self.where:
            return "read_parquet(?)", [self.path]
        return f"(SELECT * FROM read_parquet(?) WHERE {self.where})", [self.path, *self.params]


def _src(t: str | Table) -> tuple[str, list[Any]]:
    return (Table(t) if isinstance(t, str) else t).sql()


_LAT = "avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), sum(latency_ms)"


def _num(v: Any) -> Any:
    """A DuckDB number as plain JSON-able Python (Decimal and numpy scalars become float/int)."""
    if v is None:
        return None
    if isinstance(v, (bool, int)):
        return v
    f = float(v)
    return f if math.isfinite(f) else None


def _per_unit(cost: float | None, unknown: int, n: int) -> float | None:
    return cost / n if cost is not None and unknown == 0 and n else None


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
    n, unknown, cost = store.sql(
        "SELECT count(*), count(*) - count(cost_usd), sum(cost_usd) FROM read_parquet(?)", [path]
    )[0]
    return _num(cost), int(unknown), int(n)


def call_totals(store: Store, calls_path: str | Table) -> dict[str, Any]:
    """Totals over one run's calls.parquet: calls, failed calls, answers judged, tokens, cost
    (known costs summed; the unknown ones counted), latency mean / p50 / p95 / total, cache hits."""
    return _call_scan(store, calls_path)[0]


def _call_scan(store: Store, calls_path: str | Table) -> tuple[dict[str, Any], dict[str, int]]:
    """:func:`call_totals` and the run's counts (items, answers, judgings per item, generation
    rounds) from one scan."""
    src, params = _src(calls_path)
    # two queries: the distinct counts beside the sums and quantiles in one query cost 3x the memory
    # (docs/BENCHMARKS.md, probe cost-callscan)
    calls, failed, tin, tout, cost, unknown, mean, p50, p95, total, hits = store.sql(
        "SELECT count(*), count(error), sum(tokens_in), sum(tokens_out), sum(cost_usd), count(*) - count(cost_usd), "
        + _LAT
        + f", count(*) FILTER (WHERE cache_hit) FROM {src}",
        params,
    )[0]
    answers, items, rounds, gen_rounds = store.sql(
        "SELECT count(DISTINCT (item_id, gen_round)), count(DISTINCT item_id), count(DISTINCT (gen_round, judge_round)), "
        f"count(DISTINCT gen_round) FROM {src}",
        params,
    )[0]
    counts = {"items": items, "answers": answers, "rounds": rounds, "gen_rounds": gen_rounds}
    return {
        "calls": calls,
        "failed_calls": failed,
        "answers": answers,
        "tokens_in": int(tin or 0),
        "tokens_out": int(tout or 0),
        "cost_usd": _num(cost),
        "cost_unknown_calls": unknown,
        "cost_usd_per_answer": _per_unit(_num(cost), unknown, answers),
        "latency_ms_mean": _num(mean),
        "latency_ms_p50": _num(p50),
        "latency_ms_p95": _num(p95),
        "latency_ms_total": _num(total),
        "cache_hits": hits,
        "source": "calls.parquet",
    }, counts


def output_totals(store: Store, outputs_path: str | Table) -> dict[str, Any]:
    """Totals over a generation's outputs.parquet (the system under test): outputs, errored outputs,
    tokens, cost (known costs summed; the unknown ones counted), latency mean / p50 / p95 / total."""
    src, params = _src(outputs_path)
    row = store.sql(
        "SELECT count(*), count(error), count(DISTINCT item_id), sum(tokens_in), sum(tokens_out), sum(cost_usd), "
        "count(*) - count(cost_usd), " + _LAT + f" FROM {src}",
        params,
    )[0]
    outputs, errored, items, tin, tout, cost, unknown, mean, p50, p95, total = row
    return {
        "outputs": outputs,
        "errored_outputs": errored,
        "items": items,
        "tokens_in": int(tin or 0),
        "tokens_out": int(tout or 0),
        "cost_usd": _num(cost),
        "cost_unknown_outputs": unknown,
        "cost_usd_per_output": _per_unit(_num(cost), unknown, outputs),
        "latency_ms_mean": _num(mean),
        "latency_ms_p50": _num(p50),
        "latency_ms_p95": _num(p95),
        "latency_ms_total": _num(total),
    }


def _manifest_totals(t: S.Totals) -> dict[str, Any]:
    """A run without a calls table (imported, or simulated without calls): its manifest's totals."""
    return {
        "calls": t.calls,
        "failed_calls": t.failed_calls,
        "answers": None,
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "cost_usd": t.cost_usd,
        "cost_unknown_calls": 0 if t.cost_usd is not None else t.calls,
        "cost_usd_per_answer": None,
        "latency_ms_mean": t.latency_ms_mean,
        "latency_ms_p50": None,
        "latency_ms_p95": t.latency_ms_p95,
        "latency_ms_total": None,
        "cache_hits": 0,
        "source": "manifest totals (no calls in calls.parquet)",
    }


def _unnest(src: str) -> str:
    return (
        "WITH c AS (SELECT tokens_in, tokens_out, cost_usd, latency_ms, error, "
        "CASE WHEN criteria IS NULL OR len(criteria) = 0 THEN ['" + NO_CRITERION + "'] "
        f"ELSE criteria END AS crits FROM {src}), "
        "u AS (SELECT *, len(crits) AS n_crits, unnest(crits) AS criterion FROM c) "
    )


def per_criterion(store: Store, calls_path: str | Table, order: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One row per criterion asked in the run (``order`` first, then any other by name), by the
    sharing rule: calls that asked it, failed ones among them, its equal shares of tokens in and
    out, cost (known shares summed, null when none is known) and latency, the calls asking it
    whose cost is unknown, and the latency mean / p50 / p95 of the calls that asked it."""
    src, params = _src(calls_path)
    rows = store.sql(
        _unnest(src) + "SELECT criterion, count(*), count(error), sum(tokens_in / n_crits), sum(tokens_out / n_crits), "
        "sum(cost_usd / n_crits), count(*) - count(cost_usd), sum(latency_ms / n_crits), "
        "avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), "
        # output tokens per verdict, from the calls that completed with measured tokens
        "sum(tokens_out / n_crits) FILTER (WHERE error IS NULL AND tokens_out IS NOT NULL), "
        "count(*) FILTER (WHERE error IS NULL AND tokens_out IS NOT NULL) "
        "FROM u GROUP BY criterion",
        params,
    )
    rank = {name: i for i, name in enumerate(order)}
    rows.sort(key=lambda r: (rank.get(r[0], len(rank)), r[0]))
    out = []
    for name, calls, failed, tin, tout, cost, unknown, lat_share, mean, p50, p95, out_sum, out_n in rows:
        out.append(
            {
                "criterion": name,
                "calls": calls,
                "failed_calls": failed,
                "tokens_in": _num(tin) or 0.0,
                "tokens_out": _num(tout) or 0.0,
                "cost_usd": _num(cost),
                "cost_unknown_calls": unknown,
                "latency_ms_total": _num(lat_share),
                "latency_ms_mean": _num(mean),
                "latency_ms_p50": _num(p50),
                "latency_ms_p95": _num(p95),
                "out_tokens_per_verdict": _num(out_sum / out_n) if out_n else None,
            }
        )
    return out


def _sliced(store: Store, suite_id: str, kind: str, eid: str, name: str, classes: tuple[str, ...]) -> Table:
    where, params = item_condition(store, suite_id, classes=classes)
    return Table(store.path_of(kind, eid, name), where, tuple(params))
