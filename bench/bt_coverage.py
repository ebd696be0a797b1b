"""Coverage of the Bradley-Terry strengths' intervals by simulation (issue 43).

A *world* has K arms with true strengths drawn from N(0, 0.7^2) (centred to sum to 0) and
Davidson's tie parameter nu = 0.5. Its items each compare one pair of arms (the pairs in turn, so
the design is balanced); three graders judge every item, and their judgments are correlated the
way graders of one item are: an item has a verdict drawn from the model, and each grader gives
that verdict with probability 0.5, otherwise a fresh draw from the model. Each judgment is
therefore marginally a draw from Davidson's model with the true strengths, but the three
judgments of an item are not independent.

For each world ``evalcore.stats.bradleyterry.bradley_terry`` fits the strengths and its nominal
90% intervals: the percentile bootstrap over items and the cluster-robust sandwich (items as
clusters); beside them the sandwich that takes every judgment as its own unit (what ignoring the
items gives). Coverage is the share of (world, arm) pairs whose interval holds the true strength;
``all arms`` the share of worlds where every arm's interval does. Seeded: the same command prints
the same table.

    nice -n 10 .venv/bin/python bench/bt_coverage.py                  # 1,000 worlds, K = 5 and 10
    nice -n 10 .venv/bin/python bench/bt_coverage.py --worlds 200     # quicker, noisier
    nice -n 10 .venv/bin/python bench/bt_coverage.py --length         # the length-controlled rates instead

``--length``: worlds of four arms of strengths (-0.1, 0.25, -0.2, 0.05), 3,000 judgments of random
pairs and sides, arm 0's answers twice as long (600 vs 300 words, sd 80); the longer answer gains
gamma on the logit scale (through tanh of the standardised length difference) and the side shown
first 0.2. For gamma = 1 (planted) and 0 (none): how often ``stats.lengthcontrol``'s caveat fires,
and the coverage of arm 0's true rate (its mean of sigmoid(beta_0 - beta_m)) by the raw and the
length-controlled 90% intervals.

Prints a Markdown table (docs/PAIRWISE.md, "Many arms: the statistics", holds the output).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from evalcore.stats import bradleyterry as bt

NU = 0.5
SD = 0.7
GRADERS = 3
AGREE = 0.5
LEVEL = 0.9


def world(rng: np.random.Generator, k: int, per_pair: int):
    """True strengths and the judgments (arm_i, arm_j, outcome, item) of one world."""
    beta = rng.normal(0.0, SD, k)
    beta -= beta.mean()
    pairs = np.array(list(itertools.combinations(range(k), 2)) * per_pair)
    flip = rng.random(len(pairs)) < 0.5  # which arm is arm_i: no arm always on one side
    pairs[flip] = pairs[flip][:, ::-1]
    n_items = len(pairs)
    i, j = np.repeat(pairs[:, 0], GRADERS), np.repeat(pairs[:, 1], GRADERS)
    pi, pj = np.exp(beta[i]), np.exp(beta[j])
    probs = np.stack([pi, pj, NU * np.sqrt(pi * pj)], axis=1)
    probs /= probs.sum(axis=1, keepdims=True)
    cum = probs.cumsum(axis=1)
    fresh = (rng.random((i.size, 1)) > cum).sum(axis=1)
    verdict = np.repeat((rng.random((n_items, 1)) > cum[::GRADERS]).sum(axis=1), GRADERS)
    kind = np.where(rng.random(i.size) < AGREE, verdict, fresh)  # 0 i wins, 1 j wins, 2 tie
    outcome = np.array([1.0, 0.0, 0.5])[kind]
    return beta, i, j, outcome, np.repeat(np.arange(n_items), GRADERS)


def run(k: int, per_pair: int, worlds: int, n_boot: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, k])
    hits = {"bootstrap": 0, "sandwich": 0, "naive": 0}
    all_arms = {"bootstrap": 0, "sandwich": 0, "naive": 0}
    ridge = 0
    z = 1.6448536269514722  # the 95% quantile of the normal
    start = time.process_time()
    for w in range(worlds):
        beta, i, j, y, item = world(rng, k, per_pair)
        res = bt.bradley_terry(i, j, y, k=k, item=item, level=LEVEL, n_boot=n_boot, seed=[seed, k, w])
        naive_se = np.sqrt(np.diag(bt.sandwich_cov(bt.judgments(i, j, y, k=k), res.fit)))
        s = np.asarray(res.fit.strengths)
        inside = {
            "bootstrap": (np.asarray(res.lo) <= beta) & (beta <= np.asarray(res.hi)),
            "sandwich": (np.asarray(res.sandwich_lo) <= beta) & (beta <= np.asarray(res.sandwich_hi)),
            "naive": np.abs(s - beta) <= z * naive_se,
        }
        for name, ok in inside.items():
            hits[name] += int(ok.sum())
            all_arms[name] += int(ok.all())
        ridge += int(res.fit.ridge > 0) + res.boot_ridge
    return {
        "k": k,
        "items": per_pair * k * (k - 1) // 2,
        "judgments": per_pair * k * (k - 1) // 2 * GRADERS,
        "coverage": {n: hits[n] / (worlds * k) for n in hits},
        "all_arms": {n: all_arms[n] / worlds for n in all_arms},
        "ridge_fits": ridge,
        "cpu_s": time.process_time() - start,
    }


def length_worlds(gamma: float, worlds: int, seed: int) -> dict:
    from evalcore.stats.lengthcontrol import length_controlled

    rng = np.random.default_rng([seed, 0x1E, int(gamma * 100)])
    beta = np.array([-0.1, 0.25, -0.2, 0.05])
    sig = 1 / (1 + np.exp(-(beta[:, None] - beta[None, :])))
    truth = (sig.sum(axis=1) - 0.5) / 3  # the diagonal's sigmoid(0) = 0.5 left out
    out = {"caveat": 0, "raw": 0, "lc": 0, "position": 0}
    for _ in range(worlds):
        n = 3000
        i = rng.integers(0, 4, n)
        j = (i + rng.integers(1, 4, n)) % 4
        mean_len = np.array([600.0, 300.0, 300.0, 300.0])
        li, lj = rng.normal(mean_len[i], 80), rng.normal(mean_len[j], 80)
        d = li - lj
        first = rng.integers(0, 2, n)
        eta = beta[i] - beta[j] + gamma * np.tanh(d / d.std()) + 0.2 * (2 * first - 1)
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
        r = length_controlled(i, j, y, li, lj, k=4, first=first, level=LEVEL)
        out["caveat"] += r.caveat is not None
        out["raw"] += r.raw_lo[0] <= truth[0] <= r.raw_hi[0]
        out["lc"] += r.lc_lo[0] <= truth[0] <= r.lc_hi[0]
        out["position"] += r.position is not None and r.position.lo <= 0.2 <= r.position.hi
    return {key: v / worlds for key, v in out.items()} | {"truth": float(truth[0])}


def main_length(worlds: int, seed: int) -> None:
    print(f"{worlds} worlds per row, nominal {LEVEL:.0%}, seed {seed}\n")
    print(
        "| planted length effect (gamma) | caveat fires | raw rate covers arm 0's truth | length-controlled rate covers it | position interval covers 0.2 |"
    )
    print("|---|---|---|---|---|")
    for gamma in (1.0, 0.0):
        r = length_worlds(gamma, worlds, seed)
        print(f"| {gamma:g} | {r['caveat']:.1%} | {r['raw']:.1%} | {r['lc']:.1%} | {r['position']:.1%} |", flush=True)
    print(f"\narm 0's true rate: {r['truth']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=500)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--length", action="store_true", help="the length-controlled rates' worlds instead")
    args = ap.parse_args()
    if args.length:
        main_length(args.worlds, args.seed)
        return
    print(f"{args.worlds} worlds per row, {args.n_boot} bootstrap replicates, nominal {LEVEL:.0%}, seed {args.seed}\n")
    print(
        "| K | items | judgments | bootstrap over items | sandwich (items) | sandwich (judgments) | all arms covered (bootstrap / sandwich) | ridge fits | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for k, per_pair in ((5, 30), (10, 20)):
        r = run(k, per_pair, args.worlds, args.n_boot, args.seed)
        c, a = r["coverage"], r["all_arms"]
        print(
            f"| {k} | {r['items']} | {r['judgments']} | {c['bootstrap']:.1%} | {c['sandwich']:.1%} | {c['naive']:.1%} "
            f"| {a['bootstrap']:.1%} / {a['sandwich']:.1%} | {r['ridge_fits']} | {r['cpu_s']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
