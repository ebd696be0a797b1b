#!/usr/bin/env python3
"""Review queue benchmark: the stored detection, building a queue and the review page's reads over
a generation judged by two runs of 1,000,000 items x 6 criteria x 3 judge rounds (18,000,000
verdict rows each, 6,000,000 cases). ALL DATA IS SIMULATED (evalcore.demo.scale, as bench/analytics.py).

    python bench/review_queue.py                  # build the data if missing, measure, print the table
    python bench/review_queue.py --items 100000   # a smaller world
    python bench/review_queue.py one NAME ...     # one measurement (what the parent runs in a child)

Every measurement runs in its own process, so its peak RSS (``os.wait4``) is its own; the child
reports the wall and CPU time of the measured call alone (imports excluded) and the parent the
process's wall time, CPU time and peak RSS. The measurements share one state directory, in order:

* ``detect-first``: ``stored_detection`` with no stored detection (computes it, writes the Parquet);
* ``detect-reused``: ``stored_detection`` again (the key matches: reads the stored counts);
* ``summary``: ``detection_summary`` (counts in SQL over the stored file);
* ``build``: ``build_queue(audit_rate=0.05, seed=0)`` (the audit draw, the order, the label store);
* ``page-reads``: ``review.queues`` + ``review.progress`` + ``review.next_case`` (what the page reads);
* ``page``: the Review queue page's first render through streamlit's AppTest (skipped without streamlit);
* ``duckdb``: a bare DuckDB query over the same verdicts (one GROUP BY over every case of both
  runs), the floor any detection pays, for the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(os.environ.get("EVALCORE_BENCH_DIR", "/tmp/evalcore-bench")) / "review-queue"
N_ITEMS = 1_000_000
GEN = "bench-g1"
REVIEWER = "bench-reviewer"
NAMES = ("detect-first", "detect-reused", "summary", "build", "page-reads", "page", "duckdb")


def _data(root: Path, n: int) -> Path:
    return root / f"data-{n}"


def build(root: Path, n: int) -> dict[str, Any]:
    """Write the SIMULATED data directory (never inside the repository)."""
    from evalcore.demo.scale import write_scaled

    data = _data(root, n).resolve()
    if data.is_relative_to(ROOT):
        raise SystemExit(f"refusing to build inside the repository: {data}")
    return write_scaled(data, n)


# --------------------------------------------------------------------------- one measurement (child)


def one(name: str, data: Path, state: Path) -> dict[str, Any]:
    import importlib

    from evalcore import review
    from evalcore.storage.store import Store

    detect = importlib.import_module("evalcore.review.detect")
    store = Store(data, state)
    res: dict[str, Any] = {"name": name}
    t, c = time.perf_counter(), time.process_time()
    if name in ("detect-first", "detect-reused"):
        det = detect.stored_detection(store, GEN)
        if det.reused != (name == "detect-reused"):
            raise SystemExit(f"{name}: reused={det.reused}")
        res.update(
            population=det.population,
            raised=det.raised,
            agreed=det.agreed,
            counts=det.counts,
            file_mb=round(det.path.stat().st_size / 2**20, 1),
        )
    elif name == "summary":
        s = detect.detection_summary(store, GEN)
        res.update(population=s["population"], raised=s["raised"])
    elif name == "build":
        q = review.build_queue(store, GEN, audit_rate=0.05, seed=0)
        res.update(queue_id=q["queue_id"], flagged=q["flagged"], audit_sampled=q["audit_sampled"])
    elif name == "page-reads":
        qs = review.queues(store, GEN)
        qid = qs[-1]["queue_id"]
        prog = review.progress(store, qid, REVIEWER)
        case = review.next_case(store, qid, REVIEWER)
        res.update(
            queue_id=qid,
            progress=prog,
            next_case=None
            if case is None
            else {k: case.get(k) for k in ("item_id", "gen_round", "criterion", "rank", "stratum")},
        )
    elif name == "page":
        os.environ["EVALCORE_DATA"], os.environ["EVALCORE_STATE"] = str(data), str(state)
        from streamlit.testing.v1 import AppTest

        qid = review.queues(store, GEN)[-1]["queue_id"]
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.run()
        at.query_params.update({"gen": GEN, "queue": qid})
        t, c = time.perf_counter(), time.process_time()
        at.switch_page("pages/5_review.py").run()
        if at.exception:
            raise SystemExit(f"page: {at.exception[0].value}")
        res.update(titles=[x.value for x in at.title], errors=[x.value for x in at.error][:3])
    elif name == "duckdb":
        import duckdb

        files = [str(data / "runs" / r / "verdicts.parquet") for r in sorted(os.listdir(data / "runs"))]
        (cases, raised), *_ = (
            duckdb.connect()
            .execute(
                "SELECT count(*), count(*) FILTER (WHERE p > 0 AND p < n) FROM (SELECT item_id, gen_round, criterion, "
                "count(*) AS n, count(*) FILTER (WHERE passed) AS p FROM read_parquet(?) WHERE passed IS NOT NULL "
                "GROUP BY ALL)",
                [files],
            )
            .fetchall()
        )
        res.update(cases=cases, split_cases=raised)
    else:
        raise SystemExit(f"unknown measurement {name!r}")
    res["call_s"], res["call_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    return res


# --------------------------------------------------------------------------- the parent


def spawn(name: str, data: Path, state: Path, out: Path, timeout: float) -> dict[str, Any]:
    """Run one measurement in a child process: its own result, plus the process's wall and CPU time."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(out.with_suffix(".log"), "wb") as log:
        p = subprocess.Popen(
            [sys.executable, __file__, "one", name, "--data", str(data), "--state", str(state), "--out", str(out)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode or not out.exists():
        raise SystemExit(f"{name} failed (exit {p.returncode}): see {out.with_suffix('.log')}")
    res = json.loads(out.read_text())
    res["process_s"] = wall
    res["load_1min"] = os.getloadavg()[0]  # the machine is shared: the load while it ran
    res["process_cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return res


def measure(root: Path, n: int, timeout: float) -> list[dict[str, Any]]:
    data = _data(root, n)
    state = root / f"state-{n}"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    results = []
    for name in NAMES:
        if name == "page":
            try:
                import streamlit  # noqa: F401
            except ImportError:
                print("page: skipped (no streamlit)", flush=True)
                continue
        out = root / f"{name}.json"
        out.unlink(missing_ok=True)
        res = spawn(name, data, state, out, timeout)
        results.append(res)
        print(
            f"{name}: {res['call_s']:.2f} s wall, {res['call_cpu_s']:.2f} s CPU, peak RSS {res['peak_rss_mb']:.0f} MB "
            f"(process {res['process_s']:.1f} s, load {res['load_1min']:.1f})",
            flush=True,
        )
    return results


def machine() -> str:
    import duckdb
    import numpy

    cpu = (
        next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else ""
    )
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GB RAM, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, DuckDB {duckdb.__version__}, numpy {numpy.__version__}"
    )


def report(results: list[dict[str, Any]], n: int) -> str:
    by = {r["name"]: r for r in results}
    lines = [
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}",
        f"{n:,} items x 6 criteria x 3 judge rounds, 2 runs ({2 * 18 * n:,} verdict rows, {6 * n:,} cases)",
        "",
        "| measurement | call wall s | call CPU s | process wall s | process CPU s | peak RSS MB | load (1 min) |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        lines.append(
            f"| {r['name']} | {r['call_s']:.2f} | {r['call_cpu_s']:.2f} | {r['process_s']:.1f} | "
            f"{r['process_cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {r['load_1min']:.1f} |"
        )
    if "duckdb" in by and "detect-first" in by:
        lines += [
            "",
            f"detect-first / bare DuckDB GROUP BY: {by['detect-first']['call_s'] / by['duckdb']['call_s']:.1f}x",
        ]
    if "detect-first" in by:
        d = by["detect-first"]
        lines.append(
            f"cases {d['population']:,}: raised {d['raised']:,}, agreed {d['agreed']:,}; counts {d['counts']}; "
            f"stored file {d['file_mb']} MB"
        )
    if "build" in by:
        b = by["build"]
        lines.append(f"queue {b['queue_id']}: {b['flagged']:,} raised + {b['audit_sampled']:,} audited cases written")
    if "page-reads" in by:
        lines.append(f"page-reads: progress {by['page-reads']['progress']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", nargs="?", default="all", choices=("all", "one"))
    ap.add_argument("name", nargs="?")
    ap.add_argument("--items", type=int, default=N_ITEMS, help="items of the SIMULATED world (default 1,000,000)")
    ap.add_argument("--dir", type=Path, default=BENCH_DIR, help="where the data and state go (outside the repo)")
    ap.add_argument("--rebuild", action="store_true", help="write the data again")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one measurement may take")
    ap.add_argument("--data", type=Path)
    ap.add_argument("--state", type=Path)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "one":
        res = one(a.name, a.data, a.state)
        import resource

        res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        a.out.write_text(json.dumps(res, default=str))
        return
    root = a.dir.resolve()
    if a.rebuild or not (_data(root, a.items) / "runs").is_dir():
        t = time.perf_counter()
        build(root, a.items)
        print(f"built the SIMULATED data in {time.perf_counter() - t:.0f} s", flush=True)
    results = measure(root, a.items, a.timeout)
    (root / f"results-{a.items}.json").write_text(json.dumps(results, indent=1, default=str))
    print()
    print(report(results, a.items))


if __name__ == "__main__":
    main()
