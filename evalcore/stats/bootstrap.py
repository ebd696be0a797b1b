"""The bootstrap engine: every resampling interval in evalcore is drawn here, from an explicit
generator.

* :func:`generator` turns a seed into a ``numpy.random.Generator`` (an int seed, a sequence of
  ints for an independent stream, or a Generator passed through); anything else is refused, so no
  interval is ever drawn from hidden global state.
* :func:`resample` draws ``n_boot`` resamples of ``n`` units with replacement as index blocks
  ``rng.integers(0, n, size=(m, n))`` of at most 2,000,000 indices each (memory stays bounded at
  any n) and returns ``statistic(block)`` for every resample, stacked: an array of shape
  ``(n_boot,)`` or ``(n_boot, k)``. A resample whose statistic is undefined is ``nan``.
* :func:`resample_counts` draws ``n_boot`` resamples of ``n`` units that fall into a few kinds
  (cells of a table, patterns of flags) as the counts of each kind, multinomial(n, the kinds'
  shares): the distribution of the counts of ``n`` units drawn with replacement, at one number
  per kind instead of one per unit, for a statistic that reads the units only through those
  counts; blocks of at most 2,000,000 counts.
* :func:`percentile_interval` is the percentile interval of those values: the ``(1 - level)/2``
  and ``(1 + level)/2`` quantiles (linear interpolation, numpy's and DuckDB's definition) of the
  defined ones, with how many were defined.
* :func:`sparse_table` says when a table of counts is too sparse for those resamples (a cell,
  observed or expected, below 5), and :func:`posterior_interval` is the interval that holds there:
  the cells' shares drawn from Dirichlet(counts + 0.75) instead of multinomial(n, observed shares).

The same seed gives the same interval in every process. For ``n * n_boot`` up to 2,000,000 the
draws are exactly those of ``scipy.stats.bootstrap(..., method="percentile")`` with the same
generator, which the compare page used before it came here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: indices drawn per block at most (about 16 MB of int64)
BLOCK = 2_000_000

Seed = int | Sequence[int] | np.random.Generator


def generator(seed: Seed) -> np.random.Generator:
    """A Generator from an int seed, a sequence of ints (an independent stream, e.g.
    ``[seed, 0xB007]``) or a Generator (returned as it is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    if isinstance(seed, (list, tuple)) and seed and all(isinstance(s, (int, np.integer)) for s in seed):
        return np.random.default_rng([int(s) for s in seed])
    raise ValueError(f"seed must be an int (or a numpy Generator), got {seed!r}")


def resample(
    statistic: Callable[[np.ndarray], np.ndarray], n: int, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """``statistic`` on ``n_boot`` resamples of ``n`` units: it receives an (m, n) block of indices
    and returns m values (or an (m, k) array); blocks are drawn in order from ``rng``."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    if n < 1:
        raise ValueError("nothing to resample")
    return _in_blocks(statistic, n_boot, n, lambda m: rng.integers(0, n, size=(m, n)))


def resample_counts(
    statistic: Callable[[np.ndarray], np.ndarray], counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """``statistic`` on ``n_boot`` resamples drawn as counts per kind: it receives an (m, kinds)
    block of counts (each row multinomial(n, counts / n), n = counts.sum()) and returns m values
    (or an (m, k) array); blocks are drawn in order from ``rng``."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    c = np.asarray(counts, dtype=float).reshape(-1)
    n = int(round(c.sum()))
    if n < 1:
        raise ValueError("nothing to resample")
    return _in_blocks(statistic, n_boot, c.size, lambda m: rng.multinomial(n, c / n, size=m))


def _in_blocks(
    statistic: Callable[[np.ndarray], np.ndarray], n_boot: int, width: int, draw: Callable[[int], np.ndarray]
) -> np.ndarray:
    """``statistic`` on ``n_boot`` resamples, ``draw(m)`` giving m of them at a time (m * width at most BLOCK)."""
    chunk = max(1, min(n_boot, BLOCK // max(width, 1)))
    parts = []
    done = 0
    while done < n_boot:
        m = min(chunk, n_boot - done)
        parts.append(np.asarray(statistic(draw(m)), dtype=float))
        done += m
    return np.concatenate(parts, axis=0)


@dataclass(frozen=True)
class Percentiles:
    lo: float | None
    hi: float | None
    used: int  # resamples whose statistic was defined


def percentile_interval(values: np.ndarray, level: float) -> Percentiles:
    """The percentile interval of the defined (non-nan) ``values`` at ``level``."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    v = np.asarray(values, dtype=float)
    ok = v[~np.isnan(v)]
    if ok.size == 0:
        return Percentiles(None, None, 0)
    lo, hi = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return Percentiles(float(lo), float(hi), int(ok.size))


#: answers added to every cell of a table before :func:`posterior_interval` draws its shares
PSEUDO_COUNT = 0.75
#: a table whose smallest cell, observed or expected under independence, holds fewer answers than
#: this is sparse (Cochran's rule): :func:`sparse_table`
SPARSE_CELL = 5


def sparse_table(cells: np.ndarray) -> bool:
    """Whether a two-way table of counts is sparse: its smallest observed cell, or its smallest cell
    expected under independence (smallest row total x smallest column total / n), is below
    :data:`SPARSE_CELL`. An empty table is sparse. On such a table the percentile bootstrap of
    :func:`resample_counts` collapses: a cell empty in the sample is empty in every resample, a
    cell of 1 or 2 seldom moves (phi's 90% interval on 60 answers drawn from a population where two
    criteria fail 13% of the time each, independently, covered phi = 0 in 64.5% of 1,000 worlds:
    docs/ANALYSIS.md)."""
    c = np.asarray(cells, dtype=float)
    if c.ndim != 2:
        raise ValueError(f"cells must be a two-way table, got shape {c.shape}")
    n = c.sum()
    if n <= 0:
        return True
    expected = c.sum(axis=1).min() * c.sum(axis=0).min() / n
    return bool(c.min() < SPARSE_CELL or expected < SPARSE_CELL)


def posterior_interval(
    cells: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    rng: np.random.Generator,
    n_draws: int,
    level: float,
) -> Percentiles:
    """The equal-tailed ``level`` interval of ``statistic`` over ``n_draws`` draws of a table's
    cell shares from Dirichlet(``cells`` + :data:`PSEUDO_COUNT`) (a Bayesian bootstrap with
    :data:`PSEUDO_COUNT` answers added to every cell, so an empty cell can be drawn non-empty),
    drawn from ``rng``.

    ``statistic`` receives an (n_draws, cells.size) array of shares (each row sums to 1, the cells
    in ``cells``' flattened order) and returns one value per row, nan where undefined; undefined
    draws are dropped and counted (``used``). The pseudo-count 0.75 lies between Jeffreys' 0.5 and
    Laplace's 1: phi's simulated 90% coverage at n = 30-120 is 88.5-94.2% with it
    (bench/coverage.py; docs/ANALYSIS.md "Intervals on sparse tables")."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be positive, got {n_draws}")
    c = np.asarray(cells, dtype=float).reshape(-1)
    if c.size < 2 or (c < 0).any():
        raise ValueError(f"cells must be at least two non-negative counts, got {c.tolist()}")
    shares = rng.dirichlet(c + PSEUDO_COUNT, size=n_draws)
    return percentile_interval(np.asarray(statistic(shares), dtype=float), level)
