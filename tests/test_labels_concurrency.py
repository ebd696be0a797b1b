"""No human label is ever lost: four processes add 500 labels each at the same time while a fifth
is killed (SIGKILL) inside a write transaction (holding BEGIN IMMEDIATE with rows inserted). Every
label whose add returned is readable exactly once, the killed transaction left nothing, and the
store opens cleanly (PRAGMA integrity_check) and takes new labels."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

from evalcore import LabelStore, Store

WRITERS, PER_WRITER = 4, 500

# Adds PER_WRITER labels, each with a unique note, and prints the note once add() has returned.
_WRITER = """
import sys
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
who, n = sys.argv[3], int(sys.argv[4])
for k in range(n):
    note = f"{who}:{k}"
    ls.add(item_id="i%d" % (k % 3), criterion="ok", value="pass" if k % 2 else "fail", reviewer=who, note=note,
           gen_round=1 + k % 2, queue="concurrency-test")
    print(note, flush=True)
"""

# Opens the store as evalcore does, takes the write lock, inserts rows and never commits.
_HOLDER = """
import sys, time
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
con = ls._connect()
con.execute("BEGIN IMMEDIATE")
for k in range(50):
    con.execute("INSERT INTO edits (gen_id, item_id, gen_round, criterion, value, outcome, reviewer, created_at, note) "
                "VALUES ('g', 'i0', 1, 'ok', 'pass', 'decided', 'killed', '2026-01-01T00:00:00+00:00', ?)",
                (f"uncommitted:{k}",))
print("holding", flush=True)
time.sleep(120)
"""


def test_concurrent_writers_and_a_killed_transaction_lose_nothing(tiny):
    data, state = tiny
    LabelStore(Store(data, state)).add(item_id="i0", criterion="ok", value="pass", reviewer="setup")  # the schema
    t0 = time.monotonic()
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(state), f"w{w}", str(PER_WRITER)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    acked: dict[int, list[str]] = {w: [] for w in range(WRITERS)}
    # let every writer get going, then take the lock from under them and die holding it
    for w, p in enumerate(writers):
        while len(acked[w]) < 20:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            acked[w].append(line.strip())
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(data), str(state)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "holding"
    time.sleep(0.5)  # the writers are now waiting on the lock the holder has
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert holder.returncode == -signal.SIGKILL
    for w, p in enumerate(writers):
        out = p.stdout.read()  # (not communicate(): it would skip what readline() has buffered)
        err = p.stderr.read()
        assert p.wait(timeout=180) == 0, err
        acked[w] += [x for x in out.splitlines() if x]
    took = time.monotonic() - t0

    ls = LabelStore(Store(data, state))
    hist = ls.history()
    notes = Counter(h["note"] for h in hist)
    for w in range(WRITERS):
        assert len(acked[w]) == PER_WRITER
        assert all(notes[n] == 1 for n in acked[w]), "an acknowledged label is missing or stored twice"
    assert not any(n and n.startswith("uncommitted") for n in notes)  # the killed transaction left nothing
    assert len(hist) == 1 + WRITERS * PER_WRITER
    assert len({h["edit_id"] for h in hist}) == len(hist)
    con = sqlite3.connect(ls.path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    # and it takes new labels
    ls.add(item_id="i1", criterion="ok", value="pass", reviewer="after")
    assert ls.history()[-1]["reviewer"] == "after"
    assert took < 120, took
