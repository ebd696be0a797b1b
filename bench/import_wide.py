"""`evalcore import wide` against the number of criterion columns: is the work linear in them?

    .venv/bin/python bench/import_wide.py [N ...]     # default 8000 16000 32000

For each N: a CSV of 3 rows (item_id, input, output and N criterion columns c0..cN-1, every value
"pass"; SIMULATED) imported by `evalcore import wide FILE --run-id r --judge-model m` into a fresh
data directory, as its own process. Prints the wall seconds and the process's peak resident set
(from wait4). N past the column limit (10,000) runs with EVALCORE_MAX_COLUMNS raised to N + 3. A
benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVALCORE = str(Path(sys.executable).with_name("evalcore"))


def run(n: int, root: Path) -> tuple[float, float, int]:
    f = root / f"wide{n}.csv"
    with open(f, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["item_id", "input", "output", *(f"c{i}" for i in range(n))])
        for r in range(3):
            w.writerow([f"i{r}", "q", "a", *(["pass"] * n)])
    (root / f"d{n}").mkdir()
    env = {**os.environ, "EVALCORE_MAX_COLUMNS": str(max(n + 3, 10_000))}
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [EVALCORE, "--data", str(root / f"d{n}"), "--state", str(root / f"s{n}"), "import", "wide", str(f),
         "--run-id", "r", "--judge-model", "m"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    _, status, usage = os.wait4(p.pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [8000, 16000, 32000]
    print("| criterion columns | wall s | peak RSS MB | exit |\n|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            wall, mb, code = run(n, Path(tmp))
            print(f"| {n:,} | {wall:.2f} | {mb:.0f} | {code} |")


if __name__ == "__main__":
    main()
