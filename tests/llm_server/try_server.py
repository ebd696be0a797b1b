"""Try an OpenAI-compatible server by hand the way evalcore calls it (issue 41; docs/JUDGE.md, "llama-cpp-python,
tried by hand"): the four structured-output probes, then whether a call the client abandons is waited for.

    .venv/bin/python tests/llm_server/try_server.py http://127.0.0.1:PORT/v1 [MODEL]

1. evalcore's probe (evalcore.llm.structured: ``{"ok": true}`` asked with ``max_tokens`` 24) in each form, sent
   as plain HTTP so that the server's own status and body are printed;
2. through evalcore.llm.engine.attempt (litellm's HTTP path): a free-text essay (``max_tokens`` 1500) with a
   1 s timeout, then a 24-token call, timed: a server that keeps generating for the client that left answers the
   second only after the first's whole reply;
3. the same essay streamed and dropped after 1 s by the client, then the same 24-token call, timed.
Prints what it saw; nothing here asserts (tests/test_real_model_cancel.py is the test, on node-llama-cpp).
"""

from __future__ import annotations

import asyncio
import sys
import time

import httpx

from evalcore.llm.engine import AttemptFailure, attempt
from evalcore.llm.structured import FORMS, PROBE_MESSAGES, PROBE_SCHEMA, structured_params

ESSAY = [{"role": "user", "content": "Write a very long essay about the history of the bicycle, in twenty sections."}]
SHORT = {"max_tokens": 24, "response_format": {"type": "json_object"}}


def probes(url: str, model: str) -> None:
    for form in FORMS:
        body = {"model": model, "messages": PROBE_MESSAGES, "max_tokens": 24, **structured_params(form, PROBE_SCHEMA)}
        r = httpx.post(f"{url}/chat/completions", json=body, timeout=300)
        print(f"probe {form}: HTTP {r.status_code} {r.text[:300]}")


async def abandoned(url: str, model: str) -> None:
    try:
        await attempt(f"openai/{model}", ESSAY, {"max_tokens": 1500, "seed": 3}, url, 1.0)
        print("not streamed: the essay was answered within 1 s")
    except AttemptFailure as f:
        print(f"not streamed: the essay's call gave up ({f.kind})")
    t = time.perf_counter()
    r = await attempt(f"openai/{model}", PROBE_MESSAGES, SHORT, url, 600.0)
    print(f"  the next call was answered {time.perf_counter() - t:.1f} s after it was sent ({r.tokens_out} tokens)")


def streamed(url: str, model: str) -> None:
    body = {"model": model, "messages": ESSAY, "max_tokens": 1500, "seed": 3, "stream": True}
    try:
        with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=httpx.Timeout(1.0)) as r:
            deadline = time.monotonic() + 1.0
            for _ in r.iter_bytes():
                if time.monotonic() > deadline:
                    break
    except httpx.TimeoutException:
        pass
    print("streamed: the essay's stream dropped after 1 s")
    t = time.perf_counter()
    r = httpx.post(f"{url}/chat/completions", json={"model": model, "messages": PROBE_MESSAGES, **SHORT}, timeout=600)
    print(f"  the next call was answered {time.perf_counter() - t:.1f} s after it was sent (HTTP {r.status_code})")


if __name__ == "__main__":
    url, model = sys.argv[1].rstrip("/"), (sys.argv[2] if len(sys.argv) > 2 else "smollm2-135m-instruct")
    probes(url, model)
    asyncio.run(abandoned(url, model))
    streamed(url, model)
