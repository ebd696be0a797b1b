"""Real Arize Phoenix and MLflow tracking servers for tests/test_platforms_live.py.

Each server and its own client live in a virtual environment of their own under ``.venv-platforms/``
(``make platforms``, pinned by ``tests/platforms-phoenix.txt`` and ``tests/platforms-mlflow.txt``), never
in evalcore's .venv. A server is started on 127.0.0.1 on a free port with a SQLite backend in a
temporary directory, waited for with a readiness poll (a generous bound; a server that dies or does
not answer fails the test with its log), and its whole process group is killed at the end. Without
the environments the tests skip, saying how to make them, unless ``EVALCORE_REQUIRE_PLATFORMS=1``
(``.ci/run``), where they fail.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venv-platforms"
READY_WITHIN = 600.0  # seconds a server may take to answer its health check (two busy cores: a minute or more)
QUIET = {"PHOENIX_TELEMETRY_ENABLED": "false", "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"}


def python_of(platform: str) -> Path:
    """The platform environment's python, or a skip (a failure under EVALCORE_REQUIRE_PLATFORMS=1)."""
    py = VENVS / platform / "bin" / "python"
    if not (VENVS / ".installed").exists() or not py.exists():
        why = f"{py} is missing: make it with `make platforms` (tests/platforms-{platform}.txt)"
        if os.environ.get("EVALCORE_REQUIRE_PLATFORMS") == "1":
            pytest.fail(f"the platform servers are required (EVALCORE_REQUIRE_PLATFORMS=1) but {why}")
        pytest.skip(why)
    return py


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(cmd: list[str], health: str, log: Path, env: dict[str, str]) -> Iterator[None]:
    """Run ``cmd`` (in a process group of its own) until ``health`` answers 200; kill the group at the end."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=os.environ | QUIET | env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + READY_WITHIN
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{cmd[0]} exited with {proc.returncode} before it answered; its log:\n{_tail(log)}")
            try:
                if httpx.get(health, timeout=5.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{health} did not answer within {READY_WITHIN:.0f} s; the server's log:\n{_tail(log)}")
            time.sleep(0.5)
        yield
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _tail(log: Path, n: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-n:])


@contextmanager
def phoenix(tmp: Path) -> Iterator[str]:
    """A Phoenix server (SQLite in ``tmp``): yields its URL."""
    py, port = python_of("phoenix"), free_port()
    env = {
        "PHOENIX_WORKING_DIR": str(tmp),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
    }
    url = f"http://127.0.0.1:{port}"
    with server([str(py), "-m", "phoenix.server.main", "serve"], f"{url}/healthz", tmp / "phoenix.log", env):
        yield url


@contextmanager
def mlflow(tmp: Path) -> Iterator[str]:
    """An MLflow tracking server (SQLite and artifacts in ``tmp``): yields its URL."""
    py, port = python_of("mlflow"), free_port()
    cmd = [str(py), "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    cmd += ["--backend-store-uri", f"sqlite:///{tmp / 'mlflow.db'}", "--default-artifact-root", str(tmp / "artifacts")]
    url = f"http://127.0.0.1:{port}"
    with server(cmd, f"{url}/health", tmp / "mlflow.log", {}):
        yield url


def client(platform: str, script: str, payload: object) -> object:
    """Run ``script`` with the platform's own client (its environment's python), ``payload`` as JSON
    on stdin; returns the JSON it prints last."""
    r = subprocess.run(
        [str(python_of(platform)), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=os.environ | QUIET,
        timeout=READY_WITHIN,
    )
    assert r.returncode == 0, f"the {platform} client failed:\n{r.stderr[-4000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])
