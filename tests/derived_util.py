"""What the tests of the derived tables share (tests/test_derived*.py)."""

from __future__ import annotations

import math


def norm(x):
    """JSON with floats to 12 significant digits (DuckDB's parallel sums differ past that)."""
    if isinstance(x, float):
        return None if math.isnan(x) else float(f"{x:.12g}")
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    return x
