"""``--structured auto`` negotiated, not guessed (issue 41), through litellm's real HTTP path against the
local server (tests/fakellm.py) told which forms it speaks:

* a server like llama-cpp-python's (HTTP 500 to ``response_format: json_schema``, constrains output
  with ``json_object`` + a schema) gets json_object; one that only takes a forced tool call gets tool;
  one that speaks none of them but answers the prompt gets the tolerant parse; one that ignores the
  parameters and answers in the shape asked gets json_schema;
* each is found with one probe per form tried (at most ``PROBE_MAX_TOKENS`` tokens), remembered per
  model and server in the state directory (a second run sends no probe), and recorded in the run's
  manifest with what each form tried got back;
* when none works, one error names the server's own messages, and nothing is written.
"""

from __future__ import annotations

import json

import pytest
from fakellm import fake, fake_server, no_network  # noqa: F401
from test_judge import MODEL, SIX, _guard, calls, run, store, world  # noqa: F401

from evalcore.llm.structured import PROBE_MAX_TOKENS


def _judge(capsys, world, fake, run_id, *args):
    return run(
        capsys,
        *world,
        "judge",
        "--gen",
        "g",
        "--rubric",
        SIX,
        "--mode",
        "single",
        "--model",
        MODEL,
        "--api-base",
        fake.url,
        "--run-id",
        run_id,
        "--limit",
        3,
        "--backoff",
        0.01,
        *args,
    )


@pytest.mark.parametrize(
    "speaks, form, probes",
    [
        ({"json_object", "prompt"}, "json_object", 2),  # llama-cpp-python's server
        ({"tool"}, "tool", 3),
        ({"prompt"}, "tolerant-parse", 4),
        (None, "json_schema", 1),  # a server that ignores the parameters and answers in the shape asked
    ],
)
def test_auto_finds_the_form_the_server_speaks_and_remembers_it(capsys, world, fake, speaks, form, probes):
    fake.speaks = speaks
    code, out, err = _judge(capsys, world, fake, "first", "--json")
    assert code == 0, err
    assert len(fake.probes) == probes and {p["max_tokens"] for p in fake.probes} == {PROBE_MAX_TOKENS}
    m = store(world).run("first").manifest
    assert m.status == "complete" and m.structured_output == form
    tried = m.knobs["structured_probe"][MODEL]["tried"]
    assert [t["form"] for t in tried][-1] == form and tried[-1]["error"] is None
    assert all(t["error"] for t in tried[:-1])
    if speaks and "json_object" in speaks:  # the server's own error for json_schema is kept
        assert "HTTP 500" in tried[0]["error"] or "Input should be 'text' or 'json_object'" in tried[0]["error"]
    sent = fake.log[0]
    if form == "json_object":
        assert sent["response_format"]["type"] == "json_object" and "schema" in sent["response_format"]
    elif form == "tool":
        assert sent["tools"][0]["function"]["name"] == "verdicts" and sent["response_format"] is None
    elif form == "tolerant-parse":
        assert sent["response_format"] is None and not sent["tools"]
    else:
        assert sent["response_format"]["type"] == "json_schema"
    assert all(c["error"] is None for c in calls(world, "first")) and len(calls(world, "first")) == 3
    memory = json.loads((world[1] / "structured.json").read_text())
    assert memory[f"{fake.url} {MODEL}"]["form"] == form
    # a second run: remembered, no probe
    code, _, err = _judge(capsys, world, fake, "second")
    assert code == 0, err
    assert len(fake.probes) == probes
    k = store(world).run("second").manifest.knobs["structured_probe"][MODEL]
    assert k["how"].startswith("remembered") and store(world).run("second").manifest.structured_output == form


def test_when_no_form_works_the_error_names_the_servers_own_messages(capsys, world, fake):
    fake.speaks = set()  # refuses every parameter, and its model does not answer the prompt in JSON
    code, out, err = _judge(capsys, world, fake, "none")
    assert code == 2 and err.count("\n") == 1, err
    assert "Input should be 'text' or 'json_object'" in err  # json_schema: the server's HTTP 500
    assert "response_format json_object is not supported" in err and "tools are not supported" in err
    assert "Sure, here it is" in err  # prompt-only: what the model said
    assert fake.requests == 0 and len(fake.probes) == 4
    assert not store(world).dir_of("run", "none").exists() and not (world[1] / "runs-in-progress" / "none").exists()
    assert not (world[1] / "structured.json").exists()  # nothing remembered


def test_a_dry_run_sends_no_probe_and_a_form_named_is_used_as_it_is(capsys, world, fake):
    fake.speaks = {"json_object"}
    code, out, err = _judge(capsys, world, fake, "dry", "--dry-run", "--json")
    assert code == 0, err
    assert fake.probes == [] and fake.requests == 0
    code, _, err = _judge(capsys, world, fake, "named", "--structured", "json_object")
    assert code == 0, err
    assert fake.probes == [] and store(world).run("named").manifest.structured_output == "json_object"
    # once a run has found the form, a dry run shows it (still without a probe)
    code, _, err = _judge(capsys, world, fake, "found")
    assert code == 0, err
    probes = len(fake.probes)
    code, out, err = _judge(capsys, world, fake, "dry2", "--dry-run", "--json")
    assert code == 0, err
    assert len(fake.probes) == probes and json.loads(out)["structured"] == "json_object"


def test_a_batch_run_reads_each_lines_tool_call(capsys, world, fake):
    fake.speaks = {"tool"}
    code, _, err = _judge(capsys, world, fake, "tb", "--structured", "tool", "--batch", "--poll", 0.05)
    assert code == 0, err
    assert fake.batches_created == 1 and fake.requests == 0  # every line parsed from its tool call's arguments
    assert store(world).run("tb").manifest.structured_output == "tool"
    assert all(c["error"] is None for c in calls(world, "tb")) and len(calls(world, "tb")) == 3


def test_litellms_logging_worker_notice_does_not_reach_stderr():
    """litellm's logging worker warned "LoggingWorker: event loop changed" on stderr when a call ran on
    another event loop than an earlier test's (a shuffled order, CI seed 20261206), a second line
    under the command's one-line error. Its records are dropped; litellm's other records are not."""
    import logging

    from evalcore.llm.client import load_litellm

    load_litellm()
    logger = logging.getLogger("LiteLLM")
    notice = logger.makeRecord("LiteLLM", logging.WARNING, "/x/litellm/logging_worker.py", 166,
                               "LoggingWorker: event loop changed", (), None)
    other = logger.makeRecord("LiteLLM", logging.WARNING, "/x/litellm/utils.py", 1, "something else", (), None)
    assert logger.filter(notice) is False
    assert logger.filter(other)


def test_the_form_is_probed_not_the_model(capsys, world, fake):
    """A model that answers the probe false, in the schema, still speaks the form (CI's 135M model once did,
    and the run stopped: 'returned {"ok": true} in no structured-output form'); a reply outside the schema does not."""
    fake.probe_answer = '{"ok": false}'
    code, _, err = _judge(capsys, world, fake, "said-false")
    assert code == 0, err
    assert store(world).run("said-false").manifest.structured_output == "json_schema" and len(fake.probes) == 1
    store(world).state_path("structured.json").unlink()  # forget it: probe again
    fake.reset()
    fake.probe_answer = '{"ok": "yes"}'
    code, _, err = _judge(capsys, world, fake, "said-yes")
    assert code == 2 and "in no structured-output form" in err and len(fake.probes) == 4, err
