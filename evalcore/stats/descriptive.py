"""Descriptive statistics with one definition each, shared by the manifests' totals and the
DuckDB queries over the same rows.

**Percentile.** ``percentile(values, q)`` is linear interpolation between the order statistics
(Hyndman and Fan's type 7, numpy's default ``method="linear"``): with the values sorted
x_0 <= ... <= x_{n-1} and h = (n - 1) q / 100, it is x_floor(h) + (h - floor(h)) (x_ceil(h) -
x_floor(h)). DuckDB's ``quantile_cont(x, q / 100)`` computes the same number, so a p95 written into
a run's manifest equals the p95 a query over its calls.parquet returns. Nearest-rank percentiles
(which evalcore used in two places before, giving a different p95 for the same calls) are not
used anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0 <= q <= 100) of ``values`` by linear interpolation (type 7, the
    same as DuckDB's ``quantile_cont``); None when there are no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0 and 100, got {q}")
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 0:
        return None
    return float(np.percentile(arr, q))
