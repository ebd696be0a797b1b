"""The server's work per key press of the review card, without a browser: what the Review page runs
for one decision (``review.card.submit`` of the act, then ``review.card.batch`` to refill the
reviewer's cases, a views cache kept per reviewer as the page keeps it per session), timed in CPU
seconds of this process, on the demo and on a large world in the same run (the demo is the floor).

    .venv/bin/python bench/card_work.py [DECISIONS]     # default 400; the demo and, when present, 18M
    BIG_DATA=/tmp/rq-bench/data-1000000 BIG_STATE=/tmp/rp18-state BIG_GEN=bench-g1 .venv/bin/python bench/card_work.py

Two reviewers take turns, two per case; each state directory is copied first (its queue kept, or
built at audit rate 0.3 when it has none, not timed). A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from evalcore import Store  # noqa: E402
from evalcore import review as R  # noqa: E402
from evalcore.review import card  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def world(name: str, data: Path, state: Path | None, gen: str, n: int) -> None:
    root = Path(f"/tmp/evalcore-bench/card-work/{name}")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if state is not None:
        shutil.copytree(state, root / "state")
    store = Store(data, root / "state")
    if not R.queues(store, gen):
        R.build_queue(store, gen, audit_rate=0.3, seed=3, reviewers_required=2)
    qid = R.queues(store, gen)[-1]["queue_id"]
    views: dict[str, dict] = {"a": {}, "b": {}}
    opts = {"include_holdout": False}
    for who in views:  # the first batch of each: the page's first render, given apart
        card.batch(store, qid, who, views=views[who], **opts)
    t0, w0 = _cpu(), time.monotonic()
    for k in range(n):
        who = "ab"[k % 2]
        c = card.batch(store, qid, who, views=views[who], **opts)[0]
        act = {"id": f"{who}-{k:08d}", "kind": "decided", "item": c["item"], "round": c["round"]}
        act |= {"criterion": c["criterion"], "value": c["choices"][0]["value"]}
        ack = card.submit(store, qid, who, [act])
        assert ack[act["id"]]["ok"], ack
    cpu, wall = _cpu() - t0, time.monotonic() - w0
    print(f"{name}: {n} decisions, {cpu / n * 1000:.1f} ms CPU each ({wall / n * 1000:.1f} ms wall)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    shutil.copytree(ROOT / "data" / "demo", "/tmp/evalcore-bench/card-work-demo", dirs_exist_ok=True)
    world("demo", Path("/tmp/evalcore-bench/card-work-demo"), None, "support-g1", n)
    big = Path(os.environ.get("BIG_DATA", "/tmp/rq-bench/data-1000000"))
    if big.is_dir():
        state = os.environ.get("BIG_STATE", "/tmp/rp18-state")
        world("18M", big, Path(state) if state else None, os.environ.get("BIG_GEN", "bench-g1"), n)


if __name__ == "__main__":
    main()
