"""Where a queue build spends its memory and CPU, stage by stage (issue 39): runs
``evalcore.review.build.build_queue`` in this process with each stage wrapped, sampling the
process's resident set every 20 ms, and prints per stage its CPU seconds, wall seconds and the
peak RSS seen during it. Builds a real queue: point ``--state`` at a copy of a state directory.

    .venv/bin/python bench/queue_build_stages.py --data /tmp/rq-bench/data-1000000 \\
        --state /tmp/copy-of-state-1000000 --gen bench-g1

Figures: docs/BENCHMARKS.md, "Building a queue at 18M verdict rows (issue 39)"."""

from __future__ import annotations

import argparse
import resource
import threading
import time
from typing import Any


def _rss_mb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--gen", required=True)
    args = ap.parse_args()

    import evalcore.review.build as B
    from evalcore.storage.labels import LabelStore
    from evalcore.storage.store import Store

    stage = ["imports"]
    peaks: dict[str, int] = {}

    def sample() -> None:
        while True:
            peaks[stage[0]] = max(peaks.get(stage[0], 0), _rss_mb())
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()

    def wrap(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            prev, stage[0] = stage[0], label
            cpu, wall = time.process_time(), time.monotonic()
            try:
                return inner(*a, **k)
            finally:
                time.sleep(0.05)  # one more sample inside the stage
                print(
                    f"{label:28s} CPU {time.process_time() - cpu:6.1f} s  wall {time.monotonic() - wall:6.1f} s  "
                    f"peak RSS {peaks.get(label, 0):5d} MB",
                    flush=True,
                )
                stage[0] = prev

        setattr(owner, name, timed)

    wrap(B, "stored_detection", "stored detection (reused)")
    wrap(B, "queue_plan", "plan (audit draw, order)")
    wrap(LabelStore, "write_queue_rows", "cases into the label store")
    wrap(B, "_write_copy", "the queue's Parquet copy")
    cpu = time.process_time()
    stage[0] = "other"
    q = B.build_queue(Store(args.data, state_dir=args.state), args.gen)
    print(
        f"{q['queue_id']}: {q['flagged']} raised + {q['audit_sampled']} audited; whole build CPU "
        f"{time.process_time() - cpu:.1f} s; process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB"
    )


if __name__ == "__main__":
    main()
