"""Issue 40: a judge model named by a floating alias (`gpt-4o`, `ChatGPT`: not a dated snapshot)
is flagged where runs are listed (`runs`, the Runs page), unless the run records it pinned
(`import ... --judge-pinned`, knob judge_pinned). The check is evalcore.llm.client.floating_alias,
which the importers' warning uses too."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from conftest import REPO

from evalcore.llm.client import floating_alias

RAG = REPO / "tests" / "golden" / "import" / "rag_long.csv"
ARGS = ["--threshold", "3", "--scale", "1:5", "--mode", "split"]


@pytest.mark.parametrize("model, floating", [
    ("gpt-4o", True), ("ChatGPT", True), ("claude-3-5-sonnet-latest", True), ("gpt-4o-2024-08-06", False),
    ("claude-3-5-sonnet@20241022", False), ("gpt-4-0613", False), ("gemini-1.5-pro-002", False),
    ("unknown", False), ("gpt-4o-2024-08-06, gpt-4o", True),
    ("inspect-scorer:match, openai/gpt-4o-2024-08-06", False), ("inspect-scorer:match, gpt-4o", True),
])
def test_floating_alias(model, floating):
    assert floating_alias(model) is floating


@pytest.fixture
def three_runs(ev, tmp_path):
    """The same answers judged three times: by gpt-4o, by gpt-4o said to be pinned, by a snapshot."""
    data = tmp_path / "d"
    for rid, model, extra in (("alias", "gpt-4o", []), ("pinned", "gpt-4o", ["--judge-pinned"]),
                              ("dated", "gpt-4o-2024-08-06", [])):
        first = ["--suite-id", "rag"] if rid == "alias" else ["--suite", "rag"]  # the same generation
        code, _, err = ev("--data", data, "import", "long", RAG, *ARGS, *first, "--run-id", rid,
                          "--judge-model", model, *extra, "--json")
        assert code == 0, err
    return data


def test_runs_flags_the_alias_but_not_a_pinned_or_dated_judge(three_runs, ev):
    code, out, err = ev("--data", three_runs, "runs", "--json")
    assert code == 0, err
    got = {r["run_id"]: r["judge_alias_warning"] for r in json.loads(out)}
    assert got == {"alias": "judge model 'gpt-4o' is not a dated snapshot: its verdicts can change under the same name",
                   "pinned": None, "dated": None}
    code, out, _ = ev("--data", three_runs, "runs")
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: run alias: {got['alias']} (pinned? re-import with --judge-pinned)"]


@pytest.mark.app
def test_the_runs_page_says_it_in_a_short_note(three_runs, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(three_runs))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(Path(__file__).parents[1] / "app.py"), default_timeout=60).run()
    at.switch_page("pages/1_runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [html.unescape(c.value) for c in at.caption if "Judge not pinned" in html.unescape(c.value)]
    assert notes == ["Judge not pinned: alias: judge model 'gpt-4o' is not a dated snapshot: its verdicts can change "
                     "under the same name (a snapshot named without its date: re-import with --judge-pinned if it is "
                     "one)."]


def test_compare_and_the_report_card_flag_the_alias_too(three_runs, ev, tmp_path):
    """Everywhere a judge is named: compare's notes and the report card's warnings say it of the
    alias run, not of the pinned or the dated one."""
    code, out, err = ev("--data", three_runs, "compare", "alias", "dated", "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert [n for n in notes if "not a dated snapshot" in n] == [
        "alias: judge model 'gpt-4o' is not a dated snapshot: its verdicts can change under the same name"]
    code, out, err = ev("--data", three_runs, "compare", "pinned", "dated", "--json")
    assert code == 0, err
    assert not [n for n in json.loads(out)["notes"] if "not a dated snapshot" in n]
    code, out, err = ev("--data", three_runs, "--state", tmp_path / "s", "agreement", "--json")
    assert code == 0, err
    said = [w for g in json.loads(out)["generations"] for w in g["warnings"] if "not a dated snapshot" in w]
    assert said == ["run alias: judge model 'gpt-4o' is not a dated snapshot: its verdicts can change under the same name"]
