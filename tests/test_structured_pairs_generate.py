"""``--structured`` on the pairwise grader and on a generation (issue 41), as on ``evalcore judge``
(tests/test_structured_probe.py), through litellm's real HTTP path against the local server
(tests/fakellm.py) told which forms it speaks:

* ``auto`` finds the form the server speaks with the probes of evalcore.llm.structured (one per form
  tried), remembers it per model and server (a judge, a grader and a generation share what was found),
  and every call sends the reply's own schema in that form (the grader's ``reason`` / ``choice``, a
  generation's ``answer`` / ``abstained`` / ``doc_ids``); the form is in the run's ``structured_output``
  (a generation's knob of that name) and how it was found in the knobs' ``structured_probe``;
* a form named explicitly is sent without a probe; ``tolerant`` sends none; a dry run sends no probe;
* a plan made before the grader and generation sent a schema is resumed sending none.
"""

from __future__ import annotations

import json

import pytest
from fakellm import fake, fake_server, no_network  # noqa: F401
from test_judge import MODEL, _guard, calls, run, store, world  # noqa: F401

from evalcore.llm.generation import ANSWER_SCHEMA
from evalcore.llm.pair_grader import pair_schema, plan_form
from evalcore.llm.prompts import REASON_CHARS


def _pairs(capsys, world, fake, run_id, *args):
    return run(
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
        run_id,
        "--limit",
        2,
        "--backoff",
        0.01,
        *args,
    )


def _generate(capsys, world, fake, gen_id, *args):
    return run(
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
        gen_id,
        "--limit",
        3,
        "--backoff",
        0.01,
        *args,
    )


def _schema_sent(entry: dict, form: str) -> dict | None:
    """The JSON schema a logged request carried in ``form`` (None: the tolerant parse sends none)."""
    rf = entry["response_format"]
    if form == "json_schema":
        assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
        return rf["json_schema"]["schema"]
    if form == "json_object":
        assert rf["type"] == "json_object"
        return rf["schema"]
    if form == "tool":
        assert rf is None and entry["tools"][0]["function"]["name"] == "verdicts"
        return entry["tools"][0]["function"]["parameters"]
    assert rf is None and not entry["tools"]
    return None


SPEAKS = [
    ({"json_object", "prompt"}, "json_object", 2),  # llama-cpp-python's server: HTTP 500 to json_schema
    ({"tool"}, "tool", 3),
    ({"prompt"}, "tolerant-parse", 4),
    (None, "json_schema", 1),  # a server that ignores the parameters and answers in the shape asked
]


@pytest.mark.parametrize("speaks, form, probes", SPEAKS)
def test_judge_pairs_auto_finds_the_form_and_sends_the_graders_schema(capsys, world, fake, speaks, form, probes):
    fake.speaks = speaks
    code, out, err = _pairs(capsys, world, fake, "grader", "--json")
    assert code == 0, err
    assert len(fake.probes) == probes
    m = store(world).run("grader").manifest
    assert m.status == "complete" and m.structured_output == form
    tried = m.knobs["structured_probe"][MODEL]["tried"]
    assert [t["form"] for t in tried][-1] == form and tried[-1]["error"] is None and all(t["error"] for t in tried[:-1])
    assert len(fake.log) == 4  # two pairs, both orders
    for e in fake.log:
        schema = _schema_sent(e, form)
        if schema is not None:
            assert schema == pair_schema(bound=True)
            assert schema["properties"]["reason"]["maxLength"] == REASON_CHARS
            assert list(schema["properties"]) == ["reason", "choice"]
    assert all(c["error"] is None for c in calls(world, "grader"))
    # remembered for this model at this server: a second run (of any command) sends no probe
    fake.reset()
    code, _, err = _pairs(capsys, world, fake, "grader-2")
    assert code == 0, err
    assert fake.probes == [] and store(world).run("grader-2").manifest.structured_output == form
    assert "remembered" in store(world).run("grader-2").manifest.knobs["structured_probe"][MODEL]["how"]


@pytest.mark.parametrize("speaks, form, probes", SPEAKS)
def test_generate_auto_finds_the_form_and_sends_the_answers_schema(capsys, world, fake, speaks, form, probes):
    fake.speaks = speaks
    code, out, err = _generate(capsys, world, fake, "gen-auto", "--json")
    assert code == 0, err
    assert len(fake.probes) == probes
    gm = store(world).generation("gen-auto").manifest
    assert gm.status == "complete" and gm.knobs["structured_output"] == form
    assert gm.knobs["structured_probe"][MODEL]["form"] == form
    assert len(fake.log) == 3
    for e in fake.log:
        schema = _schema_sent(e, form)
        assert schema is None or schema == ANSWER_SCHEMA
    assert json.loads(out)["failed"] == 0


def test_a_form_named_is_sent_without_a_probe_and_tolerant_sends_none(capsys, world, fake):
    code, _, err = _pairs(capsys, world, fake, "named", "--structured", "json_object")
    assert code == 0, err
    assert fake.probes == [] and {_schema_sent(e, "json_object") == pair_schema(True) for e in fake.log} == {True}
    assert store(world).run("named").manifest.structured_output == "json_object"
    fake.reset()
    code, _, err = _generate(capsys, world, fake, "gen-tolerant", "--structured", "tolerant")
    assert code == 0, err
    assert fake.probes == [] and {_schema_sent(e, "tolerant-parse") for e in fake.log} == {None}
    assert store(world).generation("gen-tolerant").manifest.knobs["structured_output"] == "tolerant-parse"


def test_a_dry_run_sends_no_probe(capsys, world, fake):
    code, out, err = _pairs(capsys, world, fake, "dry", "--dry-run", "--json")
    assert code == 0, err
    assert fake.probes == [] and fake.log == []
    # nothing remembered for this model at this server: the dry run says what litellm's map says (nothing)
    assert json.loads(out)["structured"] == "tolerant-parse"
    code, _, err = _generate(capsys, world, fake, "remember")  # probes once and remembers json_schema
    assert code == 0, err
    fake.reset()
    code, out, err = _pairs(capsys, world, fake, "dry", "--dry-run", "--json")
    assert code == 0, err
    assert fake.probes == [] and json.loads(out)["structured"] == "json_schema"


def test_a_plan_made_before_structured_output_is_resumed_sending_none():
    assert plan_form({"model": MODEL}) == "tolerant-parse"
    assert plan_form({"model": MODEL, "structured": "auto", "structured_resolved": "json_object"}) == "json_object"
    assert plan_form({"model": MODEL, "structured": "tool"}) == "tool"
