#!/usr/bin/env python3
"""Scripted labelling: 8,000 labels through one ``evalcore labels add --from FILE`` process,
against one process per label (measured on the first 100 and scaled), and against the floor: the
same 8,000 rows inserted by bare sqlite3 in batches of 500 with ``synchronous=FULL`` (what any
durable store pays). ALL DATA IS SIMULATED (a three-item world of tests/conftest.py).

    python bench/labels_batch.py            # prints the table (markdown) and the JSON

Each run uses a fresh state directory; wall times are of the whole process (start-up included)
for the CLI, of the inserts alone for sqlite3.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
N, SINGLES = 8000, 100


def rows(n: int) -> list[dict]:
    return [{"item_id": f"i{k % 3}", "round": 1 + (k // 3) % 2, "criterion": "ok", "value": "pass" if k % 4 else "fail",
             "reviewer": f"r{k % 9}", "note": f"batch note {k}"} for k in range(n)]


def main() -> None:
    from conftest import make_tiny

    out: dict = {"n": N, "machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        make_tiny(data)
        src = root / "edits.csv"
        with open(src, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows(1)[0]))
            w.writeheader()
            w.writerows(rows(N))
        exe = [sys.executable, "-m", "evalcore", "--data", str(data)]
        t = time.perf_counter()
        r = subprocess.run([*exe, "--state", str(root / "s1"), "labels", "add", "--from", str(src), "--json"],
                           capture_output=True, text=True, check=True)
        out["batch_wall_s"] = round(time.perf_counter() - t, 3)
        out["batch_inside_s"] = json.loads(r.stdout)["seconds"]
        t = time.perf_counter()
        for e in rows(SINGLES):
            subprocess.run([*exe, "--state", str(root / "s2"), "labels", "add", "--item", e["item_id"], "--round",
                            str(e["round"]), "--criterion", "ok", "--value", e["value"], "--reviewer", e["reviewer"],
                            "--note", e["note"]], capture_output=True, check=True)
        per = (time.perf_counter() - t) / SINGLES
        out["single_wall_s_each"] = round(per, 3)
        out["singles_scaled_to_n_s"] = round(per * N, 1)
        con = sqlite3.connect(root / "bare.sqlite", isolation_level=None)
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = FULL")
        con.execute("CREATE TABLE edits (edit_id INTEGER PRIMARY KEY, item_id, gen_round, criterion, value, reviewer, note)")
        t = time.perf_counter()
        rs = rows(N)
        for start in range(0, N, 500):
            con.execute("BEGIN IMMEDIATE")
            con.executemany("INSERT INTO edits (item_id, gen_round, criterion, value, reviewer, note) VALUES (?,?,?,?,?,?)",
                            [tuple(e.values()) for e in rs[start:start + 500]])
            con.execute("COMMIT")
        out["bare_sqlite_s"] = round(time.perf_counter() - t, 4)
        con.close()
    out["batch_vs_singles"] = round(out["singles_scaled_to_n_s"] / out["batch_wall_s"], 1)
    out["inside_vs_bare_sqlite"] = round(out["batch_inside_s"] / out["bare_sqlite_s"], 1)
    print(f"| what | seconds |\n|---|---|\n"
          f"| {N:,} labels, one `labels add --from` process (wall) | {out['batch_wall_s']} |\n"
          f"| the same, inside the command (checks and writes) | {out['batch_inside_s']} |\n"
          f"| one `labels add` process per label (mean of {SINGLES}) | {out['single_wall_s_each']} each, "
          f"{out['singles_scaled_to_n_s']} for {N:,} |\n"
          f"| bare sqlite3, batches of 500, synchronous=FULL | {out['bare_sqlite_s']} |")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
