"""The client's CPU per call, streamed or not, to the local fake server (docs/JUDGE.md, "Streaming").

    .venv/bin/python -W ignore bench/stream_cost.py [--calls 8] [--piece 16]

Makes ``--calls`` judge calls at once (``asyncio.gather`` over ``evalcore.llm.engine.attempt``) to
tests/fakellm.py in this process, unstreamed and streamed (``--piece`` characters per streamed chunk), after a
warm-up of each, and prints the CPU time per call and the wall time of the batch. The fake server runs in this
process, so its time is counted too (the same for both).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fakellm  # noqa: E402

from evalcore.llm.engine import attempt  # noqa: E402

PROMPT = [{"role": "user", "content": 'Answer:\n{\n  "helpful": {"reason": "<why>", "verdict": "pass" | "fail"}\n}'}]


async def batch(url: str, n: int, stream: bool) -> None:
    params = [{"max_tokens": 400, "seed": k} for k in range(n)]
    await asyncio.gather(*(attempt("openai/fake", PROMPT, p, url, 60.0, None, stream) for p in params))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--piece", type=int, default=fakellm.STREAM_PIECE)
    a = ap.parse_args()
    fakellm.STREAM_PIECE = a.piece
    with fakellm.FakeLLM() as fake:
        for stream in (False, True):
            asyncio.run(batch(fake.url, 2, stream))  # warm-up: litellm's lazy imports of each path
        for stream in (False, True):
            cpu, wall = time.process_time(), time.perf_counter()
            asyncio.run(batch(fake.url, a.calls, stream))
            cpu, wall = (time.process_time() - cpu) / a.calls, time.perf_counter() - wall
            print(
                f"{'streamed' if stream else 'unstreamed'}: {cpu * 1000:.1f} ms CPU per call, "
                f"{a.calls} calls in {wall:.2f} s"
            )


if __name__ == "__main__":
    main()
