"""Building a queue as a job outside the caller's process (issue 39: the Review page's Build button
ran the build inside the server): the job is started at once, its progress is read from the state
directory, and the queue it writes is the one a direct build makes; a failing build says its error
in one line and writes no queue."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from queue_world import make_queue_world

from evalcore import InputError, LabelStore, NotFoundError, Store
from evalcore import review as R
from evalcore.review import jobs

CASE_COLUMNS = (
    "item_id, gen_round, criterion, class, stratum, reasons, runs, detail, inclusion_prob, audit_key, audit_size"
)


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qw") / "data")


def _wait(store: Store, job_id: str, timeout: float = 120) -> tuple[dict, list[dict]]:
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = jobs.build_status(store, job_id)
        seen.append(st)
        if st["state"] != "running":
            return st, seen
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running after {timeout} s: {seen[-1]}")


def _cases(store: Store, queue_id: str) -> list[tuple]:
    return [
        tuple(r.values())
        for r in LabelStore(store).rows(
            f"SELECT rank, {CASE_COLUMNS} FROM queue_cases WHERE queue_id = ? ORDER BY rank", [queue_id]
        )
    ]


def test_a_started_build_runs_apart_and_writes_the_queue_a_direct_build_writes(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    job_id = R.start_build(store, "qg", audit_rate=0.5, seed=4, reviewers_required=2)
    first = jobs.build_status(store, job_id)
    assert first["state"] in ("running", "done") and first["job_id"] == job_id and first["gen_id"] == "qg"
    proc = jobs._STARTED[job_id]
    # the build is a process of its own, handed its job directory: the caller does not run it (a
    # count of processes, not seconds: how long the call took is bench/queue_build_job.py's)
    assert proc.pid != os.getpid() and str(tmp_path / "state" / jobs.JOBS_DIR / job_id) in " ".join(map(str, proc.args))
    done, seen = _wait(store, job_id)
    assert done["state"] == "done", done
    assert proc.returncode == 0 and job_id not in jobs._STARTED  # waited for: no zombie left behind
    assert sorted(p.name for p in (tmp_path / "state" / jobs.JOBS_DIR / job_id).iterdir()) == [
        "status.json", "stderr.log"]  # the job file (a login's claims) is gone once read  # fmt: skip
    assert done["fraction"] == 1.0 and all(0.0 <= s["fraction"] <= 1.0 for s in seen if "fraction" in s)
    q = done["queue_id"]
    header = R.get_queue(store, q)
    assert header["reviewers_required"] == 2 and header["seed"] == 4 and header["audit_rate"] == 0.5

    direct = R.build_queue(Store(qworld, tmp_path / "direct"), "qg", audit_rate=0.5, seed=4, reviewers_required=2)
    assert direct["queue_id"] == q
    got, want = _cases(store, q), _cases(Store(qworld, tmp_path / "direct"), q)
    assert got == want and len(got) == direct["flagged"] + direct["audit_sampled"]
    skip = {"created_at"}
    assert {k: v for k, v in header.items() if k not in skip} == {
        k: v for k, v in R.get_queue(Store(qworld, tmp_path / "direct"), q).items() if k not in skip
    }


def test_a_failing_build_reports_its_error_and_writes_no_queue(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    job_id = R.start_build(store, "qg", seed=1, criteria=["no-such-criterion"])
    failed, _ = _wait(store, job_id)
    assert failed["state"] == "failed"
    assert "no criterion 'no-such-criterion'" in failed["error"] and "\n" not in failed["error"]
    assert R.queues(store, "qg") == []


def test_a_build_refused_at_once_starts_no_job(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    with pytest.raises(NotFoundError):
        R.start_build(store, "no-such-gen")
    with pytest.raises(Exception, match="audit"):
        R.start_build(store, "qg", audit="sideways")
    with pytest.raises(InputError, match="audit rate") as e:
        R.start_build(store, "qg", audit_rate="lots")
    assert e.value.field == "--audit-rate"
    assert not (tmp_path / "state" / jobs.JOBS_DIR).exists() or not any((tmp_path / "state" / jobs.JOBS_DIR).iterdir())
    with pytest.raises(NotFoundError, match="no queue build job"):
        R.build_status(store, "build-nothing")
    with pytest.raises(NotFoundError):
        R.build_status(store, "../../etc")


def test_a_process_that_dies_is_said_failed(qworld, tmp_path):
    """A build process killed from outside (out of memory, a stopped machine) leaves its status at
    "running": the status says it failed, with the last line it wrote."""
    store = Store(qworld, tmp_path / "state")
    job_id = R.start_build(store, "qg")
    proc = jobs._STARTED[job_id]
    proc.kill()  # at once: the process is still importing, far from writing a queue
    proc.wait()
    (tmp_path / "state" / jobs.JOBS_DIR / job_id / "stderr.log").write_text("Killed\n")
    st = jobs.build_status(store, job_id)
    assert st["state"] == "failed" and st["error"] == "the build process ended before the queue was written (Killed)"
    assert R.queues(store, "qg") == []


def test_a_server_started_again_asks_the_system_about_the_process(qworld, tmp_path):
    """After a restart the server holds no process handle: a running status whose process is gone
    is said failed; one whose process lives stays running."""
    import json
    import os
    import subprocess
    import sys

    store = Store(qworld, tmp_path / "state")
    d = tmp_path / "state" / jobs.JOBS_DIR / "build-x"
    d.mkdir(parents=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (d / "status.json").write_text(
        json.dumps(
            {
                "job_id": "build-x",
                "gen_id": "qg",
                "state": "running",
                "stage": "writing the cases",
                "fraction": 0.5,
                "pid": gone.pid,
            }
        )
    )
    assert jobs.build_status(store, "build-x")["state"] == "failed"
    (d / "status.json").write_text(
        json.dumps(
            {
                "job_id": "build-x",
                "gen_id": "qg",
                "state": "running",
                "stage": "writing the cases",
                "fraction": 0.5,
                "pid": os.getpid(),
            }
        )
    )
    assert jobs.build_status(store, "build-x") == {
        "job_id": "build-x",
        "gen_id": "qg",
        "state": "running",
        "stage": "writing the cases",
        "fraction": 0.5,
        "pid": os.getpid(),
    }
