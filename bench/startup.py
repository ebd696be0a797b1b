#!/usr/bin/env python3
"""Start-up of the `evalcore` command (issue 16): CPU seconds (user + system, from the child's
rusage) and peak memory of `evalcore --version`, `evalcore --help` and `evalcore runs --json` on the
bundled demo, beside a bare `python -c pass` and a bare `python -c "import duckdb"` measured in the
same session. A benchmark, not a test: it prints a Markdown table and asserts nothing.

    python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"


def measure(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one run of ``cmd`` as a child process."""
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd} exited with {status}")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    state = tempfile.mkdtemp(prefix="evalcore-startup-")
    py, ev = sys.executable, str(VENV_BIN / "evalcore")
    demo = str(ROOT / "data" / "demo")
    cases = [
        ("python -c pass", [py, "-c", "pass"]),
        ("python -c 'import duckdb'", [py, "-c", "import duckdb"]),
        ("evalcore --version", [ev, "--version"]),
        ("evalcore --help", [ev, "--help"]),
        ("evalcore runs --json (demo)", [ev, "--data", demo, "--state", state, "runs", "--json"]),
    ]
    measure(cases[2][1])  # warm the file cache
    print(f"| command | CPU s, median of {a.runs} (min-max) | peak MiB |")
    print("|---|--:|--:|")
    for name, cmd in cases:
        got = [measure(cmd) for _ in range(a.runs)]
        cpu = [g[0] for g in got]
        print(f"| `{name}` | {statistics.median(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f}) "
              f"| {statistics.median(g[1] for g in got):.0f} |")
    print(f"\nload average {os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}; "
          f"resource limit {resource.getrlimit(resource.RLIMIT_AS)[0]}")


if __name__ == "__main__":
    main()
