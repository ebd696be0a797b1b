"""The command line over a tiny world: figures recounted by hand, JSON without NaN, errors as one line."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import EVALCORE

from evalcore import Store, runs_summary


def _run(data, state, *args):
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)


def test_runs_json_is_recounted_by_hand(tiny):
    data, state = tiny
    r = _run(data, state, "runs", "--json")
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)
    # tiny: 3 items x 2 gen rounds x 2 judge rounds; "ok" passes for items 1 and 2, "score" (2 + k >= 3) too
    # every answer of items 1 and 2 passes both criteria: the all-pass rate is 4 of 6 in each judge round
    assert run["all_pass_by_round"] == [4 / 6, 4 / 6] and run["all_pass_spread"] == 0
    assert (run["all_pass"]["passed"], run["all_pass"]["of"]) == (4, 6)
    # two generation rounds pooled: items as clusters (k_i, n_i) = (2, 2), (2, 2), (0, 2), r = 2/3;
    # sum (k_i - r n_i)^2 = 2 (2/3)^2 + (4/3)^2 = 24/9, times m/(m-1) = 3/2: 4, over n^2 = 36: se 1/3
    half = 1.959963984540054 / 3
    assert run["all_pass"]["ci95"] == pytest.approx([2 / 3 - half, 1.0])
    assert (run["calls"], run["tokens_in"], run["tokens_out"]) == (12, 1200, 240)
    assert abs(run["cost_usd"] - 0.012) < 1e-12 and run["cost_unknown_calls"] == 0
    assert run["items"] == 3 and run["verdicts"] == 24 and run["errored_verdicts"] == 0
    assert run["system_latency_ms_mean"] == 10.0 and run["kind"] == "criteria"


def test_show_json_has_nulls_not_nan(tiny):
    data, state = tiny
    r = _run(data, state, "show", "r", "i0", "--gen-round", "2", "--json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)  # strict JSON: NaN would not parse back as None
    assert v["output"] == "answer 0 r2" and v["context"] is None and v["must_have"] == ["x"]
    assert [(d["criterion"], d["judge_round"], d["passed"]) for d in v["verdicts"]] == [
        ("ok", 1, False), ("score", 1, False), ("ok", 2, False), ("score", 2, False)]
    assert v["verdicts"][0]["score"] is None


def test_unknown_run_is_one_line(tiny):
    data, state = tiny
    r = _run(data, state, "show", "nope", "i0")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "nope" in r.stderr


def test_store_sees_a_rewritten_run(tiny):
    data, state = tiny
    st = Store(data, state)
    assert runs_summary(st)[0].status == "complete"
    m = st.run("r").manifest.model_copy(update={"status": "polluted"})
    from evalcore.storage.files import write_json_model
    write_json_model(data / "runs" / "r" / "manifest.json", m)
    assert runs_summary(st)[0].status == "polluted"
