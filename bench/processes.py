"""Whole processes at scale: each `evalcore ... --json` command against a bare DuckDB process and a
pandas process computing the same figures, with the derived tables on and off (issue 16's bar:
"every command as a whole process within 1.5x of a bare DuckDB process ... and >= 3x faster than
pandas"). ALL DATA IS SIMULATED.

    .venv/bin/python bench/processes.py --data /tmp/rq-bench/data-1000000 [--repeats 3] [--only runs,cost]
                                        [--skip pandas,full] [--state-from DIR]

``--skip`` leaves implementations out (``pandas``: at 180M rows its frames would not fit in memory;
``full``: the evalcore process with ``EVALCORE_DERIVED=0``); the figures of the others are then
checked against each other only.

For each computation of bench/analytics.py's registry (the same hand-written DuckDB query and
idiomatic pandas version that bench/analytics.py checks against evalcore), four processes, each
started fresh, interleaved within a repeat:

* ``evalcore``: ``evalcore --data D --state S <command> --json`` (S a fresh state directory per
  repeat), reading the derived tables;
* ``evalcore full``: the same with ``EVALCORE_DERIVED=0`` (every figure from the full data);
* ``duckdb``: ``python -c`` importing duckdb and running the bare query once, printing its result;
* ``pandas``: the same with the pandas version.

Wall time (spawn to exit), CPU (user + system of the child, from ``os.wait4``) and peak RSS. The
numbers of the four are checked equal (the registry's canonical form) before any figure is kept.
Before each process the script waits (at most ``--max-wait`` s) for the 1-minute load average to
fall under 1.5 and records it. Markdown on stdout, JSON in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
EVALCORE = str(Path(sys.executable).parent / "evalcore")

CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
from analytics import COMPUTATIONS
from computations import Ctx
from pathlib import Path
c = Ctx(Path({data!r}), Path({state!r}))
r = COMPUTATIONS[{key!r}][{impl!r}](c)
print(json.dumps(r, default=str))
"""


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Wall, CPU (user + system) and peak RSS (MB) of one child process, and its stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:6])} failed ({p.returncode}): {err.read()[-2000:]}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.read()


def wait_quiet(max_wait: float) -> float:
    t = time.time()
    while os.getloadavg()[0] > 1.5 and time.time() - t < max_wait:
        time.sleep(2)
    return round(os.getloadavg()[0], 2)


def canon_cli(key: str, text: str) -> dict:
    from analytics import COMPUTATIONS
    from computations import _num

    return {k: _num(v) for k, v in COMPUTATIONS[key]["canon"](json.loads(text)).items()}


def close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))
    return a == b


def main(argv: list[str] | None = None) -> None:
    from analytics import COMPUTATIONS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--max-wait", type=float, default=60)
    ap.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench/processes.json"))
    ap.add_argument("--skip", default="", help="implementations to leave out: pandas, full")
    ap.add_argument(
        "--state-from",
        type=Path,
        default=None,
        help="copy this state directory (as `evalcore index` left it: pair tables, stamps) for each evalcore process",
    )
    a = ap.parse_args(argv)
    skip = {"evalcore full" if x == "full" else x for x in a.skip.split(",") if x}
    impls = [i for i in ("evalcore", "evalcore full", "duckdb", "pandas") if i not in skip]
    keys = [k for k in COMPUTATIONS if not a.only or k in a.only.split(",")]
    rows: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    loads: list[float] = []
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="evalcore-proc-") as tmp:
        for rep in range(a.repeats):
            for key in keys:
                res: dict[str, Any] = {}
                for impl in impls:
                    state = Path(tmp) / f"state-{key}-{impl.replace(' ', '-')}-{rep}"
                    if a.state_from is not None and impl == "evalcore":  # as an import or a judge run leaves it
                        shutil.copytree(a.state_from, state)
                    env = dict(os.environ)
                    if impl.startswith("evalcore"):
                        env["EVALCORE_DERIVED"] = "0" if impl == "evalcore full" else "1"
                        cmd = [EVALCORE, "--data", str(a.data), "--state", str(state), *COMPUTATIONS[key]["cli"], "--json"]
                    else:
                        code = CHILD.format(bench=str(ROOT / "bench"), data=str(a.data), state=str(state), key=key, impl=impl)
                        cmd = [sys.executable, "-c", code]
                    loads.append(wait_quiet(a.max_wait))
                    wall, cpu, rss, out = run(cmd, env)
                    res[impl] = canon_cli(key, out) if impl.startswith("evalcore") else json.loads(out)
                    rows.setdefault(key, {}).setdefault(impl, []).append((wall, cpu, rss))
                    print(f"{key} {impl} rep {rep}: {wall:.2f} s wall, {cpu:.2f} CPU-s, {rss:.0f} MB", file=sys.stderr)
                ref = json.loads(json.dumps(res["duckdb"], default=str))
                for impl in [i for i in impls if i != "duckdb"]:
                    got = json.loads(json.dumps(res[impl], default=str))
                    if not close(got, ref):
                        raise SystemExit(f"{key}: {impl} and duckdb disagree")
    finished = time.strftime("%H:%M", time.gmtime())
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"rows": rows, "loads": loads, "started": started, "finished": finished}, indent=1))

    def med(key: str, impl: str, i: int) -> float:
        return statistics.median(x[i] for x in rows[key][impl])

    print(f"{a.repeats} repeats, {started} - {finished} UTC, 1-min load before each process: median "
          f"{statistics.median(loads):.2f}, max {max(loads):.2f}. Medians; every process's numbers equal "
          "(counts exactly, rates to 1e-9).\n")
    print("| command | evalcore wall s | CPU s | peak MB | full data (EVALCORE_DERIVED=0) wall s | bare DuckDB "
          "process wall s | CPU s | pandas process wall s | evalcore / DuckDB wall (CPU) | pandas / evalcore wall |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    def fig(key: str, impl: str, i: int, fmt: str = ".2f") -> str:
        return format(med(key, impl, i), fmt) if impl in rows[key] else "-"

    for key in keys:
        e, d = med(key, "evalcore", 0), med(key, "duckdb", 0)
        ratio = f"{med(key, 'pandas', 0) / e:.1f}" if "pandas" in rows[key] else "-"
        print(f"| `evalcore {' '.join(COMPUTATIONS[key]['cli'])}` | {e:.2f} | {med(key, 'evalcore', 1):.2f} | "
              f"{max(x[2] for x in rows[key]['evalcore']):.0f} | {fig(key, 'evalcore full', 0)} | {d:.2f} | "
              f"{med(key, 'duckdb', 1):.2f} | {fig(key, 'pandas', 0)} | {e / d:.2f} ({med(key, 'evalcore', 1) / med(key, 'duckdb', 1):.2f}) | "
              f"{ratio} |")


if __name__ == "__main__":
    main()
