"""Building a review queue as a job: in a process of its own, so that a page's request returns at
once and the build's memory is never the app server's (issue 39: at 18M verdict rows a build inside
the server held it for minutes).

The API a page uses::

    job_id = start_build(store, gen_id, audit_rate=0.05, seed=0, reviewers_required=1,
                         created_by=None, audit="uniform", audit_epsilon=None,
                         criteria=None, items=None, claims=None)
    status = build_status(store, job_id)

:func:`start_build` checks the options and the builder's role at once (the same check
:func:`evalcore.review.build.build_queue` makes, so that a refusal is said on the page, not later),
writes the job under ``<state>/jobs/<job_id>/job.json`` (mode 0600; the process removes it once
read, the login's claims with it) and starts a Python process running
:func:`run` on the job's directory (:data:`CHILD`), which calls :func:`~evalcore.review.build.build_queue` with the
same arguments (the login's ``claims`` are checked again there against the roles file as it is
then). The label store's database URL goes to the child in its environment, never into a file.

:func:`build_status` reads ``status.json`` (written atomically by the child at each stage and at
most every :data:`TELL_EVERY` seconds while the cases are written) and returns a dict:

* ``{"job_id", "gen_id", "state": "running", "stage", "fraction"}`` while it runs (``stage``: one of
  "starting", "detecting", "drawing the audit", "writing the cases", "writing the queue's Parquet
  copy"; ``fraction`` between 0 and 1);
* ``{..., "state": "done", "queue_id", "fraction": 1.0}`` when the queue is written;
* ``{..., "state": "failed", "error"}`` with the one-line error (an :class:`~evalcore.errors.EvalcoreError`'s
  message, or the last line the process wrote when it ended without a word); a failed build writes
  no queue (the label store writes a queue and its cases in one transaction).

An unknown ``job_id`` is a :class:`~evalcore.errors.NotFoundError` (field ``job``)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError, InputError, NotFoundError, one_line
from evalcore.review.audit import check_method
from evalcore.storage.db import ENV as DB_ENV
from evalcore.storage.db import database_url
from evalcore.storage.files import atomic_write_bytes
from evalcore.storage.paths import utcnow
from evalcore.storage.roles import acting
from evalcore.storage.store import Store

JOBS_DIR = "jobs"
#: seconds between two progress writes while the cases are written (a stage change is written at once)
TELL_EVERY = 0.5
#: the job's process (not ``-m evalcore.review.jobs``: the package imports this module first, and
#: runpy's warning about it would be the last line of a process killed without a word)
CHILD = "import sys; from evalcore.review.jobs import run; sys.exit(run(sys.argv[1]))"
#: the processes this server started (polled, so that none stays a zombie and one that died is said)
_STARTED: dict[str, subprocess.Popen] = {}


def _job_dir(store: Store, job_id: str) -> Path:
    if not job_id or not all(ch.isalnum() or ch in "-_" for ch in job_id):
        raise NotFoundError(f"no queue build job {job_id!r}", field="job")
    return store.state / JOBS_DIR / job_id


def start_build(
    store: Store,
    gen_id: str,
    *,
    audit_rate: float = 0.05,
    seed: int = 0,
    reviewers_required: int = 1,
    created_by: str | None = None,
    audit: str = "uniform",
    audit_epsilon: float | None = None,
    criteria: Sequence[str] | None = None,
    items: Sequence[str] | None = None,
    claims: Mapping[str, Any] | None = None,
) -> str:
    """Start building a queue in a process of its own (see the module docstring); the job's id."""
    store.generation(gen_id)  # a generation that is not there is said now
    check_method(audit, audit_epsilon)
    acting(store.state, "reviewer", "adjudicator", "admin", name=created_by or "", claims=claims)
    try:
        rate = float(audit_rate)
    except (TypeError, ValueError):
        rate = float("nan")
    if not 0.0 <= rate <= 1.0:
        raise InputError(f"the audit rate must lie between 0 and 1, not {audit_rate!r}", field="--audit-rate")
    job_id = f"build-{utcnow().strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
    d = _job_dir(store, job_id)
    d.mkdir(parents=True, mode=0o700)
    job = {
        "job_id": job_id,
        "gen_id": gen_id,
        "data": store.remote or str(store.data),
        "state": str(store.state),
        "keys": str(store.keys),
        "claims": None if claims is None else json.loads(json.dumps(dict(claims), default=str)),
        "params": {
            "audit_rate": rate,
            "seed": seed,
            "reviewers_required": reviewers_required,
            "created_by": created_by,
            "audit": audit,
            "audit_epsilon": audit_epsilon,
            "criteria": None if criteria is None else [str(c) for c in criteria],
            "items": None if items is None else [str(i) for i in items],
        },
    }
    _write(d / "job.json", job)
    os.chmod(d / "job.json", 0o600)
    _tell(d, job, {"state": "running", "stage": "starting", "fraction": 0.0})
    env = dict(os.environ)
    url = database_url(store)
    if url:
        env[DB_ENV] = url
    with open(d / "stderr.log", "wb") as err:
        _STARTED[job_id] = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(d)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            start_new_session=True,  # a page's rerun or a stopped request does not end it
        )
    return job_id


def build_status(store: Store, job_id: str) -> dict[str, Any]:
    """Where a queue build job is (see the module docstring)."""
    d = _job_dir(store, job_id)
    try:
        status = json.loads((d / "status.json").read_text("utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"no queue build job {job_id!r}", field="job") from None
    if status.get("state") != "running":
        _reap(job_id)
    elif not _alive(job_id, status.get("pid")):
        # read once more: the process may have written its end between the two reads
        status = json.loads((d / "status.json").read_text("utf-8"))
        if status.get("state") == "running":
            status = {**status, "state": "failed", "error": _last_words(d)}
    return status


def _reap(job_id: str) -> None:
    """Wait for a job's process that has said its end (it exits right after), so none stays a zombie."""
    proc = _STARTED.pop(job_id, None)
    if proc is not None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # (left to subprocess, which reaps it when it is dropped)
            pass


def _alive(job_id: str, pid: Any) -> bool:
    proc = _STARTED.get(job_id)
    if proc is not None:
        if proc.poll() is None:
            return True
        del _STARTED[job_id]
        return False
    if not isinstance(pid, int):
        return True  # started, not yet running: its first word comes with its pid
    try:
        os.kill(pid, 0)  # (a server started again does not hold the process: ask the system)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _last_words(d: Path) -> str:
    try:
        lines = [line for line in (d / "stderr.log").read_text("utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    said = one_line(lines[-1]) if lines else "no message"
    return f"the build process ended before the queue was written ({said})"


def _write(path: Path, obj: Mapping[str, Any]) -> None:
    atomic_write_bytes(path, (json.dumps(obj, sort_keys=True) + "\n").encode("utf-8"))


def _tell(d: Path, job: Mapping[str, Any], what: Mapping[str, Any]) -> None:
    _write(
        d / "status.json",
        {"job_id": job["job_id"], "gen_id": job["gen_id"], "updated_at": utcnow().isoformat(), **what},
    )


def run(job_dir: str | Path) -> int:
    """The job's process: build the queue the job file describes, telling its progress; 0 when the
    queue is written, 2 when it is refused (its one-line error in the status)."""
    from evalcore.review.build import build_queue

    d = Path(job_dir)
    job = json.loads((d / "job.json").read_text("utf-8"))
    (d / "job.json").unlink()  # read once: the login's claims do not stay on disk
    pid = os.getpid()
    said: dict[str, float] = {}  # stage -> when last written

    def tell(stage: str, fraction: float) -> None:
        now = time.monotonic()
        if stage not in said or now - said[stage] >= TELL_EVERY:
            said[stage] = now
            _tell(d, job, {"state": "running", "stage": stage, "fraction": round(float(fraction), 4), "pid": pid})

    tell("starting", 0.0)
    try:
        store = Store(job["data"], job["state"], job["keys"])
        q = build_queue(store, job["gen_id"], claims=job["claims"], progress=tell, **job["params"])
    except EvalcoreError as e:
        _tell(d, job, {"state": "failed", "error": one_line(str(e)), "pid": pid})
        return 2
    _tell(d, job, {"state": "done", "queue_id": q["queue_id"], "fraction": 1.0, "pid": pid})
    return 0
