"""Each ordinal and continuous criterion's mean score with its interval (issue 40; seed 002's
``avg``), in ``attribution``, ``runs`` and ``compare`` and their pages. Pass / fail criteria keep
their pass rate.

The unit is an answer: its score on the criterion under the selection (one judge round, or the
mean over judge rounds with ``--majority``; holdout items and slices as everywhere,
:func:`evalcore.analysis.selection._sel_sql`); errored verdicts (score null) are left out and
counted apart. DuckDB's own ``count``, ``avg`` and ``stddev_samp`` read the run's verdicts, and
:func:`evalcore.stats.means.t_interval` gives Student's t interval (docs/ANALYSIS.md, "Mean
scores", says why t). Pure reading."""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.analysis.scoresql import NUMERIC
from evalcore.analysis.selection import DEFAULT_SELECTION, Selection, _hold, _sel_sql
from evalcore.contract.results import Result
from evalcore.stats.means import t_interval
from evalcore.storage.store import Store

#: the level of every mean's interval (``ci95``)
LEVEL = 0.95


@dataclass
class CriterionMean(Result):
    """One ordinal or continuous criterion: the mean of ``n`` answers' scores, their standard
    deviation and the 95% t interval (None, with ``reason``, when there is no spread to estimate);
    ``errored``: answers whose verdict has no score."""

    criterion: str
    kind: str
    n: int
    errored: int
    mean: float | None
    sd: float | None
    ci95: list[float | None]
    reason: str | None

    def text(self, name: bool = True) -> str:
        """``helpfulness 3.885 [3.796, 3.975]`` (without the name: ``3.885 [3.796, 3.975]``), or
        the mean and why there is no interval."""
        head = f"{self.criterion} " if name else ""
        if self.mean is None:
            return f"{head}- ({self.reason})"
        if self.ci95[0] is None or self.ci95[1] is None:
            return f"{head}{self.mean:.3f} ({self.reason})"
        return f"{head}{self.mean:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]"


def numeric_criteria(store: Store, run_id: str) -> list[tuple[str, str]]:
    """(name, kind) of the run's ordinal and continuous criteria, in rubric order."""
    return [(c.name, c.kind) for c in store.run(run_id).manifest.rubric.criteria if c.kind in NUMERIC]


def criterion_means(
    store: Store,
    run_id: str,
    sel: Selection = DEFAULT_SELECTION,
    *,
    names: list[str] | None = None,
    shared_with: str | None = None,
) -> list[CriterionMean]:
    """The mean score of each ordinal and continuous criterion of ``run_id`` (only ``names`` when
    given) under ``sel``; ``shared_with``: only items that run also judged (compare's items)."""
    crits = [(n, k) for n, k in numeric_criteria(store, run_id) if names is None or n in names]
    if not crits:
        return []
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    cond, extra = "", []
    if shared_with is not None:
        cond = " AND item_id IN (SELECT item_id FROM read_parquet(?))"
        extra = [store.path_of("run", shared_with, "verdicts")]
    rows = store.sql(
        f"SELECT criterion, count(score), count(*) - count(score), avg(score), stddev_samp(score) FROM ({base}) "
        f"WHERE list_contains(?::VARCHAR[], criterion){cond} GROUP BY criterion",
        [store.path_of("run", run_id, "verdicts"), *params, [n for n, _ in crits], *extra],
    )
    by = {r[0]: r[1:] for r in rows}
    out = []
    for name, kind in crits:
        n, errored, mean, sd = by.get(name, (0, 0, None, None))
        t = t_interval(int(n), mean, sd, LEVEL)
        out.append(CriterionMean(name, kind, t.n, int(errored), t.mean, t.sd, [t.lo, t.hi], t.reason))
    return out
