"""A writer killed at any moment leaves the previous complete file or the new complete one.

For each label export format (csv, parquet, json) and for a run written over an existing run, a
forked child starts the write and is killed (SIGKILL) after a random delay (seed 11) drawn between
0 and a multiple of the write's duration, at least 50 times. The target is then compared with the
previous file and with the new one made beforehand: it must be byte-identical to one of them (the
run: its manifest and verdicts those of the old run or of the new one, readable).

The test also checks that the kills did land during writes, not only before or after. A shared CI
machine makes a write's duration drift, so the duration is measured again every 10 kills (an
unkilled write) and the multiple widens when too few kills land after the write, narrows when too
few land before; the loop goes on (up to 200 kills) until both outcomes have been seen 5 times."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import statistics
import time
from pathlib import Path

import pytest

from evalcore import LabelStore, Store
from evalcore.storage.export import export_labels

KILLS = 50
# the writes' sizes: long enough that most kills land inside the write (killed_running >= 10 and both
# outcomes >= 5 are asserted, so a write too short to be hit fails the test), short enough that the
# 50+ writes of each test do not dominate CI (issue 45). At load average 10-12 one write of a JSON
# export of 2,000 edits took 0.25 s, of a run of 18,000 verdicts 0.75 s (with 6,000 edits and 54,000
# verdicts: 1.6 s and 2.5 s; the file's four tests 200 s, now 100 s)
EDITS = 2_000
RUN_COPIES = 1_000


def _digest(p: Path) -> str | None:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None


def _fill(ls: LabelStore, n: int, start: int) -> None:
    rows = [("g", f"i{k % 3}", 1 + k % 2, "ok", "pass" if k % 2 else "fail", "decided", f"r{k % 7}",
             f"2026-01-01T00:00:{k % 60:02d}+00:00", "cli", None, f"note {k} " * 4, None, "[]", "reviewer")
            for k in range(start, start + n)]
    with ls.transaction() as con:
        con.executemany(
            "INSERT INTO edits (gen_id, item_id, gen_round, criterion, value, outcome, reviewer, created_at, queue, "
            "reason_code, note, supersedes, tags, role) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def _timed(write) -> float:
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        write()
        os._exit(0)
    os.waitpid(pid, 0)
    return time.perf_counter() - t0


def _kill_loop(write, reset, outcome, rng: random.Random) -> dict[str, int]:
    """Run ``write`` in forked children killed at random points, ``reset`` before each; ``outcome``
    says (asserting it is one of them) whether the target ended "old" or "new"."""
    durations = []
    for _ in range(3):
        reset()
        durations.append(_timed(write))
        assert outcome() == "new"
    seen = {"old": 0, "new": 0, "killed_running": 0}
    scale = 1.3
    trials = 0
    while trials < KILLS or min(seen["old"], seen["new"]) < 5:
        assert trials < 4 * KILLS, f"after {trials} kills the outcomes are still one-sided: {seen}"
        if trials and trials % 10 == 0:
            reset()
            durations.append(_timed(write))
            assert outcome() == "new"
            if seen["new"] < trials // 5:
                scale *= 1.5
            elif seen["old"] < trials // 5:
                scale /= 1.5
        reset()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            write()
            os._exit(0)
        time.sleep(rng.uniform(0, scale * statistics.median(durations[-5:])))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        seen["killed_running"] += os.WIFSIGNALED(status)
        seen[outcome()] += 1
        trials += 1
    return seen


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_a_killed_label_export_leaves_the_old_file_or_the_new(tiny, tmp_path, fmt):
    data, state = tiny
    ls = LabelStore(Store(data, state))
    _fill(ls, EDITS, 0)
    target = tmp_path / f"labels.{fmt}"
    export_labels(ls, fmt, target, history=True)
    old = target.read_bytes()
    _fill(ls, 200, EDITS)
    ls.close()

    def write():
        export_labels(LabelStore(Store(data, state)), fmt, target, history=True)

    write()
    new = target.read_bytes()
    assert new != old

    def outcome() -> str:
        got = target.read_bytes()
        assert got in (old, new), f"{target.name}: {len(got)} bytes, neither the old file ({len(old)}) nor the new ({len(new)})"
        return "old" if got == old else "new"

    seen = _kill_loop(write, lambda: target.write_bytes(old), outcome, random.Random(11))
    assert seen["killed_running"] >= 10, seen


def test_a_killed_run_write_leaves_the_old_run_or_the_new(tiny):
    import pyarrow.parquet as pq

    data, state = tiny
    st = Store(data, state)
    old_manifest = st.run("r").manifest
    verdicts = pq.read_table(st.path_of("run", "r", "verdicts")).to_pylist()
    calls = pq.read_table(st.path_of("run", "r", "calls")).to_pylist()
    new_manifest = old_manifest.model_copy(update={"prompt_template": "rewritten " * 2000})
    manifest_file = st.dir_of("run", "r") / "manifest.json"
    old = manifest_file.read_bytes()
    big = [dict(v, item_id=f"i{k % 3}") for k, v in enumerate(verdicts * RUN_COPIES)]

    def write():
        Store(data, state).write_run(new_manifest, big, calls, overwrite=True)

    def reset():
        Store(data, state).write_run(old_manifest, verdicts, calls, overwrite=True)

    write()
    new = manifest_file.read_bytes()
    assert new != old

    def outcome() -> str:
        got = manifest_file.read_bytes() if manifest_file.exists() else None
        assert got in (old, new), "the run directory is neither the old run nor the new one"
        n = pq.read_metadata(st.path_of("run", "r", "verdicts")).num_rows
        assert n == (len(verdicts) if got == old else len(big)), (n, got == old)
        return "old" if got == old else "new"

    seen = _kill_loop(write, reset, outcome, random.Random(11))
    assert seen["killed_running"] >= 10, seen
