"""A long-lived label store survives a PostgreSQL restart (issue 38, point 4): a real server of its
own (tests/pg_util.py's cluster, restarted here, so the session's shared server is never touched)
restarted twice under one process adding 1,000 labels through one LabelStore. Every acknowledged
label is in the store exactly once; an add that was refused says so in one line (LabelError, never
psycopg's own error) and was not acknowledged."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pg_util
import pytest
from conftest import make_tiny

from evalcore.errors import LabelError
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

N = 1000


@pytest.fixture
def own_server(tmp_path_factory):
    bins = pg_util.bindir()
    if bins is None:
        pg_util.unavailable("the PostgreSQL binaries are not installed (apt-get install postgresql)")
    root = Path(pg_util.new_root())
    pg_util._make_root(root)
    info = pg_util._start(root, bins)
    yield info, bins
    pg_util.stop(str(root))


def _restart(info: dict, bins: Path) -> None:
    # -l: the restarted server logs to a file, not to this pipe (it would hold it open past pg_ctl's exit)
    log = str(Path(info["data"]).parent / "server.log")
    cmd = [str(bins / "pg_ctl"), "-D", info["data"], "-l", log, "-m", "fast", "-w", "-t", "60", "restart"]
    r = subprocess.run(pg_util._as_owner(cmd), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_acknowledged_label_survives_two_restarts_and_refusals_are_one_line(tmp_path, own_server):
    info, bins = own_server
    data = tmp_path / "data"
    make_tiny(data)
    labels = LabelStore(Store(data, tmp_path / "state"), url=info["url"])
    acked: list[str] = []
    refused: list[str] = []
    done = threading.Event()

    def restarts() -> None:
        for at in (N // 3, 2 * N // 3):
            while len(acked) + len(refused) < at:
                time.sleep(0.01)
            _restart(info, bins)
        done.set()

    t = threading.Thread(target=restarts)
    t.start()
    for i in range(N):
        note = f"n{i}"
        try:
            labels.add(item_id="i1", criterion="ok", reviewer="ann", value="pass" if i % 2 else "fail", note=note)
        except LabelError as e:  # psycopg's own errors would fail the test here, as a traceback would
            assert "\n" not in str(e)
            refused.append(str(e))
            time.sleep(0.05)  # as a person would, before trying again
        else:
            acked.append(note)
    t.join(timeout=180)
    assert done.is_set()
    notes = [h["note"] for h in LabelStore(Store(data, tmp_path / "state"), url=info["url"]).history()]
    assert sorted(set(acked) - set(notes)) == []  # every acknowledged add is stored
    assert len(notes) == len(set(notes))  # once
    print(f"acknowledged {len(acked)}, refused {len(refused)}: {refused[:2]}")
    assert len(acked) >= N - 20, (len(acked), refused[:3])  # the reconnection, not a refusal, is the rule
