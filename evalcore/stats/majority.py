"""A grader's accuracy against people's majority, counted one way wherever it is printed
(``evalcore pairs report`` and ``evalcore agreement --session``): over every unit (a pair) on which
people's strict majority (:func:`evalcore.stats.agreement.strict_majority`) decides, the share the
grader got right, a verdict it did not give (unparseable, errored or missing) counting as a miss.
Dropping those instead would flatter a grader that fails to parse on the hard pairs, and make the
same grader's accuracy depend on which command printed it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: how :func:`majority_accuracy` counts a verdict the grader did not give, in the words both commands print
MISSES = "unparseable counted as misses"


@dataclass(frozen=True)
class MajorityAccuracy:
    """``hits`` of ``n`` units people's majority decides; ``unparseable`` of them had no verdict (misses)."""

    hits: int
    n: int
    unparseable: int

    @property
    def share(self) -> float | None:
        return self.hits / self.n if self.n else None


def majority_accuracy(majority: Mapping[str, str], verdicts: Mapping[str, str | None]) -> MajorityAccuracy:
    """The grader's ``verdicts`` (unit -> choice, None or absent when it gave none) against people's
    ``majority`` (unit -> choice, only the units a strict majority decides), over every unit of
    ``majority``: a verdict that is None or absent is a miss."""
    given = {u: verdicts.get(u) for u in majority}
    return MajorityAccuracy(
        sum(v is not None and v == majority[u] for u, v in given.items()),
        len(given),
        sum(v is None for v in given.values()),
    )
