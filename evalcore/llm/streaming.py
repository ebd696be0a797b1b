"""Streamed calls to an ``--api-base`` server (issue 41): the reply as Server-Sent Events, assembled into
the response an unstreamed call returns, under one deadline for the whole reply.

Why stream: a server that keeps generating for a client that left makes the next call wait behind it.
llama-cpp-python's server stops a generation when its client disconnects only when the request is
streamed (docs/JUDGE.md, "Streaming"); node-llama-cpp's (tests/llm_server/server.mjs) stops either way.
Past the deadline the stream is closed, which drops its connection: that is the hang-up the server sees.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

#: set to 0 (or false, no, off) to send calls to an ``--api-base`` server unstreamed (docs/JUDGE.md, "Streaming")
STREAM_ENV = "EVALCORE_STREAM"


NO_REPEAT_LIMIT = 2**62  # litellm's repeated-chunk check, off (see :func:`streamed`)


def stream_default(api_base: str | None) -> bool:
    """Whether calls to ``api_base`` are streamed unless told: yes to an ``--api-base`` server (unless
    :data:`STREAM_ENV` is 0), never to a provider (no ``api_base``)."""
    return bool(api_base) and os.environ.get(STREAM_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


async def streamed(litellm: Any, model: str, messages: list[dict], kw: dict, timeout: float) -> tuple[Any, Any]:
    """One streamed ``litellm.acompletion`` (``kw``: its other arguments) -> (the response litellm's
    ``stream_chunk_builder`` assembles, the server's usage or None), within ``timeout`` seconds in all.

    Past ``timeout`` the stream is closed (its connection dropped) and :class:`TimeoutError` is raised;
    httpx's own timeout, also ``timeout``, bounds each read only, so a server that keeps sending tokens
    would never trip it. The usage is the one the server sent in its last chunk
    (``stream_options.include_usage``), never litellm's estimate; the model is the one the server named."""
    # litellm raises a server error after 100 identical chunks in a row (REPEATED_STREAMING_CHUNK_LIMIT): a model
    # looping on one token would fail as a server error and be retried unchanged, where its unstreamed reply is
    # cut at max_tokens (finish_reason length) and retried with another seed. The limit bounds a loop here.
    litellm.REPEATED_STREAMING_CHUNK_LIMIT = NO_REPEAT_LIMIT
    stream = None
    chunks: list = []
    try:
        async with asyncio.timeout(timeout):
            stream = await litellm.acompletion(
                model=model,
                messages=messages,
                timeout=timeout,
                max_retries=0,
                stream=True,
                stream_options={"include_usage": True},
                **kw,
            )
            async for chunk in stream:
                chunks.append(chunk)
    except TimeoutError:
        got = f" after {len(chunks)} chunk(s)" if chunks else ""
        raise TimeoutError(f"no whole reply within {timeout:g} s{got}; the stream was closed") from None
    finally:
        if stream is not None:
            await stream.aclose()
    if not chunks:
        raise ConnectionError("the stream ended without a chunk")
    usage = next((u for c in reversed(chunks) if (u := getattr(c, "usage", None)) is not None), None)
    r = litellm.stream_chunk_builder(chunks, messages=messages)
    named = (
        h.get("provider_response_model") for c in chunks if isinstance(h := getattr(c, "_hidden_params", None), dict)
    )
    r.model = next((m for m in named if m), None) or r.model  # litellm's chunks carry the model asked for
    return r, usage
