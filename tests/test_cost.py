"""evalcore cost: the projection as a pure function against figures derived by hand (the seed's
400 items x 6 criteria = 2,400 split calls), the same projection end to end on a fixture run whose
calls.parquet carries tokens built from a known shared context S (recovered exactly), totals and
per-criterion shares against sums recomputed with pyarrow, unknown cost kept unknown, the
per-configuration table, errors, offline token counting, the two chart builders, and the figures
docs/COST.md quotes from the demo."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import DEMO, EVALCORE, REPO

from evalcore.analysis import charts, cost
from evalcore.errors import InputError

# --------------------------------------------------------------------------- the pure function

C6 = [10, 20, 30, 40, 50, 60]        # c_k, sum 210
O6 = [50] * 6                        # output tokens per verdict, sum 300
PRICES = (2e-6, 8e-6)                # dollars per token in, out
LATENCY = (500.0, 10.0)              # ms per call, ms per output token


def _rows(*args, **kw) -> dict:
    return {r.mode: r for r in cost.project(*args, **kw)}


def test_projection_reproduces_the_seed_arithmetic_by_hand():
    rows = _rows(1000, C6, O6, PRICES, items=400, groups=3, rounds=1, latency=LATENCY)
    assert list(rows) == ["single", "grouped", "split"]
    # calls: 400 items x calls per answer x 1 round
    assert [rows[m].calls for m in rows] == [400, 1200, 2400]
    assert [rows[m].calls_per_answer for m in rows] == [1, 3, 6]
    # tokens in = 400 x (g*S + sum c): 400 x 1,210; 400 x 3,210; 400 x 6,210
    assert rows["single"].tokens_in == 484_000
    assert rows["grouped"].tokens_in == 1_284_000
    assert rows["split"].tokens_in == 2_484_000
    # tokens out = 400 x 300 in every mode (each verdict writes its own reason)
    assert {rows[m].tokens_out for m in rows} == {120_000}
    # cost = in x $2/M + out x $8/M
    assert rows["single"].cost_usd == pytest.approx(0.968 + 0.96)
    assert rows["split"].cost_usd == pytest.approx(4.968 + 0.96)
    # one answer's calls one after another: g x 500 ms + 10 ms x 300 tokens out
    assert [rows[m].latency_ms_per_answer for m in rows] == [3500, 4500, 6000]
    assert rows["split"].calls_x_single == 6
    assert rows["split"].tokens_in_x_single == pytest.approx(2_484_000 / 484_000)


def test_split_costs_close_to_six_times_the_input_when_the_context_dominates():
    rows = _rows(100_000, C6, O6, PRICES, items=400, groups=3)
    assert rows["split"].calls == 2400 and rows["single"].calls == 400
    assert rows["split"].tokens_in == 400 * (6 * 100_000 + 210)
    assert rows["single"].tokens_in == 400 * (100_000 + 210)
    assert 5.98 < rows["split"].tokens_in_x_single < 6
    assert rows["grouped"].tokens_in_x_single == pytest.approx((300_000 + 210) / 100_210)


def test_projection_with_unknown_prices_and_latency_keeps_them_unknown():
    rows = _rows(1000, C6, O6, None, items=10, groups=2, rounds=3)
    assert [rows[m].calls for m in rows] == [30, 60, 180]
    assert all(r.cost_usd is None and r.cost_usd_x_single is None for r in rows.values())
    assert all(r.latency_ms_per_answer is None for r in rows.values())


@pytest.mark.parametrize("kwargs, field", [
    ({"items": 0, "groups": 3}, "--items"), ({"items": 10, "groups": 0}, "--groups"),
    ({"items": 10, "groups": 7}, "--groups"), ({"items": 10, "groups": 3, "rounds": 0}, "--rounds"),
    ({"items": 2.5, "groups": 3}, "--items"),
])
def test_projection_refuses_bad_sizes_naming_the_field(kwargs, field):
    with pytest.raises(InputError) as e:
        cost.project(1000, C6, O6, PRICES, **kwargs)
    assert e.value.field == field


def test_projection_refuses_mismatched_inputs():
    with pytest.raises(InputError, match="5 output figures for 6 criteria"):
        cost.project(1000, C6, O6[:5], PRICES, items=1, groups=1)
    with pytest.raises(InputError):
        cost.project(float("nan"), C6, O6, PRICES, items=1, groups=1)


def test_nnls_on_moments_equals_nnls_on_the_rows():
    from scipy.optimize import nnls
    rng = np.random.default_rng(7)
    x = rng.integers(100, 2000, size=(300, 2)).astype(float)
    y = x @ np.array([3e-6, 1.5e-5]) + rng.normal(0, 1e-5, 300)
    want, _ = nnls(x, y)
    got, rel = cost.nnls_from_moments(x.T @ x, x.T @ y, float(y @ y))
    assert got == pytest.approx(list(want), rel=1e-6)
    assert rel == pytest.approx(np.linalg.norm(x @ want - y) / np.linalg.norm(y), rel=1e-4)
    # a constraint that binds: the unconstrained fit would give a negative price
    y2 = x[:, 0] * 1e-6 - x[:, 1] * 1e-7
    want2, _ = nnls(x, y2)
    got2, _ = cost.nnls_from_moments(x.T @ x, x.T @ y2, float(y2 @ y2))
    assert got2[1] == 0 and got2 == pytest.approx(list(want2), rel=1e-6, abs=1e-15)


# --------------------------------------------------------------------------- a fixture world

CRITS = ["answers_question", "grounded", "cites_source", "no_fabrication", "refuses", "on_tone"]
GROUPS = [["answers_question", "on_tone"], ["grounded", "cites_source", "no_fabrication"], ["refuses"]]
S_ITEM = {"i1": 19_000, "i2": 21_000, "i3": 20_000, "i4": 20_000}   # shared context per item: mean 20,000
OUT = {c: 40 + 3 * k for k, c in enumerate(CRITS)}                  # output tokens of each verdict
P_IN, P_OUT = 2e-6, 8e-6
MODEL = "sim-judge-1"


def _rubric():
    from evalcore import contract as S
    group = {c: f"g{i}" for i, g in enumerate(GROUPS) for c in g}
    return S.Rubric(name="six", criteria=[
        S.Criterion(name=c, kind="binary", description=f"Does the answer satisfy {c.replace('_', ' ')}?",
                    group=group[c]) for c in CRITS])


def c_k_by_hand() -> dict[str, int]:
    """The tokens each criterion adds to the judge's criteria block: its one-criterion block minus the
    block's frame, counted offline with the judge model's tokenizer."""
    from evalcore.llm.client import count_text_tokens
    from evalcore.llm.prompts import criteria_block
    from evalcore.llm.rubric import spec_from_manifest
    spec = spec_from_manifest(_rubric(), {})
    frame = count_text_tokens(criteria_block([], {}, spec), MODEL)
    return {c.name: count_text_tokens(criteria_block([c], {}, spec), MODEL) - frame for c in _rubric().criteria}


def make_cost_world(data: Path) -> Path:
    """One suite (4 items), one generation (1 round, one output of unknown cost), and three runs on it:
    ``w-split`` (one call per criterion, one failed call), ``w-grouped`` (the rubric's 3 groups, 2
    judge rounds, some calls of unknown cost) and ``w-unpriced`` (single, no cost anywhere). Every
    completed call takes S(item) + sum of its criteria's c_k tokens in and the sum of their OUT
    tokens out, costs P_IN / P_OUT per token (when priced) and 500 ms + 10 ms per token out."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data.mkdir(parents=True)
    st = Store(data, data.parent / "unused-state")
    when = "2026-01-01T00:00:00Z"
    items = [{"item_id": i, "input": f"question {i}", "holdout": False} for i in S_ITEM]
    sm = S.SuiteManifest(suite_id="s", created_at=when, content_hash=S.suite_hash(items), n_items=len(items))
    st.write_suite(sm, items)
    outputs = [{"item_id": i, "round": 1, "output": f"answer {i}", "tokens_in": 100 + k, "tokens_out": 30 + k,
                "cost_usd": None if i == "i2" else 0.001 * (k + 1), "latency_ms": 700.0 + 50 * k}
               for k, i in enumerate(S_ITEM)]
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash, created_at=when,
                              source="imported", outputs_hash=S.content_hash(outputs), rounds=1,
                              knobs={"generator_model": "sys-1"})
    st.write_generation(gm, outputs)
    ck = c_k_by_hand()
    rubric = _rubric()

    def write(run_id, mode, blocks, judge_rounds=1, priced=lambda n: True, failed=()):
        calls, verdicts = [], []
        n = 0
        for i in S_ITEM:
            for jr in range(1, judge_rounds + 1):
                for b, crits in enumerate(blocks):
                    n += 1
                    cid = f"{run_id}-{i}-{jr}-{b}"
                    err = "timeout after 3 attempts" if (i, b) in failed else None
                    tin = S_ITEM[i] + sum(ck[c] for c in crits)
                    tout = sum(OUT[c] for c in crits)
                    calls.append({
                        "call_id": cid, "item_id": i, "gen_round": 1, "judge_round": jr, "criteria": crits,
                        "model": MODEL, "tokens_in": None if err else tin, "tokens_out": None if err else tout,
                        "cost_usd": None if err or not priced(n) else tin * P_IN + tout * P_OUT,
                        "latency_ms": 30_000.0 if err else 500.0 + 10 * tout, "attempts": 3 if err else 1,
                        "error": err})
                    for pos, c in enumerate(crits):
                        verdicts.append({"run_id": run_id, "item_id": i, "gen_round": 1, "criterion": c,
                                         "judge_round": jr, "passed": None if err else True,
                                         "raw_verdict": None if err else "pass", "position": pos, "call_id": cid,
                                         "error": err})
        rm = S.RunManifest(run_id=run_id, gen_id="g", created_at=when, rubric=rubric, rubric_hash=rubric.hash(),
                           mode=mode, groups=GROUPS if mode == "grouped" else None, field_order=CRITS,
                           judge_model=MODEL, source="imported", judge_rounds=judge_rounds,
                           status="polluted" if failed else "complete")
        st.write_run(rm, verdicts, calls)

    # the failed call is on i3, whose S is the mean, so the completed calls still average to S = 20,000
    write("w-split", "split", [[c] for c in CRITS], failed={("i3", 1)})
    write("w-grouped", "grouped", GROUPS, judge_rounds=2, priced=lambda n: n % 4 != 0)
    write("w-unpriced", "single", [CRITS], priced=lambda n: False)
    return data


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_cost_world(tmp_path_factory.mktemp("cost") / "data")


def cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, "--data", str(data), *args], capture_output=True, text=True)


def cli_json(data: Path, *args: str):
    r = cli(data, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# --------------------------------------------------------------------------- end to end


def test_projection_end_to_end_recovers_S_and_reproduces_the_seed_arithmetic(world):
    r = cli_json(world, "cost", "w-split", "--items", "400", "--rounds", "1")
    p = r["projection"]
    ck = c_k_by_hand()
    sum_c = sum(ck.values())
    assert p["available"] and p["calls_measured"] == 23  # 24 calls, one failed
    assert p["shared_tokens_in"] == 20_000  # exactly: mean of (tokens_in - c_k) over the completed calls
    assert [(c["criterion"], c["tokens_in"]) for c in p["criteria"]] == list(ck.items())
    assert all(c["tokens_in_source"] == "rubric text" for c in p["criteria"])
    # o_k and f fitted by least squares with the sibling runs (w-grouped, w-unpriced): exact up to rounding
    assert [c["out_tokens_per_verdict"] for c in p["criteria"]] == pytest.approx([OUT[c] for c in CRITS], rel=1e-9)
    assert p["output"]["identified"] and p["output"]["tokens_per_call"] == pytest.approx(0, abs=1e-9)
    rows = {row["mode"]: row for row in p["rows"]}
    assert (rows["single"]["calls"], rows["grouped"]["calls"], rows["split"]["calls"]) == (400, 1200, 2400)
    assert rows["split"]["tokens_in"] == 400 * (6 * 20_000 + sum_c)
    assert rows["single"]["tokens_in"] == 400 * (20_000 + sum_c)
    assert rows["grouped"]["tokens_in"] == 400 * (3 * 20_000 + sum_c)
    assert 5.9 < rows["split"]["tokens_in_x_single"] < 6
    for row in rows.values():  # f = 0 in this world: the same output in every mode
        assert row["tokens_out"] == pytest.approx(400 * sum(OUT.values()), rel=1e-9)
    # prices fitted to the priced calls, latency to the completed ones
    assert p["prices"]["input_per_token"] == pytest.approx(P_IN, rel=1e-9)
    assert p["prices"]["output_per_token"] == pytest.approx(P_OUT, rel=1e-9)
    assert p["prices"]["calls_priced"] == 23
    assert rows["split"]["cost_usd"] == pytest.approx(rows["split"]["tokens_in"] * P_IN
                                                      + rows["split"]["tokens_out"] * P_OUT, rel=1e-9)
    assert p["latency"]["ms_per_call"] == pytest.approx(500, rel=1e-9)
    assert p["latency"]["ms_per_output_token"] == pytest.approx(10, rel=1e-9)
    assert rows["split"]["latency_ms_per_answer"] == pytest.approx(6 * 500 + 10 * sum(OUT.values()))
    assert (p["items"], p["rounds"], p["groups"]) == (400, 1, 3)


def test_projection_does_not_depend_on_the_harness_that_measured_it(world):
    split = cli_json(world, "cost", "w-split", "--items", "50")["projection"]
    grouped = cli_json(world, "cost", "w-grouped", "--items", "50", "--rounds", "1")["projection"]
    assert grouped["shared_tokens_in"] == 20_000 and grouped["calls_measured"] == 24
    # a grouped call shares its output equally, so o_k is the group's mean, but the sum is the same
    assert sum(c["out_tokens_per_verdict"] for c in grouped["criteria"]) == pytest.approx(sum(OUT.values()))
    for a, b in zip(split["rows"], grouped["rows"]):
        assert a["mode"] == b["mode"] and a["calls"] == b["calls"]
        for key in ("tokens_in", "tokens_out", "cost_usd", "latency_ms_per_answer"):
            assert a[key] == pytest.approx(b[key], rel=1e-9), key


def test_projection_defaults_to_the_run_and_checks_itself(world):
    p = cli_json(world, "cost", "w-grouped")["projection"]
    assert (p["items"], p["rounds"], p["groups"]) == (4, 2, 3)  # 4 items, 2 judge rounds, the run's 3 groups
    assert p["groups_source"] == "the run's groups"
    c = p["check"]
    assert c["mode"] == "grouped" and c["calls_projected"] == c["calls_measured"] == 24
    assert c["tokens_in_projected"] == pytest.approx(c["tokens_in_measured"], rel=1e-12)
    assert c["tokens_out_projected"] == pytest.approx(c["tokens_out_measured"], rel=1e-12)
    assert cli_json(world, "cost", "w-grouped", "--groups", "2")["projection"]["rows"][1]["calls"] == 4 * 2 * 2


def _calls(world: Path, run_id: str) -> list[dict]:
    return pq.read_table(world / "runs" / run_id / "calls.parquet").to_pylist()


@pytest.mark.parametrize("run_id", ["w-split", "w-grouped", "w-unpriced"])
def test_totals_equal_the_sums_recomputed_from_calls_parquet(world, run_id):
    rows = _calls(world, run_id)
    j = cli_json(world, "cost", run_id)["judge"]
    known = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    lat = np.array([r["latency_ms"] for r in rows])
    assert j["calls"] == len(rows)
    assert j["failed_calls"] == sum(r["error"] is not None for r in rows)
    assert j["tokens_in"] == sum(r["tokens_in"] or 0 for r in rows)
    assert j["tokens_out"] == sum(r["tokens_out"] or 0 for r in rows)
    assert j["cost_unknown_calls"] == len(rows) - len(known)
    assert j["cost_usd"] == (pytest.approx(sum(known), rel=1e-12) if known else None)
    assert j["latency_ms_mean"] == pytest.approx(lat.mean())
    assert j["latency_ms_p50"] == pytest.approx(np.percentile(lat, 50))
    assert j["latency_ms_p95"] == pytest.approx(np.percentile(lat, 95))
    assert j["latency_ms_total"] == pytest.approx(lat.sum())
    assert j["answers"] == len({(r["item_id"], r["gen_round"]) for r in rows})


@pytest.mark.parametrize("run_id", ["w-split", "w-grouped", "w-unpriced"])
def test_per_criterion_shares_sum_to_the_totals(world, run_id):
    rows = _calls(world, run_id)
    r = cli_json(world, "cost", run_id)
    j, per = r["judge"], r["per_criterion"]
    assert [c["criterion"] for c in per] == CRITS  # rubric order
    for c in per:
        asked = [x for x in rows if c["criterion"] in x["criteria"]]
        assert c["calls"] == len(asked)
        assert c["failed_calls"] == sum(x["error"] is not None for x in asked)
        assert c["cost_unknown_calls"] == sum(x["cost_usd"] is None for x in asked)
        assert c["latency_ms_mean"] == pytest.approx(np.mean([x["latency_ms"] for x in asked]))
        assert c["tokens_in"] == pytest.approx(sum((x["tokens_in"] or 0) / len(x["criteria"]) for x in asked))
    for key in ("tokens_in", "tokens_out", "latency_ms_total"):
        assert sum(c[key] for c in per) == pytest.approx(j[key], rel=1e-12), key
    if j["cost_usd"] is None:
        assert all(c["cost_usd"] is None for c in per)
    else:
        assert sum(c["cost_usd"] for c in per) == pytest.approx(j["cost_usd"], rel=1e-12)


def test_unknown_cost_stays_null_with_its_count(world):
    r = cli_json(world, "cost", "w-unpriced")
    j = r["judge"]
    assert j["cost_usd"] is None and j["cost_unknown_calls"] == j["calls"] == 4 and j["cost_usd_per_answer"] is None
    assert all(c["cost_usd"] is None and c["cost_unknown_calls"] == 4 for c in r["per_criterion"])
    p = r["projection"]
    assert p["prices"] is None and all(row["cost_usd"] is None for row in p["rows"])
    assert "no call has a known cost: projected cost is unknown" in p["warnings"]
    # some calls unpriced: the known ones are summed, the others counted, no per-answer figure
    g = cli_json(world, "cost", "w-grouped")["judge"]
    assert g["cost_unknown_calls"] == 6 and g["cost_usd"] > 0 and g["cost_usd_per_answer"] is None


def test_system_under_test_totals_come_from_outputs_parquet(world):
    outs = pq.read_table(world / "generations" / "g" / "outputs.parquet").to_pylist()
    s = cli_json(world, "cost", "w-split")["system"]
    known = [o["cost_usd"] for o in outs if o["cost_usd"] is not None]
    assert (s["gen_id"], s["outputs"], s["errored_outputs"]) == ("g", len(outs), 0)
    assert s["tokens_in"] == sum(o["tokens_in"] for o in outs) == 406
    assert s["tokens_out"] == sum(o["tokens_out"] for o in outs) == 126
    assert s["cost_usd"] == pytest.approx(sum(known)) and s["cost_unknown_outputs"] == 1
    assert s["cost_usd_per_output"] is None
    assert s["latency_ms_mean"] == pytest.approx(np.mean([o["latency_ms"] for o in outs]))
    assert s["generator_model"] == "sys-1"


def test_all_runs_side_by_side_match_the_run_reports(world):
    table = cli_json(world, "cost", "--all")
    assert [r["run_id"] for r in table] == ["w-grouped", "w-split", "w-unpriced"]
    for row in table:
        one = cli_json(world, "cost", row["run_id"])
        for k, v in one["judge"].items():
            assert row[f"judge_{k}" if k != "source" else "judge_source"] == v, k
        for k, v in one["system"].items():
            assert row["gen_id" if k == "gen_id" else f"system_{k}"] == v, k


@pytest.mark.parametrize("args, needle", [
    (["cost", "nope"], "no run 'nope'"),
    (["cost", "../x"], "is not a valid run id"),
    (["cost"], "RUN_ID: give a run id"),
    (["cost", "w-split", "--all"], "RUN_ID: give a run id or --all, not both"),
    (["cost", "--all", "--items", "5"], "--items: applies to one run's projection"),
    (["cost", "w-split", "--items", "0"], "--items: 0 must be a whole number of at least 1"),
    (["cost", "w-split", "--groups", "7"], "--groups: 7 must be a whole number from 1 to the number of criteria (6)"),
])
def test_bad_input_is_one_line_naming_the_field(world, args, needle):
    r = cli(world, *args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert needle in r.stderr


def test_text_output_says_the_same(world):
    r = cli(world, "cost", "w-unpriced")
    assert r.returncode == 0, r.stderr
    assert "cost unknown (4 calls with unknown cost)" in r.stdout
    assert "S (shared context per call) = 20000.0 tokens over 4 calls" in r.stdout
    assert "WARNING: no call has a known cost" in r.stdout


def test_counting_criterion_tokens_is_offline_and_never_imports_litellm(world):
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise RuntimeError('network access')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from evalcore import Store\nfrom evalcore.analysis import run_cost\n"
        f"r = run_cost(Store({str(world)!r}, {str(world.parent / 'st')!r}), 'w-split')\n"
        "print(r.projection.shared_tokens_in, r.projection.criteria[0].tokenizer)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'streamlit', 'requests', 'httpx'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first.startswith("20000.0 ") and ("tiktoken" in first or "heuristic" in first)
    assert second == "[]"


def test_a_criterion_without_text_or_outside_the_rubric_is_counted_from_what_is_sent():
    from evalcore import contract as S
    rubric = S.Rubric(criteria=[S.Criterion(name="bare", kind="binary"),
                                S.Criterion(name="told", kind="binary", description="Is it told?")])
    rows = {r["criterion"]: r for r in cost.criterion_tokens(rubric, {}, MODEL, ["told", "extra"])}
    assert list(rows) == ["bare", "told", "extra"]
    assert rows["bare"]["source"].startswith("name and answer format only")
    assert rows["told"]["source"] == "rubric text" and rows["extra"]["source"].startswith("name only")
    assert 0 < rows["bare"]["tokens"] < rows["told"]["tokens"]


# --------------------------------------------------------------------------- charts


def test_cost_by_criterion_chart_carries_the_shares(world):
    from evalcore import Store
    per = [c.to_dict() for c in cost.run_cost(Store(world, world.parent / "st"), "w-grouped").per_criterion]
    spec = charts.cost_by_criterion(per).to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["y"]["sort"] == CRITS and spec["encoding"]["x"]["field"] == "value"
    assert [v["value"] for v in spec["data"]["values"]] == [c["cost_usd"] for c in per]
    tokens = charts.cost_by_criterion(per, "tokens_in").to_dict()
    assert [v["value"] for v in tokens["data"]["values"]] == [c["tokens_in"] for c in per]
    with pytest.raises(ValueError):
        charts.cost_by_criterion(per, "nope")


def test_projection_chart_has_a_group_per_figure_and_a_bar_per_mode():
    rows = [r.to_dict() for r in cost.project(1000, C6, O6, PRICES, items=400, groups=3)]
    spec = charts.projection_bars(rows).to_dict()
    # one view on one scale (multiples of the single call's figure), so it fits its container's width
    assert spec["encoding"]["y"]["field"] == "metric" and spec["encoding"]["yOffset"]["field"] == "mode"
    assert spec["encoding"]["x"]["field"] == "x_single" and spec["width"] == "container"
    vals = {(v["metric"], v["mode"]): v["value"] for v in spec["data"]["values"]}
    assert vals[("calls", "split")] == 2400 and vals[("calls", "single")] == 400
    xs = {(v["metric"], v["mode"]): v["x_single"] for v in spec["data"]["values"]}
    assert xs[("calls", "single")] == 1 and xs[("calls", "split")] == 6
    assert vals[("tokens in", "split")] == 2_484_000 and vals[("cost (USD)", "single")] == pytest.approx(1.928)
    unpriced = charts.projection_bars([r.to_dict() for r in cost.project(1000, C6, O6, None, items=1, groups=1)])
    assert not any(v["metric"] == "cost (USD)" for v in unpriced.to_dict()["data"]["values"])  # unknown: no bar, not 0


# --------------------------------------------------------------------------- the demo and the docs


def test_demo_projection_reproduces_its_own_run():
    r = cli_json(DEMO, "cost", "support-split")
    assert r["simulated"] is True
    c = r["projection"]["check"]
    assert c["calls_projected"] == c["calls_measured"] == r["judge"]["calls"] == 10_800
    assert c["tokens_in_projected"] == pytest.approx(c["tokens_in_measured"], rel=1e-12)


def test_cost_doc_quotes_the_demo_output_verbatim():
    doc = (REPO / "docs" / "COST.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n\$ (evalcore [^\n]*)\n(.*?)```", doc, flags=re.S)
    assert len(blocks) >= 2
    for command, shown in blocks:
        args = command.split()[1:]
        out = subprocess.run([EVALCORE, "--data", str(DEMO), *args], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout == shown, f"docs/COST.md is out of date for: {command}"
    assert "SIMULATED" in doc
    cli_doc = (REPO / "docs" / "CLI.md").read_text(encoding="utf-8")
    assert "evalcore cost" in cli_doc and "docs/COST.md" in cli_doc


def test_cost_json_has_no_nan():
    out = subprocess.run([EVALCORE, "--data", str(DEMO), "cost", "--all", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)  # strict JSON (emit refuses NaN)
    assert len(rows) == len(list((DEMO / "runs").iterdir()))
    assert all(not (isinstance(v, float) and math.isnan(v)) for r in rows for v in r.values())
