#!/usr/bin/env python3
"""The Agreement page's report card recomputed after each decision, as while a team reviews: the
page's cache is keyed on the label store's revision, so every decision on the generation makes the
next load compute ``review.report_card`` again. ALL DATA IS SIMULATED (evalcore.demo.scale, as
bench/review_queue.py).

    python bench/card_recompute.py --items 100000 --decisions 1500 --rounds 5

Builds the world under ``--root`` if missing, a queue (audit 0.3, seed 3, two reviewers a case) and
``--decisions`` cases decided by two reviewers, then, ``--rounds`` times: one more decision, then
one report card in this process (a fresh Store, as a new page run), timed in wall and CPU seconds
(CPU: every thread of the process, DuckDB's included). The first card (nothing cached) is printed
apart. CPU seconds are the figure to compare on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

GEN = "bench-g1"
COLS = ("item_id", "criterion", "gen_round")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("/tmp/evalcore-bench/card-recompute"))
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--decisions", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()

    from review_queue import _data, build

    import evalcore.review as R
    from evalcore import Store
    from evalcore.storage.labels import LabelStore

    data, state = _data(a.root, a.items), a.root / f"state-{a.items}-{a.decisions}"
    if not data.exists():
        build(a.root, a.items)
    st = Store(data, state)
    labels = LabelStore(st)
    if not labels.queues(GEN):
        R.build_queue(st, GEN, audit_rate=0.3, seed=3, reviewers_required=2)
        q = labels.queues(GEN)[-1]
        cases = next(labels.queue_case_batches(q["queue_id"], COLS, batch=a.decisions))
        labels.add_many(
            dict(item_id=i, criterion=c, gen_id=GEN, gen_round=g,
                 value="fail" if (k + j) % 5 == 0 else "pass", reviewer=who, queue=q["queue_id"])
            for k, (i, c, g) in enumerate(cases) for j, who in enumerate(("ann", "bob"))
        )  # fmt: skip
    w, c = time.time(), time.process_time()
    R.report_card(Store(data, state), GEN)
    print(f"first card: {time.time() - w:.2f} s wall, {time.process_time() - c:.2f} s CPU")
    walls, cpus = [], []
    q = labels.queues(GEN)[-1]
    # the next cases in rank order, as tuples (a 1M-item queue's cases as dicts take minutes)
    first = next(labels.queue_case_batches(q["queue_id"], COLS, batch=a.decisions + a.rounds))
    for item, crit, rnd in first[a.decisions :]:
        labels.add(item_id=item, criterion=crit, gen_id=GEN, gen_round=rnd, value="pass", reviewer="ann",
                   queue=q["queue_id"])  # fmt: skip
        w, c = time.time(), time.process_time()
        R.report_card(Store(data, state), GEN)
        walls.append(time.time() - w)
        cpus.append(time.process_time() - c)
    print(
        f"after a decision, {a.rounds} cards: wall median {statistics.median(walls):.2f} s "
        f"({', '.join(f'{x:.2f}' for x in walls)}), CPU median {statistics.median(cpus):.2f} s "
        f"({', '.join(f'{x:.2f}' for x in cpus)})"
    )


if __name__ == "__main__":
    main()
