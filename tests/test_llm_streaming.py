"""Streamed calls to an ``--api-base`` server (issue 41; evalcore.llm.streaming, docs/JUDGE.md "Streaming"),
through litellm's real HTTP path against the local server (tests/fakellm.py), which answers ``stream: true``
with Server-Sent Events:

* a streamed reply reads exactly as the unstreamed one (text, the server's model, id, usage, finish_reason),
  in every structured form (a forced tool call's arguments assembled from their pieces), cut at max_tokens,
  and its errors are classified the same;
* a streamed call past its deadline is closed while the server is still sending tokens (so no read timeout
  could end it: only the whole reply's deadline), the server records the disconnect mid-stream, and the next
  call gets the server's one slot: the abandoned generation was stopped, not finished;
* a judge run streams to its ``--api-base`` and its manifest says so (``retry_policy.stream``);
  ``EVALCORE_STREAM=0`` sends it unstreamed, and says that.
"""

from __future__ import annotations

import asyncio

import pytest
from fakellm import fake, fake_server, no_network  # noqa: F401
from test_judge import calls, store, values, verdicts, world  # noqa: F401
from test_llm_limits import _judge

from evalcore.llm.engine import AttemptFailure, attempt
from evalcore.llm.structured import structured_params

MODEL = "openai/fake-judge"
JUDGE = [{"role": "user", "content": 'Answer:\n{\n  "helpful": {"reason": "<why>", "verdict": "pass" | "fail"}\n}'}]
VERDICT = {"type": "object", "properties": {"reason": {"type": "string"}, "verdict": {"enum": ["pass", "fail"]}}}
SCHEMA = {"type": "object", "properties": {"helpful": VERDICT}, "required": ["helpful"]}


def _both(fake, params: dict, fault: str | None = None) -> tuple:
    """The same request unstreamed then streamed (the fault, if any, on each): the two replies or failures."""
    fake.configure(faults={0: fault, 1: fault} if fault else {})

    async def one(stream: bool):
        try:
            return await attempt(MODEL, JUDGE, {"seed": 3, "max_tokens": 400, **params}, fake.url, 30.0, None, stream)
        except AttemptFailure as f:
            return f

    return asyncio.run(one(False)), asyncio.run(one(True))


def _same(a, b) -> None:
    if isinstance(a, AttemptFailure):
        assert isinstance(b, AttemptFailure) and (a.kind, a.retryable) == (b.kind, b.retryable), (a, b)
        return
    assert (a.response_id, b.response_id) == ("chatcmpl-fake-0", "chatcmpl-fake-1")  # the server's ids
    a.latency_ms = b.latency_ms = a.response_id = b.response_id = None
    assert a == b


@pytest.mark.parametrize("form", ["json_schema", "json_object", "tool", "tolerant-parse"])
def test_a_streamed_reply_reads_as_the_unstreamed_one(fake, no_network, form):
    fake.speaks = {"json_schema", "json_object", "tool", "prompt"}
    params = structured_params(form, SCHEMA)
    plain, streamed = _both(fake, params)
    assert [e["stream"] for e in fake.log] == [False, True] and fake.log[1]["include_usage"]
    assert plain.text.startswith('{"helpful"') and plain.tokens_out and plain.model == "fake-judge-2026-01-01"
    if form == "tool":
        assert plain.finish_reason == "tool_calls" and fake.log[1]["tools"]
    _same(plain, streamed)


@pytest.mark.parametrize("fault", ["loop", "malformed", "429", "500", "503"])
def test_a_streamed_fault_reads_as_the_unstreamed_one(fake, no_network, fault):
    plain, streamed = _both(fake, {}, fault)
    if fault == "loop":  # cut at max_tokens: finish_reason length, the usage the server counted
        assert plain.finish_reason == "length" and plain.tokens_out == fake.log[0]["tokens_out"]
    _same(plain, streamed)


def test_a_streamed_call_past_its_deadline_is_closed_and_the_next_gets_the_slot(fake, no_network):
    # the first request would hold the server's one slot for 60 s, sending a token every 20 ms: a read timeout
    # never fires, only the whole reply's deadline (0.5 s) can end it
    fake.configure(faults={0: "hang"}, timeout_sleep=60)

    async def both():
        with pytest.raises(AttemptFailure) as gave_up:
            await attempt(MODEL, JUDGE, {"max_tokens": 400}, fake.url, 0.5, None, True)
        return gave_up.value, await attempt(MODEL, JUDGE, {"max_tokens": 400}, fake.url, 300.0, None, True)

    gave_up, reply = asyncio.run(both())
    assert gave_up.kind == "timeout" and "the stream was closed" in gave_up.message, gave_up
    first, second = sorted(fake.log, key=lambda e: e["index"])
    assert first["stream"] and first["status"] == 499 and first["chunks_sent"] > 1, first  # left mid-stream
    assert fake.events == [("generating", 0), ("cancelled", 0)]  # stopped by the disconnect, never finished
    assert second["status"] == 200 and reply.text == second["content"] and reply.tokens_out == second["tokens_out"]


def test_a_judge_run_streams_and_its_manifest_says_so(capsys, world, fake, monkeypatch):  # noqa: F811
    monkeypatch.delenv("EVALCORE_STREAM")  # the default: streamed to an --api-base (the fixture turned it off)
    code, _, err = _judge(capsys, world, fake, "streamed")
    assert code == 0, err
    assert fake.log and all(e["stream"] and e["include_usage"] for e in fake.log)
    assert store(world).run("streamed").manifest.retry_policy["stream"] is True
    n = len(fake.log)
    monkeypatch.setenv("EVALCORE_STREAM", "0")
    code, _, err = _judge(capsys, world, fake, "plain")
    assert code == 0, err
    assert len(fake.log) > n and not any(e["stream"] for e in fake.log[n:])
    assert store(world).run("plain").manifest.retry_policy["stream"] is False
    # the same requests, the same verdicts, tokens and reported model
    assert values(verdicts(world, "streamed")) == values(verdicts(world, "plain"))
    kept = ("call_id", "model", "prompt_hash", "tokens_in", "tokens_out", "attempts", "error")
    streamed, plain = calls(world, "streamed"), calls(world, "plain")
    assert [{k: c[k] for k in kept} for c in streamed] == [{k: c[k] for k in kept} for c in plain]
