"""Calls that behave on real servers (issue 41), through litellm's real HTTP path against the local
server (tests/fakellm.py):

* every judge, grader and generation call carries ``max_tokens`` (the default of its kind, or
  ``--max-tokens``), and the manifest records it;
* a reason is bounded: a prompt line, ``maxLength`` in the schema sent to a self-hosted server, and a
  longer reason cut when read, not refused;
* a reply that loops is cut at the limit, and its retry is sent another seed (and a set temperature
  raised within its recorded bound), journaled as ``varied``;
* a call the client abandons at ``--timeout`` is not waited for by its retry: the connection is
  closed, and a server that stops generating when its client leaves (as llama.cpp's does) frees its
  one slot for the retry.
"""

from __future__ import annotations

import json

from fakellm import fake, fake_server, no_network  # noqa: F401
from test_judge import MODEL, SIX, _guard, calls, journal, run, store, world  # noqa: F401

from evalcore.contract import schema as S
from evalcore.llm.prompts import REASON_CHARS, VerdictParser, response_schema


def _judge(capsys, world, fake, run_id, *args, mode="split"):
    return run(
        capsys,
        *world,
        "judge",
        "--gen",
        "g",
        "--rubric",
        SIX,
        "--mode",
        mode,
        "--model",
        MODEL,
        "--api-base",
        fake.url,
        "--run-id",
        run_id,
        "--limit",
        2,
        "--backoff",
        0.01,
        *args,
    )


def test_every_call_carries_max_tokens_and_the_manifest_records_it(capsys, world, fake):
    code, _, err = _judge(capsys, world, fake, "split")
    assert code == 0, err
    assert {e["max_tokens"] for e in fake.log} == {400}  # split: one criterion a call, 400 each
    fake.reset()
    code, _, err = _judge(capsys, world, fake, "single", mode="single")
    assert code == 0, err
    assert {e["max_tokens"] for e in fake.log} == {6 * 400}  # single: the six criteria in one call
    k = store(world).run("single").manifest.knobs
    assert k["max_tokens"] is None and k["max_tokens_sent"] == [2400]
    fake.reset()
    code, _, err = _judge(capsys, world, fake, "given", "--max-tokens", 123)
    assert code == 0, err
    assert {e["max_tokens"] for e in fake.log} == {123}
    k = store(world).run("given").manifest.knobs
    assert k["max_tokens"] == 123 and k["max_tokens_sent"] == [123]
    # the pairwise grader and a generation: their own defaults, and --max-tokens
    fake.reset()
    code, _, err = run(
        capsys,
        *world,
        "judge-pairs",
        "--session",
        "sess",
        "--model",
        MODEL,
        "--api-base",
        fake.url,
        "--run-id",
        "grader",
        "--limit",
        1,
    )
    assert code == 0, err
    assert {e["max_tokens"] for e in fake.log} == {400}
    assert store(world).run("grader").manifest.knobs["max_tokens_sent"] == [400]
    fake.reset()
    code, _, err = run(
        capsys,
        *world,
        "generate",
        "--suite",
        "s",
        "--model",
        MODEL,
        "--api-base",
        fake.url,
        "--gen-id",
        "gen2",
        "--limit",
        2,
        "--max-tokens",
        77,
    )
    assert code == 0, err
    assert {e["max_tokens"] for e in fake.log} == {77}
    assert store(world).generation("gen2").manifest.knobs["max_tokens"] == 77
    code, _, err = run(
        capsys, *world, "generate", "--suite", "s", "--model", MODEL, "--gen-id", "gen3", "--max-tokens", 0, "--dry-run"
    )
    assert code == 2 and "--max-tokens" in err


def test_a_reason_is_bounded_and_a_longer_one_is_cut_not_refused(capsys, world, fake):
    code, _, err = _judge(capsys, world, fake, "bounded", "--structured", "json_schema")
    assert code == 0, err
    e = fake.log[0]
    assert f"Keep each reason under {REASON_CHARS} characters." in e["messages"][1]["content"]
    props = e["response_format"]["json_schema"]["schema"]["properties"]
    assert {p["properties"]["reason"].get("maxLength") for p in props.values()} == {REASON_CHARS}
    # a provider (no --api-base) is not sent maxLength: OpenAI's strict mode refuses length keywords
    crit = S.Criterion(name="ok", kind="binary")
    assert "maxLength" not in response_schema([crit])["properties"]["ok"]["properties"]["reason"]
    long = "x" * (REASON_CHARS + 400)
    got = VerdictParser([crit])(json.dumps({"ok": {"reason": long, "verdict": "pass"}}))
    assert got[0]["reason"] == long[:REASON_CHARS] and got[0]["raw_verdict"] == "pass"


def test_a_looping_reply_is_cut_at_the_limit_and_retried_with_another_seed(capsys, world, fake):
    fake.configure(faults={0: "loop", 1: "loop"})
    code, _, err = _judge(capsys, world, fake, "loop", "--seed", 5, "--temperature", 0, "--concurrency", 1)
    assert code == 0, err
    first, second, third = fake.log[0], fake.log[1], fake.log[2]
    assert first["max_tokens"] == 400 and first["tokens_out"] <= 400  # cut at the limit, not at the context's end
    assert (first["seed"], first["temperature"]) == (5, 0)
    assert (second["seed"], second["temperature"]) == (5 + 7919, 0.2)  # the first retry: another seed, warmer
    assert (third["seed"], third["temperature"]) == (5 + 2 * 7919, 0.4)
    assert third["messages"] == first["messages"]
    recs = journal(world, "loop")
    call = next(r for r in recs if r["type"] == "call" and r["attempts"] == 3)
    assert call["ok"] and call["varied"] == {"seed": 5 + 2 * 7919, "temperature": 0.4}
    log = call["attempt_log"]
    assert [a["kind"] for a in log] == ["parse", "parse"] and "finish_reason length" in log[0]["error"]
    assert "varied" not in log[0] and log[1]["varied"] == {"seed": 5 + 7919, "temperature": 0.2}
    policy = store(world).run("loop").manifest.retry_policy
    assert "seed + 7919 per retry" in policy["parse_retry"] and "at most 1" in policy["parse_retry"]


def test_an_abandoned_call_is_not_waited_for_by_its_retry(capsys, world, fake):
    # the first request holds the server's one slot for 60 s unless its client leaves; the client gives up at 0.5 s
    fake.configure(faults={0: "hang"}, timeout_sleep=60)
    code, _, err = _judge(capsys, world, fake, "hang", "--timeout", 0.5, "--concurrency", 1, "--limit", 1)
    assert code == 0, err
    assert ("cancelled", 0) in fake.events and ("finished", 0) not in fake.events
    cs = calls(world, "hang")
    assert len(cs) == 6 and all(c["error"] is None for c in cs)
    assert sorted(c["attempts"] for c in cs) == [1, 1, 1, 1, 1, 2]
