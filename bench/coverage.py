"""Coverage of the association's intervals on small and sparse tables, by simulation (issue 37.4).

A *world* is one sample of n answers drawn from a known population 2x2 (failure rates of the two
criteria and the population phi; the cells are multinomial). For each world the intervals are
computed as evalcore computes them, and the share of worlds whose interval holds the population
value is the coverage:

* phi at 90% (the association's level): ``stats.association.phi_interval`` as shipped (the
  posterior interval for a sparse table, the percentile bootstrap otherwise; "sparse" counts the
  worlds that took the posterior), beside the percentile bootstrap alone
  (``phi_interval_bootstrap``, what the association printed before);
* the conditioned rates P(B fails | A fails) and P(B fails | A passes) at 95%:
  ``conditioned_rates`` (Wilson), over the worlds whose row is not empty;
* Cohen's kappa of two raters' pass/fail at 95%: the same posterior interval
  (``stats.bootstrap.posterior_interval`` of ``stats.agreement``'s kappa) beside the percentile
  bootstrap of ``stats.agreement.cohen_kappa_interval`` (what the report card prints), drawn here
  as that function draws it.

Worlds where the statistic is undefined (a constant column) have no interval and are counted
apart. Seeded: the same command prints the same figures.

    .venv/bin/python bench/coverage.py                 # n = 60, 1,000 worlds per row (~2 min)
    .venv/bin/python bench/coverage.py --n 30 120      # other sizes
    .venv/bin/python bench/coverage.py --worlds 300    # quicker, noisier
    .venv/bin/python bench/coverage.py --pseudo-count 0.5   # another pseudo-count than evalcore's 0.75

Prints Markdown tables (docs/ANALYSIS.md "Intervals on sparse tables" holds the output).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalcore.stats import agreement, bootstrap  # noqa: E402
from evalcore.stats.association import (  # noqa: E402
    TwoByTwo,
    conditioned_rates,
    phi,
    phi_interval,
    phi_interval_bootstrap,
)

#: (failure rate of A, failure rate of B, population phi): the demo's people table (8 and 8 failures
#: of 60) and its neighbours, rarer failures, and larger cells for comparison
PHI_WORLDS = [
    (0.13, 0.13, -0.10),
    (0.13, 0.13, 0.00),
    (0.13, 0.13, 0.20),
    (0.13, 0.13, 0.40),
    (0.08, 0.08, 0.00),
    (0.05, 0.30, 0.00),
    (0.10, 0.25, 0.30),
    (0.10, 0.10, 0.60),
    (0.20, 0.20, 0.10),
    (0.30, 0.30, 0.00),
    (0.30, 0.40, 0.50),
]
#: (people's failure rate, the judge's, their phi): a judge against people on gold cases
KAPPA_WORLDS = [
    (0.13, 0.13, 0.00),
    (0.13, 0.13, 0.30),
    (0.13, 0.13, 0.60),
    (0.05, 0.10, 0.40),
    (0.10, 0.20, 0.50),
    (0.30, 0.30, 0.70),
]
PHI_LEVEL, RATE_LEVEL, KAPPA_LEVEL = 0.90, 0.95, 0.95
N_DRAWS = 2000


def population(pa: float, pb: float, ph: float) -> np.ndarray:
    """The four cells' shares (n00, n01, n10, n11; fail coded 1) with these failure rates and phi."""
    p11 = pa * pb + ph * math.sqrt(pa * (1 - pa) * pb * (1 - pb))
    cells = np.array([1 - pa - pb + p11, pb - p11, pa - p11, p11])
    if (cells <= 0).any():
        raise ValueError(f"no population 2x2 has failure rates {pa}, {pb} and phi {ph}")
    return cells


def kappa_of(shares: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (m, 4) cells or shares, with stats.agreement's own formula."""
    return agreement._kappa_counts(np.asarray(shares, dtype=float).reshape(-1, 2, 2), np.eye(2))


def fails(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned fail columns holding the 2x2 ``cells``."""
    a = np.repeat([False, False, True, True], cells)
    b = np.repeat([False, True, False, True], cells)
    return a, b


def phi_row(world: tuple[float, float, float], n: int, worlds: int, seed: int) -> dict:
    pa, pb, ph = world
    p = population(pa, pb, ph)
    truth_rates = (p[3] / (p[2] + p[3]), p[1] / (p[0] + p[1]))
    rng = np.random.default_rng([seed, n, *(round(x * 100) + 100 for x in world)])
    counts = {"worlds": worlds, "zero": 0, "undefined": 0, "sparse": 0, "new": 0, "old": 0}
    width = {"new": 0.0, "old": 0.0}
    rates = {"fail_row": [0, 0], "pass_row": [0, 0]}
    for w in range(worlds):
        cells = rng.multinomial(n, p)
        counts["zero"] += int(cells.min() == 0)
        t = TwoByTwo(*(int(c) for c in cells))
        for key, truth in zip(("fail_row", "pass_row"), truth_rates):
            r = conditioned_rates(t, level=RATE_LEVEL)[key]
            if r["ci"] is not None:
                rates[key][0] += 1
                rates[key][1] += int(r["ci"][0] <= truth <= r["ci"][1])
        if not phi(t).defined:
            counts["undefined"] += 1
            continue
        a, b = fails(cells)
        new = phi_interval(a, b, seed=[seed, w], n_boot=N_DRAWS, level=PHI_LEVEL)
        counts["sparse"] += int(new.method == "posterior")
        old = phi_interval_bootstrap(a, b, seed=[seed, w], n_boot=N_DRAWS, level=PHI_LEVEL)
        for key, iv in (("new", new), ("old", old)):
            # a defined phi always has an interval (a resample or draw with a defined phi exists)
            assert iv.lo is not None and iv.hi is not None
            counts[key] += int(iv.lo <= ph <= iv.hi)
            width[key] += iv.hi - iv.lo
    defined = worlds - counts["undefined"]
    return {
        "world": world,
        "n": n,
        **counts,
        "new_cov": counts["new"] / defined,
        "old_cov": counts["old"] / defined,
        "new_width": width["new"] / defined,
        "old_width": width["old"] / defined,
        "fail_row_cov": rates["fail_row"][1] / rates["fail_row"][0],
        "pass_row_cov": rates["pass_row"][1] / rates["pass_row"][0],
    }


def kappa_row(world: tuple[float, float, float], n: int, worlds: int, seed: int) -> dict:
    p = population(*world)
    truth = float(kappa_of(p)[0])
    rng = np.random.default_rng([seed, n, 7, *(round(x * 100) + 100 for x in world)])
    zero = undefined = new = old = 0
    for w in range(worlds):
        cells = rng.multinomial(n, p)
        zero += int(cells.min() == 0)
        if math.isnan(float(kappa_of(cells)[0])):
            undefined += 1
            continue
        post = bootstrap.posterior_interval(
            cells, kappa_of, rng=np.random.default_rng([seed, w]), n_draws=N_DRAWS, level=KAPPA_LEVEL
        )
        new += int(post.lo is not None and post.hi is not None and post.lo <= truth <= post.hi)
        # the percentile bootstrap as stats.agreement.cohen_kappa_interval draws it (multinomial counts of
        # the cells, from the same generator), written out so that this column stays the bootstrap's
        draws = bootstrap.resample_counts(kappa_of, cells, N_DRAWS, np.random.default_rng([seed, w]))
        boot = bootstrap.percentile_interval(draws, KAPPA_LEVEL)
        old += int(boot.lo is not None and boot.hi is not None and boot.lo <= truth <= boot.hi)
    defined = worlds - undefined
    return {
        "world": world,
        "n": n,
        "kappa": truth,
        "worlds": worlds,
        "zero": zero,
        "undefined": undefined,
        "new_cov": new / defined,
        "old_cov": old / defined,
    }


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[60], help="answers per world (default 60)")
    ap.add_argument("--worlds", type=int, default=1000, help="worlds per row (default 1000)")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument(
        "--pseudo-count",
        type=float,
        default=bootstrap.PSEUDO_COUNT,
        help=f"answers added to every cell by the posterior interval (evalcore's: {bootstrap.PSEUDO_COUNT})",
    )
    args = ap.parse_args(argv)
    if args.pseudo_count != bootstrap.PSEUDO_COUNT:
        print(f"pseudo-count {args.pseudo_count} (evalcore's is {bootstrap.PSEUDO_COUNT})")
        bootstrap.PSEUDO_COUNT = args.pseudo_count  # read by posterior_interval at each call
    for n in args.n:
        print(
            f"\n### phi ({pct(PHI_LEVEL)}) and the conditioned rates ({pct(RATE_LEVEL)}, Wilson), n = {n}, "
            f"{args.worlds} worlds a row\n"
        )
        print(
            "| failure rates A, B | phi | worlds with a 0 cell | sparse | phi: evalcore | phi: bootstrap alone "
            "| mean width (evalcore, bootstrap) | P(B fails \\| A fails) | P(B fails \\| A passes) |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for world in PHI_WORLDS:
            r = phi_row(world, n, args.worlds, args.seed)
            undefined = f" ({r['undefined']} undefined)" if r["undefined"] else ""
            print(
                f"| {world[0]:.2f}, {world[1]:.2f} | {world[2]:+.2f} | {r['zero']}{undefined} | {r['sparse']} "
                f"| {pct(r['new_cov'])} | {pct(r['old_cov'])} | {r['new_width']:.2f}, {r['old_width']:.2f} "
                f"| {pct(r['fail_row_cov'])} | {pct(r['pass_row_cov'])} |",
                flush=True,
            )
        print(f"\n### kappa ({pct(KAPPA_LEVEL)}) of people against a judge, n = {n}, {args.worlds} worlds a row\n")
        print("| failure rates people, judge | phi | kappa | worlds with a 0 cell | posterior | bootstrap |")
        print("|---|---|---|---|---|---|")
        for world in KAPPA_WORLDS:
            r = kappa_row(world, n, args.worlds, args.seed)
            undefined = f" ({r['undefined']} undefined)" if r["undefined"] else ""
            print(
                f"| {world[0]:.2f}, {world[1]:.2f} | {world[2]:+.2f} | {r['kappa']:.2f} | {r['zero']}{undefined} "
                f"| {pct(r['new_cov'])} | {pct(r['old_cov'])} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
