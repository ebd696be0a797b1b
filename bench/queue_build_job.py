"""A queue build as the Review page starts it (issue 39): ``review.start_build`` returns a job id at
once and the build runs in a process of its own; this polls ``review.build_status`` every 0.5 s,
printing each stage as it is first seen, and at the end the build process's peak RSS and CPU
(``RUSAGE_CHILDREN``: the waited-for process) beside the caller's. Builds a real queue: point
``--state`` at a copy of a state directory.

    .venv/bin/python bench/queue_build_job.py /tmp/rq-bench/data-1000000 /tmp/copy-of-state-1000000

Figures: docs/BENCHMARKS.md, "Building a queue at 18M verdict rows (issue 39)"."""

from __future__ import annotations

import resource
import sys
import time

from evalcore import Store
from evalcore import review as R


def main(data: str, state: str, gen_id: str = "bench-g1") -> None:
    s = Store(data, state_dir=state)
    t0 = time.monotonic()
    job = R.start_build(s, gen_id)
    print(f"start_build returned in {time.monotonic() - t0:.2f} s: {job}", flush=True)
    last = None
    while True:
        st = R.build_status(s, job)
        seen = (st["state"], st.get("stage"))
        if seen != last:
            print(f"{time.monotonic() - t0:7.1f} s  {st['state']:8s} {st.get('stage', '')} {st.get('fraction', '')}")
            last = seen
        if st["state"] != "running":
            break
        time.sleep(0.5)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    print(st)
    print(
        f"build process: peak RSS {ru.ru_maxrss // 1024} MB, CPU {ru.ru_utime + ru.ru_stime:.1f} s; caller: peak RSS "
        f"{me.ru_maxrss // 1024} MB, CPU {me.ru_utime + me.ru_stime:.1f} s; wall {time.monotonic() - t0:.1f} s"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
