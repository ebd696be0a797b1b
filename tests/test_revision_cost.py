"""Cost over revision passes (issue 44, article 001): `evalcore revision-cost` and
analysis.revision_costs, on the demo and on hand-made imports. The expected figures are computed
here from the outputs' own tokens (read with pyarrow / from the CSV written), with the model of
evalcore/analysis/revisions.py: pass k of an appended transcript sends I + k*O tokens, of a
fresh-context critic I + O."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import DEMO, REPO, tree_hash

from evalcore.analysis.revisions import revision_cost
from evalcore.llm.client import resolve_price
from evalcore.storage.store import Store

HEAD = ["item_id", "input", "output", "tokens_in", "tokens_out", "cost_usd", "criterion", "value"]


def _import(tmp_path: Path, ev, name: str, rows: list[list], *knobs: str) -> tuple[Path, Path, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    data, state = tmp_path / "data", tmp_path / "state"
    path = tmp_path / f"{name}.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([HEAD, *rows])
    args = [a for k in knobs for a in ("--gen-knob", k)]
    code, out, err = ev("--data", data, "--state", state, "import", "long", path, "--judge-model",
                        "judge-x-2025-01-01", "--json", *args)
    assert code == 0, err
    return data, state, json.loads(out)["gen_id"]


def _rows(n: int, cost: bool) -> list[list]:
    return [[f"q{i}", f"Question {i}?", f"Answer {i}.", 300 + 7 * i, 40 + 3 * i,
             (300 + 7 * i) * 2e-6 + (40 + 3 * i) * 8e-6 if cost else "", "ok", "pass"] for i in range(n)]


def _expected(i: float, o: float, k: int, p_in: float, p_out: float) -> tuple[float, float, float, float]:
    """Cumulative tokens in and cost per answer over passes 0..k: appended, fresh."""
    a_in = sum(i + j * o for j in range(k + 1))
    f_in = i + k * (i + o)
    outs = (k + 1) * o
    return a_in, f_in, a_in * p_in + outs * p_out, f_in * p_in + outs * p_out


def test_the_demo_prices_each_pass_from_its_own_tokens(tmp_path, ev):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "revision-cost", "--passes", "4", "--json")
    assert code == 0, err
    got = {r["gen_id"]: r for r in json.loads(out)}
    assert set(got) == {"accounts-g1", "accounts-g2", "support-g1"}  # each records revision_budget 0
    t = pq.read_table(DEMO / "generations" / "support-g1" / "outputs.parquet").to_pylist()
    done = [r for r in t if r["error"] is None and r["tokens_in"] is not None]
    i = sum(r["tokens_in"] for r in done) / len(done)
    o = sum(r["tokens_out"] for r in done) / len(done)
    r = got["support-g1"]
    assert r["answers"] == len(done) and r["revision_budget"] == 0
    assert r["tokens_in_per_answer"] == pytest.approx(i, rel=1e-12)
    assert "fitted to the outputs' own costs" in r["price_source"]  # the demo's writer is not in the price map
    assert r["input_per_million"] == pytest.approx(0.15, rel=1e-9)  # the simulator prices $0.15 / $0.60
    assert r["output_per_million"] == pytest.approx(0.60, rel=1e-9)
    assert [p["passes"] for p in r["passes"]] == [0, 1, 2, 3, 4] and r["passes"][0]["recorded_budget"]
    for p in r["passes"]:
        a_in, f_in, a_usd, f_usd = _expected(i, o, p["passes"], 0.15e-6, 0.60e-6)
        assert p["appended_cumulative_tokens_in"] == pytest.approx(a_in, rel=1e-12)
        assert p["fresh_cumulative_tokens_in"] == pytest.approx(f_in, rel=1e-12)
        assert p["appended_cumulative_cost_usd"] == pytest.approx(a_usd, rel=1e-8)
        assert p["fresh_cumulative_cost_usd"] == pytest.approx(f_usd, rel=1e-8)
    # quadratic against linear: the appended arm's per-pass input grows by O each pass, the fresh one's not at all
    a = [p["appended_tokens_in"] for p in r["passes"][1:]]
    f = [p["fresh_tokens_in"] for p in r["passes"][1:]]
    assert [y - x for x, y in zip(a, a[1:])] == pytest.approx([o] * 3, rel=1e-12)
    assert len(set(f)) == 1
    assert r["appended_total_usd"] == pytest.approx(r["passes"][-1]["appended_cumulative_cost_usd"] * len(done))


def test_an_import_is_priced_from_its_costs_or_says_unpriced(tmp_path, ev):
    rows = _rows(6, cost=True)
    data, state, gen = _import(tmp_path, ev, "priced", rows, "revision_budget=2", "generator_model=bikebot-v3")
    i = sum(r[3] for r in rows) / 6
    o = sum(r[4] for r in rows) / 6
    r = revision_cost(Store(data, state), gen, passes=1)  # the recorded budget (2) wins over passes=1
    assert [p.passes for p in r.passes] == [0, 1, 2] and [p.recorded_budget for p in r.passes] == [False, False, True]
    a_in, f_in, a_usd, f_usd = _expected(i, o, 2, 2e-6, 8e-6)
    last = r.passes[-1]
    assert last.appended_cumulative_tokens_in == pytest.approx(a_in, rel=1e-12)
    assert last.fresh_cumulative_tokens_in == pytest.approx(f_in, rel=1e-12)
    assert last.appended_cumulative_cost_usd == pytest.approx(a_usd, rel=1e-8)
    assert last.fresh_cumulative_cost_usd == pytest.approx(f_usd, rel=1e-8)

    # no recorded cost and a model the price table does not know: unpriced, never 0
    data2, state2, gen2 = _import(tmp_path / "u", ev, "unpriced", _rows(4, cost=False), "revision_budget=1",
                                  "generator_model=bikebot-v3")
    code, out, err = ev("--data", data2, "--state", state2, "revision-cost", gen2, "--json")
    assert code == 0, err
    (u,) = json.loads(out)
    assert u["price_source"] == "unpriced" and "unpriced" in u["note"]
    assert all(p[k] is None for p in u["passes"] for k in ("appended_cost_usd", "fresh_cumulative_cost_usd"))
    assert u["appended_total_usd"] is None
    code, out, err = ev("--data", data2, "--state", state2, "revision-cost", gen2)
    assert code == 0 and "unpriced" in out and "$0.0" not in out
    # a generator the price table knows is priced from it (no recorded cost needed)
    data3, state3, gen3 = _import(tmp_path / "m", ev, "mapped", _rows(4, cost=False), "revision_budget=1",
                                  "generator_model=gpt-4o-mini-2024-07-18")
    known = resolve_price("gpt-4o-mini-2024-07-18")
    assert known is not None
    m = revision_cost(Store(data3, state3), gen3)
    assert m.price_source == known.source and m.input_per_million == pytest.approx(known.input_per_token * 1e6)
    rows4 = _rows(4, cost=False)
    i4, o4 = sum(r[3] for r in rows4) / 4, sum(r[4] for r in rows4) / 4
    assert m.passes[1].appended_cost_usd == pytest.approx(
        (i4 + o4) * known.input_per_token + o4 * known.output_per_token, rel=1e-12)
    # --price prices it
    code, out, err = ev("--data", data2, "--state", state2, "revision-cost", gen2, "--price", "2,8", "--json")
    assert code == 0 and json.loads(out)[0]["passes"][1]["fresh_cost_usd"] is not None


def test_a_generation_without_a_budget_is_named_and_nothing_is_written(tmp_path, ev):
    data, state, gen = _import(tmp_path, ev, "nobudget", _rows(3, cost=True))
    before = tree_hash(data, state)
    code, out, err = ev("--data", data, "--state", state, "revision-cost", gen)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"generation {gen!r} does not record its revision budget (knob revision_budget)" in err
    code, out, err = ev("--data", data, "--state", state, "revision-cost", "--json")  # none records one
    assert code == 0 and json.loads(out) == []
    assert tree_hash(data, state) == before


@pytest.mark.app
def test_the_cost_page_shows_the_passes(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/10_cost.py").run()
    assert not at.exception, [e.value for e in at.exception]
    tables = [d.value for d in at.dataframe if "fresh critic: tokens in" in d.value.columns]
    want = revision_cost(Store(DEMO, tmp_path / "state"), "support-g1")
    assert len(tables) == 3  # one per generation recording revision_budget
    (t,) = [x for x in tables if list(x["appended: tokens in"]) == [p.appended_tokens_in for p in want.passes]]
    assert list(t["fresh critic: cost per answer to here"]) == [p.fresh_cumulative_cost_usd for p in want.passes]
