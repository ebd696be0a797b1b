"""What the tests of the derived tables share (tests/test_derived*.py)."""

from __future__ import annotations

import math

from evalcore.contract.results import Result


class Near(float):
    """A float equal to another within 1e-10 of its size (DuckDB's parallel sums, and sums taken in
    another order, differ in their last bits; rounding both to a number of digits would still
    differ when they straddle a rounding boundary)."""

    def __eq__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return math.isclose(self, other, rel_tol=1e-10, abs_tol=1e-12)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = float.__hash__

    def __repr__(self):
        return f"{float(self):.12g}"


def norm(x):
    """JSON (typed results as their dicts) with floats compared to 1e-10 (:class:`Near`), NaN as None."""
    if isinstance(x, Result):
        return norm(x.to_dict())
    if isinstance(x, float):
        return None if math.isnan(x) else Near(x)
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    return x
