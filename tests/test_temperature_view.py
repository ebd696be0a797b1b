"""Temperature, consistency and accuracy (issue 44, article 003): `evalcore temperature` and
review.temperature_view. On the demo no runs differ only in the temperature, and the view says so
in words; on a hand-made import (three judge runs over one generation, two of them the same judge
at temperatures 0 and 1, two judge rounds each, and one person's labels as gold) it sets the two
side by side, each run's figures checked against numpy and statsmodels' Fleiss kappa."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DEMO, REPO
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

N = 60
JUDGE = "openai/gpt-4o-2024-08-06"


def _write(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    return path


def _world(tmp_path: Path, ev) -> tuple[Path, Path, dict[str, np.ndarray], np.ndarray, str]:
    rng = np.random.default_rng(11)
    gold = rng.random(N) < 0.6  # pass
    readings = {}
    for name, wrong, unsteady in (("cool", 0.05, 0.03), ("warm", 0.15, 0.35), ("other", 0.1, 0.1)):
        r1 = gold ^ (rng.random(N) < wrong)
        readings[name] = np.stack([r1, r1 ^ (rng.random(N) < unsteady)])
    data, state = tmp_path / "data", tmp_path / "state"
    head = ["item_id", "input", "output", "criterion", "value", "judge_round"]
    suite = gen = None
    for name, knobs in (("cool", ["temperature=0"]), ("warm", ["temperature=1"]), ("other", ["temperature=0.5"])):
        rows = [[f"q{i:02d}", f"Question {i}?", f"Answer {i}.", "ok", "pass" if readings[name][j, i] else "fail", j + 1]
                for i in range(N) for j in (0, 1)]
        code, out, err = ev("--data", data, "--state", state, "import", "long", _write(tmp_path / f"{name}.csv", head, rows),
                            "--judge-model", JUDGE if name != "other" else "anthropic/claude-3-5-sonnet-20241022",
                            "--run-id", name, *(a for k in knobs for a in ("--judge-knob", k)),
                            *(["--suite", suite] if suite else []), "--json")
        assert code == 0, err
        suite, gen = json.loads(out)["suite_id"], json.loads(out)["gen_id"]
    labels = [[f"q{i:02d}", f"Question {i}?", f"Answer {i}.", "ana", "pass" if gold[i] else "fail"] for i in range(N)]
    code, _, err = ev("--data", data, "--state", state, "import", "wide",
                      _write(tmp_path / "people.csv", ["item_id", "input", "output", "annotator", "ok"], labels),
                      "--human", "--suite", suite)
    assert code == 0, err
    assert gen is not None
    return data, state, readings, gold, gen


def test_an_import_sets_the_two_temperatures_side_by_side(tmp_path, ev):
    data, state, readings, gold, gen = _world(tmp_path, ev)
    code, out, err = ev("--data", data, "--state", state, "temperature", gen, "--json")
    assert code == 0, err
    (v,) = json.loads(out)
    (g,) = v["groups"]  # "other" is another judge model: not compared
    assert [r["run_id"] for r in g["runs"]] == ["cool", "warm"] and [r["temperature"] for r in g["runs"]] == [0, 1]
    assert g["judge_model"] == JUDGE and v["no_temperature"] == []
    for r in g["runs"]:
        (c,) = r["criteria"]
        x = readings[r["run_id"]]
        assert c["criterion"] == "ok" and c["judge_rounds"] == 2 and c["repeat_cases"] == N == c["gold_cases"]
        assert c["unanimous_share"] == pytest.approx(float(np.mean(x[0] == x[1])), abs=1e-12)
        assert c["accuracy"] == pytest.approx(float(np.mean(x[0] == gold)), abs=1e-12)
        table, _ = aggregate_raters(x.T.astype(int))
        assert c["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    cool, warm = (r["criteria"][0] for r in g["runs"])
    assert cool["unanimous_share"] > warm["unanimous_share"]  # the world's warm judge is the unsteady one
    assert v["text"].startswith(f"1 set(s) of runs on {gen} differ only in the judge's temperature: cool at 0, warm at 1")
    code, out, err = ev("--data", data, "--state", state, "temperature", gen)
    assert code == 0 and "accuracy on gold" in out and "warm" in out


def test_the_demo_says_in_words_that_no_runs_differ_only_in_temperature(tmp_path, ev):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "temperature", "accounts-g1", "--json")
    assert code == 0, err
    (v,) = json.loads(out)
    assert v["groups"] == []
    assert v["text"].startswith("No runs on accounts-g1 differ only in the judge's temperature (same judge model, "
                                "rubric, harness and prompt): 1 run(s), temperatures recorded: 0.")


@pytest.mark.app
def test_the_agreement_page_sets_them_side_by_side(tmp_path, ev, monkeypatch):
    from streamlit.testing.v1 import AppTest

    data, state, readings, gold, gen = _world(tmp_path, ev)
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params["gen"] = gen
    at.run()
    at.switch_page("pages/6_agreement.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (tab,) = [t for t in at.tabs if t.label == "Temperature"]
    assert any("cool at 0, warm at 1" in html.unescape(c.value) for c in tab.caption)
    (table,) = [t.value for t in tab.table]
    assert list(table["run"]) == ["cool", "warm"]
    assert [html.unescape(x) for x in table["accuracy on gold"]] == [f"{100 * np.mean(readings[r][0] == gold):.1f}%" for r in ("cool", "warm")]
