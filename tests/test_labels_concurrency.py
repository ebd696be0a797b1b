"""No human label is ever lost, on SQLite and on PostgreSQL: eight processes add 1,000 labels each at
the same time, and one of them is killed (SIGKILL) in the middle of a write, inside a write
transaction holding the lock with rows inserted. Every label whose add returned is exported exactly
once, the killed transaction left nothing, and the store opens cleanly (SQLite: PRAGMA
integrity_check) and takes new labels."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

from evalcore import LabelStore, Store, export_labels
from evalcore.storage.integrity import check_database

WRITERS, PER_WRITER = 8, 1000
KILLED_AFTER = 200  # the last writer is killed mid-write after this many acknowledged labels

# Adds n labels, each with a unique note, printing the note once add() has returned; with a third
# argument k, after k labels it takes the write lock, inserts rows and never commits.
_WRITER = """
import sys, time
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
who, n = sys.argv[3], int(sys.argv[4])
stop = int(sys.argv[5]) if len(sys.argv) > 5 else None
for k in range(n):
    if k == stop:
        with ls.transaction() as con:
            for j in range(50):
                con.execute(
                    "INSERT INTO edits (gen_id, item_id, gen_round, criterion, value, outcome, reviewer, created_at, note) "
                    "VALUES ('g', 'i0', 1, 'ok', 'pass', 'decided', ?, '2026-01-01T00:00:00+00:00', ?)",
                    (who, f"uncommitted:{j}"),
                )
            print("holding", flush=True)
            time.sleep(120)
    note = f"{who}:{k}"
    ls.add(item_id="i%d" % (k % 3), criterion="ok", value="pass" if k % 2 else "fail", reviewer=who, note=note,
           gen_round=1 + k % 2, queue="concurrency-test")
    print(note, flush=True)
"""


def test_concurrent_writers_and_a_killed_writer_lose_nothing(tiny, backend):
    data, state = tiny
    LabelStore(Store(data, state)).add(item_id="i0", criterion="ok", value="pass", reviewer="setup")  # the schema
    args = [[f"w{w}", str(PER_WRITER)] for w in range(WRITERS)]
    args[-1].append(str(KILLED_AFTER))
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(state), *a],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in args]
    acked: dict[int, list[str]] = {w: [] for w in range(WRITERS)}
    killed = procs[-1]
    while True:  # the last writer writes, then takes the lock from under the others and waits
        line = killed.stdout.readline().strip()
        assert line, killed.stderr.read()
        if line == "holding":
            break
        acked[WRITERS - 1].append(line)
    time.sleep(0.5)  # the other writers are now waiting on the lock it has
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert killed.returncode == -signal.SIGKILL
    for w, p in enumerate(procs[:-1]):
        out, err = p.stdout.read(), p.stderr.read()  # (not communicate(): it skips what readline buffered)
        assert p.wait(timeout=300) == 0, err
        acked[w] += [x for x in out.splitlines() if x]

    ls = LabelStore(Store(data, state))
    exported = json.loads(export_labels(ls, "json", None, history=True, include_shipped=False))
    notes = Counter(e["note"] for e in exported)
    assert len(acked[WRITERS - 1]) == KILLED_AFTER
    for w in range(WRITERS):
        assert len(acked[w]) == (KILLED_AFTER if w == WRITERS - 1 else PER_WRITER)
        assert all(notes[n] == 1 for n in acked[w]), "an acknowledged label is missing or exported twice"
    assert not any(n and n.startswith("uncommitted") for n in notes)  # the killed transaction left nothing
    assert len(exported) == 1 + (WRITERS - 1) * PER_WRITER + KILLED_AFTER
    assert len({e["edit_id"] for e in exported}) == len(exported)
    if backend.name == "sqlite":
        con = sqlite3.connect(ls.path)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        con.close()
    # and it takes new labels
    ls.add(item_id="i1", criterion="ok", value="pass", reviewer="after")
    assert ls.history()[-1]["reviewer"] == "after"


# Adds one label and closes: the last connection of its process, so SQLite checkpoints on close and,
# when it can take the database file's exclusive lock (no other process holds a shared one), deletes
# the write-ahead log and resets the shared-memory index.
_ONE = """
import sys
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
ls.add(item_id="i1", criterion="ok", value="pass", reviewer="other", note=sys.argv[3])
ls.close()
"""


def test_checking_the_store_does_not_drop_this_processs_locks_on_it(tiny):
    """A server keeps its connections open while other processes write and close. Checking the
    file (check_database, on every new state of it) must not release the locks this process's
    connections hold on it: with them gone another process's closing connection thinks it is the
    last, deletes the log and resets the index under this process's feet, which then reads a stale
    store and calls a whole file damaged (seen in CI as 'database disk image is malformed')."""
    data, state = tiny
    ls = LabelStore(Store(data, state))
    ls.add(item_id="i0", criterion="ok", value="pass", reviewer="server")  # this thread's connection stays open
    for k in range(4):
        check_database(ls.path)  # what every read does first; the file's state changed since the last look
        subprocess.run([sys.executable, "-c", _ONE, str(data), str(state), f"other:{k}"], check=True, timeout=120)
        assert (state / "labels.sqlite-wal").exists(), "another process deleted the log this process still uses"
        notes = [e["note"] for e in ls.history()]  # the kept connection sees every committed label
        assert notes[1:] == [f"other:{j}" for j in range(k + 1)], notes
        assert LabelStore(Store(data, state)).history()[-1]["note"] == f"other:{k}"  # and a new reader too
    ls.close()
