"""The Cost page through AppTest: on the bundled SIMULATED demo it shows the figures of
``evalcore cost --all --json`` and ``evalcore cost RUN [--items N] --json``, labelled SIMULATED;
deep links pick the run and N; a bad run id is one st.error."""

from __future__ import annotations

import html
import json
import re
import subprocess

import pytest
from browser_util import RUN_SINGLE, make_world
from conftest import DEMO, EVALCORE, REPO
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

APP = str(REPO / "app.py")
PAGE = "pages/10_cost.py"


def unescape(text: str) -> str:
    span = re.fullmatch(r"(`+) (.*) \1", text, flags=re.S)
    return span.group(2) if span else html.unescape(text)


def cli_json(data, *args):
    out = subprocess.run([EVALCORE, "--data", str(data), *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def open_page(data, tmp_path, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(params)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame(at: AppTest, column: str):
    """The one dataframe on the page with a column named ``column``."""
    (hit,) = [d.value for d in at.dataframe if column in d.value.columns]
    return hit


def none(v):
    return None if v is None or v != v else v  # NaN (a null in a pandas column) -> None


def same(a, b) -> bool:
    a, b = none(a), none(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_cost_page_shows_the_cli_figures_on_the_demo(tmp_path, monkeypatch):
    at = open_page(DEMO, tmp_path, monkeypatch, run="support-grouped")
    assert not at.error, [unescape(e.value) for e in at.error]
    assert [t.value for t in at.title] == ["Cost"]
    assert at.selectbox(key="cost_run").value == "support-grouped"

    # the per-configuration table is `evalcore cost --all --json`
    table = cli_json(DEMO, "cost", "--all")
    shown = frame(at, "judge calls")
    assert list(shown["run"]) == [r["run_id"] for r in table]
    cols = {"judge calls": "judge_calls", "failed calls": "judge_failed_calls", "judge tokens in": "judge_tokens_in",
            "judge tokens out": "judge_tokens_out", "judge cost": "judge_cost_usd",
            "unpriced calls": "judge_cost_unknown_calls", "judge cost per answer": "judge_cost_usd_per_answer",
            "judge latency mean": "judge_latency_ms_mean", "judge latency p95": "judge_latency_ms_p95",
            "outputs": "system_outputs", "system tokens in": "system_tokens_in",
            "system tokens out": "system_tokens_out", "system cost": "system_cost_usd",
            "unpriced outputs": "system_cost_unknown_outputs", "system cost per output": "system_cost_usd_per_output",
            "system latency mean": "system_latency_ms_mean", "system latency p95": "system_latency_ms_p95",
            "simulated": "simulated", "generation": "gen_id", "mode": "mode"}
    for (_, row), r in zip(shown.iterrows(), table):
        for col, key in cols.items():
            assert same(row[col], r[key]), (r["run_id"], col)

    # the run: `evalcore cost support-grouped --json`
    rep = cli_json(DEMO, "cost", "support-grouped")
    totals = frame(at, "who")
    j, s = rep["judge"], rep["system"]
    for (_, row), src, n, bad, unk in zip(totals.iterrows(), (j, s), ("calls", "outputs"),
                                          ("failed_calls", "errored_outputs"),
                                          ("cost_unknown_calls", "cost_unknown_outputs")):
        assert same(row["calls or outputs"], src[n]) and same(row["failed"], src[bad])
        assert same(row["unknown cost"], src[unk])
        for col, key in (("tokens in", "tokens_in"), ("tokens out", "tokens_out"), ("cost", "cost_usd"),
                         ("latency mean", "latency_ms_mean"), ("latency p50", "latency_ms_p50"),
                         ("latency p95", "latency_ms_p95")):
            assert same(row[col], src[key]), col
    assert totals["who"].iloc[1] == f"system under test ({s['gen_id']})"

    per = frame(at, "latency share")
    assert list(per["criterion"]) == [c["criterion"] for c in rep["per_criterion"]]
    for (_, row), c in zip(per.iterrows(), rep["per_criterion"]):
        for col, key in (("calls", "calls"), ("failed calls", "failed_calls"), ("tokens in", "tokens_in"),
                         ("tokens out", "tokens_out"), ("cost", "cost_usd"), ("unpriced calls", "cost_unknown_calls"),
                         ("latency share", "latency_ms_total"), ("latency mean", "latency_ms_mean"),
                         ("latency p50", "latency_ms_p50"), ("latency p95", "latency_ms_p95")):
            assert same(row[col], c[key]), (c["criterion"], col)

    proj = frame(at, "calls per answer")
    for (_, row), r in zip(proj.iterrows(), rep["projection"]["rows"]):
        for col, key in (("mode", "mode"), ("calls per answer", "calls_per_answer"), ("calls", "calls"),
                         ("tokens in", "tokens_in"), ("tokens out", "tokens_out"), ("cost", "cost_usd"),
                         ("latency per answer", "latency_ms_per_answer"), ("calls x single", "calls_x_single"),
                         ("tokens in x single", "tokens_in_x_single"), ("cost x single", "cost_usd_x_single")):
            assert same(row[col], r[key]), (r["mode"], col)
    assert list(proj["calls"]) == [1800, 5400, 10800]  # 600 items x 3 judge rounds x 1 / 3 / 6 calls per answer
    model = frame(at, "c_k tokens in")
    assert list(model["c_k tokens in"]) == [c["tokens_in"] for c in rep["projection"]["criteria"]]
    captions = [unescape(c.value) for c in at.caption]
    p = rep["projection"]
    assert any(f"Shared context S = {p['shared_tokens_in']:.1f} tokens per call" in c for c in captions)
    assert any(f"{p['check']['calls_projected']} calls projected, {p['check']['calls_measured']} measured" in c
               for c in captions)

    # simulated data is labelled so
    assert any("SIMULATED" in m.value for m in at.markdown)
    assert any("SIMULATED" in c for c in captions)


def test_changing_n_shows_the_cli_projection_for_n(tmp_path, monkeypatch):
    at = open_page(DEMO, tmp_path, monkeypatch, run="support-single")
    at.number_input(key="cost_items_support-single").set_value(400).run()
    assert not at.exception and not at.error
    assert at.query_params["items"] == "400"
    rows = cli_json(DEMO, "cost", "support-single", "--items", "400")["projection"]["rows"]
    proj = frame(at, "calls per answer")
    assert list(proj["calls"]) == [r["calls"] for r in rows] == [1200, 3600, 7200]  # 400 x 3 rounds x 1 / 3 / 6
    for (_, row), r in zip(proj.iterrows(), rows):
        assert same(row["tokens in"], r["tokens_in"]) and same(row["cost"], r["cost_usd"])


def test_a_deep_link_with_items_opens_that_projection(tmp_path, monkeypatch):
    at = open_page(DEMO, tmp_path, monkeypatch, run="support-split", items="250")
    assert not at.error
    assert at.number_input(key="cost_items_support-split").value == 250
    rows = cli_json(DEMO, "cost", "support-split", "--items", "250")["projection"]["rows"]
    assert list(frame(at, "calls per answer")["calls"]) == [r["calls"] for r in rows] == [750, 2250, 4500]


@pytest.mark.parametrize("bad, needle", [("no-such-run", "no run 'no-such-run'"), ("../etc", "is not a valid run id")])
def test_a_bad_run_id_is_one_error_and_the_rest_of_the_page_stays(tmp_path, monkeypatch, bad, needle):
    data = make_world(tmp_path / "world")
    at = open_page(data, tmp_path, monkeypatch, run=bad)
    assert len(at.error) == 1 and needle in unescape(at.error[0].value)
    assert len(frame(at, "judge calls")) == 4  # the per-configuration table is still there
    assert at.selectbox(key="cost_run").value == RUN_SINGLE  # the first complete single-call run


def test_real_data_is_not_labelled_simulated(tmp_path, monkeypatch):
    data = make_world(tmp_path / "real", simulated=False)
    at = open_page(data, tmp_path, monkeypatch)
    assert not at.error
    assert not any("SIMULATED" in m.value for m in at.markdown)
    assert not any("SIMULATED" in c.value for c in at.caption)
    assert list(frame(at, "judge calls")["simulated"]) == [False] * 4
