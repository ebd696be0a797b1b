"""Start-up shared by the page benchmarks (bench/review_page.py, bench/agreement_page.py): a
``streamlit run app.py`` server on 127.0.0.1, as tests/browser_util.start_app runs it for the
browser tests, yielding its URL and process."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def start_app(
    root: Path, venv_bin: Path, data: Path, state: Path, log: Path, timeout: float = 60.0
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``streamlit run <root>/app.py`` on 127.0.0.1 over ``data`` / ``state``; yields (URL, process)."""
    port = free_port()
    env = {**os.environ, "EVALCORE_DATA": str(data), "EVALCORE_STATE": str(state),
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    exe = venv_bin / "streamlit"
    cmd = [str(exe) if exe.exists() else "streamlit", "run", str(root / "app.py"), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}: {log.read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(base + "/_stcore/health", timeout=1) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy in {timeout}s")
                time.sleep(0.1)
            yield base, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
