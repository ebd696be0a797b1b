"""The projection's output per call, fan-out latency and wall time, and partly priced totals:

1. output tokens per mode follow ``f + sum(o_k)`` per call, f fitted from a sibling run when the
   run's own calls cannot identify it (a single run beside a split run), and each row says where
   its output tokens come from; when nothing identifies f the projection says f = 0 is assumed;
2. latency per answer fanned out (the slowest call) and the whole run's wall time at the recorded
   concurrency ("concurrency not recorded" and 1 otherwise);
3. a partly priced total says "partly priced: N of M calls" beside the known sum (judge summary,
   ``evalcore cost`` text), "unknown" only when no call is priced.

Figures of the bundled demo are computed here from its Parquet files with bare DuckDB and numpy,
never written in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import DEMO, EVALCORE
from test_cost import CRITS, GROUPS, MODEL, OUT, P_IN, P_OUT, S_ITEM, _rubric, c_k_by_hand

from evalcore.analysis import cost

F = 15  # output tokens every call writes once (its JSON frame) in the fixture world
SPREAD = {"i1": -2, "i2": 2, "i3": 0, "i4": 0}  # per verdict and item, mean 0: the latency fit sees a spread
C6 = [10, 20, 30, 40, 50, 60]
O6 = [50, 50, 50, 50, 50, 80]


# --------------------------------------------------------------------------- the pure function


def test_project_counts_the_output_per_call_in_every_call_and_fans_out():
    rows = {
        r.mode: r
        for r in cost.project(
            1000, C6, O6, (2e-6, 8e-6), items=400, groups=3, rounds=1, latency=(500.0, 10.0),
            out_per_call=F, concurrency=4, partition=[[0, 1], [2, 3, 4], [5]],
        )
    }
    sum_o = sum(O6)  # 330
    # tokens out = N x (g f + sum o_k): each call writes its own frame
    assert rows["single"].tokens_out == 400 * (1 * F + sum_o)
    assert rows["grouped"].tokens_out == 400 * (3 * F + sum_o)
    assert rows["split"].tokens_out == 400 * (6 * F + sum_o)
    assert rows["split"].tokens_out_x_single == pytest.approx((6 * F + sum_o) / (F + sum_o))
    # cost follows the output per mode
    assert rows["split"].cost_usd == pytest.approx(400 * (6 * 1000 + 210) * 2e-6 + 400 * (6 * F + sum_o) * 8e-6)
    # the largest call: all of it (single), the {2,3,4} group (150), the 80-token criterion (split)
    assert [rows[m].tokens_out_per_call_max for m in rows] == [F + 330, F + 150, F + 80]
    # sequential: g l_call + l_out x output per answer; fanned out: l_call + l_out x largest call
    assert rows["split"].latency_ms_per_answer == pytest.approx(6 * 500 + 10 * (6 * F + sum_o))
    assert [rows[m].latency_ms_per_answer_fanout for m in rows] == pytest.approx(
        [500 + 10 * (F + 330), 500 + 10 * (F + 150), 500 + 10 * (F + 80)]
    )
    # wall time: the summed call time over the 4 calls in flight
    for r in rows.values():
        assert r.concurrency == 4
        assert r.wall_ms == pytest.approx(400 * r.latency_ms_per_answer / 4)
    # with more calls in flight than calls, a run takes at least its slowest answer fanned out
    one = {r.mode: r for r in cost.project(1000, C6, O6, None, 1, 3, latency=(500.0, 10.0), concurrency=100)}
    assert one["split"].wall_ms == pytest.approx(one["split"].latency_ms_per_answer_fanout)


def test_project_without_a_partition_cuts_the_criteria_into_near_equal_groups():
    rows = cost.project(1000, C6, O6, None, items=1, groups=4, latency=(0.0, 1.0))
    # 6 criteria into 4 groups: sizes 2, 2, 1, 1 -> the largest call is max(50+50, 50+50, 50, 80) = 100
    assert rows[1].tokens_out_per_call_max == 100
    with pytest.raises(cost.InputError):
        cost.project(1000, C6, O6, None, items=1, groups=3, partition=[[0, 1], [2, 3]])


def test_fit_output_identifies_f_only_with_lists_of_different_sizes():
    names = ["a", "b", "c"]
    o = {"a": 30.0, "b": 40.0, "c": 50.0}

    def lst(crits, n=10):
        t = F + sum(o[c] for c in crits)
        return (frozenset(crits), n, n * t, n * t * t)

    split = [lst(["a"]), lst(["b"]), lst(["c"])]
    single = [lst(["a", "b", "c"])]
    for lists in (split, single):  # one size of list: f and the o_k cannot be told apart
        assert cost.fit_output(lists, names)["identified"] is False
    both = cost.fit_output(split + single, names)
    assert both["identified"] is True and both["f"] == pytest.approx(F)
    assert both["o"] == pytest.approx(o) and both["rms_tokens"] == pytest.approx(0, abs=1e-6)


# --------------------------------------------------------------------------- a fixture world with f != 0


def make_world(data: Path, *, with_split: bool = True, concurrency: int | None = 4) -> Path:
    """A suite of 4 items, one generation, a single-call run ``f-single`` (priced except 2 of its 4
    calls, concurrency recorded) and, ``with_split``, a split run ``f-split`` on the same generation,
    judge and rubric. Every call takes S(item) + sum c_k tokens in, F + sum (OUT + SPREAD[item]) tokens out
    and 500 ms + 10 ms per token out."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data.mkdir(parents=True)
    st = Store(data, data.parent / "unused-state")
    when = "2026-01-01T00:00:00Z"
    items = [{"item_id": i, "input": f"question {i}", "holdout": False} for i in S_ITEM]
    sm = S.SuiteManifest(suite_id="s", created_at=when, content_hash=S.suite_hash(items), n_items=len(items))
    st.write_suite(sm, items)
    outputs = [{"item_id": i, "round": 1, "output": f"answer {i}", "tokens_in": 100, "tokens_out": 30,
                "cost_usd": 0.001, "latency_ms": 700.0} for i in S_ITEM]
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash, created_at=when,
                              source="imported", outputs_hash=S.content_hash(outputs), rounds=1, knobs={})
    st.write_generation(gm, outputs)
    ck = c_k_by_hand()
    rubric = _rubric()

    def write(run_id, mode, blocks, priced, policy):
        calls, verdicts, n = [], [], 0
        for i in S_ITEM:
            for b, crits in enumerate(blocks):
                n += 1
                cid = f"{run_id}-{i}-{b}"
                tin = S_ITEM[i] + sum(ck[c] for c in crits)
                tout = F + sum(OUT[c] + SPREAD[i] for c in crits)
                calls.append({"call_id": cid, "item_id": i, "gen_round": 1, "judge_round": 1, "criteria": crits,
                              "model": MODEL, "tokens_in": tin, "tokens_out": tout,
                              "cost_usd": tin * P_IN + tout * P_OUT if priced(n) else None,
                              "latency_ms": 500.0 + 10 * tout, "attempts": 1, "error": None})
                verdicts += [{"run_id": run_id, "item_id": i, "gen_round": 1, "criterion": c, "judge_round": 1,
                              "passed": True, "raw_verdict": "pass", "position": pos, "call_id": cid, "error": None}
                             for pos, c in enumerate(crits)]
        rm = S.RunManifest(run_id=run_id, gen_id="g", created_at=when, rubric=rubric, rubric_hash=rubric.hash(),
                           mode=mode, groups=GROUPS if mode == "grouped" else None, field_order=CRITS,
                           judge_model=MODEL, source="imported", judge_rounds=1, status="complete",
                           retry_policy=policy)
        st.write_run(rm, verdicts, calls)

    write("f-single", "single", [CRITS], lambda n: n not in (2, 3),
          {} if concurrency is None else {"max_retries": 4, "concurrency": concurrency})
    if with_split:
        write("f-split", "split", [[c] for c in CRITS], lambda n: True, {})
    return data


def cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(data.parent / "state"), *args],
                          capture_output=True, text=True)


def cli_json(data: Path, *args: str):
    r = cli(data, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("fcost") / "data")


@pytest.fixture(scope="module")
def lone(tmp_path_factory) -> Path:
    return make_world(tmp_path_factory.mktemp("fcost-lone") / "data", with_split=False, concurrency=None)


def test_single_run_projects_split_output_with_f_fitted_from_the_split_sibling(world):
    p = cli_json(world, "cost", "f-single")["projection"]
    out = p["output"]
    assert out["identified"] and out["tokens_per_call"] == pytest.approx(F, rel=1e-9)
    assert out["runs"] == ["f-single", "f-split"] and out["calls"] == 4 + 24
    assert [c["out_tokens_per_verdict"] for c in p["criteria"]] == pytest.approx([OUT[c] for c in CRITS])
    rows = {r["mode"]: r for r in p["rows"]}
    n, k, sum_o = len(S_ITEM), len(CRITS), sum(OUT.values())
    assert rows["single"]["tokens_out"] == pytest.approx(n * (F + sum_o))
    assert rows["split"]["tokens_out"] == pytest.approx(n * (k * F + sum_o))  # not the single run's figure
    assert rows["grouped"]["tokens_out"] == pytest.approx(n * (len(GROUPS) * F + sum_o))
    # where each mode's output comes from
    assert (rows["single"]["tokens_out_source"], rows["single"]["tokens_out_run"]) == ("measured", "f-single")
    assert (rows["split"]["tokens_out_source"], rows["split"]["tokens_out_run"]) == ("measured", "f-split")
    assert rows["split"]["tokens_out_per_answer_measured"] == pytest.approx(k * F + sum_o)
    assert (rows["grouped"]["tokens_out_source"], rows["grouped"]["tokens_out_run"]) == ("estimated", None)
    # the check: the run's own mode at its own size reproduces what it measured
    c = p["check"]
    assert c["tokens_out_projected"] == pytest.approx(c["tokens_out_measured"], rel=1e-9)
    assert not any("f = 0" in w for w in p["warnings"])
    # the split run projects the single harness from the single run the same way
    q = cli_json(world, "cost", "f-split")["projection"]
    assert q["output"]["tokens_per_call"] == pytest.approx(F, rel=1e-9)
    assert [r["tokens_out"] for r in q["rows"]] == pytest.approx([r["tokens_out"] for r in p["rows"]])


def test_without_a_run_that_identifies_f_the_projection_says_f_is_assumed_zero(lone):
    p = cli_json(lone, "cost", "f-single")["projection"]
    assert p["output"]["identified"] is False and p["output"]["tokens_per_call"] == 0
    assert any("f = 0 is assumed" in w for w in p["warnings"])
    assert any("f = 0 ASSUMED" in a for a in p["assumptions"])
    rows = {r["mode"]: r for r in p["rows"]}
    assert rows["single"]["tokens_out_source"] == "measured"
    assert rows["split"]["tokens_out_source"] == rows["grouped"]["tokens_out_source"] == "estimated"
    assert rows["split"]["tokens_out"] == pytest.approx(rows["single"]["tokens_out"])  # the assumption, stated
    text = cli(lone, "cost", "f-single").stdout
    assert "f (output per call) = 0 ASSUMED" in text and "WARNING: the output tokens every call writes once" in text


def test_fan_out_latency_and_wall_time_at_the_recorded_concurrency(world, lone):
    p = cli_json(world, "cost", "f-single")["projection"]
    assert p["concurrency"] == 4 and "retry policy" in p["concurrency_source"]
    lat = p["latency"]
    assert (lat["ms_per_call"], lat["ms_per_output_token"]) == pytest.approx((500, 10), rel=1e-9)
    rows = {r["mode"]: r for r in p["rows"]}
    n, k, sum_o = len(S_ITEM), len(CRITS), sum(OUT.values())
    assert rows["split"]["latency_ms_per_answer"] == pytest.approx(k * 500 + 10 * (k * F + sum_o))
    assert rows["split"]["latency_ms_per_answer_fanout"] == pytest.approx(500 + 10 * (F + max(OUT.values())))
    assert rows["single"]["latency_ms_per_answer_fanout"] == pytest.approx(rows["single"]["latency_ms_per_answer"])
    biggest = max(sum(OUT[c] for c in g) for g in GROUPS)  # the run's rubric groups share the grouped calls
    assert rows["grouped"]["latency_ms_per_answer_fanout"] == pytest.approx(500 + 10 * (F + biggest))
    for r in rows.values():
        assert r["wall_ms"] == pytest.approx(n * r["latency_ms_per_answer"] / min(4, r["calls"]))
    text = cli(world, "cost", "f-single").stdout
    assert "ms fanned out" in text and "wall s" in text and "concurrency 4" in text
    q = cli_json(lone, "cost", "f-single")["projection"]
    assert q["concurrency"] == 1 and q["concurrency_source"].startswith("concurrency not recorded")
    assert q["rows"][2]["wall_ms"] == pytest.approx(n * q["rows"][2]["latency_ms_per_answer"])
    assert "concurrency not recorded" in cli(lone, "cost", "f-single").stdout


# --------------------------------------------------------------------------- partly priced


def _priced(data: Path, run_id: str) -> tuple[float, int, int]:
    return duckdb.connect().execute(
        f"SELECT sum(cost_usd), count(cost_usd), count(*) FROM '{data}/runs/{run_id}/calls.parquet'"
    ).fetchall()[0]


def test_a_partly_priced_total_says_so_beside_the_known_sum(world, lone):
    known, priced, calls = _priced(world, "f-single")
    assert 0 < priced < calls
    text = cli(world, "cost", "f-single").stdout
    assert f"cost ${known:.4f} (partly priced: {priced} of {calls} calls)" in text
    assert "unknown" not in text.split("\n")[2]
    assert f"{priced} of {calls}" in cli(world, "cost", "--all").stdout
    # the judge / generate summary line
    from evalcore.cli.models import _done_text
    from evalcore.storage.store import Store

    st = Store(world, world.parent / "state")
    r = {"run_id": "f-single", "status": "complete", "calls": calls, "failed_calls": 0, "verdicts": 24,
         "tokens_in": 1, "tokens_out": 1, "cost_usd": None, "path": str(world / "runs" / "f-single")}
    line = _done_text(r, "run", "verdicts", "verdicts", st).splitlines()[0]
    assert line.endswith(f"cost ${known:.4f} (partly priced: {priced} of {calls} calls)")
    full = _done_text({**r, "run_id": "f-split", "calls": 24, "cost_usd": 0.5}, "run", "verdicts", "verdicts", st)
    assert full.splitlines()[0].endswith("cost $0.5000")
    # unknown only when no call is priced
    assert cost.cost_label(None, calls, calls) == "unknown"
    assert cost.cost_label(known, calls - priced, calls) == f"${known:.4f} (partly priced: {priced} of {calls} calls)"
    assert cost.stored_cost(st, "run", "f-single") == (pytest.approx(known), calls - priced, calls)


def test_the_cost_page_shows_partly_priced_fan_out_and_wall_time(world, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    app = Path(__file__).resolve().parent.parent / "app.py"
    monkeypatch.setenv("EVALCORE_DATA", str(world))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(app), default_timeout=60)
    at.query_params.update(run="f-single")
    at.run()
    at.switch_page("pages/10_cost.py").run()
    assert not at.exception, [e.value for e in at.exception]
    known, priced, calls = _priced(world, "f-single")
    (totals,) = [d.value for d in at.dataframe if "who" in d.value.columns]
    assert totals["priced"].iloc[0] == f"${known:.4f} (partly priced: {priced} of {calls} calls)"
    (proj,) = [d.value for d in at.dataframe if "calls per answer" in d.value.columns]
    rep = cli_json(world, "cost", "f-single")["projection"]
    assert list(proj["latency per answer fanned out"]) == pytest.approx(
        [r["latency_ms_per_answer_fanout"] for r in rep["rows"]])
    assert list(proj["wall time"]) == pytest.approx([r["wall_ms"] / 1000 for r in rep["rows"]])
    assert list(proj["tokens out from"]) == ["measured: f-single (this run)", "estimated (model)", "measured: f-split"]


# --------------------------------------------------------------------------- the demo, from its Parquet files


def _lists(run_id: str) -> list[tuple[frozenset, int, float]]:
    rows = duckdb.connect().execute(
        f"SELECT list_sort(criteria), count(*), sum(tokens_out) FROM '{DEMO}/runs/{run_id}/calls.parquet' "
        "WHERE error IS NULL AND tokens_out IS NOT NULL GROUP BY 1"
    ).fetchall()
    return [(frozenset(c), n, float(t)) for c, n, t in rows]


def test_demo_single_run_projects_split_output_from_the_split_run():
    """support-single's projection of split: f fitted (numpy least squares on the per-list sums of
    the runs the projection names), and split's output per answer is that of support-split's calls."""
    p = json.loads(subprocess.run([EVALCORE, "--data", str(DEMO), "cost", "support-single", "--json"],
                                  capture_output=True, text=True, check=True).stdout)["projection"]
    names = [c["criterion"] for c in p["criteria"]]
    assert p["output"]["identified"] and "support-split" in p["output"]["runs"]
    # least squares over the calls, by hand: rows weighted by sqrt(n) on the list means
    x, y = [], []
    for rid in p["output"]["runs"]:
        for crits, n, t in _lists(rid):
            w = np.sqrt(n)
            x.append(w * np.array([1.0] + [float(c in crits) for c in names]))
            y.append(w * t / n)
    coef = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)[0]
    assert p["output"]["tokens_per_call"] == pytest.approx(coef[0], rel=1e-6)
    assert [c["out_tokens_per_verdict"] for c in p["criteria"]] == pytest.approx(list(coef[1:]), rel=1e-6)
    rows = {r["mode"]: r for r in p["rows"]}
    answers = duckdb.connect().execute(
        f"SELECT count(DISTINCT (item_id, gen_round, judge_round)) FROM '{DEMO}/runs/support-single/calls.parquet'"
    ).fetchall()[0][0]
    assert rows["split"]["tokens_out"] == pytest.approx(answers * (len(names) * coef[0] + sum(coef[1:])), rel=1e-6)
    assert rows["split"]["tokens_out_run"] == "support-split"
    split_per_answer = sum(t / n for _, n, t in _lists("support-split"))
    assert rows["split"]["tokens_out_per_answer_measured"] == pytest.approx(split_per_answer, rel=1e-9)
    single_per_answer = sum(t / n for _, n, t in _lists("support-single"))
    assert rows["single"]["tokens_out_per_answer_measured"] == pytest.approx(single_per_answer, rel=1e-9)
    # the demo writes more output split than single, and so does the projection now
    if split_per_answer > single_per_answer:
        assert rows["split"]["tokens_out"] > rows["single"]["tokens_out"]
    assert p["concurrency_source"].startswith("concurrency not recorded") or p["concurrency"] > 1
