"""`evalcore generate` against the local OpenAI-compatible server (tests/fakellm.py): rounds,
tokens, cost, latency and the abstained flag from the system's own structured output; faults,
Ctrl-C and --resume; the dry run. No test reaches a provider (the guard fails any that tries)."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from fakellm import deterministic_answer, fake, fake_server, make_world, no_network  # noqa: F401

MODEL = "openai/fake-writer"


@pytest.fixture(autouse=True)
def _guard(no_network):
    yield


@pytest.fixture
def world(tmp_path):
    data = tmp_path / "data"
    make_world(data, 8)
    return data, tmp_path / "state"


def run(capsys, world, *args):
    from evalcore.cli import main
    capsys.readouterr()
    code = 0
    try:
        main(["--data", str(world[0]), "--state", str(world[1]), *map(str, args)])
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def gen(capsys, world, fake, *args, gen_id="gen1"):
    return run(capsys, world, "generate", "--suite", "s", "--model", MODEL, "--api-base", fake.url,
               "--gen-id", gen_id, "--backoff", 0.01, *args)


def outputs(world, gen_id):
    from evalcore import Store
    st = Store(*world)
    return st.records("SELECT * FROM read_parquet(?) ORDER BY item_id, round", [st.path_of("generation", gen_id, "outputs")])


def test_generate_answers_every_item_in_every_round(capsys, world, fake, tmp_path):
    sp = tmp_path / "writer.txt"
    sp.write_text("You answer billing questions in two sentences.\n")
    code, out, err = gen(capsys, world, fake, "--rounds", 2, "--limit", 5, "--seed", 3, "--system-prompt", sp,
                         "--knob", "corpus_snapshot=2026-01", "--knob", "revision_budget=2", "--temperature", 0.7)
    assert code == 0, err
    assert fake.requests == 10 and {e["seed"] for e in fake.log} == {3, 4}
    rows = outputs(world, "gen1")
    assert [(r["item_id"], r["round"]) for r in rows] == [(f"q{k:03d}", r) for k in range(5) for r in (1, 2)]
    # the abstained flag and the documents come from the system's own structured reply
    by_prompt = {}
    for e in fake.log:
        by_prompt.setdefault((e["messages"][1]["content"], e["seed"]), deterministic_answer(
            {"messages": e["messages"], "seed": e["seed"]}))
    for r in rows:
        (ans,) = [a for (text, seed), a in by_prompt.items()
                  if f"How do I do task {int(r['item_id'][1:])}?" in text and seed == 3 + r["round"] - 1]
        assert (r["output"], r["abstained"], r["retrieved_doc_ids"]) == (ans["answer"], ans["abstained"], ans["doc_ids"])
        assert r["error"] is None and r["latency_ms"] > 0 and r["cost_usd"] is None
    assert sum(r["tokens_in"] for r in rows) == fake.tokens_in and sum(r["tokens_out"] for r in rows) == fake.tokens_out
    assert all(e["messages"][0]["content"] == "You answer billing questions in two sentences." for e in fake.log)
    from evalcore import Store
    from evalcore.contract import hashing as H
    st = Store(*world)
    m = st.generation("gen1").manifest
    assert m.source == "generated" and m.status == "complete" and m.rounds == 2 and m.totals.calls == 10
    assert m.totals.cost_usd is None
    k = m.knobs
    assert k["writer_prompt_hash"] == H.text_hash("You answer billing questions in two sentences.")
    assert k["corpus_snapshot"] == "2026-01" and k["revision_budget"] == 2 and k["temperature"] == 0.7
    assert k["generator_model"] == "fake-judge-2026-01-01" and k["requested_model"] == MODEL
    assert st.validate()["generations"] == 2
    code, out, _ = run(capsys, world, "generations", "--json")
    g = {r["gen_id"]: r for r in json.loads(out)}["gen1"]
    assert g["outputs"] == 10 and g["abstained_rate"] == sum(r["abstained"] for r in rows) / 10
    # and the new generation can be judged, retrieval criteria included
    code, _, err = run(capsys, world, "judge", "--gen", "gen1", "--rubric", REPO / "tests/golden/rubrics/local.toml",
                       "--mode", "split", "--model", "openai/fake-judge", "--api-base", fake.url, "--run-id", "j1")
    assert code == 0, err
    assert fake.requests == 20


def test_price_gives_a_cost_and_faults_are_retried(capsys, world, fake):
    fake.configure(faults={0: "malformed", 2: "missing", 4: "429"})
    code, _, err = gen(capsys, world, fake, "--limit", 4, "--price", "0.5,1.5")
    assert code == 0, err
    assert fake.requests == 4 + 3
    rows = outputs(world, "gen1")
    for r in rows:
        assert r["cost_usd"] == pytest.approx(r["tokens_in"] * 0.5e-6 + r["tokens_out"] * 1.5e-6, abs=1e-12)
    recs = [json.loads(x) for x in (world[1] / "generations-done" / "gen1" / "journal.jsonl").read_text().splitlines()]
    calls = [r for r in recs if r["type"] == "call"]
    assert sum(r["attempts"] for r in calls) == 7
    raws = {a["raw"] for r in calls for a in r["attempt_log"] if a["kind"] == "parse"}
    assert raws == {e["content"] for e in fake.log if e["fault"] in ("malformed", "missing")}


def test_a_reply_that_never_parses_pollutes_the_generation(capsys, world, fake):
    fake.configure(always="missing")
    code, out, err = gen(capsys, world, fake, "--limit", 2, "--max-retries", 1)
    assert code == 1, err  # a polluted aggregate is not a success (issue 15)
    assert "polluted" in err.lower()
    assert fake.requests == 4 and "POLLUTED" in out
    rows = outputs(world, "gen1")
    assert all(r["error"].startswith("parse error after 2 attempts: answer is missing") for r in rows)
    assert {r["output"] for r in rows} <= {e["content"] for e in fake.log}  # the last raw reply, kept
    from evalcore import Store
    assert Store(*world).generation("gen1").manifest.status == "polluted"


def test_ctrl_c_then_resume_finishes_without_resending(capsys, world, fake, monkeypatch):
    import evalcore.llm.engine as M
    real = M.attempt
    n = {"calls": 0}

    async def interrupting(*a, **k):
        n["calls"] += 1
        if n["calls"] == 6:
            raise KeyboardInterrupt
        return await real(*a, **k)

    monkeypatch.setattr(M, "attempt", interrupting)
    code, _, err = gen(capsys, world, fake, "--rounds", 2, "--concurrency", 1)
    assert code == 130 and "--resume --gen-id gen1" in err
    assert fake.requests == 5
    monkeypatch.setattr(M, "attempt", real)
    code, _, err = run(capsys, world, "generate", "--resume", "--gen-id", "gen1", "--api-base", fake.url)
    assert code == 0, err
    assert fake.requests == 16 and len(outputs(world, "gen1")) == 16
    code, _, err = run(capsys, world, "generate", "--resume", "--gen-id", "gen1")
    assert code == 2 and "already complete" in err


def test_dry_run_sends_nothing(capsys, world, fake):
    code, out, err = gen(capsys, world, fake, "--rounds", 3, "--dry-run", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert fake.requests == 0 and r["n_calls"] == 24 and r["cost_usd_est"] is None and r["tokens_in_est"] > 0
    assert r["first_prompt"][1]["content"].startswith("<question>\nHow do I do task 0?")
    assert not (world[0] / "generations" / "gen1").exists()
    code, out, _ = gen(capsys, world, fake, "--dry-run", "--price", "1,1")
    assert code == 0 and "estimated cost: $" in out and fake.requests == 0
    code, _, err = gen(capsys, world, fake, "--knob", "novalue")
    assert code == 2 and "--knob" in err
