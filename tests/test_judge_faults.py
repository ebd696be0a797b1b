"""Failed calls can be made again, a failing run stops early, and nothing paid for is lost: through
litellm's real HTTP path against the local server (tests/fakellm.py).

* An outage longer than the retry budget (every request from the 21st on answers 503) pollutes
  the run; a plain --resume says it is polluted and how to retry; once the server is back,
  ``--resume --retry-failed`` makes exactly one new request per failed call and rewrites the run
  complete, with the verdicts of a clean run.
* An always-failing server stops the run after the first ``--stop-after-failures`` calls failed
  for the same reason, with a bounded number of requests, keeping the journal; resumed with
  ``--retry-failed`` once the server answers, it completes."""

from __future__ import annotations

import json

from fakellm import fake, fake_server, no_network  # noqa: F401
from test_judge import MODEL, SIX, _guard, calls, run, store, values, verdicts, world  # noqa: F401


def _judge(capsys, world, fake, run_id, *args):
    return run(capsys, *world, "judge", "--gen", "g", "--rubric", SIX, "--mode", "split", "--model", MODEL,
               "--api-base", fake.url, "--rounds", 1, "--run-id", run_id, "--limit", 5, "--concurrency", 4,
               "--backoff", 0.01, "--max-retries", 2, *args)


def test_an_outage_pollutes_the_run_and_retry_failed_completes_it(capsys, world, fake):
    fake.configure(faults={i: "503" for i in range(20, 10_000)})  # down from the 21st request on
    code, out, err = _judge(capsys, world, fake, "out")
    assert code == 1, err  # polluted
    m = store(world).run("out").manifest
    failed = set(m.failed_call_ids)
    assert m.status == "polluted" and 0 < len(failed) < 30 and m.totals.calls == 30
    # a plain resume says it is polluted and how to retry, and sends nothing
    sent = fake.requests
    code, _, err = run(capsys, *world, "judge", "--resume", "--run-id", "out", "--api-base", fake.url)
    assert code == 2 and "is polluted" in err and "--retry-failed" in err and fake.requests == sent
    code, _, err = run(capsys, *world, "judge", "--run-id", "out", "--retry-failed", "--api-base", fake.url)
    assert code == 2 and "needs --resume" in err and len(err.strip().splitlines()) == 1
    # the server is back: exactly one new request per failed call
    fake.configure(faults={})
    code, out, err = run(capsys, *world, "judge", "--resume", "--run-id", "out", "--retry-failed", "--api-base",
                         fake.url, "--json")
    assert code == 0, err
    assert fake.requests - sent == len(failed)
    r = json.loads(out)
    assert r["status"] == "complete" and r["failed_calls"] == 0 and r["calls"] == 30
    m = store(world).run("out").manifest
    assert m.status == "complete" and m.failed_call_ids == [] and m.totals.failed_calls == 0
    cs = {c["call_id"]: c for c in calls(world, "out")}
    assert all(cs[c]["attempts"] == 4 and cs[c]["error"] is None for c in failed)  # 3 failed + 1 new
    # the verdicts of a clean run against the same deterministic server
    fake.reset()
    code, _, err = _judge(capsys, world, fake, "clean")
    assert code == 0, err
    assert values(verdicts(world, "out")) == values(verdicts(world, "clean"))
    # a complete run has nothing to retry
    code, _, err = run(capsys, *world, "judge", "--resume", "--run-id", "out", "--retry-failed", "--api-base", fake.url)
    assert code == 2 and "nothing to retry" in err


def test_an_always_failing_server_stops_the_run_early_and_keeps_what_it_paid_for(capsys, world, fake):
    fake.configure(always="500")
    code, out, err = _judge(capsys, world, fake, "down", "--stop-after-failures", 3)
    last = err.strip().splitlines()[-1]
    assert code == 2 and "stopped: the first 3 calls all failed (server:" in last, err
    # at most the first 3 calls and the ones in flight beside them, each with its retries
    assert fake.requests <= (3 + 4) * 3 < 30 * 3
    assert not store(world).dir_of("run", "down").exists()
    jpath = world[1] / "runs-in-progress" / "down" / "journal.jsonl"
    attempts = [r for r in map(json.loads, jpath.read_text().splitlines()) if r["type"] == "attempt"]
    assert len(attempts) == fake.requests  # every request paid for is journaled
    fake.configure(always=None)
    sent = fake.requests
    code, out, err = run(capsys, *world, "judge", "--resume", "--run-id", "down", "--retry-failed", "--api-base",
                         fake.url, "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "complete"
    assert fake.requests - sent == 30  # every call once: none had succeeded
