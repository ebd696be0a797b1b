"""How often `pairs make` calls two arms that cannot be told apart identifiable (issue 43).

A *world* has K arms whose answers are drawn from one distribution (random words, about 120 of
them, a heading half the time, bullets 40% of the time), so no pair of arms can truly be told
apart. ``evalcore.pairwise.sessions.plan_session`` schedules the pairs (``--pairs-per-item``) and
runs the identifiability check on each pair of arms at the Bonferroni level 1 - 0.05 / M over its
M pairs of arms; beside it the same pairs of arms are checked at 95% each. Printed: the share of
worlds in which some pair of arms is called identifiable, and of pairs of arms. Seeded: the same
command prints the same table. Nothing is written (plans only).

    nice -n 10 .venv/bin/python bench/pairs_false_alarms.py                    # 200 worlds, K = 3 and 5
    nice -n 10 .venv/bin/python bench/pairs_false_alarms.py --worlds 40        # quicker, noisier

Prints a Markdown table (docs/PAIRWISE.md, "Making a session of more than two arms", holds the output).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalcore.pairwise import blinding
from evalcore.pairwise.sessions import Arm, arm_identifiability, plan_session

WORDS = "account settings page email password member invite billing export link code sign secure team".split()


def _text(rng: np.random.Generator) -> str:
    words = [str(w) for w in rng.choice(WORDS, max(6, int(rng.normal(120, 25))))]
    sentences = [" ".join(words[i : i + 8]).capitalize() + "." for i in range(0, len(words), 8)]
    head = ["## " + " ".join(rng.choice(WORDS, 2)).title(), ""] if rng.random() < 0.5 else []
    if rng.random() < 0.4:
        return "\n".join(head + [f"- {s}" for s in sentences[:3]] + ["", " ".join(sentences[3:])]).strip()
    return "\n".join(head + [" ".join(sentences)]).strip()


def _world(k: int, n_items: int, per_item: int, seed: int) -> tuple[int, int, int, int]:
    """(pairs of arms flagged at the Bonferroni level, at 95% each, pairs of arms, pairs per pair of arms)."""
    rng = np.random.default_rng([seed, 4343])
    arms = [Arm(f"arm-{a}", f"source-{a}", {f"it-{i:03d}": _text(rng) for i in range(n_items)}) for a in range(k)]
    plan = plan_session("fa", arms, seed=seed, key_seed=seed + 1, n_perm=0, pairs_per_item=per_item)
    key = {r["pair_id"]: r for r in plan.key_rows}
    bonferroni = at_95 = 0
    for c in plan.blinding["identifiability"]["by_arm_pair"]:
        a, b = c["arms"]
        mine = sorted(
            (
                p
                for p in plan.pairs
                if not p["mirror_of"] and {key[p["pair_id"]]["left_arm"], key[p["pair_id"]]["right_arm"]} == {a, b}
            ),
            key=lambda p: p["item_id"],
        )
        fl = [key[p["pair_id"]]["left_arm"] == a for p in mine]
        texts = [(p["left_text"], p["right_text"])[:: 1 if f else -1] for p, f in zip(mine, fl)]
        bonferroni += bool(c["after"]["identifiable"])
        at_95 += bool(arm_identifiability(texts, np.array(fl), (a, b), seed, 0, blinding.LEVEL)["identifiable"])
    m = len(plan.blinding["identifiability"]["by_arm_pair"])
    return bonferroni, at_95, m, n_items * per_item // m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=200)
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--seed", type=int, default=43)
    args = ap.parse_args()
    print(f"{args.worlds} worlds per row, {args.items} items, arms identically distributed, seed {args.seed}\n")
    print(
        "| K | pairs per item | pairs per pair of arms | worlds with a false flag: Bonferroni / 95% each "
        "| pairs of arms falsely flagged: Bonferroni / 95% each | CPU s |"
    )
    print("|---|---|---|---|---|---|")
    for k, per_item in ((3, 1), (3, 3), (5, 3), (5, 10)):
        t = time.process_time()
        rows = [_world(k, args.items, per_item, args.seed * 100_000 + w) for w in range(args.worlds)]
        wb = sum(r[0] > 0 for r in rows) / len(rows)
        w95 = sum(r[1] > 0 for r in rows) / len(rows)
        pb = sum(r[0] for r in rows) / sum(r[2] for r in rows)
        p95 = sum(r[1] for r in rows) / sum(r[2] for r in rows)
        print(
            f"| {k} | {per_item} | {rows[0][3]} | {100 * wb:.1f}% / {100 * w95:.1f}% | {100 * pb:.1f}% / "
            f"{100 * p95:.1f}% | {time.process_time() - t:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
