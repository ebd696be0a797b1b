"""SIMULATED: judgments needed before "the top arm is settled at 90%", active schedule against
balanced (issue 43).

A *world* has K arms with true strengths drawn from N(0, 0.7^2) (centred) and Davidson's tie
parameter nu = 0.5 (as bench/bt_coverage.py), three graders taking turns, and a fresh item per
judgment; every judgment is a draw from the model. Two schedules judge the same world:

* **balanced**: rounds in which every pair of arms is judged once, in a random order, each pair's
  sides alternating;
* **active**: ``evalcore.stats.activeschedule.choose`` over every ordered pair of arms (its default
  epsilon 0.1 and minimum share 0.2, the grader's sides kept within one), its fit refreshed each
  time the number of judgments has grown by 20% (between refits the information is updated with
  the fit held).

Both check the stopping rule (``activeschedule.settled``, P(best) of the top arm >= 0.9 by 200
bootstrap replicates over items) at the same checkpoints: after K(K-1)/2 judgments and then each
time the count has grown by 20% (so a count is known to within 20%). A world not settled by the
cap counts as the cap (reported as "not settled"). For each K: the median and quartiles of the
judgments needed per schedule, the share settled, how often the settled top arm is the true best,
and per world the ratio active / balanced. Seeded: the same command prints the same table.

    nice -n 10 .venv/bin/python bench/active_schedule.py                  # 200 worlds, K = 5 and 10
    nice -n 10 .venv/bin/python bench/active_schedule.py --worlds 40      # quicker, noisier

Prints a Markdown table (docs/PAIRWISE.md, "The next pair and when to stop", and docs/BENCHMARKS.md
hold the output).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

from evalcore.stats import activeschedule as act
from evalcore.stats import bradleyterry as bt

NU = 0.5
SD = 0.7
GRADERS = 3
LEVEL = 0.9
N_BOOT = 200
GROWTH = 1.2
#: checkpoints where bradley_terry raised LinAlgError (a bootstrap replicate's Newton system was
#: singular: a defect of bradleyterry._newton_batch on a few dozen judgments); counted as not settled
FAILED = [0]


def judge(rng: np.random.Generator, beta: np.ndarray, a: int, b: int) -> float:
    """Arm a's score in one judgment drawn from Davidson's model."""
    pa, pb = math.exp(beta[a]), math.exp(beta[b])
    u = rng.random() * (pa + pb + NU * math.sqrt(pa * pb))
    return 1.0 if u < pa else 0.0 if u < pa + pb else 0.5


def checkpoints(k: int, cap: int) -> set[int]:
    n, out = k * (k - 1) // 2, set()
    while n < cap:
        out.add(n)
        n = max(n + 1, math.ceil(n * GROWTH))
    return out | {cap}


def balanced_pair(rng: np.random.Generator, k: int, n: int, order: list) -> tuple[int, int]:
    pairs = list(itertools.combinations(range(k), 2))
    if n % len(pairs) == 0:
        order[:] = [pairs[c] for c in rng.permutation(len(pairs))]
    a, b = order[n % len(pairs)]
    return (a, b) if (n // len(pairs)) % 2 == 0 else (b, a)


def run(beta: np.ndarray, k: int, schedule: str, seed: list[int], cap: int) -> tuple[int, bool | None]:
    """Judgments until the stopping rule fires (or the cap), and whether the settled arm is the true best."""
    rng = np.random.default_rng(seed)
    left, right = (np.array(v) for v in zip(*itertools.permutations(range(k), 2)))
    a, b, y = np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap)
    grader = np.arange(cap) % GRADERS
    stops, fit, refit = checkpoints(k, cap), None, 0
    order: list[tuple[int, int]] = []
    for n in range(cap):
        if schedule == "balanced":
            a[n], b[n] = balanced_pair(rng, k, n, order)
        else:
            hist = act.history(a[:n], b[:n], y[:n], k=k, item=np.arange(n), grader=grader[:n])
            if n >= refit and n >= k * (k - 1) // 2:
                fit, refit = bt.fit(bt.judgments(a[:n], b[:n], y[:n], k=k)), math.ceil(n * GROWTH)
            cands = act.candidates(left, right, np.full(left.size, n), k=k)
            c = act.choose(hist, cands, grader=grader[n], seed=[*seed, n], fit=fit)
            a[n], b[n] = c.left, c.right
        y[n] = judge(rng, beta, int(a[n]), int(b[n]))
        if n + 1 in stops:
            try:
                s = act.settled(a[: n + 1], b[: n + 1], y[: n + 1], k=k, level=LEVEL, n_boot=N_BOOT, seed=[*seed, n])
            except np.linalg.LinAlgError:  # bradleyterry's bootstrap Newton step on a singular replicate
                FAILED[0] += 1
                print(f"K={k} checkpoint {n + 1}: LinAlgError", file=sys.stderr, flush=True)
                continue
            if s.settled:
                return n + 1, s.top == int(np.argmax(beta))
    return cap, None


def quartiles(x: list[int]) -> str:
    q1, q2, q3 = np.percentile(x, [25, 50, 75])
    return f"{q2:,.0f} [{q1:,.0f}, {q3:,.0f}]"


def row(k: int, worlds: int, cap: int, seed: int) -> list[tuple[int, bool | None, int, bool | None]]:
    """Per world: (judgments, settled arm is the true best) for the balanced and the active schedule."""
    rng = np.random.default_rng([seed, k])
    out = []
    for w in range(worlds):
        beta = rng.normal(0.0, SD, k)
        beta -= beta.mean()
        (nb, rb), (na, ra) = (run(beta, k, schedule, [seed, k, w], cap) for schedule in ("balanced", "active"))
        out.append((nb, rb, na, ra))
        print(f"K={k} world {w}: {nb} {rb} {na} {ra}", file=sys.stderr, flush=True)
    return out


def table(k: int, cap: int, results: list[tuple[int, bool | None, int, bool | None]]) -> list[str]:
    """The Markdown rows of one K from the worlds' results."""
    worlds = len(results)
    need = {"balanced": [r[0] for r in results], "active": [r[2] for r in results]}
    right = {
        "balanced": [r[1] for r in results if r[1] is not None],
        "active": [r[3] for r in results if r[3] is not None],
    }
    ratio = np.array(need["active"]) / np.array(need["balanced"])
    cells = []
    for schedule in ("balanced", "active"):
        settled = len(right[schedule])
        best = f"{np.mean(right[schedule]):.1%} ({sum(right[schedule])} of {settled})" if settled else "-"
        cells.append(f"| {k} | {worlds} | {schedule} | {quartiles(need[schedule])} | {settled / worlds:.1%} | {best} |")
    both = (np.array(need["active"]) < cap) & (np.array(need["balanced"]) < cap)
    cells.append(
        f"| {k} | {worlds} | active / balanced, per world | median ratio {np.median(ratio):.2f} "
        f"(worlds settled by both: {np.median(ratio[both]) if both.any() else float('nan'):.2f}) | "
        f"active fewer in {np.mean(ratio < 1):.0%}, more in {np.mean(ratio > 1):.0%} | |"
    )
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=200)
    parser.add_argument("--ks", default="5,10")
    parser.add_argument("--cap", type=int, default=0, help="judgments per world at most (default 100 per pair of arms)")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--from-log", help="the table of the first --worlds worlds from the stderr of an earlier run")
    args = parser.parse_args()
    print(f"SIMULATED worlds, stopping rule P(best) >= {LEVEL} ({N_BOOT} bootstrap replicates), "
          f"Davidson nu = {NU}, strengths N(0, {SD}^2), seed {args.seed}\n")  # fmt: skip
    print(
        "| K | worlds | schedule | judgments to settle: median [Q1, Q3] | settled by the cap | settled top arm is the true best |"
    )
    print("|---|---|---|---|---|---|")
    for k in (int(v) for v in args.ks.split(",")):
        cap = args.cap or 100 * k * (k - 1) // 2
        cpu, FAILED[0] = time.process_time(), 0
        results = from_log(args.from_log, k, args.worlds) if args.from_log else row(k, args.worlds, cap, args.seed)
        print("\n".join(table(k, cap, results)))
        spent = "" if args.from_log else f", CPU s {time.process_time() - cpu:.0f}"
        print(f"<!-- K = {k}: cap {cap:,}{spent}, checkpoints that raised LinAlgError {FAILED[0]} -->")


def from_log(path: str, k: int, worlds: int) -> list[tuple[int, bool | None, int, bool | None]]:
    """The first ``worlds`` results of K = k recorded by an earlier run (its stderr lines)."""
    flag = {"True": True, "False": False, "None": None}
    out: list[tuple[int, bool | None, int, bool | None]] = []
    with open(path) as log:
        for line in log:
            if line.startswith(f"K={k} checkpoint ") and len(out) < worlds:
                FAILED[0] += 1
            if line.startswith(f"K={k} world "):
                nb, rb, na, ra = line.split(": ", 1)[1].split()
                out.append((int(nb), flag[rb], int(na), flag[ra]))
    if len(out) < worlds:
        raise SystemExit(f"{path} holds {len(out)} worlds of K = {k}, not {worlds}")
    return out[:worlds]


if __name__ == "__main__":
    main()
