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
